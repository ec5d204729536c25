package store_test

import (
	"math/rand/v2"
	"testing"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"

	"github.com/ctx-dev/ctx/store"
)

// reference is Skeleton as the library computes it for any key.
func reference(key string) string { return confusables.Skeleton(norm.NFKC.String(key)) }

// Skeleton's table for ASCII keys gives the library's skeleton for every ASCII string of one and two
// bytes, and for random longer ones (keys such as "rn-1-O0", "Il1|").
func TestASCIISkeletonSame(t *testing.T) {
	for a := range 128 {
		if got, want := store.Skeleton(string(rune(a))), reference(string(rune(a))); got != want {
			t.Fatalf("%q: %q, library %q", rune(a), got, want)
		}
		for b := range 128 {
			k := string([]byte{byte(a), byte(b)})
			if got, want := store.Skeleton(k), reference(k); got != want {
				t.Fatalf("%q: %q, library %q", k, got, want)
			}
		}
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		k := make([]byte, 1+rnd.IntN(24))
		for i := range k {
			k[i] = byte(rnd.IntN(128))
		}
		if got, want := store.Skeleton(string(k)), reference(string(k)); got != want {
			t.Fatalf("%q: %q, library %q", k, got, want)
		}
	}
}

func FuzzSkeletonSame(f *testing.F) {
	for _, s := range []string{"rn", "m", "I1l|", "ｋey", "kеy", "a\u0301", "0O"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if got, want := store.Skeleton(k), reference(k); got != want {
			t.Fatalf("%q: %q, library %q", k, got, want)
		}
	})
}
