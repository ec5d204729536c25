package integrations

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/integrations")

const testdataDir = "../testdata/integrations"

var (
	srvA = Server{Command: "/usr/local/bin/ctx"}
	srvB = Server{Command: "/opt/ctx/bin/ctx", Args: []string{"mcp", "serve"}, Env: map[string]string{"CTX_LOG": "debug"}}
)

type testEnv struct{ project, home string }

func newEnv(t *testing.T) testEnv {
	t.Helper()
	return testEnv{project: t.TempDir(), home: t.TempDir()}
}

func (e testEnv) path(t *testing.T, client string, scope Scope) string {
	t.Helper()
	p, err := ConfigPath(client, e.project, e.home, scope)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e testEnv) install(t *testing.T, client string, scope Scope, srv Server, force bool) (Result, error) {
	t.Helper()
	rs, err := Install(context.Background(), e.project, e.home, []string{client}, scope, srv, force)
	if len(rs) != 1 {
		t.Fatalf("Install returned %d results (err %v)", len(rs), err)
	}
	return rs[0], err
}

func (e testEnv) remove(t *testing.T, client string, scope Scope, force bool) (Result, error) {
	t.Helper()
	rs, err := Remove(context.Background(), e.project, e.home, []string{client}, scope, "", force)
	if len(rs) != 1 {
		t.Fatalf("Remove returned %d results (err %v)", len(rs), err)
	}
	return rs[0], err
}

func (e testEnv) status(t *testing.T, client string, scope Scope) Result {
	t.Helper()
	rs, err := Status(context.Background(), e.project, e.home, []string{client}, scope, "")
	if err != nil || len(rs) != 1 {
		t.Fatalf("Status = %v, %v", rs, err)
	}
	return rs[0]
}

