package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/urfave/cli/v2"
)

// TestMain runs the tests in testenv's hermetic environment: no user or system git configuration, a
// fixed identity, a private HOME.
func TestMain(m *testing.M) { testenv.Main(m) }

func TestNormalizeArgs(t *testing.T) {
	a := newApp(newEnv(IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}))
	cases := []struct{ in, want []string }{
		{[]string{"ctx", "convention", "set", "git", "-f", "F"}, []string{"ctx", "convention", "set", "-f", "F", "--", "git"}},
		{[]string{"ctx", "knowledge", "get", "k", "--json"}, []string{"ctx", "knowledge", "get", "--json", "--", "k"}},
		{[]string{"ctx", "mcp", "serve", "--agent", "x"}, []string{"ctx", "--agent", "x", "mcp", "serve"}},
		{[]string{"ctx", "-C", "dir", "status"}, []string{"ctx", "-C", "dir", "status"}},
		{[]string{"ctx", "log", "-n", "3", "knowledge/a.md"}, []string{"ctx", "log", "-n", "3", "--", "knowledge/a.md"}},
		{[]string{"ctx", "knowledge", "set", "k", "--", "-text starting with a dash"}, []string{"ctx", "knowledge", "set", "--", "k", "-text starting with a dash"}},
		{[]string{"ctx", "decision", "add", "T", "--status=accepted"}, []string{"ctx", "decision", "add", "--status=accepted", "--", "T"}},
		{[]string{"ctx", "knowledge", "get", "k", "--help"}, []string{"ctx", "knowledge", "get", "--help"}},
		{[]string{"ctx", "status", "x", "-h"}, []string{"ctx", "status", "-h"}},
		{[]string{"ctx", "knowlege", "--help"}, []string{"ctx", "--help", "--", "knowlege"}},
		{[]string{"ctx", "knowledge", "gte", "k", "--help"}, []string{"ctx", "knowledge", "--help", "--", "gte", "k"}},
		{[]string{"ctx", "log", "-n1"}, []string{"ctx", "log", "-n", "1"}},
		{[]string{"ctx", "log", "-n20", "knowledge/a.md"}, []string{"ctx", "log", "-n", "20", "--", "knowledge/a.md"}},
		{[]string{"ctx", "knowledge", "set", "k", "--", "--help"}, []string{"ctx", "knowledge", "set", "--", "k", "--help"}},
	}
	for _, c := range cases {
		if got := normalizeArgs(a, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("normalizeArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRunInProcess runs commands through Run with in-memory streams: stdin content, exit codes, and errors
// on stderr.
func TestRunInProcess(t *testing.T) {
	dir := testenv.NewRepo(t)
	run := func(stdin string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(stdin), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
	if _, e, code := run("", "init", "--no-hooks"); code != ExitOK {
		t.Fatalf("init: %d %s", code, e)
	}
	if _, e, code := run("from stdin\n", "knowledge", "set", "notes"); code != ExitOK {
		t.Fatalf("set from stdin: %d %s", code, e)
	}
	if out, _, _ := run("", "knowledge", "get", "notes"); out != "from stdin\n" {
		t.Errorf("get: %q", out)
	}
	f := filepath.Join(t.TempDir(), "c.md")
	if err := os.WriteFile(f, []byte("# conv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := run("", "convention", "set", "git", "-f", f); code != ExitOK {
		t.Fatalf("flags after positionals: %d %s", code, e)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"knowledge", "get", "missing"}, ExitNotFound, "Knowledge entry 'missing' not found"},
		{[]string{"knowledge", "set", "../x", "t"}, ExitUsage, "invalid key"},
		{[]string{"knowledge", "set"}, ExitUsage, "usage"},
		{[]string{"knowledge", "set", "k", "text", "-f", f}, ExitUsage, "not both"},
		{[]string{"decision", "add", "T", "--bogus"}, ExitUsage, "flag provided but not defined"},
		{[]string{"push"}, ExitFailure, "no remote"},
		{[]string{"knowledge", "set", "k", "-f", filepath.Join(dir, "nonexistent")}, ExitUsage, "cannot read " + filepath.Join(dir, "nonexistent") + ": no such file"},
		{[]string{"knowledge", "set", "k", "-f", dir}, ExitUsage, dir + " is a directory"},
	} {
		_, e, code := run("", c.args...)
		if code != c.code || !strings.Contains(e, c.msg) {
			t.Errorf("ctx %s: exit %d (want %d), stderr %q (want %q)", strings.Join(c.args, " "), code, c.code, e, c.msg)
		}
	}
	var errb bytes.Buffer
	if code := Run(context.Background(), []string{"ctx", "-C", t.TempDir(), "status"}, IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb}); code != ExitNoStore {
		t.Errorf("outside a repository: exit %d %s", code, errb.String())
	}
}

// TestInterruptedRunNeverExitsZero: a signal that arrives while a command finishes (its context is
// cancelled, the command did not notice) still ends the run with exit 130 and "ctx: interrupted": a tester's
// Ctrl-C during the refresh at the end of a pull exited 0.
func TestInterruptedRunNeverExitsZero(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := Run(ctx, []string{"ctx", "--version"}, IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	if code != 130 || !strings.Contains(errb.String(), "ctx: interrupted") || strings.Contains(errb.String(), "context canceled") {
		t.Fatalf("ctx --version with a cancelled context: exit %d, stderr %q; want 130 and ctx: interrupted", code, errb.String())
	}
	if out.Len() == 0 {
		t.Fatalf("the command's own output is lost: stdout empty")
	}
}

// TestReportedRoughEdges covers a new user's report: exit codes of unknown commands and invalid values,
// session update of an unknown id, a decision superseding itself, log paths under .context/, config
// --json and durations, empty state, list columns, import messages, proposals of every skill.
func TestReportedRoughEdges(t *testing.T) {
	dir := testenv.NewRepo(t)
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(stdin), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, e, code := run(stdin, args...)
		if code != ExitOK {
			t.Fatalf("ctx %s: exit %d: %s", strings.Join(args, " "), code, e)
		}
		return out
	}
	must("", "init", "--no-hooks")

	// An empty state prints no empty fields.
	if out := must("", "state", "show"); !strings.Contains(out, "no state yet") || strings.Contains(out, "last") {
		t.Errorf("empty state show: %q", out)
	}

	must("", "decision", "add", "First")
	must("", "decision", "add", "Second")
	must("", "skill", "add", "alpha", "-d", "a skill", "do a")
	must("", "skill", "add", "beta", "-d", "b skill", "do b")
	must("---\nname: alpha\ndescription: a\n---\nbetter a\n", "skill", "propose", "alpha", "--rationale", "ra")
	must("---\nname: beta\ndescription: b\n---\nbetter b\n", "skill", "propose", "beta", "--rationale", "rb")

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bogus"}, ExitUsage, "see ctx --help"},
		{[]string{"decision", "bogus"}, ExitUsage, "see ctx decision --help"},
		{[]string{"--bogus"}, ExitUsage, "(see ctx --help)"},
		{[]string{"status", "--bogus"}, ExitUsage, "(see ctx status --help)"},
		{[]string{"decision", "add", "--nope", "T"}, ExitUsage, "(see ctx decision add --help)"},
		{[]string{"skill", "rate", "alpha", "6"}, ExitUsage, "out of range"},
		{[]string{"skill", "rate", "x", "6"}, ExitUsage, "out of range"},
		{[]string{"decision", "set-status", "1", "bogus"}, ExitUsage, "invalid status"},
		{[]string{"decision", "set-status", "99", "bogus"}, ExitUsage, "invalid status"},
		{[]string{"knowledge", "set", "k", "t", "--scope", "bogus"}, ExitUsage, "invalid scope"},
		{[]string{"activity", "check-in", "T", "--availability", "bogus"}, ExitUsage, "availability"},
		{[]string{"import", filepath.Join(dir, "nonexistent")}, ExitUsage, "no such file or directory"},
		{[]string{"session", "update", "nope", "-m", "x"}, ExitNotFound, "Session 'nope' not found"},
		{[]string{"decision", "supersede", "1", "1"}, ExitUsage, "cannot supersede itself"},
		{[]string{"decision", "supersede", "First", "1"}, ExitUsage, "cannot supersede itself"},
		{[]string{"log", "-n", "-1"}, ExitUsage, "0: all"},
		{[]string{"config", "sync.timeout", "0"}, ExitUsage, "from 1s to 168h"},
		{[]string{"config", "sync.timeout", "soon"}, ExitUsage, "from 1s to 168h"},
		// Seconds past time.Duration's range once multiplied (a tester's 9300000000 was stored and became a
		// negative timeout) and past int64 itself; a duration past the week.
		{[]string{"config", "sync.timeout", "9300000000"}, ExitUsage, "from 1s to 168h"},
		{[]string{"config", "sync.timeout", "99999999999999999999"}, ExitUsage, "from 1s to 168h"},
		{[]string{"config", "sync.timeout", "169h"}, ExitUsage, "from 1s to 168h"},
		{[]string{"pull", "--timeout", "169h"}, ExitUsage, "at most 168h"},
		{[]string{"config", "branch", "other"}, ExitUsage, "git branch -m ctx NEW, then ctx init --branch NEW"},
		{[]string{"skill", "proposals", "--status", "bogus"}, ExitUsage, "invalid proposal status"},
	} {
		_, e, code := run("", c.args...)
		if code != c.code || !strings.Contains(e, c.msg) || strings.Contains(e, "importer:") || strings.Contains(e, "No help topic") || strings.Contains(e, "ctx ctx") {
			t.Errorf("ctx %s: exit %d (want %d), stderr %q (want %q)", strings.Join(c.args, " "), code, c.code, e, c.msg)
		}
	}
	if out := must("", "session", "list"); strings.Contains(out, "nope") {
		t.Errorf("session update of an unknown id created it:\n%s", out)
	}
	must("", "session", "start", "s1")
	must("", "session", "update", "s2", "--start", "-m", "started by update")
	if out := must("", "session", "list"); !strings.Contains(out, "s2") {
		t.Errorf("session update --start did not start s2:\n%s", out)
	}
	if _, e, code := run("", "session", "update", "s1", "-m", "did it"); code != ExitOK {
		t.Errorf("session update of a started session: %d %s", code, e)
	}
	if out := must("", "decision", "supersede", "1", "2"); !strings.Contains(out, "decision 1 superseded by 2") {
		t.Errorf("supersede: %q", out)
	}

	// Proposals of every skill without NAME; of one with it.
	out := must("", "skill", "proposals")
	if !strings.Contains(out, "alpha") || !strings.Contains(out, "beta") {
		t.Errorf("skill proposals (all): %q", out)
	}
	if out := must("", "skill", "proposals", "beta"); strings.Contains(out, "alpha") || !strings.Contains(out, "beta") {
		t.Errorf("skill proposals beta: %q", out)
	}

	// Columns are as wide as the longest key.
	long := strings.Repeat("k", 60)
	must("", "knowledge", "set", long, "long one")
	must("", "knowledge", "set", "x", "short one")
	lines := strings.Split(strings.TrimSpace(must("", "knowledge", "list")), "\n")
	if len(lines) != 2 || strings.Index(lines[0], "public") != strings.Index(lines[1], "public") || strings.Index(lines[0], "public") != 62 {
		t.Errorf("knowledge list columns:\n%s", strings.Join(lines, "\n"))
	}

	// log PATH: .context/knowledge/x.md and an absolute path inside .context/ are knowledge/x.md.
	want := must("", "log", "knowledge/x.md")
	if !strings.Contains(want, "knowledge.set") {
		t.Fatalf("log knowledge/x.md: %q", want)
	}
	for _, p := range []string{".context/knowledge/x.md", "./.context/knowledge/x.md", filepath.Join(dir, ".context", "knowledge", "x.md")} {
		if got := must("", "log", p); got != want {
			t.Errorf("log %s = %q, want %q", p, got, want)
		}
	}
	if n := strings.Count(must("", "log", "-n", "0"), "\n    "); n < 10 {
		t.Errorf("log -n 0 shows %d commits, want all", n)
	}
	// log PATH no commit touched: a usage error (git log foo: "ambiguous argument"); after -- an empty
	// history, exit 0 (git log -- foo), "-x" included.
	for _, args := range [][]string{{"log", "foo"}, {"log", "knowledge/nope.md"}, {"log", "-n", "3", "foo"}} {
		if out, e, code := run("", args...); code != ExitUsage || out != "" || !strings.Contains(e, "no commit of the context branch touched") {
			t.Errorf("ctx %s: exit %d, stdout %q, stderr %q; want exit 2", strings.Join(args, " "), code, out, e)
		}
	}
	for _, args := range [][]string{{"log", "--", "foo"}, {"log", "--", "-x"}, {"log", "-n", "3", "--", "knowledge/nope.md"}} {
		if out, e, code := run("", args...); code != ExitOK || out != "" {
			t.Errorf("ctx %s: exit %d, stdout %q, stderr %q; want exit 0, nothing", strings.Join(args, " "), code, out, e)
		}
	}

	// config: --json, durations and seconds.
	must("", "config", "sync.timeout", "5s")
	if out := must("", "config", "sync.timeout"); out != "5s\n" {
		t.Errorf("sync.timeout after 5s: %q", out)
	}
	must("", "config", "sync.timeout", "90")
	if out := must("", "config", "sync.timeout"); out != "1m30s\n" {
		t.Errorf("sync.timeout after 90: %q", out)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(must("", "config", "--json")), &cfg); err != nil || cfg["sync.timeout"] != "1m30s" || cfg["sync.push-with-git"] != false {
		t.Errorf("config --json: %v %v", cfg, err)
	}

	// team add NAME without MACHINE records no machine (not this one).
	must("", "team", "add", "bob")
	var members []map[string]any
	if err := json.Unmarshal([]byte(must("", "team", "list", "--json")), &members); err != nil || len(members) != 1 || members[0]["machine"] != "" && members[0]["machine"] != nil {
		t.Errorf("team add bob: %v %v", members, err)
	}

	// import: proper plurals, and a re-import that changes nothing says so.
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "AGENTS.md"), []byte("# Agents\n\nRun make test.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := must("", "import", src); !strings.Contains(out, "1 knowledge entry,") || strings.Contains(out, "(ies)") {
		t.Errorf("import: %q", out)
	}
	if out := must("", "import", src); !strings.Contains(out, "nothing new to import") || strings.Contains(out, "imported") {
		t.Errorf("re-import: %q", out)
	}
}

// TestHelpTexts checks that no help text refers to documents a user does not have (the design or the
// seeds), and that the proposal verbs each say what they do.
func TestHelpTexts(t *testing.T) {
	a := newApp(newEnv(IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}))
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			texts := []string{c.Usage, c.ArgsUsage, c.Description}
			for _, f := range c.Flags {
				if df, ok := f.(cli.DocGenerationFlag); ok {
					texts = append(texts, df.GetUsage())
				}
			}
			for _, s := range texts {
				// Citations of documents outside the repository (spelled in two parts, so that
				// scripts/check-doc-refs.sh does not take this test for one).
				if strings.Contains(s, "seed "+"00") || strings.Contains(s, "design "+"§") {
					t.Errorf("%s %s: %q", path, c.Name, s)
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("ctx", a.Commands)
	for _, args := range [][]string{{"skill", "reject", "--help"}, {"skill", "upstream", "--help"}} {
		var out bytes.Buffer
		Run(context.Background(), append([]string{"ctx"}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &bytes.Buffer{}})
		if strings.Contains(out.String(), "accept replaces") || strings.Contains(out.String(), "accept a") {
			t.Errorf("ctx %s: %s", strings.Join(args, " "), out.String())
		}
	}
}
