package mcp

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
)

// searchJSON runs Search and returns its result as JSON.
func searchJSON(t *testing.T, st *store.Store, hist string, args map[string]any) string {
	t.Helper()
	out, err := Search(context.Background(), st, Options{HistoryDir: hist}, args)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ctxQueries are searches of the store with each filter the copy must serve as the direct read does.
var ctxQueries = []map[string]any{
	{"query": "deploy"},
	{"query": "deploy release", "limit": 50},
	{"query": "zebra", "providers": []any{"ctx"}},
	{"query": "knowledge", "event_type": "summary", "limit": 50},
	{"query": "set knowledge", "providers": []any{"ctx"}, "limit": 50},
	{"query": "deploy", "event_type": "message"},
	{"query": "deploy", "file": "knowledge/deploy.md"},
	{"query": "knowledge", "file": "knowledge/", "limit": 50},
	{"query": "knowledge", "since": "2000-01-01T00:00:00Z", "limit": 50},
	{"query": "knowledge", "until": "2000-01-01T00:00:00Z"},
	{"query": "rollback", "ctx_session_id": "ctx:sess-9"},
	{"query": "postgres", "content_scope": "transcript"},
	{"query": "decision use postgres"},
	{"query": "skill review"},
	{"query": "tie", "limit": 50},
}

// checkCopy compares every ctxQueries search from the copy with the same search reading the store
// directly (ctxIndexDisabled) and returns the number of results seen.
func checkCopy(t *testing.T, st *store.Store, hist, when string) int {
	t.Helper()
	n := 0
	for _, args := range ctxQueries {
		served := ctxIndexStats.served.Load()
		got := searchJSON(t, st, hist, args)
		if args["file"] == nil || args["event_type"] == "message" {
			if ctxIndexStats.served.Load() == served {
				t.Errorf("%s: %v was not served from the copy", when, args)
			}
		}
		ctxIndexDisabled = true
		want := searchJSON(t, st, hist, args)
		ctxIndexDisabled = false
		if got != want {
			t.Errorf("%s: %v:\ncopy   %s\ndirect %s", when, args, got, want)
		}
		n += strings.Count(got, `"provider":"ctx"`)
	}
	return n
}

// The copy answers every search as reading the store does (same results, scores, order and ties), after
// a first build and after each kind of change, which it applies without a rebuild.
func TestCtxIndexMatchesDirect(t *testing.T) {
	t.Cleanup(func() { ctxIndexDisabled = false })
	_, st := newRepo(t, store.Actor{Agent: "cli", Session: "sess-9"})
	ctx := context.Background()
	hist := filepath.Join(t.TempDir(), "history")
	setEntry(t, st, store.KnowledgeKind, "deploy", "# Deploy\nHow to deploy: make release, then tag.\n")
	setEntry(t, st, store.KnowledgeKind, "zebra", "# Zebra\nzebra stripes in the deploy logs\n")
	for i := 0; i < 6; i++ { // equal scores: the order of ties must be the store's
		setEntry(t, st, store.KnowledgeKind, fmt.Sprintf("tie-%d", i), "tie tie tie\n")
	}
	setEntry(t, st, store.KnowledgeKind, "tie.x", "tie tie tie\n")
	setEntry(t, st, store.ConventionKind, "style", "# Style\nRollback before deploy.\n")
	if _, _, err := st.AddDecision(ctx, store.NewDecision{Title: "Use Postgres", Context: "deploy", Decision: "use postgres"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.AddSkill(ctx, "review", "review a change", "Read the diff; deploy nothing.", store.Public); err != nil {
		t.Fatal(err)
	}
	built, updated := ctxIndexStats.built.Load(), ctxIndexStats.updated.Load()
	if n := checkCopy(t, st, hist, "first build"); n == 0 {
		t.Fatal("no search found a store hit")
	}
	if got := ctxIndexStats.built.Load() - built; got != 1 {
		t.Errorf("built the copy %d times, want 1", got)
	}
	fi, err := os.Stat(filepath.Join(hist, ctxIndexFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the copy: %v, %v; want a 0600 file", fi, err)
	}

	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"set a new entry", func() error {
			_, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "tie-3a", Content: "tie deploy\n"})
			return err
		}},
		{"change an entry", func() error {
			_, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "zebra", Content: "no stripes left\n"})
			return err
		}},
		{"remove an entry", func() error { _, err := st.RemoveEntry(ctx, store.KnowledgeKind, "deploy"); return err }},
		{"make an entry private", func() error { _, err := st.SetScope(ctx, "knowledge", "tie-1", store.Private); return err }},
		{"add a decision", func() error {
			_, _, err := st.AddDecision(ctx, store.NewDecision{Title: "Deploy on Fridays", Context: "never", Decision: "deploy rollback"})
			return err
		}},
		{"remove a skill", func() error { _, err := st.RemoveSkill(ctx, "review"); return err }},
		{"change a convention", func() error {
			_, err := st.SetEntry(ctx, store.ConventionKind, store.SetEntry{Key: "style", Content: "tie\n"})
			return err
		}},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		checkCopy(t, st, hist, step.name)
	}
	if got := ctxIndexStats.built.Load() - built; got != 1 {
		t.Errorf("built the copy %d times over the changes, want 1 (updates only)", got)
	}
	if got := ctxIndexStats.updated.Load() - updated; got != 7 {
		t.Errorf("updated the copy %d times, want 7 (one per change)", got)
	}
}

