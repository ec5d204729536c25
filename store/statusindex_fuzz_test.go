package store

import (
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
)

// FuzzDecodeStatusIndex: whatever bytes the status index file holds (a torn write, a disk error, a hand
// edit), decoding never panics, and what decodes encodes to an index that decodes again.
func FuzzDecodeStatusIndex(f *testing.F) {
	x := &statusIndex{stamp: 42, commits: map[Scope]string{Public: "c1"}, clean: true, countsOK: true,
		countNames: []string{"knowledge"}, countVals: []int{2},
		entries: []indexEntry{{path: "knowledge/a.md", scope: Public, blob: gitstore.BlobHash([]byte("a")), hasStat: true,
			st: FileStat{Size: 1, Mtime: 2, Ctime: 3, Ino: 4}}, {path: "x/../y", scope: Private, noFile: true}},
		dirs: []indexDir{{path: ".", extras: []string{"knowledge"}}, {path: "knowledge", st: FileStat{Size: 9}}}}
	good := x.encode()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(statusIndexMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		y, err := decodeIndex(b)
		if err != nil {
			return
		}
		if _, err := decodeIndex(y.encode()); err != nil {
			t.Fatalf("a decoded index encodes to one that does not decode: %v", err)
		}
	})
}

func TestStatusIndexRoundTrip(t *testing.T) {
	x := &statusIndex{stamp: 7, commits: map[Scope]string{Public: "c", Ephemeral: "e"}, incomplete: true,
		entries: []indexEntry{{path: "a", scope: Public}, {path: "b/c", scope: Ephemeral, hasStat: true, st: FileStat{Mtime: -1}}},
		dirs:    []indexDir{{path: ".", extras: []string{"b"}}}}
	b := x.encode()
	y, err := decodeIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(y.encode()) != string(b) || y.entries[1].st.Mtime != -1 || !y.incomplete || y.commits[Ephemeral] != "e" {
		t.Fatalf("round trip: %+v", y)
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 1
		if _, err := decodeIndex(c); err == nil {
			t.Fatalf("a bit flipped at %d was not noticed", i)
		}
	}
}
