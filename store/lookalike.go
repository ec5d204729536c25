package store

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// Skeleton is the form two keys share when they look alike: the NFKC form of the key (fullwidth "ａ" →
// "a"), then the skeleton of Unicode Technical Standard #39 (Cyrillic "а" → "a", "1" → "l", "rn" →
// "m"...), from the Unicode confusables table. Two different keys with the same skeleton are refused in one
// folder (docs/format.md, "Keys and names").
func Skeleton(key string) string {
	if sk, ok := asciiSkeleton(key); ok {
		return sk
	}
	return confusables.Skeleton(norm.NFKC.String(key))
}

// asciiSkeletons holds the skeleton of each ASCII byte, "" for a byte whose skeleton is not ASCII.
var asciiSkeletons = sync.OnceValue(func() *[128]string {
	var t [128]string
	for b := range 128 {
		sk := confusables.Skeleton(string(rune(b)))
		if isASCII(sk) {
			t[b] = sk
		}
	}
	return &t
})

// asciiSkeleton is Skeleton for a key of ASCII bytes, the common case, by table: for ASCII, NFKC and
// NFD change nothing and the skeleton is the concatenation of each byte's (the confusables table maps
// code points one by one; TestASCIISkeletonSame checks it against the library). ok is false for any
// other key.
func asciiSkeleton(key string) (string, bool) {
	t := asciiSkeletons()
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 128 || t[c] == "" {
			return "", false
		}
		b.WriteString(t[c])
	}
	return b.String(), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 128 {
			return false
		}
	}
	return true
}

// lookalike returns the key of dir (over every scope, and over the files ed already writes) whose
// skeleton equals key's while the key differs, "" when there is none. Keys of dir are the names of its
// files with suffix removed, or, when suffix is "", the names of its subfolders.
func lookalike(ctx context.Context, v *View, ed Edits, dir, suffix, key string) (string, error) {
	sk := Skeleton(key)
	check := func(name string) bool {
		return name != key && Skeleton(name) == sk
	}
	names, err := v.List(ctx, dir)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		name, ok := n.Name, n.Dir
		if suffix != "" {
			name, ok = strings.CutSuffix(n.Name, suffix)
			ok = ok && !n.Dir
		}
		if ok && check(name) {
			return name, nil
		}
	}
	for _, cs := range ed {
		for _, c := range cs {
			rest, ok := strings.CutPrefix(c.Path, dir+"/")
			if !ok || c.Delete {
				continue
			}
			var name string
			if suffix == "" {
				name, _, _ = strings.Cut(rest, "/")
			} else if name, ok = strings.CutSuffix(rest, suffix); !ok || strings.Contains(name, "/") {
				continue
			}
			if check(name) {
				return name, nil
			}
		}
	}
	return "", nil
}

// refuseLookalike returns an error when a new key of dir looks like an existing one (see lookalike).
func refuseLookalike(ctx context.Context, v *View, ed Edits, what, dir, suffix, key string) error {
	other, err := lookalike(ctx, v, ed, dir, suffix, key)
	if err != nil || other == "" {
		return err
	}
	return invalidf("%s %q looks like the existing %s %q (they differ only in characters that look alike: %s): use %q, or a key that reads differently",
		what, key, what, other, describeDiff(key, other), other)
}

// describeDiff names the first characters in which two look-alike keys differ, e.g. `"а" U+0430 vs "a" U+0061`.
func describeDiff(a, b string) string {
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		if ra[i] != rb[i] {
			return fmt.Sprintf("%q %U vs %q %U", ra[i], ra[i], rb[i], rb[i])
		}
	}
	return "a different length"
}