func wantAction(t *testing.T, op string, r Result, err error, action string, wantErr error) {
	t.Helper()
	if r.Action != action {
		t.Fatalf("%s: action %q (%s), want %q", op, r.Action, r.Message, action)
	}
	switch {
	case wantErr == nil && err != nil:
		t.Fatalf("%s: unexpected error %v", op, err)
	case wantErr != nil && !errors.Is(err, wantErr):
		t.Fatalf("%s: error %v, want %v", op, err, wantErr)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte, perm fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

func checkGolden(t *testing.T, client, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdataDir, client, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./integrations -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func checkMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
	}
}

// checkNoTemps fails if a temporary file was left next to path.
func checkNoTemps(t *testing.T, path string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		t.Fatal(err)
	}
	for _, e := range ents {
		if atomicfile.IsTemp(e.Name()) || strings.Contains(e.Name(), ".ctx-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// decoded parses data as the client's format and returns it normalised.
func decoded(t *testing.T, client string, data []byte) map[string]any {
	t.Helper()
	c, err := lookup(client)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.parse(data)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, data)
	}
	m, _ := normalize(d.value()).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// checkSemantics asserts that after equals before with only the entry
// called name set to srv's entry.
func checkSemantics(t *testing.T, client string, before, after []byte, srv Server) {
	t.Helper()
	c, _ := lookup(client)
	srv = srv.withDefaultsFor(client)
	want := decoded(t, client, before)
	servers, _ := want[c.Key].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
		want[c.Key] = servers
	}
	servers[srv.Name] = normalize(c.entry(srv))
	if got := decoded(t, client, after); !reflect.DeepEqual(got, want) {
		t.Errorf("decoded content\n got: %v\nwant: %v", got, want)
	}
}

func clientList(t *testing.T) []*Client {
	t.Helper()
	out := make([]*Client, 0, len(clients))
	for _, n := range Clients() {
		c, err := lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func TestClients(t *testing.T) {
	want := []string{"claude-code", "cursor", "vscode", "codex", "gemini", "windsurf", "opencode"}
	if got := Clients(); !slices.Equal(got, want) {
		t.Fatalf("Clients() = %v, want %v", got, want)
	}
}

// TestInstallNewFile installs into a missing file, reinstalls, and removes,
// which must delete the file again.
func TestInstallNewFile(t *testing.T) {
	for _, c := range clientList(t) {
		for _, scope := range c.Scopes {
			t.Run(c.Name+"/"+string(scope), func(t *testing.T) {
				e := newEnv(t)
				path := e.path(t, c.Name, scope)

				r, err := e.install(t, c.Name, scope, srvA, false)
				wantAction(t, "install", r, err, ActionAdded, nil)
				if r.Path != path || r.Client != c.Name {
					t.Errorf("result %+v, want path %s", r, path)
				}
				got := readFile(t, path)
				checkGolden(t, c.Name, string(scope)+"-new.golden", got)
				checkSemantics(t, c.Name, nil, got, srvA)
				checkMode(t, path, defaultPerm(scope))
				if snip, err := Snippet(c.Name, srvA); err != nil || snip != string(got) {
					t.Errorf("Snippet = %q, %v; want the new file", snip, err)
				}

				r, err = e.install(t, c.Name, scope, srvA, false)
				wantAction(t, "reinstall", r, err, ActionUnchanged, nil)
				if again := readFile(t, path); !bytes.Equal(again, got) {
					t.Errorf("reinstall changed the file:\n%s", again)
				}
				if st := e.status(t, c.Name, scope); st.Action != ActionInstalled {
					t.Errorf("status %+v, want installed", st)
				}

				r, err = e.remove(t, c.Name, scope, false)
				wantAction(t, "remove", r, err, ActionRemoved, nil)
				if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("file not deleted by remove: %v", err)
				}
				r, err = e.remove(t, c.Name, scope, false)
				wantAction(t, "remove again", r, err, ActionAbsent, nil)
				if st := e.status(t, c.Name, scope); st.Action != ActionAbsent {
					t.Errorf("status %+v, want absent", st)
				}
				checkNoTemps(t, path)
			})
		}
	}
}

// TestInstallExisting edits the hand-written fixtures <scope>-before.* that
// hold other servers, other keys, comments and unusual indentation.
func TestInstallExisting(t *testing.T) {
	for _, c := range clientList(t) {
		fixtures, _ := filepath.Glob(filepath.Join(testdataDir, c.Name, "*-before.*"))
		if len(fixtures) == 0 {
			t.Errorf("%s: no fixtures", c.Name)
		}
		for _, fx := range fixtures {
			scope := Scope(strings.SplitN(filepath.Base(fx), "-", 2)[0])
			t.Run(c.Name+"/"+string(scope), func(t *testing.T) {
				e := newEnv(t)
				path := e.path(t, c.Name, scope)
				before := readFile(t, fx)
				writeFile(t, path, before, 0o640)

				r, err := e.remove(t, c.Name, scope, false)
				wantAction(t, "remove absent entry", r, err, ActionAbsent, nil)
				if st := e.status(t, c.Name, scope); st.Action != ActionAbsent {
					t.Errorf("status %+v, want absent", st)
				}

				r, err = e.install(t, c.Name, scope, srvA, false)
				wantAction(t, "install", r, err, ActionAdded, nil)
				installed := readFile(t, path)
				checkGolden(t, c.Name, string(scope)+"-installed.golden", installed)
				checkSemantics(t, c.Name, before, installed, srvA)
				checkMode(t, path, 0o640)

				r, err = e.install(t, c.Name, scope, srvA, false)
				wantAction(t, "reinstall", r, err, ActionUnchanged, nil)
				if !bytes.Equal(readFile(t, path), installed) {
					t.Error("reinstall changed the file")
				}

				r, err = e.install(t, c.Name, scope, srvB, false)
				wantAction(t, "install different", r, err, ActionConflict, ErrConflict)
				if !bytes.Equal(readFile(t, path), installed) {
					t.Error("conflicting install changed the file")
				}
				r, err = e.install(t, c.Name, scope, srvB, true)
				wantAction(t, "install --force", r, err, ActionUpdated, nil)
				forced := readFile(t, path)
				checkGolden(t, c.Name, string(scope)+"-forced.golden", forced)
				checkSemantics(t, c.Name, before, forced, srvB)
				checkMode(t, path, 0o640)

				r, err = e.remove(t, c.Name, scope, false)
				wantAction(t, "remove", r, err, ActionRemoved, nil)
				if got := readFile(t, path); !bytes.Equal(got, before) {
					t.Errorf("remove did not restore the original file\n--- got ---\n%s\n--- want ---\n%s", got, before)
				}
				checkMode(t, path, 0o640)
				checkNoTemps(t, path)
			})
		}
	}
}

// TestForeignEntry: an entry called ctx that does not run `ctx mcp serve`
// is a conflict for every operation unless forced.
func TestForeignEntry(t *testing.T) {
	foreign := Server{Command: "/usr/bin/other-tool", Args: []string{"serve"}}
	for _, c := range clientList(t) {
		scope := c.Scopes[0]
		t.Run(c.Name, func(t *testing.T) {
			e := newEnv(t)
			path := e.path(t, c.Name, scope)
			content, err := Snippet(c.Name, foreign)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, []byte(content), 0o600)

			if st := e.status(t, c.Name, scope); st.Action != ActionConflict {
				t.Errorf("status %+v, want conflict", st)
			}
			r, err := e.remove(t, c.Name, scope, false)
			wantAction(t, "remove", r, err, ActionConflict, ErrConflict)
			r, err = e.install(t, c.Name, scope, srvA, false)
			wantAction(t, "install", r, err, ActionConflict, ErrConflict)
			if got := readFile(t, path); string(got) != content {
				t.Errorf("conflicting entry modified:\n%s", got)
			}
			r, err = e.remove(t, c.Name, scope, true)
			wantAction(t, "remove --force", r, err, ActionRemoved, nil)
			// The file was the user's (ctx did not create it): it stays, without the entry.
			if _, err := os.Stat(path); err != nil {
				t.Errorf("the user's file was deleted: %v", err)
			}
			if st := e.status(t, c.Name, scope); st.Action != ActionAbsent {
				t.Errorf("status after remove --force: %+v", st)
			}
		})
	}
}

// TestInvalid: unparseable files and files whose server table has the
// wrong type are never modified.
func TestInvalid(t *testing.T) {
	for _, c := range clientList(t) {
		scope := c.Scopes[0]
		var contents []string
		if c.Format == "toml" {
			contents = []string{"[mcp_servers.ctx\ncommand = \n", "mcp_servers = 3\n", "mcp_servers = [1]\n"}
		} else {
			contents = []string{`{"` + c.Key + `": {"a": 1,,}`, `{"` + c.Key + `": []}`, `[1, 2]`, `"str"`}
			if c.Format == "json" {
				contents = append(contents, "{\n  // comments are not JSON\n  \""+c.Key+"\": {}\n}\n")
			}
		}
		for i, content := range contents {
			t.Run(c.Name+"/"+string(rune('a'+i)), func(t *testing.T) {
				e := newEnv(t)
				path := e.path(t, c.Name, scope)
				writeFile(t, path, []byte(content), 0o644)
				r, err := e.install(t, c.Name, scope, srvA, true)
				wantAction(t, "install", r, err, ActionInvalid, ErrInvalid)
				r, err = e.remove(t, c.Name, scope, true)
				wantAction(t, "remove", r, err, ActionInvalid, ErrInvalid)
				if st := e.status(t, c.Name, scope); st.Action != ActionInvalid {
					t.Errorf("status %+v, want invalid", st)
				}
				if got := readFile(t, path); string(got) != content {
					t.Errorf("invalid file modified:\n%s", got)
				}
				checkNoTemps(t, path)
			})
		}
	}
}

// TestJSONCComments: JSONC clients accept and keep comments; a comment
// trailing the last member stays with that member.
func TestJSONCComments(t *testing.T) {
	before := "{\n  \"theme\": \"x\", // trailing\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"} // about a\n  }\n}\n"
	e := newEnv(t)
	path := e.path(t, ClientGemini, ScopeProject)
	writeFile(t, path, []byte(before), 0o644)
	r, err := e.install(t, ClientGemini, ScopeProject, srvA, false)
	wantAction(t, "install", r, err, ActionAdded, nil)
	got := string(readFile(t, path))
	want := "{\n  \"theme\": \"x\", // trailing\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // about a\n" +
		"    \"ctx\": {\n      \"command\": \"/usr/local/bin/ctx\",\n      \"args\": [\n        \"mcp\",\n        \"serve\",\n        \"--agent\",\n        \"gemini\"\n      ]\n    }\n  }\n}\n"
	if got != want {
		t.Fatalf("install:\n%s\nwant:\n%s", got, want)
	}
	r, err = e.remove(t, ClientGemini, ScopeProject, false)
	wantAction(t, "remove", r, err, ActionRemoved, nil)
	if got := string(readFile(t, path)); got != before {
		t.Fatalf("remove:\n%s\nwant:\n%s", got, before)
	}
}

