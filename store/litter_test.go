package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestLitterIsNotAHandEdit: files that operating systems and editors leave in .context/ (docs/layout.md
// "Litter") are no hand edits: ctx status does not list them, ctx commit neither refuses nor commits them.
func TestLitterIsNotAHandEdit(t *testing.T) {
	for _, name := range []string{".DS_Store", "._arch.md", "Thumbs.db", "desktop.ini", ".arch.md.swp", ".arch.md.swo",
		".arch.md.swa", "arch.md~", ".#arch.md", "#arch.md#"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, dir := storetest.New(t)
			if _, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "arch", Content: "x\n"}); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(dir, store.CheckoutDir)
			for _, d := range []string{root, filepath.Join(root, "knowledge")} {
				if err := os.WriteFile(filepath.Join(d, name), []byte("junk\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			edits, err := s.HandEdits(ctx)
			if err != nil || len(edits) != 0 {
				t.Fatalf("hand edits = %v, %v; want none", edits, err)
			}
			n := storetest.Count(t, dir, "ctx")
			if err := os.WriteFile(filepath.Join(root, "knowledge", "arch.md"), []byte("edited\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.CommitHandEdits(ctx, ""); err != nil {
				t.Fatalf("commit beside %s: %v", name, err)
			}
			if storetest.Count(t, dir, "ctx") != n+1 {
				t.Errorf("the hand edit was not committed")
			}
			for p := range storetest.Files(t, dir, "ctx") {
				if filepath.Base(p) == name {
					t.Errorf("%s was committed", p)
				}
			}
		})
	}
}
