package store_test

import (
	"math/rand/v2"
	"testing"

	"github.com/mtibben/confusables"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/ctx-dev/ctx/store"
)

// reference is Skeleton as the libraries compute it for any key: NFKC, full case folding, NFKC, then the
// confusables skeleton.
func reference(key string) string {
	return confusables.Skeleton(norm.NFKC.String(cases.Fold().String(norm.NFKC.String(key))))
}

// Keys equal under Unicode case folding look alike: a case-insensitive file system (macOS, Windows)
// would hold them as one name. Keys are lower case, but "σ" and final "ς" are both lower case.
func TestCaseFoldedKeysLookAlike(t *testing.T) {
	for _, p := range [][2]string{{"σ", "ς"}, {"ὀδυσσεύς", "ὀδυσσεύσ"}, {"straße", "strasse"}, {"ſ", "s"}, {"auth", "Auth"}} {
		if a, b := store.Skeleton(p[0]), store.Skeleton(p[1]); a != b {
			t.Errorf("Skeleton(%q) = %q, Skeleton(%q) = %q: want equal", p[0], a, p[1], b)
		}
	}
	for _, p := range [][2]string{{"auth", "author"}, {"σ", "τ"}} {
		if store.Skeleton(p[0]) == store.Skeleton(p[1]) {
			t.Errorf("Skeleton(%q) = Skeleton(%q): want different", p[0], p[1])
		}
	}
}

// Skeleton's table for ASCII keys gives the libraries' skeleton for every ASCII string of one and two
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
