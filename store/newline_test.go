package store_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestEntryFileEndsInNewline: an entry's file ends in a newline, and its content reads back exactly as
// written, a content ending in newlines of its own included (docs/format.md "Knowledge and conventions").
func TestEntryFileEndsInNewline(t *testing.T) {
	s, dir := storetest.New(t)
	for _, content := range []string{"one line", "two\nlines", "ends in a newline\n", "two newlines\n\n", "\n\nleading"} {
		if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "k", Content: content}); err != nil {
			t.Fatal(err)
		}
		file := rawBlob(t, dir, "ctx:knowledge/k.md")
		if !strings.HasSuffix(file, content+"\n") || strings.HasSuffix(file, content+"\n\n") {
			t.Errorf("content %q: file ends %q", content, file[max(0, len(file)-len(content)-3):])
		}
		v, _ := s.RefView(bg)
		e, err := v.GetEntry(bg, store.KnowledgeKind, "k")
		if err != nil || e.Content != content {
			t.Errorf("content %q read back as %q, %v", content, e.Content, err)
		}
	}
	// git sees a text file with a final newline.
	if out := testenv.Git(t, dir, "show", "ctx~1", "--", "knowledge/k.md"); strings.Contains(out, "No newline at end of file") {
		t.Errorf("git diff: %s", out)
	}
}

// TestFinalNewlineWithOlderFiles: files written before the rule (no final newline from an argument, one
// from a file) read as they are, a write of the same content commits nothing, and a merge of an older
// ctx's edit of the last line with a newer ctx's rewrite of the entry (which adds the newline) is clean.
func TestFinalNewlineWithOlderFiles(t *testing.T) {
	remote := testenv.BareRemote(t)
	old, a := machineClone(t, remote, "old")
	const fm = "---\nauthor: Old <old@example.com>\nagent: cli\nupdated_at: \"2026-11-01T10:00:00Z\"\nprovenance: owner_instruction\nscope: public\n---\n"
	// What an older ctx wrote: `ctx knowledge set notes "$(printf 'line one\nline two')"` (no final
	// newline) and `ctx knowledge set readme -f README` (the file's final newline kept).
	handWrite := func(key, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(a, store.CheckoutDir, "knowledge", key+".md"), []byte(fm+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(a, store.CheckoutDir, "knowledge"), 0o777); err != nil {
		t.Fatal(err)
	}
	handWrite("notes", "line one\nline two")
	handWrite("readme", "Read me.\n")
	if _, _, err := old.CommitHandEdits(bg, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, b := machineClone(t, remote, "new")
	if _, err := cur.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	v, _ := cur.RefView(bg)
	for key, want := range map[string]string{"notes": "line one\nline two", "readme": "Read me."} {
		if e, err := v.GetEntry(bg, store.KnowledgeKind, key); err != nil || e.Content != want {
			t.Errorf("%s reads %q, %v; want %q", key, e.Content, err, want)
		}
		// The same content again: nothing to write, no rewrite of the old file.
		if c, err := cur.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: key, Content: want}); err != nil || c.Changed() {
			t.Errorf("%s: setting the same content committed %+v, %v", key, c, err)
		}
	}
	// The older ctx edits the last line (no final newline, as it writes); the newer one the first line.
	handWrite("notes", "line one\nline TWO")
	if _, _, err := old.CommitHandEdits(bg, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "notes", Content: "LINE ONE\nline two"}); err != nil {
		t.Fatal(err)
	}
	r, err := cur.Pull(bg, store.PullOptions{})
	if err != nil || r.Action != store.PullMerged || len(r.Conflicts) != 0 {
		t.Fatalf("pull: %+v, %v", r, err)
	}
	file := rawBlob(t, b, "ctx:knowledge/notes.md")
	if !strings.HasSuffix(file, "\nLINE ONE\nline TWO\n") {
		t.Errorf("merged file ends %q", file[len(file)-30:])
	}
}

// rawBlob is the blob at rev (REF:PATH) of the repository dir, byte for byte (testenv.Git trims its output).
func rawBlob(t *testing.T, dir, rev string) string {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "blob", rev)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file blob %s: %v", rev, err)
	}
	return string(out)
}