// TestJSONContainerAdded: installing into a file without a server table
// adds one; removing drops it again.
func TestJSONContainerAdded(t *testing.T) {
	for _, before := range []string{"{}", "{}\n", "{\n    \"a\": 1\n}\n", "{\"a\":1}", "{\n  \"mcpServers\": {}\n}\n"} {
		e := newEnv(t)
		path := e.path(t, ClientCursor, ScopeUser)
		writeFile(t, path, []byte(before), 0o600)
		r, err := e.install(t, ClientCursor, ScopeUser, srvA, false)
		wantAction(t, "install", r, err, ActionAdded, nil)
		installed := readFile(t, path)
		checkSemantics(t, ClientCursor, []byte(before), installed, srvA)
		r, err = e.remove(t, ClientCursor, ScopeUser, false)
		wantAction(t, "remove", r, err, ActionRemoved, nil)
		got, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if strings.Contains(before, "a") {
				t.Errorf("%q: file with other content deleted", before)
			}
		case err != nil:
			t.Fatal(err)
		default:
			if !reflect.DeepEqual(decoded(t, ClientCursor, got), decoded(t, ClientCursor, []byte(before))) {
				t.Errorf("%q: after install+remove: %q", before, got)
			}
			if strings.Contains(before, "\"a\"") && string(got) != before {
				t.Errorf("%q: after install+remove: %q", before, got)
			}
		}
	}
}

