package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// plumbCommit commits files on ref with the git CLI only, as a ctx that predates the sharded layout (or a
// teammate's own git) would: a temporary index loaded from the ref, one blob per file ("" deletes the
// path), write-tree, commit-tree, and update-ref with the old value checked.
func plumbCommit(t testing.TB, dir, ref string, files map[string]string, msg string) {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index")
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	old := git("", "rev-parse", ref)
	git("", "read-tree", ref)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if files[p] == "" {
			git("", "update-index", "--force-remove", p)
			continue
		}
		blob := git(files[p], "hash-object", "-w", "--stdin")
		git("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	}
	tree := git("", "write-tree")
	c := git("", "commit-tree", tree, "-p", old, "-m", msg)
	git("", "update-ref", ref, c, old)
}

func session(id, started, summary string) string {
	return `{"id": "` + id + `", "agent": "cli", "user": "Ada", "machine": "m", "started": "` + started +
		`", "ended": null, "summary": "` + summary + `", "knowledge_added": [], "decisions_added": [], "skills_used": []}` + "\n"
}

// TestMigrateMergesWithTeammateOnFlatLayout: a store in the flat layout (as a ctx before layout 2 wrote
// it); clone A runs ctx migrate (one commit) and pushes; clone B, still on the flat layout, updates a
// session and adds one at history/<id>.json and a usage line in .usage.ndjson with the git CLI, and
// pushes with ctx (which merges A's migration first); A pulls. Both end on the same tip, every record is
// there once, at its sharded path when either side sharded it, and git fsck is clean.
func TestMigrateMergesWithTeammateOnFlatLayout(t *testing.T) {
	remote := testenv.BareRemote(t)
	seed := testenv.NewRepo(t)
	testenv.Git(t, seed, "remote", "add", "origin", remote)
	testenv.Git(t, seed, "push", "-q", "origin", "main")
	mustCtx(t, seed, nil, 0, "init", "--no-hooks")
	mustCtx(t, seed, nil, 0, "skill", "add", "lint", "-d", "Run the linters", "make lint")
	// The flat layout of an older ctx: no "layout" in the manifest, sessions and logs flat.
	manifest := testenv.Git(t, seed, "show", "ctx:manifest.json")
	flatManifest := strings.Replace(manifest, ",\n  \"layout\": 2", "", 1)
	if flatManifest == manifest {
		t.Fatalf("manifest of ctx init has no layout 2:\n%s", manifest)
	}
	plumbCommit(t, seed, "refs/heads/ctx", map[string]string{
		"manifest.json":         flatManifest + "\n",
		"history/s-old1.json":   session("s-old1", "2025-05-10T14:00:00Z", "first"),
		"history/s-old2.json":   session("s-old2", "2025-06-01T09:00:00Z", "second"),
		"history/s-nodate.json": session("s-nodate", "yesterday", "no date"),
		"skills/lint/.usage.ndjson": `{"id":"u1","session_id":"s-old1","agent":"a","timestamp":"2025-05-10T14:05:00Z"}` + "\n" +
			`{"id":"u2","session_id":"s-old2","agent":"a","timestamp":"2025-06-01T09:05:00Z"}` + "\n",
	}, "ctx 0.4 store")
	mustCtx(t, seed, nil, 0, "push")

	a, b := testenv.Clone(t, remote, "a"), testenv.Clone(t, remote, "b")
	for _, c := range []string{a, b} {
		mustCtx(t, c, nil, 0, "pull")
	}
	// ctx of layout 2 in a flat store writes flat (teammates' older ctx reads it)...
	mustCtx(t, b, nil, 0, "session", "update", "s-old2", "-m", "second, updated by B's ctx")
	if !inRef(t, b, "ctx", "history/s-old2.json") {
		t.Fatalf("a write in a flat store moved the record:\n%s", testenv.Git(t, b, "ls-tree", "-r", "--name-only", "ctx"))
	}

	// A migrates: one commit.
	before := testenv.Git(t, a, "rev-parse", "ctx")
	out := mustCtx(t, a, nil, 0, "migrate").stdout
	if !strings.Contains(out, "moved 2 session record(s)") || !strings.Contains(out, "split 1 skill log(s)") ||
		!strings.Contains(out, "kept history/s-nodate.json") {
		t.Fatalf("migrate:\n%s", out)
	}
	if n := testenv.Git(t, a, "rev-list", "--count", before+"..ctx"); n != "1" {
		t.Fatalf("migrate made %s commits, want 1", n)
	}
	tree := testenv.Git(t, a, "ls-tree", "-r", "--name-only", "ctx")
	for _, want := range []string{"history/2025/05/s-old1.json", "history/2025/06/s-old2.json", "history/s-nodate.json",
		"skills/lint/.usage/2025-05.ndjson", "skills/lint/.usage/2025-06.ndjson"} {
		if !strings.Contains(tree+"\n", want+"\n") {
			t.Errorf("migrated tree lacks %s:\n%s", want, tree)
		}
	}
	if strings.Contains(tree, "history/s-old1.json") || strings.Contains(tree, ".usage.ndjson") {
		t.Errorf("migrated tree keeps flat files:\n%s", tree)
	}
	if out := mustCtx(t, a, nil, 0, "migrate").stdout; !strings.Contains(out, "unchanged, no commit") {
		t.Errorf("second migrate:\n%s", out)
	}
	mustCtx(t, a, nil, 0, "push")

	// B, on the flat layout, writes with the git CLI: edits a session A moved, adds a flat session and a
	// usage line to the flat log A split.
	plumbCommit(t, b, "refs/heads/ctx", map[string]string{
		"history/s-old1.json": session("s-old1", "2025-05-10T14:00:00Z", "first, ended by B"),
		"history/s-b.json":    session("s-b", "2025-07-02T10:00:00Z", "from B"),
		"skills/lint/.usage.ndjson": `{"id":"u1","session_id":"s-old1","agent":"a","timestamp":"2025-05-10T14:05:00Z"}` + "\n" +
			`{"id":"u2","session_id":"s-old2","agent":"a","timestamp":"2025-06-01T09:05:00Z"}` + "\n" +
			`{"id":"u3","session_id":"s-b","agent":"b","timestamp":"2025-07-02T10:05:00Z"}` + "\n",
	}, "B's flat-layout writes")
	mustCtx(t, b, nil, 0, "sync") // the remote moved: ctx merges A's migration, then pushes
	mustCtx(t, a, nil, 0, "pull")

	if ta, tb := testenv.Git(t, a, "rev-parse", "ctx"), testenv.Git(t, b, "rev-parse", "ctx"); ta != tb {
		t.Fatalf("clones differ: %s %s", ta, tb)
	}
	tree = testenv.Git(t, a, "ls-tree", "-r", "--name-only", "ctx")
	for _, want := range []string{"history/2025/05/s-old1.json", "history/2025/06/s-old2.json", "history/s-b.json",
		"skills/lint/.usage/2025-07.ndjson"} {
		if !strings.Contains(tree+"\n", want+"\n") {
			t.Errorf("merged tree lacks %s:\n%s", want, tree)
		}
	}
	for _, gone := range []string{"history/s-old1.json", "history/s-old2.json", "skills/lint/.usage.ndjson", "conflicts/"} {
		if strings.Contains(tree, gone) {
			t.Errorf("merged tree holds %s:\n%s", gone, tree)
		}
	}
	for _, c := range []string{a, b} {
		fsck(t, c)
		mustCtx(t, c, nil, 0, "doctor")
		var list []struct{ ID, Summary string }
		if err := json.Unmarshal([]byte(mustCtx(t, c, nil, 0, "session", "list", "--json").stdout), &list); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range list {
			if _, dup := got[s.ID]; dup {
				t.Errorf("session %s listed twice", s.ID)
			}
			got[s.ID] = s.Summary
		}
		if len(got) != 4 || got["s-old1"] != "first, ended by B" || got["s-old2"] != "second, updated by B's ctx" || got["s-b"] != "from B" {
			t.Errorf("sessions in %s: %v", c, got)
		}
		var stats []struct {
			SkillName  string `json:"skill_name"`
			UsageCount int    `json:"usage_count"`
		}
		if err := json.Unmarshal([]byte(mustCtx(t, c, nil, 0, "skill", "stats", "--json").stdout), &stats); err != nil {
			t.Fatal(err)
		}
		if len(stats) != 1 || stats[0].UsageCount != 3 {
			t.Errorf("skill stats in %s: %+v", c, stats)
		}
		if out := mustCtx(t, c, nil, 0, "session", "show", "s-old1").stdout; !strings.Contains(out, "ended by B") {
			t.Errorf("session show s-old1: %s", out)
		}
	}
	// The next write of B's flat session by a ctx of layout 2 moves it to its month.
	mustCtx(t, a, nil, 0, "session", "end", "s-b", "-m", "done")
	tree = testenv.Git(t, a, "ls-tree", "-r", "--name-only", "ctx")
	if !strings.Contains(tree, "history/2025/07/s-b.json") || strings.Contains(tree, "history/s-b.json") {
		t.Errorf("s-b not moved on write:\n%s", tree)
	}
}
