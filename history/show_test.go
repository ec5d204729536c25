package history

import (
	"context"
	"errors"
	"testing"
)

// TestSessionByNativePrefix: a session opens by a unique prefix (at least 8 characters) of its provider's
// native id, as by a prefix of its ctx id: what ctx history search prints beside the provider is what a
// reader copies (a tester's `show session 019e1625` was not found). Shorter prefixes and prefixes of
// several sessions' ids are refused.
func TestSessionByNativePrefix(t *testing.T) {
	ix := openTestIndex(t)
	importCorpus(t, ix)
	ctx := context.Background()
	const native = "019e1625-789d-76c0-80ab-3724b5ddb799"
	want := SessionID(Codex, native)
	for _, given := range []string{native, "019e1625-789d", "019e1625"} {
		s, err := ix.Session(ctx, given)
		if err != nil || s.ID != want {
			t.Errorf("Session(%q) = %s, %v; want %s", given, s.ID, err, want)
		}
	}
	if _, err := ix.Session(ctx, "019e162"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a 7-character prefix: %v, want not found", err)
	}
	all, err := ix.Sessions(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]int{}
	for _, s := range all {
		if len(s.NativeID) >= 8 {
			first[s.NativeID[:8]]++
		}
	}
	shared := 0
	for p, n := range first {
		if n > 1 {
			shared++
			if _, err := ix.Session(ctx, p); !errors.Is(err, ErrAmbiguous) {
				t.Errorf("prefix %s of %d sessions' native ids: %v, want ambiguous", p, n, err)
			}
		}
	}
	t.Logf("%d 8-character prefixes shared by several sessions' native ids checked", shared)
}
