package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// bin is the folder holding the pair as make install puts it: ctx (this front) and ctx-full.
var bin string

func TestMain(m *testing.M) {
	cleanup, err := testenv.Hermetic()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "ctx-front-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	bin = dir
	for _, b := range [][2]string{{"ctx", "."}, {"ctx-full", "../ctx"}} {
		build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", filepath.Join(dir, b[0]), b[1])
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", b[0], err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	cleanup()
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func runBin(t *testing.T, dir, path string, args ...string) result {
	t.Helper()
	return runEnv(t, dir, path, nil, args...)
}

// full runs ctx-full in dir and fails the test unless it exits 0.
func full(t *testing.T, dir string, args ...string) string {
	t.Helper()
	r := runBin(t, dir, filepath.Join(bin, "ctx-full"), args...)
	if r.code != 0 {
		t.Fatalf("ctx-full %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// same runs args with the front and with ctx-full in dir and fails unless standard output, standard error
// and the exit code are the same. served says whether the front must answer itself (checked in
// process: a front that handed everything to ctx-full would pass the comparison).
func same(t *testing.T, dir string, served bool, args ...string) result {
	t.Helper()
	// In process first: ctx-full may change the store (complete a transaction, move a ref) before it reads.
	t.Chdir(dir)
	out, ok := serve(args)
	if ok != served {
		t.Errorf("ctx %q in %s: served by the front: %v, want %v", args, dir, ok, served)
	}
	got := runBin(t, dir, filepath.Join(bin, "ctx"), args...)
	want := runBin(t, dir, filepath.Join(bin, "ctx-full"), args...)
	if got != want {
		t.Errorf("ctx %q in %s:\nfront: exit %d\n%s\nstderr: %s\nctx-full: exit %d\n%s\nstderr: %s", args, dir,
			got.code, clip(got.stdout), got.stderr, want.code, clip(want.stdout), want.stderr)
	}
	if ok && string(out) != want.stdout {
		t.Errorf("ctx %q: serve's output differs from ctx-full's", args)
	}
	return want
}

// declines checks in process that the front leaves args to ctx-full in dir (serve declines). The binary's
// main does nothing else before it execs ctx-full with the same arguments (TestExecsFull), so its output is
// then ctx-full's by construction; same compares the two programs' output as well.
func declines(t *testing.T, dir string, args ...string) {
	t.Helper()
	t.Chdir(dir)
	if _, ok := serve(args); ok {
		t.Errorf("ctx %q in %s: served by the front, want ctx-full", args, dir)
	}
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// makeStore makes a repository with an initialised store and entries of every shape the front reads or must
// leave to ctx-full.
func makeStore(t *testing.T) string {
	t.Helper()
	dir := testenv.NewRepo(t)
	full(t, dir, "init")
	set := func(args ...string) { full(t, dir, append([]string{"knowledge", "set"}, args...)...) }
	set("arch", "line one\nline two")
	set("a.b_c-9", "odd but valid name")
	set("x", ".") // one character
	set("crlf", "windows\r\nline\r\n")
	set("--", "fm", "---\nnot: front matter of the file\n---\nbody")
	set("utf8", "naïve café — 日本語 ✓")
	set("esc", "colour \x1b[31mred\x1b[0m")              // escaped by the sanitizer
	set("bidi", "abc\u202edef")                          // escaped by the sanitizer
	set("cr", "a lone\rcarriage return")                 // escaped by the sanitizer
	set("tabs", "\tindented\n\n\ntrailing newlines\n\n") // kept as is
	set(strings.Repeat("k", 128), "longest key")
	big := strings.Repeat("0123456789abcdef large entry line\n", 3<<20/34) // > 1 MiB (go-git streams it)
	bigFile := filepath.Join(t.TempDir(), "big.md")
	if err := os.WriteFile(bigFile, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	set("big", "-f", bigFile)
	full(t, dir, "knowledge", "set", "--scope", "private", "mine", "private only")
	full(t, dir, "knowledge", "set", "--scope", "ephemeral", "scratch", "ephemeral only")
	full(t, dir, "convention", "set", "style", "gofmt everything")
	// Files only a teammate or git could put on the branch.
	plant(t, dir, "knowledge/help.md", "100644", "an entry named help\n")
	plant(t, dir, "knowledge/mine.md", "100644", "public text under a private key\n")
	plant(t, dir, "knowledge/raw.md", "100644", "no front matter, no final newline")
	plant(t, dir, "knowledge/bom.md", "100644", "\xef\xbb\xbf---\r\nauthor: x\r\n---\r\nbody after a BOM\r\n")
	plant(t, dir, "knowledge/unclosed.md", "100644", "---\nauthor: x\nbody with no closing line\n")
	plant(t, dir, "knowledge/link.md", "120000", "arch.md")
	plant(t, dir, "knowledge/exec.md", "100755", "an executable entry\n")
	plant(t, dir, "knowledge/dir.md/x", "100644", "a folder named like an entry\n")
	for i := 0; i < 30; i++ { // revisions of one entry: deltas once packed
		set("arch", fmt.Sprintf("line one\nline two\nrevision %d\n%s", i, strings.Repeat("same text\n", 50)))
	}
	return dir
}

// plant commits a file of the given mode and content at path on the context branch with git's plumbing,
// as a teammate's ctx or plain git could (not through ctx's validation).
func plant(t *testing.T, dir, path, mode, content string) {
	t.Helper()
	blob := testenv.GitIn(t, dir, content, "hash-object", "-w", "--stdin")
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	testenv.GitEnv(t, dir, env, "read-tree", "refs/heads/ctx")
	testenv.GitEnv(t, dir, env, "update-index", "--add", "--cacheinfo", mode+","+blob+","+path)
	tree := testenv.GitEnv(t, dir, env, "write-tree")
	commit := testenv.Git(t, dir, "commit-tree", tree, "-p", "refs/heads/ctx", "-m", "plant "+path)
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", commit)
}

var getCases = []struct {
	args   []string
	served bool
}{
	{[]string{"knowledge", "get", "arch"}, true},
	{[]string{"knowledge", "get", "a.b_c-9"}, true},
	{[]string{"knowledge", "get", "x"}, true},
	{[]string{"knowledge", "get", "crlf"}, true},
	{[]string{"knowledge", "get", "fm"}, true},
	{[]string{"knowledge", "get", "utf8"}, true},
	{[]string{"knowledge", "get", "tabs"}, true},
	{[]string{"knowledge", "get", strings.Repeat("k", 128)}, true},
	{[]string{"knowledge", "get", "big"}, true},
	{[]string{"knowledge", "get", "mine"}, true},
	{[]string{"knowledge", "get", "scratch"}, true},
	{[]string{"convention", "get", "style"}, true},
	{[]string{"knowledge", "get", "esc"}, false},
	{[]string{"knowledge", "get", "bidi"}, false},
	{[]string{"knowledge", "get", "cr"}, false},
	{[]string{"knowledge", "get", "missing"}, false},
	{[]string{"convention", "get", "arch"}, false},
	{[]string{"knowledge", "get", "Arch"}, false},
	{[]string{"knowledge", "get", "a..b"}, false},
	{[]string{"knowledge", "get", ".hidden"}, false},
	{[]string{"knowledge", "get", "con"}, false},
	{[]string{"knowledge", "get", "help"}, false}, // ctx-full prints the command's help, whatever the store holds
	{[]string{"knowledge", "get", "raw"}, true},
	{[]string{"knowledge", "get", "bom"}, true},
	{[]string{"knowledge", "get", "unclosed"}, true},
	{[]string{"knowledge", "get", "exec"}, true},
	{[]string{"knowledge", "get", "link"}, false},
	{[]string{"knowledge", "get", "dir"}, false},
	{[]string{"knowledge", "get", "h"}, false},
	{[]string{"knowledge", "get", "café"}, false},
	{[]string{"knowledge", "get", strings.Repeat("k", 129)}, false},
	{[]string{"knowledge", "get", "arch", "--json"}, false},
	{[]string{"knowledge", "get", "--", "arch"}, false},
	{[]string{"knowledge", "get"}, false},
	{[]string{"knowledge", "get", "arch", "x"}, false},
	{[]string{"decision", "get", "arch"}, false},
}

var logCases = []struct {
	args   []string
	served bool
}{
	{[]string{"log"}, true},
	{[]string{"log", "-n", "0"}, true},
	{[]string{"log", "-n", "1"}, true},
	{[]string{"log", "-n", "20"}, true},
	{[]string{"log", "-n", "999999999"}, true},
	{[]string{"log", "-n", "010"}, false},
	{[]string{"log", "-n", "0x10"}, false},
	{[]string{"log", "-n", "-1"}, false},
	{[]string{"log", "-n"}, false},
	{[]string{"log", "-n=3"}, false},
	{[]string{"log", "--json"}, false},
	{[]string{"log", "-n", "3", "--json"}, false},
	{[]string{"log", "knowledge/arch.md"}, false},
	{[]string{"log", "-n", "2", "knowledge/arch.md"}, false},
}

// The front prints what ctx-full prints, byte for byte, with the same exit code, for every case of a
// store read from loose objects, then packed with deltas (git gc), then repacked with deltas naming their
// bases, and from a linked worktree. Every layout checks which cases the front answers and compares the
// answers with ctx-full's; the cases it leaves to ctx-full (which then prints ctx-full's output by
// construction: declines) run through both binaries in the first layout only.
func TestSameAsFull(t *testing.T) {
	dir := makeStore(t)
	first := true
	check := func(t *testing.T, dir string) {
		for _, cs := range [][]struct {
			args   []string
			served bool
		}{getCases, logCases} {
			for _, c := range cs {
				if c.served || first {
					same(t, dir, c.served, c.args...)
				} else {
					declines(t, dir, c.args...)
				}
			}
		}
		first = false
	}
	t.Run("loose", func(t *testing.T) { check(t, dir) })
	testenv.Git(t, dir, "gc", "-q")
	t.Run("packed", func(t *testing.T) {
		if loose, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??")); len(loose) > 0 {
			t.Logf("%d loose object folders left after gc", len(loose))
		}
		check(t, dir)
	})
	// Some objects packed, newer ones loose.
	full(t, dir, "knowledge", "set", "arch", "after gc")
	full(t, dir, "knowledge", "set", "--scope", "private", "mine", "after gc too")
	t.Run("packed+loose", func(t *testing.T) { check(t, dir) })
	testenv.Git(t, dir, "-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq", "--depth=50")
	t.Run("ref-deltas", func(t *testing.T) { check(t, dir) })
	wt := filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, dir, "worktree", "add", "-q", wt)
	t.Run("worktree", func(t *testing.T) { check(t, wt) })
	sub := filepath.Join(dir, "sub", "dir")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Run("subdirectory", func(t *testing.T) { check(t, sub) })
}

// A merge on the context branch, commits of the same second (ties broken by object name), a commit with a
// header go-git reads its own way (encoding) and one with an identity line of another shape: ctx log
// lists them as ctx-full does (the last two by ctx-full itself).
func TestLogShapes(t *testing.T) {
	dir := testenv.NewRepo(t)
	full(t, dir, "init")
	full(t, dir, "knowledge", "set", "a", "one")
	base := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
	full(t, dir, "knowledge", "set", "b", "two")
	ours := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
	tree := testenv.Git(t, dir, "rev-parse", ours+"^{tree}")
	env := []string{"GIT_AUTHOR_DATE=1700000000 +0200", "GIT_COMMITTER_DATE=1700000000 +0200"}
	side := testenv.GitEnv(t, dir, env, "commit-tree", tree, "-p", base, "-m", "side\n\nCtx-Op: knowledge.set\nCtx-Key: side")
	same2 := testenv.GitEnv(t, dir, env, "commit-tree", tree, "-p", base, "-m", "same second\n\nCtx-Op: knowledge.set\nCtx-Key: tie")
	// A merge's message as ctx writes it: a body (its conflicts and notes), then the trailers, with the
	// renumbering and one Ctx-Renamed per file renamed (a path may hold a comma).
	merge := testenv.GitEnv(t, dir, env, "commit-tree", tree, "-p", ours, "-p", side, "-p", same2, "-m",
		"ctx: merge\n\nConflicts:\n\tknowledge/a.md (body; conflict 0123456789abcdef)\nNotes:\n\tdecision 1 was added on both sides\n\n"+
			"Ctx-Op: merge\nCtx-Conflicts: 1\nCtx-Renumbered: 1 -> 2\nCtx-Renamed: decisions/0001-a.md -> decisions/0002-a.md\n"+
			"Ctx-Renamed: decisions/0003-b, c.md -> decisions/0004-b, c.md")
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", merge)
	for _, c := range logCases {
		same(t, dir, c.served, c.args...)
	}
	if out := full(t, dir, "log", "-n", "1"); !strings.Contains(out, "\n    decisions renumbered: 1 -> 2\n    renamed: decisions/0001-a.md -> decisions/0002-a.md\n"+
		"    renamed: decisions/0003-b, c.md -> decisions/0004-b, c.md\n") {
		t.Errorf("ctx log of a merge that renamed decisions:\n%s", out)
	}
	raw := "tree " + tree + "\nparent " + merge + "\nauthor Odd <odd@example.com> 1700000100 +0000\ncommitter Odd <odd@example.com> 1700000100 +0000\nencoding ISO-8859-1\n\nlatin1\n"
	enc := testenv.GitIn(t, dir, raw, "hash-object", "-t", "commit", "-w", "--stdin")
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", enc)
	same(t, dir, false, "log", "-n", "3")
	raw = "tree " + tree + "\nparent " + enc + "\nauthor No Time <nt@example.com>\ncommitter No Time <nt@example.com>\n\nno time\n"
	odd := testenv.GitIn(t, dir, raw, "hash-object", "-t", "commit", "-w", "--stdin", "--literally")
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", odd)
	same(t, dir, false, "log", "-n", "3")
}

// Where ctx-full would do something first (complete an interrupted transaction, move an old store's
// private ref, read its config) or has nothing to read, the front leaves the run to it.
func TestLeavesToFull(t *testing.T) {
	t.Run("not a repository", func(t *testing.T) {
		same(t, t.TempDir(), false, "log")
	})
	t.Run("not initialised", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		same(t, dir, false, "log")
		same(t, dir, false, "knowledge", "get", "a")
	})
	t.Run("config", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		full(t, dir, "init", "--branch", "team/context")
		full(t, dir, "knowledge", "set", "a", "one")
		same(t, dir, true, "knowledge", "get", "a")
		same(t, dir, true, "log")
		cfg := filepath.Join(dir, ".git", "ctx", "config.json")
		for _, c := range []struct {
			json   string
			served bool
		}{
			{`{"branch":"team/context","remote":"origin","sync.timeout":30,"sync.push-with-git":true,"agent":"x"}`, true},
			{`{"Branch":"team/context"}`, false},                    // encoding/json's case-insensitive match
			{`{"branch":"ctx"}`, false},                             // no such branch: not initialised
			{`{"branch":"team/context","sync.timeout":"x"}`, false}, // ctx-full refuses the config
			{`{"branch":"team/context","history.sources":[{"path":"relative"}]}`, false},
			// Configured roots ctx-full reads (ctx sources add) are served; anything it refuses, or reads
			// only through encoding/json's leniency, goes to it.
			{`{"branch":"team/context","history.sources":[{"root":"r","provider":"claude-code","path":"/tmp/x"},{"root":"s","provider":"codex","path":"/tmp/x","group":"g"}]}`, true},
			{`{"branch":"team/context","history.sources":[]}`, true},
			{`{"branch":"team/context","history.sources":null}`, true},
			{`{"branch":"team/context","history.sources":[{"Root":"r","provider":"claude-code","path":"/tmp/x"}]}`, false},
			{`{"branch":"team/context","history.sources":[{"root":"r","provider":"claude-code","path":"/tmp/x","x":1}]}`, false},
			{`{"branch":"team/context","history.sources":[{"root":"r","provider":"claude-code","path":"/tmp/x","group":null}]}`, false},
			{`{"branch":"team/context","history.sources":[{"root":"bad/name","provider":"claude-code","path":"/tmp/x"}]}`, false},
			{`{"branch":"team/context","history.sources":[{"root":"r","provider":"claude-code","path":"/tmp/x"},{"root":"r","provider":"codex","path":"/tmp/y"}]}`, false},
			{`{"branch":"team/context","history.sources":[{"root":"r","provider":"claude-code","path":"/tmp/x\ny"}]}`, false},
			{`{"branch":"team/context","history.sources":[null]}`, false},
			{`{"branch":"team/context","history.sources":{}}`, false},
			{`{"branch":"team/context","history.sources":[{"root":"lap","provider":"nosuch","path":"/tmp/x"}]}`, false}, // an unknown provider
			{`{"branch":"team/context","history.sources":` + manySources(257) + `}`, false},
			{`{"branch":"team/context","unknown":1}`, false},
			{`{"branch":"bad..name"}`, false},
			{`not json`, false},
		} {
			if err := os.WriteFile(cfg, []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			same(t, dir, c.served, "knowledge", "get", "a")
			same(t, dir, c.served, "log", "-n", "1")
		}
	})
	t.Run("transaction", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		full(t, dir, "init")
		full(t, dir, "knowledge", "set", "a", "one")
		if err := os.WriteFile(filepath.Join(dir, ".git", "ctx", "transaction.json"), []byte(`[]`), 0o644); err != nil {
			t.Fatal(err)
		}
		same(t, dir, false, "knowledge", "get", "a")
	})
	t.Run("private ref of an older ctx", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		full(t, dir, "init")
		full(t, dir, "knowledge", "set", "a", "one")
		tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
		testenv.Git(t, dir, "update-ref", "refs/ctx/private", tip)
		same(t, dir, false, "knowledge", "get", "a")
	})
	t.Run("damaged object", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		full(t, dir, "init")
		full(t, dir, "knowledge", "set", "a", "one")
		blob := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx:knowledge/a.md")
		p := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not zlib"), 0o644); err != nil {
			t.Fatal(err)
		}
		same(t, dir, false, "knowledge", "get", "a")
	})
}

