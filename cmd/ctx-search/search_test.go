package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctx-dev/ctx/internal/lean"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store/tipsfp"
	_ "modernc.org/sqlite"
)

// bin is the folder holding the programs as make install puts them: ctx (the front), ctx-full and
// ctx-search.
var bin string

func TestMain(m *testing.M) {
	cleanup, err := testenv.Hermetic()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "ctx-search-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	bin = dir
	for _, b := range [][2]string{{"ctx", "../ctx-front"}, {"ctx-full", "../ctx"}, {"ctx-search", "."}} {
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

// corpusDir is the shared corpus of real transcripts (as history's tests find it).
func corpusDir(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CTX_HISTORY_CORPUS"), "../../../shared/corpus/agent-history", "/work/shared/corpus/agent-history"} {
		if c == "" {
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	t.Skip("agent-history corpus not found (set CTX_HISTORY_CORPUS)")
	return ""
}

type result struct {
	stdout, stderr string
	code           int
}

func runBin(t *testing.T, dir, path string, args ...string) result {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", path, err)
	}
	return result{out.String(), errb.String(), code}
}

// corpusRepo is importCorpus's template: a repository whose history index holds the corpus, made once
// per test run in bin (which TestMain removes).
var corpusRepo struct {
	once sync.Once
	dir  string
	err  error
}

// importCorpus returns a new repository whose history index was built from every provider's folder of
// the corpus (ctx history import, one per provider): a copy of one such repository made once per test run.
func importCorpus(t *testing.T) string {
	t.Helper()
	corpus := corpusDir(t)
	corpusRepo.once.Do(func() {
		// Until the template is whole: a failure (or a t.Fatal in runBin) leaves this error for every caller.
		corpusRepo.err = fmt.Errorf("the corpus repository was not made")
		corpusRepo.dir = filepath.Join(bin, "corpus-repo")
		if corpusRepo.err = exec.Command("git", "init", "-q", "-b", "main", corpusRepo.dir).Run(); corpusRepo.err != nil {
			return
		}
		if corpusRepo.err = os.WriteFile(filepath.Join(corpusRepo.dir, "README.md"), []byte("# project\n"), 0o644); corpusRepo.err != nil {
			return
		}
		for _, args := range [][]string{{"add", "README.md"}, {"commit", "-q", "-m", "initial commit"}} {
			git := exec.Command("git", args...)
			git.Dir = corpusRepo.dir
			if out, err := git.CombinedOutput(); err != nil {
				corpusRepo.err = fmt.Errorf("git %s: %v: %s", args, err, out)
				return
			}
		}
		for _, p := range []string{"claude-code", "codex", "gemini-cli", "opencode", "cursor", "copilot-cli"} {
			r := runBin(t, corpusRepo.dir, filepath.Join(bin, "ctx-full"), "history", "import", "--provider", p, "--path", filepath.Join(corpus, p))
			if r.code != 0 {
				corpusRepo.err = fmt.Errorf("import %s: exit %d: %s", p, r.code, r.stderr)
				return
			}
		}
		corpusRepo.err = nil
	})
	if corpusRepo.err != nil {
		t.Fatal(corpusRepo.err)
	}
	dir := filepath.Join(t.TempDir(), "repo")
	if err := copyTree(corpusRepo.dir, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyTree copies the folders and regular files below src into dst (which must not exist), with their
// permission bits.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, info.Mode().Perm())
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("copy %s: not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, info.Mode().Perm())
	})
}

// same runs args with the front (which hands them to ctx-search or ctx-full) and with ctx-full alone in
// dir and fails unless standard output, standard error and the exit code are the same. served says
// whether ctx-search must answer itself (checked in process: a ctx-search that handed everything to
// ctx-full would pass the comparison).
func same(t *testing.T, dir string, served bool, args ...string) result {
	t.Helper()
	// In process first: the programs' runs may change what it finds (ctx-full brings a stale search copy
	// up to the refs).
	hist := filepath.Join(dir, ".git", "ctx", "history")
	fp := tipsFP(t, dir)
	out, ok := search(context.Background(), oneShot{hist}, fp, args)
	// Served unless ctx-full's output is what its sanitizer escaped (a snippet's control character):
	// ctx-search hands such output over.
	if ok != served && (ok || !sanitized(hist, fp, args)) {
		t.Errorf("ctx %q: served by ctx-search: %v, want %v", args, ok, served)
	}
	got := runBin(t, dir, filepath.Join(bin, "ctx"), args...)
	want := runBin(t, dir, filepath.Join(bin, "ctx-full"), args...)
	if got != want {
		t.Errorf("ctx %q:\nctx: exit %d\n%s\nstderr: %s\nctx-full: exit %d\n%s\nstderr: %s", args,
			got.code, clip(got.stdout), got.stderr, want.code, clip(want.stdout), want.stderr)
	}
	if ok && string(out) != want.stdout {
		t.Errorf("ctx %q: ctx-search's output differs from ctx-full's", args)
	}
	return want
}

// sanitized reports whether ctx-search's answer to args is one ctx-full's sanitizer escapes.
func sanitized(hist, fp string, args []string) bool {
	out, _, ok := answer(context.Background(), oneShot{hist}, fp, args)
	return ok && !lean.Printable(out)
}

// tipsFP is the fingerprint of dir's context refs as ctx-full computes it (store.HistoryTips), read with
// C git: "-" without a context branch (refs/heads/ctx).
func tipsFP(t *testing.T, dir string) string {
	t.Helper()
	rev := func(gitDir, ref string) string {
		out, err := exec.Command("git", "--git-dir", gitDir, "rev-parse", "--verify", "-q", ref+"^{commit}").Output()
		if err != nil {
			return strings.Repeat("0", 40)
		}
		return strings.TrimSpace(string(out))
	}
	git := filepath.Join(dir, ".git")
	pub := rev(git, "refs/heads/ctx")
	if pub == strings.Repeat("0", 40) {
		return "-"
	}
	local := filepath.Join(git, "ctx", "private.git")
	return tipsfp.Of(rev(local, "refs/ctx/ephemeral"), rev(local, "refs/ctx/private"), pub)
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// TestSameAsFull compares ctx search and ctx history search through the front (and so ctx-search) with
// ctx-full alone over an index of the whole corpus: the queries of bench/histsearch and a few more under
// the flag sets ctx-search answers, as text and JSON, with hits, relaxed, no hits, pages with a cursor,
// and the shapes it leaves to ctx-full (bench/search-ab.sh runs the whole matrix over a larger index).
func TestSameAsFull(t *testing.T) {
	dir := importCorpus(t)
	queries := [][]string{{"hello", "function"}, {"onboarding"}, {"todo"}, {"npm", "run", "build"}, {"apply_patch"},
		{"git", "commit"}, {"zzznomatch"}, {"README"}, {"error"}, {"the"}, {"session"}, {"test"}, {"parseSessionMeta"},
		{"README", "zzznomatch"}, {"\"quoted\"", "AND", "NOT"}, {"ünïcödé", "日本"}}
	served := [][]string{{}, {"--json"}, {"--json", "--limit", "3"}, {"--limit", "100"}, {"--json", "--limit", "1"},
		{"--json", "--scope", "calls"}, {"--scope", "transcript"}, {"--json", "--scope", "outputs", "--limit", "50"},
		{"--json", "--provider", "codex"}, {"--provider", "claude-code", "--provider", "gemini-cli", "--json"},
		{"--primary-only", "--json"}, {"--primary-only", "--scope", "all", "--json", "--limit", "7"}}
	// Every query under --json and as text; every flag set over four of the queries (in turn), under
	// one of the two command names (in turn): a matrix of every pair would run for minutes.
	cmds := [][]string{{"search"}, {"history", "search"}}
	n := 0
	for i, q := range queries {
		for j, f := range served {
			if j > 1 && (i+j)%4 != 0 {
				continue
			}
			args := append(append(append([]string{}, cmds[n%2]...), f...), q...)
			n++
			same(t, dir, true, args...)
		}
	}
	// ctx-full's: other flags, flags after the words, bad values, help, a query over the tool's bound.
	long := strings.Repeat("a", 257)
	for _, args := range [][]string{
		{"search", "--json", "--limit", "200", "README"}, {"search", "--limit", "0", "README"}, {"search", "--limit", "010", "README"},
		{"search", "--events", "README"}, {"search", "--json", "--since", "2025-01-01", "README"},
		{"search", "--provider", "ctx", "README"}, {"search", "--provider", "codex", "--provider", "codex", "README"},
		{"search", "--provider", "nope", "README"}, {"search", "--scope", "everything", "README"},
		{"search", "--type", "message", "README"}, {"search", "--json", "--file", "x.go", "README"},
		{"search", "README", "--json"}, {"search", "--json"}, {"search", "help"}, {"search", "--help"}, {"search", ""},
		{"search", "--limit=5", "README"}, {"search", "-json", "README"}, {"search", long}, {"search", "--", "README"},
		{"history", "search", "--json", "--repo", dir, "README"}, {"search", "--json", "--json", "README"},
	} {
		same(t, dir, false, args...)
	}
	// -C: the front finds the repository from it (ctx-search is given the index's folder).
	r := runBin(t, t.TempDir(), filepath.Join(bin, "ctx"), "-C", dir, "search", "--json", "README")
	want := runBin(t, t.TempDir(), filepath.Join(bin, "ctx-full"), "-C", dir, "search", "--json", "README")
	if r != want || r.code != 0 {
		t.Errorf("-C DIR: ctx exit %d, ctx-full exit %d, same output %v", r.code, want.code, r == want)
	}
	for _, args := range [][]string{{"-C", filepath.Join(dir, "nope"), "search", "README"}, {"-C", filepath.Join(dir, ".git", "HEAD"), "search", "README"}} {
		r := runBin(t, t.TempDir(), filepath.Join(bin, "ctx"), args...)
		want := runBin(t, t.TempDir(), filepath.Join(bin, "ctx-full"), args...)
		if r != want || r.code == 0 {
			t.Errorf("ctx %q: ctx exit %d, ctx-full exit %d (want an error), same output %v", args, r.code, want.code, r == want)
		}
	}
}

// TestLeavesToFull: what ctx-search does not read goes to ctx-full with the same output: output its
// sanitizer would escape (a query of a bidirectional override, echoed in the JSON, where encoding/json
// escapes a control character itself), a damaged index, no index. (A context store: TestWithStore.)
func TestLeavesToFull(t *testing.T) {
	dir := importCorpus(t)
	same(t, dir, false, "search", "--json", "abc\u202edef")
	same(t, dir, true, "search", "abc\x1b[31m") // not in the text output, escaped in JSON
	same(t, dir, true, "search", "--json", "abc\x1b[31m")

	// No index, then a damaged one.
	bare := testenv.NewRepo(t)
	for _, args := range [][]string{{"search", "--json", "README"}, {"search", "README"}} {
		got := runBin(t, bare, filepath.Join(bin, "ctx"), args...)
		want := runBin(t, bare, filepath.Join(bin, "ctx-full"), args...)
		if got != want {
			t.Errorf("no index, ctx %q: differs from ctx-full (exit %d / %d)", args, got.code, want.code)
		}
	}
	idx := filepath.Join(bare, ".git", "ctx", "history")
	if err := os.MkdirAll(idx, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(idx, "index.db"), []byte("not a database, a hand edit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := runBin(t, bare, filepath.Join(bin, "ctx"), "search", "--json", "README")
	want := runBin(t, bare, filepath.Join(bin, "ctx-full"), "search", "--json", "README")
	if got != want || got.code == 0 {
		t.Errorf("damaged index: ctx exit %d, ctx-full exit %d (want an error), same output %v", got.code, want.code, got == want)
	}
}

// TestInvalidAgentLeavesToFull: ctx-full refuses a CTX_AGENT or CTX_SESSION that is not a key on every
// command; the front hands such a search to it, not to ctx-search.
func TestInvalidAgentLeavesToFull(t *testing.T) {
	dir := importCorpus(t)
	t.Setenv("CTX_AGENT", "Claude Code")
	got := runBin(t, dir, filepath.Join(bin, "ctx"), "search", "--json", "README")
	want := runBin(t, dir, filepath.Join(bin, "ctx-full"), "search", "--json", "README")
	if got != want || got.code != 2 {
		t.Errorf("CTX_AGENT='Claude Code': ctx exit %d %q, ctx-full exit %d %q, want the same usage error", got.code, got.stderr, want.code, want.stderr)
	}
}

// TestLinksNoHeavyPackage: ctx-search links no go-git, MCP library, JSON Schema library, CLI library or
// store (depguard's search-program-is-lean rule checks its imports; this, what they bring in).
func TestLinksNoHeavyPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/ctx-dev/ctx/mcp" {
			t.Errorf("ctx-search links %s", dep)
		}
		for _, bad := range []string{"github.com/go-git", "github.com/mark3labs", "github.com/urfave", "github.com/google/jsonschema-go",
			"github.com/santhosh-tekuri", "github.com/ctx-dev/ctx/store", "github.com/ctx-dev/ctx/gitstore", "gopkg.in/yaml",
			"github.com/ProtonMail"} {
			if strings.HasPrefix(dep, bad) {
				t.Errorf("ctx-search links %s", dep)
			}
		}
	}
}

// storeRepo is importCorpus's repository with a context store of entries of every searched kind in the
// public and private scopes (each set a commit), some of whose words are the corpus queries'.
func storeRepo(t *testing.T) string {
	t.Helper()
	dir := importCorpus(t)
	full := func(args ...string) {
		t.Helper()
		if r := runBin(t, dir, filepath.Join(bin, "ctx-full"), args...); r.code != 0 {
			t.Fatalf("ctx %q: exit %d: %s", args, r.code, r.stderr)
		}
	}
	full("init")
	texts := []string{"the README explains onboarding; run npm run build first",
		"# Error handling\n\nEvery error is wrapped with context; a test covers each one.",
		"git commit messages: the subject says what, the body says why (session notes link here)",
		"hello function: parseSessionMeta reads the session header", "todo: apply_patch for the test fixtures",
		"ünïcödé 日本 notes for the README"}
	for i, txt := range texts {
		full("knowledge", "set", fmt.Sprintf("note-%d", i), txt)
	}
	full("convention", "set", "commits", "Each commit: one change, tests pass, the README updated")
	full("knowledge", "set", "private-note", "a private note about the session test error", "--scope", "private")
	full("decision", "add", "Use SQLite for the index", "--context", "the session index needs FTS",
		"--decision", "SQLite with FTS5", "--consequences", "one more test of the error paths")
	return dir
}

// copyPath is the store's search copy of dir.
func copyPath(dir string) string {
	return filepath.Join(dir, ".git", "ctx", "history", "store-search.db")
}

// TestWithStore: in a repository with a context store (entries public and private, a decision, their
// commits), once the store's search copy is current, ctx-search answers the corpus queries itself under
// every flag set it reads, with ctx-full's bytes (the store's hits merged with the index's, the cursors
// bound to the refs' fingerprint); after the refs move (a set), the stale copy is ctx-full's to update:
// ctx-search hands over, and answers again once ctx-full brought the copy up to the refs.
func TestWithStore(t *testing.T) {
	dir := storeRepo(t)
	if tipsFP(t, dir) == "-" {
		t.Fatal("no context branch after init")
	}
	// No copy yet: ctx-full builds it on its first search.
	if _, err := os.Stat(copyPath(dir)); err == nil {
		if err := os.Remove(copyPath(dir)); err != nil {
			t.Fatal(err)
		}
	}
	same(t, dir, false, "search", "--json", "README")
	if _, err := os.Stat(copyPath(dir)); err != nil {
		t.Fatalf("ctx-full made no search copy: %v", err)
	}
	queries := [][]string{{"README"}, {"onboarding"}, {"error"}, {"the"}, {"session"}, {"test"}, {"git", "commit"},
		{"hello", "function"}, {"npm", "run", "build"}, {"apply_patch"}, {"todo"}, {"zzznomatch"}, {"README", "zzznomatch"},
		{"ünïcödé", "日本"}, {"parseSessionMeta"}, {"SQLite", "index"}, {"private"}, {"commits"}, {"test", "test"}}
	flags := [][]string{{}, {"--json"}, {"--json", "--limit", "3"}, {"--limit", "100"}, {"--json", "--scope", "transcript"},
		{"--json", "--scope", "calls"}, {"--json", "--provider", "codex"}, {"--primary-only", "--json", "--limit", "7"}}
	cmds := [][]string{{"search"}, {"history", "search"}}
	storeHit := false
	for i, q := range queries {
		for j, f := range flags {
			if j > 1 && (i+j)%3 != 0 {
				continue
			}
			args := append(append(append([]string{}, cmds[(i+j)%2]...), f...), q...)
			r := same(t, dir, true, args...)
			storeHit = storeHit || strings.Contains(r.stdout, `"provider": "ctx"`)
		}
	}
	if !storeHit {
		t.Error("no answer had a hit of the context store")
	}

	// The refs move: the copy is stale until ctx-full's next search updates it.
	if r := runBin(t, dir, filepath.Join(bin, "ctx-full"), "knowledge", "set", "note-0", "the README now says: onboarding in one step"); r.code != 0 {
		t.Fatalf("set: %d %s", r.code, r.stderr)
	}
	same(t, dir, false, "search", "--json", "onboarding")
	r := same(t, dir, true, "search", "--json", "onboarding")
	if !strings.Contains(r.stdout, "one step") {
		t.Errorf("the updated entry is not among the hits: %s", clip(r.stdout))
	}
	// A private entry moves the private ref only.
	if r := runBin(t, dir, filepath.Join(bin, "ctx-full"), "knowledge", "set", "private-note", "private words: zebra", "--scope", "private"); r.code != 0 {
		t.Fatalf("set private: %d %s", r.code, r.stderr)
	}
	same(t, dir, false, "search", "zebra")
	same(t, dir, true, "search", "zebra")
}

// TestWithStoreUnusableCopy: a copy ctx-search cannot use is ctx-full's, with the same output: not a
// SQLite file, a newer version's (left alone by ctx-full, which reads the store directly), an older
// version's (rebuilt by ctx-full), a link, a copy without a fingerprint; and a fingerprint from the
// front that is not one. ctx-search writes none of them.
func TestWithStoreUnusableCopy(t *testing.T) {
	dir := storeRepo(t)
	same(t, dir, false, "search", "README") // builds the copy
	same(t, dir, true, "search", "README")
	path := copyPath(dir)
	hist := filepath.Dir(path)
	setVersion := func(v int) {
		t.Helper()
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
			t.Fatal(err)
		}
	}
	unchanged := func(what string, before []byte) {
		t.Helper()
		args := []string{"search", "--json", "README"}
		if _, ok := search(context.Background(), oneShot{hist}, tipsFP(t, dir), args); ok {
			t.Errorf("%s: served by ctx-search", what)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) {
			t.Errorf("%s: ctx-search changed the copy", what)
		}
		same(t, dir, false, args...)
	}

	// not SQLite
	junk := []byte("not a database: a hand edit\n")
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"-wal", "-shm"} {
		_ = os.Remove(path + f)
	}
	unchanged("not SQLite", junk)
	// ctx-full left the file alone and read the store directly; now remove it: ctx-full builds a new one
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	same(t, dir, false, "search", "README")
	same(t, dir, true, "search", "README")

	// a newer ctx's copy: ctx-full leaves it alone, every search is ctx-full's
	setVersion(99)
	b, _ := os.ReadFile(path)
	unchanged("newer version", b)
	same(t, dir, false, "search", "onboarding")
	// an older one: ctx-full rebuilds it, then ctx-search serves again
	setVersion(2)
	same(t, dir, false, "search", "README")
	same(t, dir, true, "search", "README")

	// no fingerprint recorded
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM meta WHERE key = 'fp'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, ok := search(context.Background(), oneShot{hist}, tipsFP(t, dir), []string{"search", "README"}); ok {
		t.Error("a copy without a fingerprint: served by ctx-search")
	}
	same(t, dir, false, "search", "README")
	same(t, dir, true, "search", "README")

	// a link to the copy
	real := filepath.Join(t.TempDir(), "real.db")
	if err := os.Rename(path, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	if _, ok := search(context.Background(), oneShot{hist}, tipsFP(t, dir), []string{"search", "README"}); ok {
		t.Error("a link: served by ctx-search")
	}
	same(t, dir, false, "search", "README")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	same(t, dir, false, "search", "README")

	// a fingerprint that is not one (the front passes 24 hex digits or "-")
	for _, fp := range []string{"", "XYZ", strings.Repeat("A", 24), strings.Repeat("0", 23)} {
		if _, ok := search(context.Background(), oneShot{hist}, fp, []string{"search", "README"}); ok {
			t.Errorf("fingerprint %q: served", fp)
		}
	}
}
