package merge

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// TestSimpleFMAsYAML: every front matter simpleFM accepts is cut by the YAML parser into the same keys
// and chunks (generated lines of keys, separators and values with YAML's indicators, comments, quotes,
// tabs, CR and non-ASCII), and the shapes ctx writes take the fast path.
func TestSimpleFMAsYAML(t *testing.T) {
	keys := []string{"a", "b", "key", "k_1", "A", "_x", "updated_at", "null", "true", "a", "b", "1a", "a b", "a-b", "<<", "- a", "#c"}
	seps := []string{": ", ": ", ": ", ": ", ":", " : ", ":\t", ":  "}
	frags := []string{"x", " ", "#", ":", ": ", " #", "-", "'", "\"", "[", "]", "{", "}", "@", "`", "%", "!",
		"&", "*", "|", ">", "?", ",", "\t", "é", "a", "1", "2026-01-01T00:00:00Z", "Bench <b@x.com>", "...",
		"---", "\r", "~", "0x1F", "yes", "a:b", "http://x/y", "(1)", "=", "+", "\\", "/",
		"word", "Title line", "2", "x.y", "a,b", "b@c", "é", "x y", "12:30", "a's", "c#", "1.5e3", "0o17"}
	ends := []string{"\n", "\n", "\n", "\n", "\n", "\n", "\n", "\n", "\r\n", "\n  x\n", "\n- y\n"}
	rng := rand.New(rand.NewSource(15))
	accepted, agreed := 0, 0
	for n := 0; n < 50000; n++ {
		var b strings.Builder
		for l := rng.Intn(3); l >= 0; l-- {
			b.WriteString(keys[rng.Intn(len(keys))])
			b.WriteString(seps[rng.Intn(len(seps))])
			for f := rng.Intn(4); f > 0; f-- {
				b.WriteString(frags[rng.Intn(len(frags))])
			}
			b.WriteString(ends[rng.Intn(len(ends))])
		}
		fm := b.String()
		pre, ks, chunks, ok := simpleFM(fm)
		if !ok {
			continue
		}
		accepted++
		d, yok := parseFMYAML(mdDoc{chunks: map[string]string{}}, fm)
		if !yok {
			t.Fatalf("simpleFM accepts %q, the YAML parser refuses it", fm)
		}
		if d.pre != pre || !reflect.DeepEqual(d.keys, ks) || !reflect.DeepEqual(d.chunks, chunks) {
			t.Fatalf("%q: simpleFM %q %q %q, YAML %q %q %q", fm, pre, ks, chunks, d.pre, d.keys, d.chunks)
		}
		agreed++
	}
	if accepted < 1000 {
		t.Fatalf("simpleFM accepted %d of 50,000 generated blocks: the test checks too little", accepted)
	}
	t.Logf("%d accepted, all cut as the YAML parser does", agreed)
	for _, fm := range []string{
		"author: Bench <bench@example.com>\nagent: bench\nupdated_at: 2026-01-01T00:00:00Z\nprovenance: agent_generated\nscope: public\n",
		"uid: 01J0000000000000000000000\ndate: 2026-01-02\nstatus: accepted\nsupersedes:\n",
	} {
		if _, _, _, ok := simpleFM(fm); !ok {
			t.Errorf("simpleFM refuses ctx's own front matter %q", fm)
		}
	}
	for _, fm := range []string{"a: x\na: y\n", "a: [1]\n", "a: x # c\n", "a: x\n  b: y\n", "a: 'q'\n", "a: b: c\n", "a: x\r\n", "a:x\n", ""} {
		if _, _, _, ok := simpleFM(fm); ok {
			t.Errorf("simpleFM accepts %q", fm)
		}
	}
}