// A teammate's entry pulled into the store is found by the next search (the copy follows the refs), an
// entry removed with RemoveEntry (ctx knowledge rm) is gone from it, and nothing of the copy reaches the
// remote on push.
func TestCtxIndexFollowsPullAndRemove(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	hist := filepath.Join(t.TempDir(), "history")
	setEntry(t, st, store.KnowledgeKind, "db", "Use PostgreSQL.\n")
	if _, err := st.Push(ctx, store.PushOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	walrus := map[string]any{"query": "walrus", "providers": []any{"ctx"}}
	if got := searchJSON(t, st, hist, walrus); strings.Contains(got, `"key":"walrus"`) {
		t.Fatalf("walrus before the pull: %s", got)
	}
	other := filepath.Join(t.TempDir(), "other")
	git(t, filepath.Dir(other), "clone", "-q", originBare(t, dir), other)
	git(t, other, "config", "user.name", "Grace Hopper")
	git(t, other, "config", "user.email", "grace@example.com")
	ost, err := store.Open(ctx, other, store.Actor{Agent: "cursor"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ost.Pull(ctx, store.PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	setEntry(t, ost, store.KnowledgeKind, "walrus", "# Walrus\nThe walrus runs the migrations.\n")
	if _, err := ost.Push(ctx, store.PushOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pull(ctx, store.PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	served := ctxIndexStats.served.Load()
	if got := searchJSON(t, st, hist, walrus); !strings.Contains(got, `"key":"walrus"`) {
		t.Fatalf("the pulled entry is not found: %s", got)
	}
	if ctxIndexStats.served.Load() == served {
		t.Error("the search after the pull was not served from the copy")
	}
	if _, err := st.RemoveEntry(ctx, store.KnowledgeKind, "walrus"); err != nil {
		t.Fatal(err)
	}
	if got := searchJSON(t, st, hist, map[string]any{"query": "walrus", "providers": []any{"ctx"}, "event_type": "message"}); strings.Contains(got, `"key":"walrus"`) {
		t.Fatalf("the removed entry is still found: %s", got)
	}
	// The copy is a file of the local history directory: push sends refs, and no ref holds it.
	if _, err := os.Stat(filepath.Join(hist, ctxIndexFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Push(ctx, store.PushOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	bare := originBare(t, dir)
	for _, ref := range strings.Fields(git(t, bare, "for-each-ref", "--format=%(refname)")) {
		if files := git(t, bare, "ls-tree", "-r", "--name-only", ref); strings.Contains(files, "store-search") {
			t.Errorf("%s holds the copy: %s", ref, files)
		}
	}
	_ = filepath.WalkDir(bare, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "store-search") {
			t.Errorf("the remote holds %s", p)
		}
		return nil
	})
}

// A copy that cannot serve — its path a symbolic link, a file of a newer ctx, a file that is not SQLite
// — is left as it is, and the search reads the store directly with the same results.
func TestCtxIndexUnusableFallsBack(t *testing.T) {
	t.Cleanup(func() { ctxIndexDisabled = false })
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	setEntry(t, st, store.KnowledgeKind, "deploy", "# Deploy\nHow to deploy: make release.\n")
	args := map[string]any{"query": "deploy", "providers": []any{"ctx"}}
	ctxIndexDisabled = true
	want := searchJSON(t, st, filepath.Join(t.TempDir(), "h"), args)
	ctxIndexDisabled = false
	if !strings.Contains(want, `"key":"deploy"`) {
		t.Fatalf("no store hit: %s", want)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.db")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, make := range map[string]func(path string) error{
		"symlink": func(p string) error { return os.Symlink(target, p) },
		"not sqlite": func(p string) error {
			return os.WriteFile(p, []byte(strings.Repeat("not a database\n", 300)), 0o600)
		},
		"newer": func(p string) error {
			db, err := openCtxIndex(context.Background(), filepath.Dir(p))
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.Exec(`PRAGMA user_version = 99`)
			return err
		},
	} {
		hist := filepath.Join(t.TempDir(), "history")
		if err := os.MkdirAll(hist, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(hist, ctxIndexFile)
		if err := make(p); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(p)
		fallback := ctxIndexStats.fallback.Load()
		if got := searchJSON(t, st, hist, args); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
		if ctxIndexStats.fallback.Load() == fallback {
			t.Errorf("%s: the search did not read the store directly", name)
		}
		if after, _ := os.ReadFile(p); string(after) != string(before) {
			t.Errorf("%s: the unusable copy was changed", name)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the symbolic link's target was written: %q", b)
	}
}

// A long-lived server keeps the documents it read in memory while the refs do not move, and reads the
// copy again when they do: an entry set or removed between two calls is found or gone on the next.
func TestCtxIndexServerFollowsWrites(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	hist := filepath.Join(t.TempDir(), "history")
	setEntry(t, st, store.KnowledgeKind, "db", "Use PostgreSQL.\n")
	s := serve(t, st, Options{HistoryDir: hist}, "")
	find := func(q string) string {
		b, err := json.Marshal(structured(t, q, s.call(t, "search", map[string]any{"query": q, "providers": []any{"ctx"}, "event_type": "message"})))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := find("postgresql"); !strings.Contains(got, `"key":"db"`) {
		t.Fatalf("first search: %s", got)
	}
	if got := find("walrus"); strings.Contains(got, `"key":"walrus"`) {
		t.Fatalf("walrus before it was set: %s", got)
	}
	setEntry(t, st, store.KnowledgeKind, "walrus", "The walrus runs the migrations.\n")
	if got := find("walrus"); !strings.Contains(got, `"key":"walrus"`) {
		t.Errorf("walrus after it was set: %s", got)
	}
	if _, err := st.RemoveEntry(ctx, store.KnowledgeKind, "db"); err != nil {
		t.Fatal(err)
	}
	if got := find("postgresql"); strings.Contains(got, `"key":"db"`) {
		t.Errorf("db after it was removed: %s", got)
	}
}

// Searches running at once after the refs moved (each with its own connection, as processes have)
// update the copy once between them and all answer as the direct read does.
func TestCtxIndexConcurrentUpdate(t *testing.T) {
	t.Cleanup(func() { ctxIndexDisabled = false })
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	hist := filepath.Join(t.TempDir(), "history")
	setEntry(t, st, store.KnowledgeKind, "db", "Use PostgreSQL for the deploy.\n")
	args := map[string]any{"query": "deploy", "limit": 50}
	searchJSON(t, st, hist, args) // the first build
	for i := 0; i < 3; i++ {
		setEntry(t, st, store.KnowledgeKind, fmt.Sprintf("k%d", i), "deploy note\n")
	}
	ctxIndexDisabled = true
	want := searchJSON(t, st, hist, args)
	ctxIndexDisabled = false
	updated := ctxIndexStats.updated.Load()
	const n = 6
	got := make([]string, n)
	errs := make([]error, n)
	done := make(chan int)
	for i := 0; i < n; i++ {
		go func(i int) {
			defer func() { done <- i }()
			out, err := Search(context.Background(), st, Options{HistoryDir: hist}, args)
			if err != nil {
				errs[i] = err
				return
			}
			b, err := json.Marshal(out)
			got[i], errs[i] = string(b), err
		}(i)
	}
	for i := 0; i < n; i++ {
		<-done
	}
	for i := 0; i < n; i++ {
		if errs[i] != nil || got[i] != want {
			t.Errorf("search %d: %v\n%s\nwant %s", i, errs[i], got[i], want)
		}
	}
	if u := ctxIndexStats.updated.Load() - updated; u != 1 {
		t.Errorf("the copy was updated %d times by %d searches of the same refs, want 1", u, n)
	}
}

// A copy written before commits' at had milliseconds ("2026-12-02T16:17:10Z", same version 3) needs no
// rebuild: a commit document's at is parsed and formatted again when read (readDocs, CommitDoc), and a
// commit's time has whole seconds, so the hits are the ones a new copy gives, every at with milliseconds.
func TestCtxIndexCommitAtWithoutMilliseconds(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	setEntry(t, st, store.KnowledgeKind, "deploy", "# Deploy\nHow to deploy: make release.\n")
	hist := filepath.Join(t.TempDir(), "history")
	args := map[string]any{"query": "knowledge deploy", "providers": []any{"ctx"}, "limit": 50}
	want := searchJSON(t, st, hist, args)
	if !strings.Contains(want, `"kind":"commit"`) || !strings.Contains(want, `.000Z"`) {
		t.Fatalf("no commit hit with milliseconds: %s", want)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(hist, ctxIndexFile))
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`UPDATE docs SET at = substr(at, 1, 19) || 'Z' WHERE at != ''`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("no commit document in the copy")
	}
	db.Close()
	if got := searchJSON(t, st, hist, args); got != want {
		t.Errorf("with the at of an older copy: %s, want %s", got, want)
	}
}
