package gitstore_test

import (
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// Hash is git's object name: BlobHash matches git hash-object, String and ParseHash round-trip, and
// ParseHash refuses what is not 40 hex digits (NewHash, lenient like git's get_oid_hex, does not).
func TestHash(t *testing.T) {
	dir := testenv.NewRepo(t)
	want := testenv.GitIn(t, dir, "some bytes\n", "hash-object", "--stdin")
	h := gitstore.BlobHash([]byte("some bytes\n"))
	if h.String() != want || h.IsZero() {
		t.Fatalf("BlobHash = %s, git hash-object says %s", h, want)
	}
	if p, err := gitstore.ParseHash(want); err != nil || p != h || gitstore.NewHash(want) != h {
		t.Errorf("ParseHash(%s) = %s, %v", want, p, err)
	}
	for _, bad := range []string{"", "abc", want + "0", want[:39] + "g", "-" + want[1:]} {
		if _, err := gitstore.ParseHash(bad); err == nil {
			t.Errorf("ParseHash(%q) accepted", bad)
		}
	}
	if !gitstore.ZeroHash.IsZero() || gitstore.ZeroHash.String() != "0000000000000000000000000000000000000000" {
		t.Errorf("ZeroHash = %s", gitstore.ZeroHash)
	}
	if gitstore.ModeRegular.String() != "0100644" || gitstore.ModeDir.String() != "0040000" {
		t.Errorf("modes: %s %s", gitstore.ModeRegular, gitstore.ModeDir)
	}
}
