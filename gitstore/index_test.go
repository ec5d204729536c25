package gitstore_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// gitTracks is what git says: the files of the index and of HEAD's tree at or below dir.
func gitTracks(t *testing.T, dir, name string) []string {
	t.Helper()
	out := testenv.Git(t, dir, "ls-files", "-z", "--full-name", "--", name)
	if _, err := testenv.GitErr(dir, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		out += testenv.Git(t, dir, "ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD", "--", name)
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// nothingTracked opens a fresh Repo reading in process and asks it.
func nothingTracked(t *testing.T, dir string) bool {
	t.Helper()
	r := open(t, dir)
	defer func() { _ = r.Close() }()
	r.ReadInProcess()
	return r.NothingTrackedIn(bg, ".context")
}

// NothingTrackedIn says "nothing" exactly when git lists nothing, across the shapes an index and HEAD take:
// the neighbours of .context in git's order (".context-x", ".context.d/", ".contexts"), nested .context
// folders, a file named .context, an entry in the index only (git add -f) or in HEAD only (git rm
// --cached), intent-to-add entries (extended flags), index versions 2, 3 and 4, and an unborn HEAD.
func TestNothingTrackedInAgainstGit(t *testing.T) {
	type step struct {
		name string
		do   func(t *testing.T, dir string)
	}
	add := func(files ...string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			for _, f := range files {
				writeFile(t, filepath.Join(dir, f), "x "+f)
			}
			testenv.Git(t, dir, append([]string{"add", "-f", "--"}, files...)...)
		}
	}
	commit := func(t *testing.T, dir string) { testenv.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "c") }
	version := func(v int) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { testenv.Git(t, dir, "update-index", "--index-version", fmt.Sprint(v)) }
	}
	neighbours := add(".context-x", ".context.d/a", ".contexts", "a/.context/b", "-dash", "!bang", "zz/"+strings.Repeat(strings.Repeat("n", 200)+"/", 3)+"f")
	for _, v := range []int{2, 3, 4} {
		for _, tc := range []struct {
			name  string
			steps []step
			want  bool
		}{
			{"unborn, empty index", nil, true},
			{"unborn, staged neighbours", []step{{"neighbours", neighbours}}, true},
			{"staged .context file", []step{{"neighbours", neighbours}, {"add", add(".context/k.md")}}, false},
			{"committed neighbours", []step{{"neighbours", neighbours}, {"commit", commit}}, true},
			{"committed .context file", []step{{"neighbours", neighbours}, {"add", add(".context/k.md")}, {"commit", commit}}, false},
			{"file named .context", []step{{"add", add(".context")}, {"commit", commit}}, false},
			{"in HEAD only", []step{{"add", add(".context/k.md")}, {"commit", commit}, {"rm", func(t *testing.T, dir string) {
				testenv.Git(t, dir, "rm", "-q", "--cached", "-r", ".context")
			}}}, false},
			{"intent to add", []step{{"neighbours", neighbours}, {"commit", commit}, {"intent", func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, ".context", "n.md"), "n")
				writeFile(t, filepath.Join(dir, "b.md"), "b")
				testenv.Git(t, dir, "add", "-N", "-f", ".context/n.md", "b.md")
			}}}, false},
			{"intent to add elsewhere", []step{{"neighbours", neighbours}, {"commit", commit}, {"intent", func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "b.md"), "b")
				testenv.Git(t, dir, "add", "-N", "b.md")
			}}}, true},
		} {
			t.Run(fmt.Sprintf("v%d/%s", v, tc.name), func(t *testing.T) {
				dir := testenv.EmptyRepo(t)
				writeFile(t, filepath.Join(dir, "README.md"), "r")
				testenv.Git(t, dir, "add", "README.md")
				version(v)(t, dir)
				for _, s := range tc.steps {
					s.do(t, dir)
				}
				version(v)(t, dir) // git keeps the version it was given; rewrite to be sure
				files := gitTracks(t, dir, ".context")
				if (len(files) == 0) != tc.want {
					t.Fatalf("git lists %q: the case is wrong", files)
				}
				if got := nothingTracked(t, dir); got != tc.want {
					t.Errorf("NothingTrackedIn = %v, git lists %q", got, files)
				}
			})
		}
	}
}

