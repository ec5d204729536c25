package gitstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestCheckName: git fsck's rules for tree entry names (hasDot, hasDotdot, hasDotgit with the NTFS and
// HFS+ aliases, fullPathname, emptyName) plus ctx's stricter ones; ordinary names of the store pass.
func TestCheckName(t *testing.T) {
	bad := []string{
		"", ".", "..", "a/b", "../x", "a\x00b", `..\x`, `a\b`,
		".git", ".GIT", ".Git", ".git.", ".git ", ".git . .", ".git::$INDEX_ALLOCATION", ".git:stream",
		"git~1", "GIT~1", "git~1.", "git~2",
		".g\u200cit", "\u200c.git", ".gi\u200dt", "\ufeff.git", ".GI\u206at", ".git\u200e",
		strings.Repeat("a", 256),
	}
	for _, n := range bad {
		err := gitstore.CheckName(n)
		if err == nil || !errors.Is(err, gitstore.ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want ErrBadName", n, err)
		}
	}
	good := []string{
		"knowledge", "architecture.md", "0004-use-postgresql.md", ".feedback.ndjson", ".proposals",
		".gitignore", ".github", "git", "git~", "git~a", ".gitx", "..x", "x..", "...", "a b", "ünïcödé.md",
		"日本語.md", strings.Repeat("a", 255),
	}
	for _, n := range good {
		if err := gitstore.CheckName(n); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", n, err)
		}
	}
}

