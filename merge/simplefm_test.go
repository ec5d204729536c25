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

// TestPlainDateAsYAML: every value plainDate reads is the one the YAML path gives (scalarString of
// chunkValue), over generated dates and times, valid or not (month 13, hour 25, leap seconds), with and
// without fractions and offsets, and near misses (a space, a lower-case t, no seconds, a trailing
// comment), which plainDate leaves to the YAML parser.
func TestPlainDateAsYAML(t *testing.T) {
	parts := [][]string{
		{"2026", "1999", "0000", "9999", "202", "20260"},
		{"-01-02", "-13-01", "-02-30", "-1-2", "-00-00", "/01/02"},
		{"", "T15:04:05", "T25:61:61", "t15:04:05", " 15:04:05", "T15:04", "T23:59:60"},
		{"", ".5", ".123456789", ".1234567890", ".", ".x"},
		{"", "Z", "+02:00", "-11:30", "+2", "z", "+0200", " # c", "Z "},
	}
	rng := rand.New(rand.NewSource(15))
	read := 0
	for n := 0; n < 60000; n++ {
		var v strings.Builder
		for _, p := range parts {
			v.WriteString(p[rng.Intn(len(p))])
		}
		key := stampKeys[rng.Intn(len(stampKeys))]
		chunk := key + ": " + v.String() + "\n"
		got, ok := plainDate(key, chunk)
		if !ok {
			continue
		}
		read++
		yv, yok := chunkValue(key, chunk)
		if !yok || scalarString(yv) != got {
			t.Fatalf("%q: plainDate %q, the YAML path %q (%v)", chunk, got, scalarString(yv), yok)
		}
	}
	if read < 1000 {
		t.Fatalf("plainDate read %d of 60,000 generated values: the test checks too little", read)
	}
	for _, c := range []string{"updated_at: 2026-01-01T00:00:00Z\n", "date: 2026-01-02\n", "timestamp: 2026-01-02T03:04:05.123+01:00\n"} {
		k, _, _ := strings.Cut(c, ":")
		if _, ok := plainDate(k, c); !ok {
			t.Errorf("plainDate refuses %q", c)
		}
	}
}