// Many entries on both sides of .context in git's order, in every index version: the scan reads past
// thousands of names before it, and stops after. The 4,000 entries name one blob (git update-index
// --index-info), so the fixture writes one object, not 4,000 loose ones (about 5 s of system time each
// repository on the CI machine); the scan reads names, never contents.
func TestNothingTrackedInManyEntries(t *testing.T) {
	for _, v := range []int{2, 4} {
		dir := testenv.NewRepo(t)
		blob := testenv.Blob(t, dir, "an entry\n")
		var info strings.Builder
		for i := 0; i < 2000; i++ {
			fmt.Fprintf(&info, "100644 %s\t.a%04d\n100644 %s\tsrc/f%04d.go\n", blob, i, blob, i)
		}
		testenv.GitIn(t, dir, info.String(), "update-index", "--index-info")
		testenv.Git(t, dir, "commit", "-q", "-m", "many")
		if n := strings.Count(testenv.Git(t, dir, "ls-files"), "\n") + 1; n < 4000 {
			t.Fatalf("setup: %d entries in the index, want 4,000 and README.md", n)
		}
		testenv.Git(t, dir, "update-index", "--index-version", fmt.Sprint(v))
		if !nothingTracked(t, dir) {
			t.Errorf("v%d: NothingTrackedIn = false with nothing in .context (git: %q)", v, gitTracks(t, dir, ".context"))
		}
		writeFile(t, filepath.Join(dir, ".context", "x.md"), "x")
		testenv.Git(t, dir, "add", "-f", ".context/x.md")
		if nothingTracked(t, dir) {
			t.Errorf("v%d: NothingTrackedIn = true with .context/x.md staged", v)
		}
	}
}

// What the in-process read does not know is a "maybe": a split index, an index it cannot parse, a Repo
// that does not read objects in process, a bare repository (nothing: it has no work tree).
func TestNothingTrackedInUnknown(t *testing.T) {
	dir := testenv.NewRepo(t)
	if !nothingTracked(t, dir) {
		t.Fatal("NothingTrackedIn = false in a plain repository")
	}
	r := open(t, dir)
	if r.NothingTrackedIn(bg, ".context") {
		t.Error("NothingTrackedIn = true without ReadInProcess")
	}
	_ = r.Close()
	for _, bad := range []string{"", ".", "..", "a/b"} {
		r := open(t, dir)
		r.ReadInProcess()
		if r.NothingTrackedIn(bg, bad) {
			t.Errorf("NothingTrackedIn(%q) = true", bad)
		}
		_ = r.Close()
	}

	t.Run("GIT_INDEX_FILE", func(t *testing.T) {
		t.Setenv("GIT_INDEX_FILE", filepath.Join(t.TempDir(), "other-index"))
		if nothingTracked(t, dir) {
			t.Error("NothingTrackedIn = true with GIT_INDEX_FILE naming another index")
		}
	})

	split := testenv.NewRepo(t)
	testenv.Git(t, split, "update-index", "--split-index")
	if nothingTracked(t, split) {
		t.Error("NothingTrackedIn = true with a split index")
	}

	for name, data := range map[string]string{
		"not an index": "hello, world",
		"version 5":    "DIRC\x00\x00\x00\x05\x00\x00\x00\x00",
		"truncated":    "DIRC\x00\x00\x00\x02\x00\x00\x00\x03" + strings.Repeat("\x00", 30),
	} {
		d := testenv.NewRepo(t)
		writeFile(t, filepath.Join(d, ".git", "index"), data)
		if nothingTracked(t, d) {
			t.Errorf("%s: NothingTrackedIn = true", name)
		}
	}

	bare := testenv.BareRemote(t)
	r, err := gitstore.Open(bg, bare)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	r.ReadInProcess()
	if !r.NothingTrackedIn(bg, ".context") {
		t.Error("NothingTrackedIn = false in a bare repository")
	}
}
