package gitstore

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// encodeTree gives the bytes of go-git's Tree.Encode for random sorted trees of every mode git records,
// and refuses what Encode refuses (unsorted entries, a NUL in a name); parseRawEntries reads its bytes
// back as the same entries.
func TestEncodeTreeSameAsGoGit(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	modes := []filemode.FileMode{filemode.Regular, filemode.Executable, filemode.Dir, filemode.Symlink, filemode.Submodule}
	names := []string{"a", "a-b", "a.b", "a0", "b", "ab", "k00.md", "k01.md", "Z", "é", "日本", "x y"}
	for round := range 500 {
		byName := map[string]object.TreeEntry{}
		for range rnd.IntN(len(names) + 1) {
			n := names[rnd.IntN(len(names))]
			byName[n] = object.TreeEntry{Name: n, Mode: modes[rnd.IntN(len(modes))],
				Hash: plumbing.NewHash(fmt.Sprintf("%040x", rnd.Uint64()))}
		}
		var es []object.TreeEntry
		for _, e := range byName {
			es = append(es, e)
		}
		sortEntries(es)
		got, err := encodeTree(es)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		o := &plumbing.MemoryObject{}
		if err := (&object.Tree{Entries: es}).Encode(o); err != nil {
			t.Fatal(err)
		}
		rd, _ := o.Reader()
		want, _ := io.ReadAll(rd)
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: encodeTree %q, go-git %q", round, got, want)
		}
		parsed, ok := parseRawEntries(got)
		if !ok || len(parsed) != len(es) {
			t.Fatalf("round %d: parsed %d entries (ok %v), want %d", round, len(parsed), ok, len(es))
		}
		for i, p := range parsed {
			if string(p.name) != es[i].Name || uint32(p.mode) != uint32(es[i].Mode) || p.hash != Hash(es[i].Hash) {
				t.Fatalf("round %d entry %d: parsed %s %o %s, want %v", round, i, p.name, uint32(p.mode), p.hash, es[i])
			}
		}
	}
	h := plumbing.NewHash("0123456789012345678901234567890123456789")
	if _, err := encodeTree([]object.TreeEntry{{Name: "b", Mode: filemode.Regular, Hash: h}, {Name: "a", Mode: filemode.Regular, Hash: h}}); err != object.ErrEntriesNotSorted {
		t.Fatalf("unsorted entries: %v, want ErrEntriesNotSorted", err)
	}
	if _, err := encodeTree([]object.TreeEntry{{Name: "a\x00b", Mode: filemode.Regular, Hash: h}}); err == nil {
		t.Fatal("a NUL in a name was encoded")
	}
}

// The raw-entry cache is bounded in trees and in bytes whatever a long-running process writes.
func TestRawCacheBounded(t *testing.T) {
	var c rawCache
	big := make([]byte, 1<<20)
	for i := range 100 {
		var h Hash
		h[0], h[1] = byte(i), byte(i>>8)
		c.put(h, big, nil, true)
		if len(c.m) > rawCacheSize || c.bytes > rawCacheBytes {
			t.Fatalf("after %d puts: %d trees, %d bytes", i+1, len(c.m), c.bytes)
		}
	}
	c.put(Hash{0xff}, make([]byte, rawCacheBytes+1), nil, true)
	if _, _, hit := c.get(Hash{0xff}); hit {
		t.Fatal("a tree larger than the cache was kept")
	}
}
