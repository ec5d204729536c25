package history

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLongOutputIndexesHeadAndTail: of a tool output longer than the cap, a word in its first or last
// part is found, a word only in its middle is not, and the event keeps its whole text.
func TestLongOutputIndexesHeadAndTail(t *testing.T) {
	root := t.TempDir()
	ix := openTestIndex(t)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 400) // 10,800 bytes
	out := "alphastart " + filler + " middleword " + filler + " omegaend"
	src := writeClaude(t, root, "-a", "sess-long",
		rec("o1", "assistant", "/repo", `[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cat big"}}]`),
		rec("o2", "user", "/repo", `[{"type":"tool_result","tool_use_id":"t1","content":"`+out+`"}]`),
		rec("m1", "user", "/repo", `"a message that mentions middleword too"`))
	if _, err := ix.Import(context.Background(), []Source{src}); err != nil {
		t.Fatal(err)
	}
	for word, outputs := range map[string]int{"alphastart": 1, "omegaend": 1, "middleword": 0} {
		res, err := ix.Search(context.Background(), Query{Text: word, Scope: ScopeOutputs})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != outputs {
			t.Errorf("%s: %d output hits, want %d", word, len(res.Hits), outputs)
		}
		for _, h := range res.Hits {
			if h.Event.Type != ToolOutput || len(h.Event.Text) != len(out) {
				t.Errorf("%s: hit %s of %d bytes, want the whole output (%d)", word, h.Event.Type, len(h.Event.Text), len(out))
			}
		}
	}
	// The message still finds the middle word.
	res, err := ix.Search(context.Background(), Query{Text: "middleword"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Event.Type != Message {
		t.Fatalf("middleword: %+v %v", res, err)
	}
}

// TestOutputIndexedCuts: the head is a prefix and the tail a suffix of the text, both valid UTF-8 when
// the text is, together at most the cap (plus a word's slack), and neither cuts a word in two when a
// boundary is near; outputs at the cap and other types are not cut.
func TestOutputIndexedCuts(t *testing.T) {
	if _, _, cut := outputIndexed(&Event{Type: ToolOutput, Text: strings.Repeat("x", outputIndexHead+outputIndexTail)}); cut {
		t.Fatal("an output of exactly the cap was cut")
	}
	if _, _, cut := outputIndexed(&Event{Type: Message, Text: strings.Repeat("word ", 10000)}); cut {
		t.Fatal("a message was cut")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "Z", "9", " ", "\n", ".", "é", "日本", "😀", "_"}
	for n := 0; n < 2000; n++ {
		var b strings.Builder
		size := outputIndexHead + outputIndexTail + 1 + rng.IntN(20000)
		wordy := rng.IntN(4) == 0 // long words: no boundary near the cut
		for b.Len() < size {
			a := alphabet[rng.IntN(len(alphabet))]
			if wordy && (a == " " || a == "\n" || a == ".") {
				a = "q"
			}
			b.WriteString(a)
		}
		s := b.String()
		head, tail, cut := outputIndexed(&Event{Type: ToolOutput, Text: s})
		if !cut || !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) || len(head) == 0 || len(tail) == 0 {
			t.Fatalf("head %d tail %d of %d", len(head), len(tail), len(s))
		}
		if !utf8.ValidString(head) || !utf8.ValidString(tail) {
			t.Fatalf("invalid UTF-8 at a cut (head %d, tail %d)", len(head), len(tail))
		}
		if len(head) > outputIndexHead || len(tail) > outputIndexTail || len(head) < outputIndexHead-64-4 || len(tail) < outputIndexTail-64-4 {
			t.Fatalf("head %d tail %d: outside the bounds", len(head), len(tail))
		}
		if !wordy {
			h, tl := len(head), len(s)-len(tail)
			if wordByte(s[h-1]) && wordByte(s[h]) && strings.ContainsAny(s[outputIndexHead-64:outputIndexHead], " \n.") {
				t.Fatalf("head cuts a word: %q|%q", s[h-8:h], s[h:h+8])
			}
			if wordByte(s[tl-1]) && wordByte(s[tl]) && strings.ContainsAny(s[len(s)-outputIndexTail:len(s)-outputIndexTail+64], " \n.") {
				t.Fatalf("tail cuts a word: %q|%q", s[tl-8:tl], s[tl:tl+8])
			}
		}
	}
}