// manySources is a JSON list of n valid configured roots.
func manySources(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"root":"r%d","provider":"codex","path":"/tmp/r%d"}`, i, i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Every other command, flag or spelling is run by ctx-full with the same arguments: a stand-in ctx-full
// beside a copy of the front prints what it was given (its own path as $0: a shell script's $0 is the
// script, whatever argv[0] the front passes).
func TestExecsFull(t *testing.T) {
	dir := t.TempDir()
	front := filepath.Join(dir, "ctx")
	b, err := os.ReadFile(filepath.Join(bin, "ctx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(front, b, 0o755); err != nil {
		t.Fatal(err)
	}
	stand := "#!/bin/sh\nprintf 'full:'; for a in \"$0\" \"$@\"; do printf ' [%s]' \"$a\"; done; echo; exit 7\n"
	if err := os.WriteFile(filepath.Join(dir, "ctx-full"), []byte(stand), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := makeStore(t)
	for _, args := range [][]string{{"--version"}, {"--help"}, {"frobnicate"}, {"status"}, {"knowledge", "set", "a", "b"},
		{"knowledge", "get", "arch", "--json"}, {"log", "--json"}, {"-C", repo, "log"}, {"knowledge", "get", "missing"}} {
		r := runBin(t, repo, front, args...)
		want := "full: [" + filepath.Join(dir, "ctx-full") + "]"
		for _, a := range args {
			want += " [" + a + "]"
		}
		if r.code != 7 || r.stdout != want+"\n" {
			t.Errorf("ctx %q: exit %d, %q; want exit 7, %q", args, r.code, r.stdout, want+"\n")
		}
	}
	// The happy path does not run ctx-full.
	if r := runBin(t, repo, front, "knowledge", "get", "arch"); r.code != 0 || strings.HasPrefix(r.stdout, "full:") {
		t.Errorf("knowledge get arch: exit %d, %q", r.code, clip(r.stdout))
	}
	// Without ctx-full beside it, the front says so (exit 1) instead of doing anything else.
	if err := os.Remove(filepath.Join(dir, "ctx-full")); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, repo, front, "status"); r.code != 1 || !strings.Contains(r.stderr, "ctx-full") {
		t.Errorf("without ctx-full: exit %d, %q", r.code, r.stderr)
	}
}

// The front links none of the libraries whose initialisation it exists to avoid.
func TestLinksNoHeavyPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "github.com/ctx-dev/ctx/store/checkoutrec", "github.com/ctx-dev/ctx/store/secrets", "github.com/ctx-dev/ctx/store/tipsfp":
			continue // the checkout record, the secrets scan, the tips fingerprint (depguard's strict rule)
		}
		for _, bad := range []string{"github.com/go-git", "modernc.org", "github.com/mark3labs", "github.com/urfave",
			"github.com/ctx-dev/ctx/store", "github.com/ctx-dev/ctx/cmd/ctx/", "github.com/santhosh-tekuri", "gopkg.in/yaml", "go.yaml.in/yaml", "golang.org/x/text"} {
			if strings.HasPrefix(dep, bad) {
				t.Errorf("ctx-front links %s", dep)
			}
		}
	}
}

// TestEnvAndFullDisk: ctx-full checks CTX_AGENT and CTX_SESSION on every command, a read included, so a
// value that is not a valid key is refused by both programs alike (the front answered, exit 0: second
// tester); output that cannot be written (/dev/full) is exit 1 with the same message from both (ctx-full's
// log exited 0 with a cut file).
func TestEnvAndFullDisk(t *testing.T) {
	dir := makeStore(t)
	for _, env := range []string{"CTX_AGENT=Claude Code", "CTX_AGENT=a\nb", "CTX_SESSION=S1", "CTX_SESSION=s 1"} {
		t.Setenv(strings.SplitN(env, "=", 2)[0], strings.SplitN(env, "=", 2)[1])
		for _, args := range [][]string{{"knowledge", "get", "arch"}, {"log"}, {"log", "-n", "1"}} {
			if r := same(t, dir, false, args...); r.code != 2 || !strings.Contains(r.stderr, "invalid key") {
				t.Errorf("%q ctx %q: exit %d %q, want 2 and the invalid key", env, args, r.code, r.stderr)
			}
		}
		os.Unsetenv("CTX_AGENT")
		os.Unsetenv("CTX_SESSION")
	}
	t.Setenv("CTX_AGENT", "claude-code")
	same(t, dir, true, "knowledge", "get", "arch")

	devFull, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer devFull.Close()
	for _, args := range [][]string{{"knowledge", "get", "arch"}, {"log"}, {"log", "-n", "1"}} {
		var got [2]string
		for i, prog := range []string{"ctx", "ctx-full"} {
			cmd := exec.Command(filepath.Join(bin, prog), args...)
			cmd.Dir, cmd.Stdout = dir, devFull
			var errb bytes.Buffer
			cmd.Stderr = &errb
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "no space left on device") {
				t.Errorf("%s %q > /dev/full: %v %q, want exit 1 and the error", prog, args, err, errb.String())
			}
			got[i] = errb.String()
		}
		if got[0] != got[1] {
			t.Errorf("ctx %q > /dev/full: front says %q, ctx-full %q", args, got[0], got[1])
		}
	}
}
