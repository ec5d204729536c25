package main_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Hostile remotes end to end (docs/security.md, "Trust boundaries: fetched trees"): a teammate or a
// compromised remote pushes a context branch whose tree is built with git plumbing to escape .context/.
// Pulled with ctx pull (C git's fetch, and go-git's without a git binary), or fetched with plain git and
// checked out through the post-checkout hook, nothing is written outside .context/, no ref moves, and
// the error names the path and the commit.

// entry is one entry a hostile commit adds: its raw names ("..", "a/b" are one name each) and mode.
type entry struct {
	names []string
	mode  string
}

// alias reports whether the entry is the harmless path a ".." path cleans to (its names are safe; ctx
// reports it as outside the layout, not as unsafe).
func (e entry) alias() bool {
	for _, n := range e.names {
		if n == ".." || strings.Contains(n, "/") {
			return false
		}
	}
	return e.mode != "120000" && (e.names[0] == ".config" || e.names[0] == ".git" || e.names[0] == "outside-slash")
}

// hostileCases are the kinds of item 1 of the threat model. A ".." path comes with the path it cleans
// to: before ctx checked names, a lookup of the cleaned path found the blob and the raw path was written.
var hostileCases = []struct {
	name    string
	entries []entry
}{
	{"dotdot-nested", []entry{{[]string{"..", "..", ".config", "git", "config"}, "100644"}, {[]string{".config", "git", "config"}, "100644"}}},
	{"dotdot-git-hooks", []entry{{[]string{"..", ".git", "hooks", "post-checkout"}, "100755"}, {[]string{".git", "hooks", "post-checkout"}, "100755"}}},
	{"slash-in-name", []entry{{[]string{"../../outside-slash"}, "100644"}, {[]string{"outside-slash"}, "100644"}}},
	{"upper-GIT", []entry{{[]string{".GIT", "config"}, "100644"}}},
	{"ntfs-short-name", []entry{{[]string{"git~1", "config"}, "100644"}}},
	{"ntfs-trailing-dot", []entry{{[]string{".git.", "config"}, "100644"}}},
	{"ntfs-trailing-space", []entry{{[]string{".git ", "config"}, "100644"}}},
	{"ntfs-stream", []entry{{[]string{".git::$INDEX_ALLOCATION", "config"}, "100644"}}},
	{"hfs-ignorable", []entry{{[]string{".g\u200cit", "config"}, "100644"}}},
	{"symlink", []entry{{[]string{"knowledge", "link.md"}, "120000"}}},
}

// pushHostile builds, in a clone of remote, a commit on top of the remote's ctx branch that adds es
// (payload: a git config that runs a command; a link points at target) and pushes it; it returns the commit.
func pushHostile(t *testing.T, remote string, es []entry, target string) string {
	t.Helper()
	e := cloneURL(t, remote, "attacker")
	parent := testenv.Git(t, e, "rev-parse", "origin/ctx")
	tree := testenv.Git(t, e, "rev-parse", "origin/ctx^{tree}")
	payload := testenv.Blob(t, e, "[core]\n\tfsmonitor = touch PWNED\n")
	link := testenv.Blob(t, e, target)
	for _, x := range es {
		h := payload
		if x.mode == "120000" {
			h = link
		}
		tree = testenv.WithEntry(t, e, tree, x.names, x.mode, h)
	}
	c := testenv.CommitTree(t, e, tree, parent, "hostile")
	testenv.Git(t, e, "push", "-q", "origin", c+":refs/heads/ctx")
	return c
}

// state maps every file below root (outside git's object store and ctx's own folder in the git dir) to
// a digest of its content; links as "link -> target".
func state(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if de.IsDir() {
			if strings.HasSuffix(rel, filepath.Join(".git", "objects")) || strings.HasSuffix(rel, filepath.Join(".git", "ctx")) ||
				strings.HasSuffix(rel, filepath.Join(".git", "logs")) {
				return filepath.SkipDir
			}
			return nil
		}
		if de.Type()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			out[rel] = "link -> " + l
			return nil
		}
		b, _ := os.ReadFile(p)
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:8])
		return nil
	})
	return out
}

