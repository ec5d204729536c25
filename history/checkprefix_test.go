package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// checkPrefix hashes what it always hashed (indexes written by earlier versions keep their appends
// incremental): SHA-256 of "<n>\x00", the first 64 KiB and the 4 KiB before n.
func TestCheckPrefixStable(t *testing.T) {
	data := make([]byte, 200<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.IntN(256))
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, n := range []int64{0, 1, 4095, 4096, 64 << 10, 64<<10 + 1, 68 << 10, 69 << 10, 200 << 10} {
		h := sha256.New()
		fmt.Fprintf(h, "%d\x00", n)
		head := min(n, 64<<10)
		h.Write(data[:head])
		h.Write(data[max(head, n-4096):n])
		want := hex.EncodeToString(h.Sum(nil))
		got, err := checkPrefix(f, n)
		if err != nil || got != want {
			t.Fatalf("n=%d: %s %v, want %s", n, got, err, want)
		}
	}
	if _, err := checkPrefix(f, 300<<10); err == nil {
		t.Fatal("a prefix longer than the file hashed without an error")
	}
}
