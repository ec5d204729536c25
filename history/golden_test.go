package history

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden/")

// goldenClip is the longest text, tool input or tool output a golden file holds verbatim; a longer one is
// kept as its first goldenKeep bytes, its length and its SHA-256, so a change anywhere in it still shows.
const (
	goldenClip = 4096
	goldenKeep = 512
)

func goldenString(s string) string {
	if len(s) <= goldenClip {
		return s
	}
	head := s[:goldenKeep]
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%s…[%d bytes, sha256 %s]", head, len(s), hex.EncodeToString(sum[:]))
}

// goldenDoc is the normalised output of one corpus source: what the import reported, the session and
// every event, with the machine path of the source made relative to the corpus.
type goldenDoc struct {
	Source   string         `json:"source"`
	Provider Provider       `json:"provider"`
	Format   string         `json:"format"`
	Action   string         `json:"action"`
	Skipped  int            `json:"skipped"`
	Unknown  map[string]int `json:"unknown,omitempty"`
	Session  Session        `json:"session"`
	Events   []Event        `json:"events"`
}

// TestCorpusGolden imports every file of the corpus and compares each source's normalised session and
// events (ids included) with testdata/golden/<corpus path>.json; `go test ./history -run Golden -update`
// rewrites them. A golden file without a source, or a source without a golden file, fails.
func TestCorpusGolden(t *testing.T) {
	ix := openTestIndex(t)
	st := importCorpus(t, ix)
	dir := corpusDir(t)
	ctx := context.Background()
	goldenDir := filepath.Join("testdata", "golden")
	seen := map[string]bool{}
	for _, r := range st.Results {
		rel, err := filepath.Rel(dir, r.Source.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("source %s outside the corpus", r.Source.Path)
		}
		rel = filepath.ToSlash(rel)
		s, err := ix.Session(ctx, r.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := ix.Events(ctx, s.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		s.SourcePath = rel
		for i := range evs {
			evs[i].Text = goldenString(evs[i].Text)
			if tl := evs[i].Tool; tl != nil {
				tl.Input, tl.Output = goldenString(tl.Input), goldenString(tl.Output)
			}
		}
		doc := goldenDoc{Source: rel, Provider: r.Source.Provider, Format: r.Source.Format, Action: r.Action,
			Skipped: r.Skipped, Unknown: r.Unknown, Session: s, Events: evs}
		got, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		file := filepath.Join(goldenDir, filepath.FromSlash(rel)+".json")
		seen[file] = true
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: no golden file (run with -update): %v", rel, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: normalised output differs from %s (run with -update and review the diff)\n%s", rel, file, firstDiff(got, want))
		}
	}
	var stale []string
	err := filepath.WalkDir(goldenDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !seen[p] {
			stale = append(stale, p)
		}
		return nil
	})
	if err != nil && !*update {
		t.Fatal(err)
	}
	sort.Strings(stale)
	for _, p := range stale {
		if *update {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("golden file %s has no corpus source", p)
	}
	if len(seen) != len(st.Results) || len(seen) == 0 {
		t.Errorf("%d golden files for %d sources", len(seen), len(st.Results))
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got: %.300s\nwant: %.300s", i+1, gl, wl)
		}
	}
	return "(lengths differ)"
}
