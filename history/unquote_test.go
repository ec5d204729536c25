package history

import (
	"testing"

	json "github.com/segmentio/encoding/json"
)

// FuzzUnquoteSame: unquote gives json.Unmarshal's string and error for any input, and its fast path
// takes the common strings (the seeds marked fast).
func FuzzUnquoteSame(f *testing.F) {
	fast := []string{`""`, `"plain ascii text"`, `"line\nnext\ttab \"q\" back\\slash \/ \b\f\r"`,
		`"héllo 日本語 ✓ and a longer run of ASCII text past eight bytes"`, `"\\"`, "\"del \x7f\""}
	slow := []string{`"\u00e9\ud83d\ude00"`, `"\ud800"`, "\"ctl \x01\"", "\"bad \xff utf8\"", `"a"b"`, `"end\"`,
		`"\x"`, `"`, `x`, `"a" `, "\"\xed\xa0\x80\"", `"\u12"`}
	for _, s := range fast {
		if _, ok := unquoteFast([]byte(s)); !ok {
			f.Fatalf("unquoteFast(%q) left it to the decoder", s)
		}
		f.Add([]byte(s))
	}
	for _, s := range slow {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := unquote(raw)
		var want string
		werr := json.Unmarshal(raw, &want)
		if (err == nil) != (werr == nil) || got != want {
			t.Fatalf("unquote(%q) = %q, %v; json.Unmarshal: %q, %v", raw, got, err, want, werr)
		}
		if s, ok := unquoteFast(raw); ok && (werr != nil || s != want) {
			t.Fatalf("unquoteFast(%q) = %q; json.Unmarshal: %q, %v", raw, s, want, werr)
		}
	})
}
