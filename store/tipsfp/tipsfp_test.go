package tipsfp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestOf: the fingerprint is the first 24 hex digits of the SHA-256 of the three "scope tip" lines in
// the order ephemeral, private, public (the MCP cursors and the search copies of earlier versions hold
// it: it must not change), and any tip moving changes it.
func TestOf(t *testing.T) {
	zero := strings.Repeat("0", 40)
	pub := "0123456789abcdef0123456789abcdef01234567"
	sum := sha256.Sum256([]byte("ephemeral " + zero + "\nprivate " + zero + "\npublic " + pub + "\n"))
	if got, want := Of(zero, zero, pub), hex.EncodeToString(sum[:])[:24]; got != want {
		t.Fatalf("Of = %s, want %s", got, want)
	}
	other := "fedcba9876543210fedcba9876543210fedcba98"
	seen := map[string]bool{Of(zero, zero, pub): true}
	for _, fp := range []string{Of(other, zero, pub), Of(zero, other, pub), Of(zero, zero, other), Of(pub, zero, zero)} {
		if seen[fp] || len(fp) != 24 {
			t.Errorf("fingerprint %s repeats or is not 24 digits", fp)
		}
		seen[fp] = true
	}
}
