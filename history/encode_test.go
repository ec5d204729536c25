package history

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestEncodeEventSameAsStdlib: the tool, files and facts columns that encodeEvent writes with
// segmentio's encoder are byte for byte what encoding/json wrote before (an index keeps its rows), for
// every event of the corpus and for crafted strings (HTML characters, invalid UTF-8, control bytes,
// U+2028 and U+2029).
func TestEncodeEventSameAsStdlib(t *testing.T) {
	std := func(e *Event) (tool, files, facts string) {
		if e.Tool != nil {
			tl := *e.Tool
			if tl.Output == e.Text {
				tl.Output = ""
			}
			b, _ := json.Marshal(tl)
			tool = string(b)
		}
		if len(e.Files) > 0 {
			b, _ := json.Marshal(e.Files)
			files = string(b)
		}
		if len(e.Facts) > 0 {
			b, _ := json.Marshal(e.Facts)
			facts = string(b)
		}
		return
	}
	check := func(what string, e *Event) {
		t.Helper()
		enc := encodeEvent(e)
		tool, files, facts := std(e)
		if enc.tool != tool || enc.files != files || enc.facts != facts {
			t.Fatalf("%s: encoded\n%q %q %q\nwant\n%q %q %q", what, enc.tool, enc.files, enc.facts, tool, files, facts)
		}
	}
	dir := corpusDir(t)
	ix := &Index{}
	n := 0
	for _, p := range Providers {
		srcs, err := Discover(context.Background(), p, filepath.Join(dir, string(p)), true)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range srcs {
			_, pd, err := ix.prepareFrom(context.Background(), s, nil)
			if err != nil || pd == nil {
				continue
			}
			for i := range pd.pr.Events {
				check(s.Path, &pd.pr.Events[i])
				n++
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d events compared", n)
	}
	code := 2
	for _, s := range []string{"<a href=\"x\">&amp;</a>", "bad \xff\xfe utf8 \xc3", "ctl \x00\x01\x1f\x7f tab\t nl\n", "seps \u2028 \u2029 end", "emoji 😀 \\ back\\slash", ""} {
		check(s, &Event{Type: ToolCall, Text: "x", Tool: &Tool{Name: s, CallID: s, Input: s, Output: s + "o", ExitCode: &code, IsError: true, Protocol: s, Server: s},
			Files: []FileRef{{Path: s, Op: FileOp(s), OldPath: s}}, Facts: []Fact{{Kind: s, Value: s}}})
	}
}
