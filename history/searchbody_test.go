package history

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history/internal/textproc"
	"github.com/ctx-dev/ctx/internal/termesc"
)

// searchBodyRef is searchBody as first written (one string, then its identifier parts; each field without
// its terminal escape sequences): the faster
// searchBody must give every event of the corpus the same body, so an index keeps its search results.
func searchBodyRef(e *Event) string {
	var b strings.Builder
	b.WriteString(termesc.Strip(e.Text))
	if e.Tool != nil {
		b.WriteString("\n")
		b.WriteString(termesc.Strip(e.Tool.Name))
		if e.Type == ToolCall && !strings.Contains(e.Text, e.Tool.Input) {
			b.WriteString("\n")
			b.WriteString(termesc.Strip(e.Tool.Input))
		}
	}
	for _, f := range e.Files {
		b.WriteString("\n")
		b.WriteString(termesc.Strip(f.Path))
	}
	for _, f := range e.Facts {
		if f.Kind != "command" {
			b.WriteString("\n")
			b.WriteString(termesc.Strip(f.Value))
		}
	}
	body := b.String()
	if extra := textproc.SplitIdentifiers(body); extra != "" {
		body += "\n" + extra
	}
	return body
}

func TestSearchBodySameAsReference(t *testing.T) {
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
				e := &pd.pr.Events[i]
				if got, want := pd.encoded[i].body, searchBodyRef(e); got != want {
					t.Fatalf("%s event %d: body differs:\n%q\nwant\n%q", s.Path, i, got, want)
				}
				n++
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d events compared", n)
	}
	// Crafted: identifiers in every part, none at all, an empty text.
	for _, e := range []Event{
		{Type: ToolCall, Text: "runTests now", Tool: &Tool{Name: "mcp__srv__doThing", Input: `{"filePath":"a/bC.go"}`},
			Files: []FileRef{{Path: "/x/parseSessionMeta.go"}}, Facts: []Fact{{Kind: "command", Value: "goTest"}, {Kind: "commit", Value: "abc1234"}}},
		{Type: Message, Text: "plain words only"},
		{Type: ToolOutput, Tool: &Tool{Name: "HTTPServer"}},
	} {
		if got, want := searchBody(&e), searchBodyRef(&e); got != want {
			t.Fatalf("body %q, want %q", got, want)
		}
	}
}