// TestDiffItemsAndCheckHistory: a hostile tree (names "..", "a/b", ".git", a duplicated name) written with
// git plumbing is walked entry by entry with its raw names, and CheckHistory names the commit and path of
// every unsafe entry that the fetched commits added, not those of known commits.
func TestDiffItemsAndCheckHistory(t *testing.T) {
	dir := testenv.NewRepo(t)
	blob := testenv.Blob(t, dir, "payload\n")
	good := testenv.WithEntry(t, dir, "", []string{"knowledge", "a.md"}, "100644", blob)
	c1 := testenv.CommitTree(t, dir, good, "", "good")
	hostile := testenv.WithEntry(t, dir, good, []string{"..", "..", ".config", "git", "config"}, "100644", blob)
	hostile = testenv.WithEntry(t, dir, hostile, []string{"knowledge/x.md"}, "100644", blob)
	hostile = testenv.WithEntry(t, dir, hostile, []string{".GIT", "hooks", "post-checkout"}, "100644", blob)
	c2 := testenv.CommitTree(t, dir, hostile, c1, "hostile")
	testenv.Git(t, dir, "update-ref", "refs/heads/h", c2)

	r := open(t, dir)
	added, removed, err := r.DiffItems(bg, gitstore.NewHash(good), gitstore.NewHash(hostile))
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 0 {
		t.Errorf("removed = %v", removed)
	}
	var paths []string
	for _, it := range added {
		paths = append(paths, strings.Join(it.Names, "|"))
		if gitstore.CheckItem(it) == nil {
			t.Errorf("CheckItem(%q) passed", it.Names)
		}
	}
	want := "..|..|.config|git|config .GIT|hooks|post-checkout knowledge/x.md"
	if got := strings.Join(sortStrings(paths), " "); got != want {
		t.Errorf("added = %s, want %s", got, want)
	}

	probs, err := r.CheckHistory(bg, gitstore.NewHash(c2), nil, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 3 {
		t.Fatalf("CheckHistory: %d problems, want 3: %v", len(probs), probs)
	}
	for _, p := range probs {
		if p.Commit.String() != c2 {
			t.Errorf("problem %v names commit %s, want %s", p.Item.Names, p.Commit, c2)
		}
	}
	// The hostile commit is known (already had): nothing new to check.
	if probs, err := r.CheckHistory(bg, gitstore.NewHash(c2), []gitstore.Hash{gitstore.NewHash(c2)}, 0, 0); err != nil || len(probs) != 0 {
		t.Errorf("CheckHistory with the tip known: %v %v", probs, err)
	}
	// A good commit on top of the hostile one still brings the hostile one.
	c3 := testenv.CommitTree(t, dir, good, c2, "repair on top")
	probs, err = r.CheckHistory(bg, gitstore.NewHash(c3), []gitstore.Hash{gitstore.NewHash(c1)}, 0, 0)
	if err != nil || len(probs) != 3 || probs[0].Commit.String() != c2 {
		t.Errorf("CheckHistory(c3 not c1) = %v %v, want the 3 problems of %s", probs, err, c2)
	}

	// Duplicated names and a symbolic link: the duplicate is unsafe, the link passes CheckItem (the store
	// decides about links).
	dup := testenv.RawTree(t, dir,
		testenv.TreeEntry{Mode: "100644", Name: "a.md", Hash: blob},
		testenv.TreeEntry{Mode: "100644", Name: "a.md", Hash: blob},
		testenv.TreeEntry{Mode: "120000", Name: "l.md", Hash: testenv.Blob(t, dir, "/etc/passwd")})
	added, _, err = r.DiffItems(bg, gitstore.ZeroHash, gitstore.NewHash(dup))
	if err != nil {
		t.Fatal(err)
	}
	var dupErr, linkOK bool
	for _, it := range added {
		switch it.Path() {
		case "a.md":
			dupErr = dupErr || gitstore.CheckItem(it) != nil
		case "l.md":
			linkOK = gitstore.CheckItem(it) == nil && it.Kind() == "symbolic link" && !it.IsFile()
		}
	}
	if !dupErr || !linkOK {
		t.Errorf("duplicate refused %v, link passes as a link %v: %v", dupErr, linkOK, added)
	}
}

// TestRemoveItems removes entries by raw names, hostile ones included, and drops folders left empty.
func TestRemoveItems(t *testing.T) {
	dir := testenv.NewRepo(t)
	blob := testenv.Blob(t, dir, "x\n")
	tree := testenv.WithEntry(t, dir, "", []string{"knowledge", "a.md"}, "100644", blob)
	tree = testenv.WithEntry(t, dir, tree, []string{"..", ".git", "config"}, "100644", blob)
	tree = testenv.WithEntry(t, dir, tree, []string{"knowledge", "vendor"}, "160000", strings.Repeat("ab", 20))
	r := open(t, dir)
	got, err := r.RemoveItems(bg, "refs/heads/ctx", gitstore.NewHash(tree), [][]string{{"..", ".git", "config"}, {"knowledge", "vendor"}})
	if err != nil {
		t.Fatal(err)
	}
	want := testenv.WithEntry(t, dir, "", []string{"knowledge", "a.md"}, "100644", blob)
	if got.String() != want {
		t.Errorf("RemoveItems: %s\n%s", testenv.Git(t, dir, "ls-tree", "-r", got.String()), testenv.Git(t, dir, "ls-tree", "-r", want))
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestHFSDotGitASCIIFastPath: for names of ASCII bytes, the HFS+ alias check answers without decoding the
// name, as the general path does, over every name of up to 5 bytes drawn from the letters of ".git" in
// both cases, the NTFS look-alikes' characters and a few others, and over random ASCII names.
func TestHFSDotGitASCIIFastPath(t *testing.T) {
	alphabet := []byte(".gitGIT~1 :/\\xa-_")
	var names []string
	var gen func(prefix []byte)
	gen = func(prefix []byte) {
		names = append(names, string(prefix))
		if len(prefix) == 4 {
			return
		}
		for _, c := range alphabet {
			gen(append(prefix, c))
		}
	}
	gen(nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		b := make([]byte, 1+rng.IntN(12))
		for j := range b {
			b[j] = byte(rng.IntN(128))
		}
		names = append(names, string(b))
	}
	hits := 0
	for _, n := range names {
		got, want := gitstore.IsHFSDotGit(n), gitstore.IsHFSDotGitUTF8(n)
		if got != want {
			t.Fatalf("%q: fast path %v, general path %v", n, got, want)
		}
		if got {
			hits++
		}
	}
	if hits != 8 { // ".git" in each of its 8 cases
		t.Fatalf("%d names taken for .git, want the 8 cases of .git", hits)
	}
	// Names outside ASCII still go the general way.
	for _, n := range []string{".g\u200cit", "\ufeff.GIT", ".gït"} {
		if gitstore.IsHFSDotGit(n) != gitstore.IsHFSDotGitUTF8(n) {
			t.Fatalf("%q: paths disagree", n)
		}
	}
}

// TestCountEntries: CountEntries counts every path of a tree, files and folders, as `git ls-tree -r -t`
// lists them (a subtree under two names counts twice), and stops just past its limit: a few trees that name
// one subtree twice at each level are counted in limit steps, not 2^depth (docs/limits.md "Files of a
// fetched tip").
func TestCountEntries(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	blob := testenv.Blob(t, dir, "x\n")
	deep := testenv.GitIn(t, dir, fmt.Sprintf("100644 blob %s\tf\n", blob), "mktree")
	for i := 0; i < 5; i++ {
		deep = testenv.GitIn(t, dir, fmt.Sprintf("040000 tree %s\ta\n040000 tree %s\tb\n100644 blob %s\tg\n", deep, deep, blob), "mktree")
	}
	want := len(strings.Split(testenv.Git(t, dir, "ls-tree", "-r", "-t", deep), "\n"))
	for _, tc := range []struct{ limit, want int }{{1000, want}, {want, want}, {want - 1, want}, {10, 11}, {0, 1}} {
		if n, err := r.CountEntries(bg, gitstore.NewHash(deep), tc.limit); err != nil || n != tc.want {
			t.Errorf("limit %d: %d, %v; want %d", tc.limit, n, err, tc.want)
		}
	}
	if n, err := r.CountEntries(bg, gitstore.ZeroHash, 10); err != nil || n != 0 {
		t.Errorf("the empty tree: %d, %v", n, err)
	}
}

// TestDiffItemsWithin: a bounded diff returns what DiffItems returns while each tree's visited entries
// stay within the bound, and stops with ErrTooManyEntries past it, on either side and on both of
// diffItems' paths; CheckHistory names the commit whose diff ran over (a TooManyEntriesError), even under
// a clean tip (docs/limits.md "Files of a fetched tip").
func TestDiffItemsWithin(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	blob := testenv.Blob(t, dir, "x\n")
	deep := testenv.GitIn(t, dir, fmt.Sprintf("100644 blob %s\tf\n", blob), "mktree")
	for i := 0; i < 5; i++ {
		deep = testenv.GitIn(t, dir, fmt.Sprintf("040000 tree %s\ta\n040000 tree %s\tb\n100644 blob %s\tg\n", deep, deep, blob), "mktree")
	}
	n := len(strings.Split(testenv.Git(t, dir, "ls-tree", "-r", "-t", deep), "\n"))
	other := testenv.WithEntry(t, dir, deep, []string{"a", "a", "h"}, "100644", blob)
	for _, mapOnly := range []bool{false, true} {
		restore := gitstore.SetMapDiffOnly(mapOnly)
		for _, d := range [][2]string{{"", deep}, {deep, ""}, {deep, other}} {
			a, b := gitstore.NewHash(d[0]), gitstore.NewHash(d[1])
			if d[0] == "" {
				a = gitstore.ZeroHash
			}
			if d[1] == "" {
				b = gitstore.ZeroHash
			}
			wantAdded, wantRemoved, err := r.DiffItems(bg, a, b)
			if err != nil {
				t.Fatal(err)
			}
			added, removed, err := r.DiffItemsWithin(bg, a, b, n+1)
			if err != nil || fmt.Sprint(added) != fmt.Sprint(wantAdded) || fmt.Sprint(removed) != fmt.Sprint(wantRemoved) {
				t.Errorf("map %v, %s..%s within %d: %v; want DiffItems' %d added, %d removed", mapOnly, d[0], d[1], n+1, err, len(wantAdded), len(wantRemoved))
			}
			if d[1] == other {
				continue // the diff of two trees sharing most of their subtrees visits few entries
			}
			if _, _, err := r.DiffItemsWithin(bg, a, b, n-1); !errors.Is(err, gitstore.ErrTooManyEntries) {
				t.Errorf("map %v, %s..%s within %d: %v; want ErrTooManyEntries", mapOnly, d[0], d[1], n-1, err)
			}
		}
		restore()
	}
	// A commit of that tree under a clean tip: its diff against its parent runs over a bound of 10.
	c1 := testenv.CommitTree(t, dir, testenv.WithEntry(t, dir, "", []string{"k.md"}, "100644", blob), "", "clean")
	c2 := testenv.CommitTree(t, dir, deep, c1, "deep")
	c3 := testenv.CommitTree(t, dir, testenv.WithEntry(t, dir, "", []string{"k.md"}, "100644", blob), c2, "clean again")
	_, err := r.CheckHistory(bg, gitstore.NewHash(c3), []gitstore.Hash{gitstore.NewHash(c1)}, 0, 10)
	var many *gitstore.TooManyEntriesError
	if !errors.As(err, &many) || !errors.Is(err, gitstore.ErrTooManyEntries) || many.Max != 10 ||
		(many.Commit.String() != c2 && many.Commit.String() != c3) {
		t.Errorf("CheckHistory over a bound of 10: %v; want a TooManyEntriesError naming %s or %s", err, c2, c3)
	}
	if probs, err := r.CheckHistory(bg, gitstore.NewHash(c3), []gitstore.Hash{gitstore.NewHash(c1)}, 0, n+1); err != nil || len(probs) != 0 {
		t.Errorf("CheckHistory within the bound: %v, %v", probs, err)
	}
}
