package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestImportHeldAsOtherProvider: for every pair of providers A and B, a file the index
// holds as A's source, imported under a root the user named as B's (`--provider B --path DIR`), is
// foreign and not read: A's session keeps its events. Claude Code's JSONL read as gemini-cli or cursor
// gives events, and its Claude session was replaced by theirs (fewer events, another provider).
func TestImportHeldAsOtherProvider(t *testing.T) {
	ctx := context.Background()
	corpus := corpusDir(t)
	formatOf := map[Provider]string{ClaudeCode: FormatClaude, Codex: FormatCodex, GeminiCLI: FormatGeminiJSONL,
		OpenCode: FormatOpenCode, Cursor: FormatCursor, CopilotCLI: FormatCopilot}
	ix := openTestIndex(t)
	for _, a := range Providers {
		srcs, err := Discover(ctx, a, filepath.Join(corpus, string(a)), true)
		if err != nil {
			t.Fatal(err)
		}
		var held *SourceResult
		for _, src := range srcs {
			if fi, err := os.Stat(src.Path); err != nil || !fi.Mode().IsRegular() || src.Format == FormatGeminiJSON {
				continue // a file B's parsers read whole or line by line
			}
			res, err := ix.ImportSource(ctx, src)
			if err != nil {
				t.Fatal(err)
			}
			if res.Action == "imported" {
				held = &res
				break
			}
		}
		if held == nil {
			t.Fatalf("%s: no source of the corpus imported", a)
		}
		want, err := ix.Session(ctx, held.SessionID)
		if err != nil || want.EventCount == 0 {
			t.Fatalf("%s: session %s: %+v %v", a, held.SessionID, want, err)
		}
		for _, b := range Providers {
			if b == a {
				continue
			}
			src := Source{Provider: b, Format: formatOf[b], Path: held.Source.Path, explicit: true}
			res, err := ix.ImportSource(ctx, src)
			if err != nil || res.Action != "foreign" {
				t.Errorf("%s's %s imported as %s's: %+v %v", a, filepath.Base(src.Path), b, res, err)
			}
			if got, err := ix.Session(ctx, held.SessionID); err != nil || got.EventCount != want.EventCount || got.Provider != a {
				t.Errorf("%s's session after an import as %s's: %+v %v, before %+v", a, b, got, err, want)
			}
		}
	}
}