func TestCodexLayouts(t *testing.T) {
	cases := []struct {
		name, before string
		force        bool
		install      bool
		action       string
		after        string // "" = unchanged
	}{
		{name: "dotted keys", before: "[mcp_servers]\nctx.command = \"ctx\"\nctx.args = [\"mcp\", \"serve\"]\nother.command = \"x\"\n",
			action: ActionRemoved, after: "[mcp_servers]\nother.command = \"x\"\n"},
		{name: "sub-table", before: "# the ctx server\n[mcp_servers.ctx]\ncommand = \"ctx\"\nargs = [\"mcp\", \"serve\"]\n\n[mcp_servers.ctx.env]\nA = \"1\"\n\n[other]\nx = 1\n",
			action: ActionRemoved, after: "[other]\nx = 1\n"},
		{name: "inline table", before: "mcp_servers = { ctx = { command = \"ctx\", args = [\"mcp\", \"serve\"] } }\n",
			action: ActionConflict},
		{name: "inline table install", before: "mcp_servers = { other = { command = \"x\" } }\n", install: true, force: true,
			action: ActionConflict},
		{name: "replace in place", before: "[mcp_servers.ctx]\ncommand = \"old\" # old\nargs = []\n\n[tui]\nx = 1\n", install: true, force: true,
			action: ActionUpdated, after: "[mcp_servers.ctx]\ncommand = \"/usr/local/bin/ctx\"\nargs = [\"mcp\", \"serve\", \"--agent\", \"codex\"]\n\n[tui]\nx = 1\n"},
		{name: "no trailing newline", before: "model = \"o3\"", install: true,
			action: ActionAdded, after: "model = \"o3\"\n\n[mcp_servers.ctx]\ncommand = \"/usr/local/bin/ctx\"\nargs = [\"mcp\", \"serve\", \"--agent\", \"codex\"]\n"},
		{name: "in mcp_servers table", before: "[mcp_servers]\nctx = { command = \"ctx\", args = [\"mcp\", \"serve\"] } # inline\nx = { command = \"x\" }\n",
			action: ActionRemoved, after: "[mcp_servers]\nx = { command = \"x\" }\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			path := e.path(t, ClientCodex, ScopeUser)
			writeFile(t, path, []byte(tc.before), 0o600)
			var (
				r   Result
				err error
			)
			if tc.install {
				r, err = e.install(t, ClientCodex, ScopeUser, srvA, tc.force)
			} else {
				r, err = e.remove(t, ClientCodex, ScopeUser, tc.force)
			}
			if r.Action != tc.action {
				t.Fatalf("action %q (%s), want %q", r.Action, r.Message, tc.action)
			}
			if (err != nil) != (tc.action == ActionConflict) {
				t.Fatalf("err = %v", err)
			}
			want := tc.after
			if want == "" {
				want = tc.before
			}
			if got := string(readFile(t, path)); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestServerNameQuoting(t *testing.T) {
	srv := Server{Name: "my.ctx/dev", Command: `C:\Tools\ctx.exe`, Env: map[string]string{"A B": "q\"uote"}}
	for _, c := range clientList(t) {
		scope := c.Scopes[0]
		t.Run(c.Name, func(t *testing.T) {
			e := newEnv(t)
			r, err := e.install(t, c.Name, scope, srv, false)
			wantAction(t, "install", r, err, ActionAdded, nil)
			checkSemantics(t, c.Name, nil, readFile(t, e.path(t, c.Name, scope)), srv)
			r, err = e.install(t, c.Name, scope, srv, false)
			wantAction(t, "reinstall", r, err, ActionUnchanged, nil)
			rs, err := Status(context.Background(), e.project, e.home, []string{c.Name}, scope, srv.Name)
			if err != nil || rs[0].Action != ActionInstalled {
				t.Errorf("status %+v, %v", rs, err)
			}
			rs, err = Remove(context.Background(), e.project, e.home, []string{c.Name}, scope, srv.Name, false)
			if err != nil || rs[0].Action != ActionRemoved {
				t.Errorf("remove %+v, %v", rs, err)
			}
		})
	}
}

func TestSymlinkedConfig(t *testing.T) {
	e := newEnv(t)
	dotfiles := t.TempDir()
	target := filepath.Join(dotfiles, "mcp.json")
	writeFile(t, target, []byte("{\n  \"mcpServers\": {}\n}\n"), 0o600)
	path := e.path(t, ClientCursor, ScopeUser)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	r, err := e.install(t, ClientCursor, ScopeUser, srvA, false)
	wantAction(t, "install", r, err, ActionAdded, nil)
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v", err)
	}
	checkSemantics(t, ClientCursor, []byte("{}"), readFile(t, target), srvA)
	checkMode(t, target, 0o600)
	checkNoTemps(t, target)
}

func TestOpenCodeJSONC(t *testing.T) {
	e := newEnv(t)
	jsonc := filepath.Join(e.project, "opencode.jsonc")
	writeFile(t, jsonc, []byte("{\n  // comment\n  \"theme\": \"x\",\n}\n"), 0o644)
	if p := e.path(t, ClientOpenCode, ScopeProject); p != jsonc {
		t.Fatalf("ConfigPath = %s, want %s", p, jsonc)
	}
	r, err := e.install(t, ClientOpenCode, ScopeProject, srvA, false)
	wantAction(t, "install", r, err, ActionAdded, nil)
	got := string(readFile(t, jsonc))
	if !strings.Contains(got, "// comment") || !strings.Contains(got, `"type": "local"`) {
		t.Errorf("opencode.jsonc:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(e.project, "opencode.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("opencode.json created next to opencode.jsonc")
	}
}

func TestArguments(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := Install(ctx, e.project, e.home, []string{"windsurf"}, ScopeProject, srvA, false); !errors.Is(err, ErrUnsupportedScope) {
		t.Errorf("windsurf project scope: %v", err)
	}
	if _, err := Install(ctx, e.project, e.home, []string{"cursor", "nope"}, ScopeProject, srvA, false); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("unknown client: %v", err)
	}
	if _, err := Install(ctx, e.project, e.home, nil, ScopeProject, srvA, false); err == nil {
		t.Error("Install without clients succeeded")
	}
	if _, err := Status(ctx, e.project, e.home, nil, "global", ""); err == nil {
		t.Error("bad scope accepted")
	}
	if ents, _ := os.ReadDir(e.project); len(ents) != 0 {
		t.Errorf("files created on argument errors: %v", ents)
	}
	rs, err := Status(ctx, e.project, e.home, nil, ScopeProject, "")
	if err != nil || len(rs) != len(clients)-1 {
		t.Errorf("Status all project = %v, %v", rs, err)
	}
	rs, err = Remove(ctx, e.project, e.home, nil, ScopeUser, "", false)
	if err != nil || len(rs) != len(clients) {
		t.Errorf("Remove all user = %v, %v", rs, err)
	}
	for _, r := range rs {
		if r.Action != ActionAbsent {
			t.Errorf("%+v", r)
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Install(canceled, e.project, e.home, []string{"cursor"}, ScopeProject, srvA, false); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// TestMixedResults: one client's conflict does not stop the others, and the
// joined error reports it.
func TestMixedResults(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.path(t, ClientCursor, ScopeProject), []byte(`{"mcpServers":{"ctx":{"command":"x"}}}`), 0o644)
	rs, err := Install(context.Background(), e.project, e.home, []string{"claude-code", "cursor", "vscode"}, ScopeProject, srvA, false)
	if !errors.Is(err, ErrConflict) || len(rs) != 3 {
		t.Fatalf("Install = %v, %v", rs, err)
	}
	got := []string{rs[0].Action, rs[1].Action, rs[2].Action}
	if !slices.Equal(got, []string{ActionAdded, ActionConflict, ActionAdded}) {
		t.Errorf("actions %v", got)
	}
}

func TestIsCtxServer(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []string
		want bool
	}{
		{"ctx", []string{"mcp", "serve"}, true},
		{"/usr/local/bin/ctx", []string{"mcp", "serve", "--verbose"}, true},
		{`C:\bin\CTX.EXE`, []string{"mcp", "serve"}, true},
		{"ctx", []string{"mcp"}, false},
		{"npx", []string{"ctx", "mcp", "serve"}, false},
		{"/bin/ctxd", []string{"mcp", "serve"}, false},
	} {
		if got := IsCtxServer(tc.cmd, tc.args); got != tc.want {
			t.Errorf("IsCtxServer(%q, %q) = %v", tc.cmd, tc.args, got)
		}
	}
}

// TestCRLF: files with Windows line endings get CRLF in the new entry and
// are restored exactly by remove.
func TestCRLF(t *testing.T) {
	for client, before := range map[string]string{
		ClientGemini: "{\r\n  \"theme\": \"x\",\r\n  \"mcpServers\": {\r\n    \"a\": {\"command\": \"a\"}\r\n  }\r\n}\r\n",
		ClientVSCode: "{\r\n\t// c\r\n\t\"servers\": {},\r\n}\r\n",
		ClientCodex:  "model = \"o3\"\r\n\r\n[tui]\r\nx = 1\r\n",
	} {
		t.Run(client, func(t *testing.T) {
			e := newEnv(t)
			path := e.path(t, client, ScopeProject)
			writeFile(t, path, []byte(before), 0o644)
			r, err := e.install(t, client, ScopeProject, srvA, false)
			wantAction(t, "install", r, err, ActionAdded, nil)
			got := readFile(t, path)
			if n := bytes.Count(got, []byte("\n")); n != bytes.Count(got, []byte("\r\n")) {
				t.Errorf("mixed line endings:\n%q", got)
			}
			checkSemantics(t, client, []byte(before), got, srvA)
			r, err = e.remove(t, client, ScopeProject, false)
			wantAction(t, "remove", r, err, ActionRemoved, nil)
			if got := string(readFile(t, path)); got != before {
				t.Errorf("remove: %q, want %q", got, before)
			}
		})
	}
}

// TestEmptyTableWithComments: a server table that carries comments is kept
// (as {}) when its last entry is removed.
func TestEmptyTableWithComments(t *testing.T) {
	for _, before := range []string{
		"{\n  \"mcpServers\": {}, // keep me\n  \"a\": 1\n}\n",
		"{\n  // servers\n  \"mcpServers\": {}\n}\n",
		"{\n  \"a\": 1,\n  \"mcpServers\": {} /* keep */\n}\n",
	} {
		e := newEnv(t)
		path := e.path(t, ClientGemini, ScopeProject)
		writeFile(t, path, []byte(before), 0o644)
		r, err := e.install(t, ClientGemini, ScopeProject, srvA, false)
		wantAction(t, "install", r, err, ActionAdded, nil)
		r, err = e.remove(t, ClientGemini, ScopeProject, false)
		wantAction(t, "remove", r, err, ActionRemoved, nil)
		if got := string(readFile(t, path)); got != before {
			t.Errorf("got %q, want %q", got, before)
		}
	}
}

// TestRemoveGivesBackTheUsersFile: a config file the user had before install comes back byte for byte
// after install + remove, even when it held nothing but an empty server table (it used to be deleted); a
// file install created is deleted again; a file edited since install keeps the edit and loses only ctx's
// entry.
func TestRemoveGivesBackTheUsersFile(t *testing.T) {
	for _, c := range clientList(t) {
		scope := c.Scopes[0]
		var before []string
		switch c.Format {
		case "toml":
			before = []string{"", "# my codex settings\n", "[" + c.Key + "]\n"}
		default:
			before = []string{"{}\n", "{\"" + c.Key + "\": {}}", "{\n  \"" + c.Key + "\": {\n  }\n}\n"}
		}
		t.Run(c.Name, func(t *testing.T) {
			for _, content := range before {
				e := newEnv(t)
				path := e.path(t, c.Name, scope)
				writeFile(t, path, []byte(content), 0o644)
				r, err := e.install(t, c.Name, scope, srvA, false)
				wantAction(t, "install", r, err, ActionAdded, nil)
				r, err = e.remove(t, c.Name, scope, false)
				wantAction(t, "remove", r, err, ActionRemoved, nil)
				got, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%q: the user's file is gone: %v", content, err)
					continue
				}
				if string(got) != content {
					t.Errorf("%q: after install and remove the file is %q", content, got)
				}
			}
			// Created by install: deleted by remove.
			e := newEnv(t)
			path := e.path(t, c.Name, scope)
			r, err := e.install(t, c.Name, scope, srvA, false)
			wantAction(t, "install", r, err, ActionAdded, nil)
			r, err = e.remove(t, c.Name, scope, false)
			wantAction(t, "remove", r, err, ActionRemoved, nil)
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the file install created is left: %v", err)
			}
			// Edited since install: the edit stays, only the entry goes.
			e = newEnv(t)
			path = e.path(t, c.Name, scope)
			writeFile(t, path, []byte(before[0]), 0o644)
			if _, err := e.install(t, c.Name, scope, srvA, false); err != nil {
				t.Fatal(err)
			}
			other := Server{Name: "other", Command: "/usr/bin/other", Args: []string{"serve"}}
			if _, err := e.install(t, c.Name, scope, other, false); err != nil {
				t.Fatal(err)
			}
			if _, err := e.remove(t, c.Name, scope, false); err != nil {
				t.Fatal(err)
			}
			rs, err := Status(context.Background(), e.project, e.home, []string{c.Name}, scope, "other")
			if err != nil || len(rs) != 1 || rs[0].Action != ActionConflict {
				t.Errorf("the other entry after removing ctx's: %+v %v", rs, err)
			}
		})
	}
}

// TestMain runs the tests without the user's CODEX_HOME, XDG_CONFIG_HOME, ...: user-scope files are under
// the test's home unless a test sets getenv.
func TestMain(m *testing.M) {
	getenv = noEnv
	os.Exit(m.Run())
}

// TestUserScopeFollowsEnvVars: with CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME or XDG_CONFIG_HOME set,
// user-scope install, status and remove use the file the client reads then (it used to write under the
// home directory, where the client does not look); ConfigPath keeps the default.
func TestUserScopeFollowsEnvVars(t *testing.T) {
	ctx := context.Background()
	project, home, alt := t.TempDir(), t.TempDir(), t.TempDir()
	vars := map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(alt, "claude"), "CODEX_HOME": filepath.Join(alt, "codex"),
		"GEMINI_CLI_HOME": filepath.Join(alt, "gemini"), "XDG_CONFIG_HOME": filepath.Join(alt, "xdg")}
	getenv = func(k string) string { return vars[k] }
	defer func() { getenv = noEnv }()
	want := map[string]string{
		ClientClaudeCode: filepath.Join(alt, "claude", ".claude.json"),
		ClientCodex:      filepath.Join(alt, "codex", "config.toml"),
		ClientGemini:     filepath.Join(alt, "gemini", ".gemini", "settings.json"),
		ClientOpenCode:   filepath.Join(alt, "xdg", "opencode", "opencode.json"),
	}
	for client, path := range want {
		rs, err := Install(ctx, project, home, []string{client}, ScopeUser, Server{}, false)
		if err != nil || len(rs) != 1 || rs[0].Path != path {
			t.Fatalf("%s: install: %+v %v, want %s", client, rs, err, path)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: %v", client, err)
		}
		if st, err := Status(ctx, project, home, []string{client}, ScopeUser, ""); err != nil || st[0].Path != path {
			t.Errorf("%s: status %+v %v", client, st, err)
		}
		if def, _ := ConfigPath(client, project, home, ScopeUser); strings.HasPrefix(def, alt) {
			t.Errorf("%s: ConfigPath %s follows the environment", client, def)
		}
	}
	for _, f := range []string{".claude.json", ".codex", ".gemini", ".config"} {
		if _, err := os.Stat(filepath.Join(home, f)); err == nil {
			t.Errorf("~/%s was written", f)
		}
	}
}