// changedOutside lists the paths that differ between two states and are not below allowed (relative).
func changedOutside(a, b map[string]string, allowed ...string) []string {
	var out []string
	ok := func(p string) bool {
		for _, pre := range allowed {
			if strings.HasPrefix(p, pre+string(filepath.Separator)) || p == pre {
				return true
			}
		}
		return false
	}
	for p, v := range b {
		if a[p] != v && !ok(p) {
			out = append(out, "+"+p)
		}
	}
	for p := range a {
		if _, in := b[p]; !in && !ok(p) {
			out = append(out, "-"+p)
		}
	}
	sort.Strings(out)
	return out
}

// refs is every ref of the repository at dir with its value.
func refs(t *testing.T, dir string) string {
	t.Helper()
	return testenv.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)")
}

// hostileNamesIn reports the hostile names found below dir/.context.
func hostileNamesIn(dir string, es []entry) []string {
	var out []string
	for _, x := range es {
		p := filepath.Join(append([]string{dir, ".context"}, x.names...)...)
		if !strings.HasPrefix(filepath.Clean(p), filepath.Join(dir, ".context")+string(filepath.Separator)) {
			continue // a ".." path: checked by the state of the folders around
		}
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func TestHostileRemote(t *testing.T) {
	for _, hc := range hostileCases {
		t.Run(hc.name, func(t *testing.T) {
			base := t.TempDir()
			remote := filepath.Join(base, "remote.git")
			testenv.Git(t, "", "init", "-q", "--bare", "-b", "main", remote)
			seed := testenv.NewRepo(t)
			testenv.Git(t, seed, "push", "-q", remote, "main")
			// The victim's clone sits two levels below base, so that "../.." from its .context/ is base.
			a := filepath.Join(base, "work", "a")
			if err := os.MkdirAll(filepath.Dir(a), 0o777); err != nil {
				t.Fatal(err)
			}
			testenv.Git(t, "", "clone", "-q", remote, a)
			mustCtx(t, a, nil, 0, "init")
			mustCtx(t, a, nil, 0, "knowledge", "set", "k", "team knowledge")
			mustCtx(t, a, nil, 0, "push")
			outside := filepath.Join(base, "outside")
			if err := os.MkdirAll(outside, 0o777); err != nil {
				t.Fatal(err)
			}
			bad := pushHostile(t, remote, hc.entries, outside)

			// 1. ctx pull (C git fetch with fsck; ctx's own check).
			before, refsBefore := state(t, base), refs(t, a)
			r := ctxEnv(a, nil, "pull")
			if r.code == 0 {
				t.Fatalf("ctx pull of a hostile commit succeeded:\n%s", r.stdout)
			}
			checkRefusal(t, r, bad, hc.entries)
			if got := refs(t, a); got != refsBefore {
				t.Errorf("ctx pull moved refs:\nbefore:\n%s\nafter:\n%s", refsBefore, got)
			}
			if ch := changedOutside(before, state(t, base), "remote.git", "attacker"); len(ch) > 0 {
				t.Errorf("ctx pull changed files: %v", ch)
			}
			// The store still works.
			if got := mustCtx(t, a, nil, 0, "knowledge", "get", "k").stdout; !strings.Contains(got, "team knowledge") {
				t.Errorf("knowledge get after the refused pull: %q", got)
			}

			// 2. The same without a git binary: go-git fetches, ctx checks.
			noGit := []string{"PATH=" + filepath.Dir(ctxBin)}
			before, refsBefore = state(t, base), refs(t, a)
			r = ctxEnv(a, noGit, "pull")
			if r.code == 0 {
				t.Fatalf("ctx pull (go-git) of a hostile commit succeeded:\n%s", r.stdout)
			}
			checkRefusal(t, r, bad, hc.entries)
			if got := refs(t, a); got != refsBefore {
				t.Errorf("ctx pull (go-git) moved refs:\nbefore:\n%s\nafter:\n%s", refsBefore, got)
			}
			if ch := changedOutside(before, state(t, base), "remote.git", "attacker"); len(ch) > 0 {
				t.Errorf("ctx pull (go-git) changed files: %v", ch)
			}

			// 3. Plain git fetches the branch (no fsck), git checkout runs the post-checkout hook.
			testenv.Git(t, a, "fetch", "-q", "origin", "ctx:ctx")
			if got := testenv.Git(t, a, "rev-parse", "ctx"); got != bad {
				t.Fatalf("git fetch origin ctx:ctx: ctx at %s, want %s", got, bad)
			}
			before, refsBefore = state(t, base), refs(t, a)
			co := exec.Command("git", "checkout", "-q", "-b", "other")
			co.Dir = a
			coErr, err := co.CombinedOutput()
			if err != nil {
				t.Fatalf("git checkout failed: %v\n%s", err, coErr)
			}
			// The refresh hooks are silent (a ctx problem never shows in git checkout): ctx hooks run, ctx
			// status and ctx doctor say it.
			if got := testenv.Git(t, a, "rev-parse", "ctx"); got != bad {
				t.Errorf("the hook moved ctx from %s to %s (a commit on top of a hostile one)", bad, got)
			}
			refsAfter := refs(t, a)
			if strings.Replace(refsAfter, "refs/heads/other "+testenv.Git(t, a, "rev-parse", "main")+"\n", "", 1) != refsBefore {
				t.Errorf("the hook moved refs:\nbefore:\n%s\nafter:\n%s", refsBefore, refsAfter)
			}
			if ch := changedOutside(before, state(t, base), filepath.Join("work", "a", ".context"), filepath.Join("work", "a", ".git", "HEAD"),
				filepath.Join("work", "a", ".git", "refs", "heads", "other"), filepath.Join("work", "a", ".git", "index")); len(ch) > 0 {
				t.Errorf("the hook refresh wrote outside .context/: %v", ch)
			}
			if found := hostileNamesIn(a, hc.entries); len(found) > 0 {
				t.Errorf("the hook refresh created %v", found)
			}
			if ents, _ := os.ReadDir(outside); len(ents) > 0 {
				t.Errorf("written through the link: %v", ents)
			}
			hook := ctxEnv(a, []string{"CTX_HOOKS="}, "hooks", "run", "post-checkout", "HEAD", "HEAD", "1")
			if hook.code == 0 || !strings.Contains(hook.stderr, bad[:12]) {
				t.Errorf("ctx hooks run post-checkout: exit %d, stderr does not name commit %s:\n%s", hook.code, bad[:12], hook.stderr)
			}
			for _, x := range hc.entries {
				if q := fmt.Sprintf("%q", strings.Join(x.names, "/")); !x.alias() && !strings.Contains(hook.stderr, q) {
					t.Errorf("the hook's message does not name %s:\n%s", q, hook.stderr)
				}
			}
			// ctx status and ctx doctor list the entries; the rest still reads.
			st := mustCtx(t, a, nil, 0, "status", "--json").stdout
			var sj struct {
				Unreadable []struct {
					Path   string `json:"path"`
					Commit string `json:"commit"`
					Unsafe bool   `json:"unsafe"`
				} `json:"unreadable"`
				HandEdits []any `json:"hand_edits"`
			}
			if err := json.Unmarshal([]byte(st), &sj); err != nil {
				t.Fatal(err)
			}
			if len(sj.Unreadable) < len(hc.entries) || len(sj.HandEdits) != 0 {
				t.Errorf("ctx status --json: %s", st)
			}
			doc := ctxEnv(a, nil, "doctor")
			if doc.code != 1 || !strings.Contains(doc.stdout, bad[:12]) || !strings.Contains(doc.stdout, "[unsafe]") {
				t.Errorf("ctx doctor: exit %d\n%s%s", doc.code, doc.stdout, doc.stderr)
			}
			if got := mustCtx(t, a, nil, 0, "knowledge", "get", "k").stdout; !strings.Contains(got, "team knowledge") {
				t.Errorf("knowledge get with the hostile tip: %q", got)
			}
		})
	}
}

// checkRefusal checks that a refused pull names the commit and every hostile path.
func checkRefusal(t *testing.T, r result, commit string, es []entry) {
	t.Helper()
	if r.code != 5 {
		t.Errorf("a refused pull exits %d, want 5 (the remote sent what ctx refuses)", r.code)
	}
	if !strings.Contains(r.stderr, commit[:12]) {
		t.Errorf("the refusal does not name commit %s:\n%s", commit[:12], r.stderr)
	}
	for _, x := range es {
		if q := fmt.Sprintf("%q", strings.Join(x.names, "/")); !strings.Contains(r.stderr, q) {
			t.Errorf("the refusal does not name %s:\n%s", q, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "refs/ctx/incoming") {
		t.Errorf("the refusal mentions the quarantine ref:\n%s", r.stderr)
	}
}

// TestUnreadableRemoteEntries: a teammate's git pushes a gitlink into knowledge/ and a file where
// decisions/ is a folder. ctx pull refuses the commit before any ref moves (naming paths and commit); a
// member who fetched it with plain git still lists, exports, writes and reads over MCP, ctx status and
// ctx doctor list the entries, ctx doctor --fix removes them, and after ctx push every member pulls again.
func TestUnreadableRemoteEntries(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "team knowledge")
	mustCtx(t, a, nil, 0, "decision", "add", "Use Go", "--context", "c", "--decision", "d", "--consequences", "q")
	mustCtx(t, a, nil, 0, "push")
	b := cloneURL(t, remote, "b")
	mustCtx(t, b, nil, 0, "pull")

	e := cloneURL(t, remote, "teammate")
	parent := testenv.Git(t, e, "rev-parse", "origin/ctx")
	tree := testenv.Git(t, e, "rev-parse", "origin/ctx^{tree}")
	tree = testenv.WithEntry(t, e, tree, []string{"knowledge", "vendor"}, "160000", strings.Repeat("5a", 20))
	tree = testenv.WithEntry(t, e, tree, []string{"decisions"}, "100644", testenv.Blob(t, e, "decisions live elsewhere\n"))
	bad := testenv.CommitTree(t, e, tree, parent, "teammate's plain git")
	testenv.Git(t, e, "push", "-q", "origin", bad+":refs/heads/ctx")

	refsBefore := refs(t, a)
	r := ctxEnv(a, nil, "pull")
	if r.code == 0 {
		t.Fatalf("ctx pull of unreadable entries succeeded:\n%s", r.stdout)
	}
	for _, want := range []string{bad[:12], `"knowledge/vendor"`, `"decisions"`, "gitlink"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %s:\n%s", want, r.stderr)
		}
	}
	if got := refs(t, a); got != refsBefore {
		t.Fatalf("the refused pull moved refs:\nbefore:\n%s\nafter:\n%s", refsBefore, got)
	}

	// A member whose plain git fetched the branch: everything but those entries keeps working.
	testenv.Git(t, a, "fetch", "-q", "origin", "ctx:ctx")
	if got := mustCtx(t, a, nil, 0, "knowledge", "list").stdout; !strings.Contains(got, "k") {
		t.Errorf("knowledge list: %q", got)
	}
	mustCtx(t, a, nil, 0, "decision", "list")
	st := mustCtx(t, a, nil, 0, "status").stdout
	if !strings.Contains(st, "knowledge/vendor") || !strings.Contains(st, "decisions") {
		t.Errorf("ctx status does not list the unreadable entries:\n%s", st)
	}
	if out := mustCtx(t, a, nil, 0, "export").stdout; !strings.Contains(out, "team knowledge") {
		t.Errorf("export lacks the readable entries:\n%s", out)
	}
	mustCtx(t, a, nil, 0, "knowledge", "set", "k2", "written next to a gitlink")
	mcpReads(t, a)
	doc := ctxEnv(a, nil, "doctor")
	if doc.code != 1 || !strings.Contains(doc.stdout, "knowledge/vendor") || !strings.Contains(doc.stdout, "ctx doctor --fix") {
		t.Errorf("ctx doctor: exit %d\n%s%s", doc.code, doc.stdout, doc.stderr)
	}
	fix := mustCtx(t, a, nil, 0, "doctor", "--fix").stdout
	if !strings.Contains(fix, "removed") {
		t.Errorf("ctx doctor --fix:\n%s", fix)
	}
	mustCtx(t, a, nil, 0, "doctor")
	mustCtx(t, a, nil, 0, "push")
	// The other member pulls the repaired branch.
	mustCtx(t, b, nil, 0, "pull")
	if got := mustCtx(t, b, nil, 0, "knowledge", "get", "k2").stdout; got != "written next to a gitlink\n" {
		t.Errorf("B reads k2 = %q", got)
	}
	mustCtx(t, b, nil, 0, "doctor")
}

// mcpReads reads every context:// resource and calls get_project_context over MCP (ctx mcp serve in dir):
// none may fail.
func mcpReads(t *testing.T, dir string) {
	t.Helper()
	c, err := client.NewStdioMCPClient(ctxBin, nil, "-C", dir, "mcp", "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	initReq := mcpgo.InitializeRequest{}
	initReq.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	initReq.Params.ClientInfo = mcpgo.Implementation{Name: "hostile", Version: "1"}
	if _, err := c.Initialize(ctx, initReq); err != nil {
		t.Fatal(err)
	}
	res, err := c.ListResources(ctx, mcpgo.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) == 0 {
		t.Fatal("no resources")
	}
	for _, r := range res.Resources {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = r.URI
		if _, err := c.ReadResource(ctx, req); err != nil {
			t.Errorf("MCP read %s: %v", r.URI, err)
		}
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "get_project_context"
	var man struct {
		Project struct {
			Name string `json:"name"`
		} `json:"project"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".context", "manifest.json"))
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	req.Params.Arguments = map[string]any{"project": strings.ToLower(man.Project.Name)}
	out, err := c.CallTool(ctx, req)
	if err != nil || out.IsError {
		t.Errorf("get_project_context: %v %v", err, out)
	}
}

// TestHostileRemoteMCPPull: the MCP tool context_pull refuses a hostile commit as ctx pull does: a tool
// error naming the path and the commit, no ref moved, nothing written outside .context/.
func TestHostileRemoteMCPPull(t *testing.T) {
	base := t.TempDir()
	remote := filepath.Join(base, "remote.git")
	testenv.Git(t, "", "init", "-q", "--bare", "-b", "main", remote)
	seed := testenv.NewRepo(t)
	testenv.Git(t, seed, "push", "-q", remote, "main")
	a := filepath.Join(base, "work", "a")
	if err := os.MkdirAll(filepath.Dir(a), 0o777); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, "", "clone", "-q", remote, a)
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "team knowledge")
	mustCtx(t, a, nil, 0, "push")
	es := hostileCases[1].entries // "../.git/hooks/post-checkout"
	bad := pushHostile(t, remote, es, filepath.Join(base, "outside"))

	c, err := client.NewStdioMCPClient(ctxBin, nil, "-C", a, "mcp", "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	initReq := mcpgo.InitializeRequest{}
	initReq.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	initReq.Params.ClientInfo = mcpgo.Implementation{Name: "hostile", Version: "1"}
	if _, err := c.Initialize(ctx, initReq); err != nil {
		t.Fatal(err)
	}
	before, refsBefore := state(t, base), refs(t, a)
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "context_pull"
	req.Params.Arguments = map[string]any{}
	res, err := c.CallTool(ctx, req)
	var text string
	if err != nil {
		text = err.Error()
	} else {
		if !res.IsError {
			t.Fatalf("context_pull of a hostile commit succeeded: %+v", res.Content)
		}
		for _, ct := range res.Content {
			if tc, ok := ct.(mcpgo.TextContent); ok {
				text += tc.Text
			}
		}
	}
	if !strings.Contains(text, bad[:12]) || !strings.Contains(text, `"../.git/hooks/post-checkout"`) {
		t.Errorf("context_pull's error does not name the commit and path:\n%s", text)
	}
	if got := refs(t, a); got != refsBefore {
		t.Errorf("context_pull moved refs:\nbefore:\n%s\nafter:\n%s", refsBefore, got)
	}
	if ch := changedOutside(before, state(t, base), "remote.git", "attacker"); len(ch) > 0 {
		t.Errorf("context_pull changed files: %v", ch)
	}
}

// TestBogusConflictRecords: conflict records a teammate pushed with plain git whose path is outside the
// store (../.git/hooks/post-merge), whose id is not their file name's, or that do not parse: a pull refuses
// them like any entry ctx cannot read; fetched with plain git they are not listed by ctx conflicts,
// ctx doctor reports them (exit 1) and --fix removes them in a commit.
func TestBogusConflictRecords(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "team knowledge")
	mustCtx(t, a, nil, 0, "push")

	e := cloneURL(t, remote, "teammate")
	parent := testenv.Git(t, e, "rev-parse", "origin/ctx")
	tree := testenv.Git(t, e, "rev-parse", "origin/ctx^{tree}")
	rec := func(id, path string) string {
		return fmt.Sprintf(`{"id":%q,"path":%q,"field":"","base":null,"kept":"k","lost":"#!/bin/sh\nid\n","rule":"x","kept_by":{"author":"Eve <e@x>","commit":%q}}`+"\n", id, path, parent)
	}
	bogus := map[string]string{
		"1111111111111111.json": rec("1111111111111111", "../.git/hooks/post-merge"),
		"2222222222222222.json": rec("3333333333333333", "knowledge/k.md"),
		"4444444444444444.json": "not json\n",
	}
	for name, body := range bogus {
		tree = testenv.WithEntry(t, e, tree, []string{"conflicts", name}, "100644", testenv.Blob(t, e, body))
	}
	bad := testenv.CommitTree(t, e, tree, parent, "teammate's plain git")
	testenv.Git(t, e, "push", "-q", "origin", bad+":refs/heads/ctx")

	refsBefore := refs(t, a)
	r := ctxEnv(a, nil, "pull")
	if r.code == 0 {
		t.Fatalf("ctx pull of bogus conflict records succeeded:\n%s", r.stdout)
	}
	for _, want := range []string{bad[:12], `"conflicts/1111111111111111.json"`, `"../.git/hooks/post-merge" is no file of the store`,
		`"conflicts/2222222222222222.json"`, `"conflicts/4444444444444444.json"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %s:\n%s", want, r.stderr)
		}
	}
	if got := refs(t, a); got != refsBefore {
		t.Fatalf("the refused pull moved refs:\nbefore:\n%s\nafter:\n%s", refsBefore, got)
	}

	testenv.Git(t, a, "fetch", "-q", "origin", "ctx:ctx")
	if out := mustCtx(t, a, nil, 0, "conflicts").stdout; strings.Contains(out, "1111") || strings.Contains(out, "2222") {
		t.Errorf("ctx conflicts lists bogus records:\n%s", out)
	}
	doc := ctxEnv(a, nil, "doctor")
	if doc.code != 1 || !strings.Contains(doc.stdout, "conflicts/1111111111111111.json") || !strings.Contains(doc.stdout, "ctx doctor --fix") {
		t.Errorf("ctx doctor: exit %d\n%s%s", doc.code, doc.stdout, doc.stderr)
	}
	mustCtx(t, a, nil, 0, "doctor", "--fix")
	for name := range bogus {
		if _, err := testenv.GitErr(a, "cat-file", "-e", "refs/heads/ctx:conflicts/"+name); err == nil {
			t.Errorf("doctor --fix left conflicts/%s", name)
		}
	}
	mustCtx(t, a, nil, 0, "doctor")
	mustCtx(t, a, nil, 0, "push")
}
