package store_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// A pull that merges hundreds of entries of one folder changed on both sides (the shape of
// BenchmarkPullVsGit, smaller): the merge commit is clean for git fsck --strict and has both parents,
// and afterwards every file of .context/ is byte for byte what git has at the new tip, with no temporary
// file left and no hand edit seen.
func TestPullMergesManyEntriesAgainstGit(t *testing.T) {
	const entries, changed = 400, 150
	dir, ours, _ := histories(t, entries, changed)
	remote := filepath.Join(t.TempDir(), "remote.git")
	testenv.Git(t, "", "clone", "-q", "--bare", dir, remote)
	testenv.Git(t, remote, "update-ref", "refs/heads/ctx", testenv.Git(t, dir, "rev-parse", "theirs"))
	testenv.Git(t, dir, "remote", "add", "origin", remote)
	s := storetest.Open(t, dir, store.Actor{Agent: "t", Machine: "t"})
	// The record is read lazily by the refresh, as at 10,000 entries.
	t.Cleanup(store.SetLazyRecordMin(1 << 10))
	if _, err := s.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	parsed, made := store.RecordsParsed(), store.MadeBlobsUsed()
	r, err := s.Pull(bg, store.PullOptions{Remote: "origin"})
	if err != nil || r.Action != store.PullMerged || len(r.Conflicts) != 0 || len(r.HandEdits) != 0 || len(r.RefreshKept) != 0 {
		t.Fatalf("pull: %+v, %v", r, err)
	}
	// The refresh writes the files theirs changed (those both changed included) from the merge's own
	// bytes, reading none of them back from the objects it had just written; they are checked against
	// git below.
	if n := store.MadeBlobsUsed() - made; n != changed {
		t.Errorf("the refresh wrote %d files from the merge's contents, want %d", n, changed)
	}
	// The hand-edit scan before the merge parses the record; the refresh after it reuses that parse.
	if n := store.RecordsParsed() - parsed; n != 1 {
		t.Errorf("the pull parsed the checkout record %d times, want once", n)
	}
	testenv.Git(t, dir, "fsck", "--strict", "--no-dangling", "--no-progress")
	if parents := strings.Fields(testenv.Git(t, dir, "log", "-1", "--format=%P", "ctx")); len(parents) != 2 || parents[0] != ours {
		t.Fatalf("merge parents %v, want %s first", parents, ours)
	}
	// The merge is git's own merge of the two sides (git merge-tree), and holds both sides' edits: ours
	// only, theirs only, and both in one file.
	if got, want := testenv.Git(t, dir, "rev-parse", "ctx^{tree}"), testenv.Git(t, dir, "merge-tree", "--write-tree", ours, "theirs"); got != want {
		t.Errorf("ctx's merge is tree %s, git's %s", got, want)
	}
	for _, c := range []struct {
		i    int
		want []string
	}{{10, []string{"edited by ours", "Fourth line.\n"}}, {100, []string{"edited by ours", "edited by theirs"}},
		{200, []string{"Title line.\n", "edited by theirs"}}, {300, []string{"Title line.\n", "Fourth line.\n"}}} {
		got := testenv.Git(t, dir, "show", fmt.Sprintf("ctx:knowledge/k%05d.md", c.i))
		for _, w := range c.want {
			if !strings.Contains(got+"\n", w) {
				t.Errorf("k%05d after the merge lacks %q:\n%s", c.i, w, got)
			}
		}
	}
	// Every file of the new tip, read by git cat-file --batch, against .context/.
	names := strings.Fields(testenv.Git(t, dir, "ls-tree", "-r", "--name-only", "ctx"))
	batch := exec.Command("git", "cat-file", "--batch")
	batch.Dir = dir
	var req bytes.Buffer
	for _, p := range names {
		fmt.Fprintf(&req, "ctx:%s\n", p)
	}
	batch.Stdin = &req
	out, err := batch.Output()
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(bytes.NewReader(out))
	root := filepath.Join(dir, store.CheckoutDir)
	for _, p := range names {
		var hash, typ string
		var size int
		if _, err := fmt.Fscanf(rd, "%s %s %d\n", &hash, &typ, &size); err != nil {
			t.Fatalf("cat-file %s: %v", p, err)
		}
		want := make([]byte, size+1)
		if _, err := io.ReadFull(rd, want); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil || !bytes.Equal(got, want[:size]) {
			t.Fatalf(".context/%s = %q, %v; git has %q", p, got, err, want[:size])
		}
	}
	if len(names) != entries+1 {
		t.Fatalf("the merge holds %d files, want %d", len(names), entries+1)
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && atomicfile.IsTemp(d.Name()) {
			t.Errorf("temporary file left: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if edits, err := s.HandEdits(bg); err != nil || len(edits) != 0 {
		t.Errorf("hand edits after the pull: %v, %v", edits, err)
	}
}

// PullNotes after a pull uses the pull's listing of the remote (its notes ref listed with the branch):
// no notes there, or the notes already fetched, need no transfer, so they answer with the remote gone;
// notes that moved are fetched and merged.
func TestPullNotesAfterPullFetchesOnlyWhatMoved(t *testing.T) {
	dir, _, theirs := histories(t, 20, 4)
	remote := filepath.Join(t.TempDir(), "remote.git")
	testenv.Git(t, "", "clone", "-q", "--bare", dir, remote)
	testenv.Git(t, remote, "update-ref", "refs/heads/ctx", theirs)
	testenv.Git(t, dir, "remote", "add", "origin", remote)
	s := storetest.Open(t, dir, store.Actor{Agent: "t", Machine: "t"})
	gone := remote + ".gone"
	pullThenNotes := func(moveAway bool) (store.NotesResult, error) {
		t.Helper()
		if _, err := s.Pull(bg, store.PullOptions{Remote: "origin"}); err != nil {
			t.Fatal(err)
		}
		if moveAway {
			if err := os.Rename(remote, gone); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := os.Rename(gone, remote); err != nil {
					t.Fatal(err)
				}
			}()
		}
		return s.PullNotes(bg, "origin", store.RemoteFromUser)
	}
	// No notes on the remote: nothing to fetch.
	if r, err := pullThenNotes(true); err != nil || r.Found {
		t.Fatalf("notes of a remote without them: %+v, %v", r, err)
	}
	// Without a pull just before, PullNotes fetches (and fails with the remote gone).
	if err := os.Rename(remote, gone); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PullNotes(bg, "origin", store.RemoteFromUser); err == nil {
		t.Errorf("PullNotes without a pull before it reached no remote and did not fail")
	}
	if err := os.Rename(gone, remote); err != nil {
		t.Fatal(err)
	}
	// Notes on the remote: fetched the first time, answered from the fetch ref the second.
	testenv.Git(t, dir, "notes", "--ref=refs/notes/ctx", "add", "-m", "first", "ctx")
	testenv.Git(t, dir, "push", "-q", remote, "refs/notes/ctx")
	first := testenv.Git(t, dir, "rev-parse", "refs/notes/ctx")
	testenv.Git(t, dir, "update-ref", "-d", "refs/notes/ctx")
	for i, away := range []bool{false, true} {
		r, err := pullThenNotes(away)
		if err != nil || !r.Found || r.Tip.String() != first {
			t.Fatalf("pull %d of the notes: %+v, %v; want %s", i, r, err, first)
		}
	}
	// The remote's notes moved: fetched and merged.
	testenv.Git(t, remote, "notes", "--ref=refs/notes/ctx", "add", "-f", "-m", "second", theirs)
	second := testenv.Git(t, remote, "rev-parse", "refs/notes/ctx")
	r, err := pullThenNotes(false)
	if err != nil || !r.Found || r.Tip.String() != second {
		t.Fatalf("notes that moved: %+v, %v; want %s", r, err, second)
	}
}
