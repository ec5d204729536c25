package importer_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestImportRoundTrip imports a corpus through the store in one commit and reads every item back byte for
// byte: knowledge and conventions as their content, skills as their SKILL.md, decisions as their body.
func TestImportRoundTrip(t *testing.T) {
	for _, dir := range []string{"../testdata/corpus", "../../shared/corpus"} {
		if _, err := os.Stat(dir); err != nil {
			if dir == "../testdata/corpus" {
				t.Fatal(err)
			}
			t.Logf("%s not found: only the bundled corpus is imported", dir)
			continue
		}
		t.Run(filepath.Base(filepath.Dir(dir))+"/corpus", func(t *testing.T) {
			ctx := context.Background()
			s, repo := storetest.New(t)
			snap := testenv.Take(t, repo)
			before := storetest.Count(t, repo, "ctx")
			plan, err := importer.Scan(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			res, decisions, err := s.Apply(ctx, store.Op{Name: "import", Summary: "import corpus"}, importer.Batch(plan, store.Public))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed() || storetest.Count(t, repo, "ctx") != before+1 {
				t.Fatalf("want exactly one commit, got %d -> %d", before, storetest.Count(t, repo, "ctx"))
			}
			snap.Same(t, repo)
			v, err := s.RefView(ctx)
			if err != nil {
				t.Fatal(err)
			}
			byTitle := map[string]store.Decision{}
			for _, d := range decisions {
				byTitle[d.Path] = d
			}
			nDecisions := 0
			for _, it := range plan.Items {
				var got string
				switch it.Kind {
				case importer.KindKnowledge, importer.KindConvention:
					k := store.KnowledgeKind
					if it.Kind == importer.KindConvention {
						k = store.ConventionKind
					}
					e, err := v.GetEntry(ctx, k, it.Key)
					if err != nil {
						t.Fatalf("%s: %v", it.Source, err)
					}
					// The entry's file holds the file's bytes; its content is the file less its final
					// newline (docs/format.md "Knowledge and conventions").
					got = string(store.EntryBody(e.Content))
					if !strings.HasSuffix(string(it.Content), "\n") {
						got = e.Content
					}
				case importer.KindSkill:
					sk, err := v.GetSkill(ctx, it.Key)
					if err != nil {
						t.Fatalf("%s: %v", it.Source, err)
					}
					got = sk.Content
				case importer.KindDecision:
					nDecisions++
					continue
				}
				if got != string(it.Content) {
					t.Errorf("%s does not read back byte for byte", it.Source)
				}
			}
			all, err := v.ListDecisions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != nDecisions {
				t.Fatalf("%d decisions stored, %d in the plan", len(all), nDecisions)
			}
			bodies := map[string]bool{}
			for _, d := range all {
				bodies[d.Body] = true
			}
			for _, it := range plan.Items {
				if it.Kind == importer.KindDecision && !bodies[string(it.Content)] {
					t.Errorf("%s: body not stored byte for byte", it.Source)
				}
				if it.Kind == importer.KindDecision && it.Number > 0 {
					found := false
					for _, d := range all {
						if d.ID == it.Number && d.Body == string(it.Content) {
							found = true
						}
					}
					if !found && dir == "../testdata/corpus" && filepath.Base(filepath.Dir(it.Source)) == "madr" {
						t.Errorf("%s: its own number %d was not kept", it.Source, it.Number)
					}
				}
			}
			// Importing again changes nothing.
			res, _, err = s.Apply(ctx, store.Op{Name: "import", Summary: "import corpus again"}, importer.Batch(plan, store.Public))
			if err != nil {
				t.Fatal(err)
			}
			if res.Changed() {
				t.Errorf("a second import of the same files made a commit: %v", res.Paths)
			}
			testenv.Git(t, repo, "fsck", "--strict", "--no-dangling")
		})
	}
}
