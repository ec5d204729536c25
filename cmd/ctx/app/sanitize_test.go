package app

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestSanitizer(t *testing.T) {
	for _, c := range []struct {
		in   []string // written in this many calls
		want string
	}{
		{[]string{"plain text, tabs\tand\nnewlines\r\n"}, "plain text, tabs\tand\nnewlines\r\n"},
		{[]string{"osc \x1b]52;c;eA==\x07 end"}, `osc \u001b]52;c;eA==\u0007 end`},
		{[]string{"c1 \u009b2J del \x7f"}, `c1 \u009b2J del \u007f`},
		{[]string{"bidi \u202eabc\u2066"}, `bidi \u202eabc\u2066`},
		{[]string{"over\rwrite"}, `over\u000dwrite`},
		{[]string{"crlf split\r", "\nnext"}, "crlf split\r\nnext"},
		{[]string{"rune split \xe6\x97", "\xa5 ok"}, "rune split 日 ok"},
		{[]string{"bad \xff byte"}, `bad \xFF byte`},
		{[]string{"日本語 ünïcödé ok"}, "日本語 ünïcödé ok"},
	} {
		var b bytes.Buffer
		s := newSanitizer(&b)
		for _, p := range c.in {
			if n, err := s.Write([]byte(p)); err != nil || n != len(p) {
				t.Fatalf("Write(%q) = %d, %v", p, n, err)
			}
		}
		s.flush()
		if b.String() != c.want {
			t.Errorf("%q -> %q, want %q", c.in, b.String(), c.want)
		}
	}
	// JSON through the sanitizer decodes to the same text.
	v := map[string]string{"s": "a\u009bb\x7fc\u202e"}
	raw, _ := json.Marshal(v)
	var b bytes.Buffer
	s := newSanitizer(&b)
	if _, err := s.Write(raw); err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["s"] != v["s"] {
		t.Errorf("JSON through the sanitizer: %q -> %v %q", raw, err, back["s"])
	}
}
