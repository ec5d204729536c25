package store

import (
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
)

// carriedIndex trusts no stat data more than the index it came from or the clock does: an entry kept from
// the old index keeps its stat data only when they stood against the old stamp, a changed one takes the
// written file's only when older than the new stamp, a folder holding a changed path or one the old index
// did not trust is left for the next scan to list, and the entries stay sorted with the removed ones
// gone. recordFiles gives the record's entries back with the trusted stat data only.
func TestCarriedIndexTrust(t *testing.T) {
	const oldStamp, newStamp = 1000, 2000
	st := func(m int64) FileStat { return FileStat{Size: 3, Mtime: m, Ctime: m, Ino: uint64(m)} }
	blob := func(c byte) gitstore.Hash { return gitstore.BlobHash([]byte{c}) }
	base := &statusIndex{stamp: oldStamp, commits: map[Scope]string{Public: "old"}, countsOK: true,
		countNames: []string{"knowledge"}, countVals: []int{5},
		entries: []indexEntry{
			{path: "knowledge/a.md", scope: Public, blob: blob('a'), hasStat: true, st: st(500)},
			{path: "knowledge/b.md", scope: Public, blob: blob('b'), hasStat: true, st: st(1500)}, // racy for base
			{path: "knowledge/c.md", scope: Public, blob: blob('c'), hasStat: true, st: st(600)},  // removed
			{path: "knowledge/d.md", scope: Public, blob: blob('d'), hasStat: true, st: st(700)},  // changed
			{path: "zeta/e.md", scope: Private, blob: blob('e'), hasStat: true, st: st(800)},
		},
		dirs: []indexDir{
			{path: ".", st: st(100), extras: []string{"knowledge", "zeta"}},
			{path: "knowledge", st: st(900)},
			{path: "other", st: st(1200)}, // not trusted by base
			{path: "zeta", st: st(300)},
		},
	}
	rec := &Record{Commits: map[Scope]string{Public: "new", Private: ""}, Clean: true, Files: map[string]RecordEntry{
		"knowledge/a.md":  {Scope: Public, Blob: blob('a').String(), Stat: &FileStat{Mtime: 500, Ctime: 500}},
		"knowledge/b.md":  {Scope: Public, Blob: blob('b').String()},
		"knowledge/d.md":  {Scope: Public, Blob: blob('D').String(), Stat: ptr(st(1900))},
		"knowledge/aa.md": {Scope: Private, Blob: blob('A').String(), Stat: ptr(st(2000))}, // as new as the stamp
		"zeta/e.md":       {Scope: Private, Blob: blob('e').String(), Stat: ptr(st(800))},
	}}
	key := indexKey{recLen: 42}
	nx := carriedIndex(base, rec, []string{"knowledge/d.md", "knowledge/c.md", "knowledge/aa.md"}, newStamp, key)

	var got []string
	for _, e := range nx.entries {
		s := e.path + " " + string(e.scope)
		if e.hasStat {
			s += " stat"
		}
		got = append(got, s)
	}
	want := "knowledge/a.md public stat|knowledge/aa.md private|knowledge/b.md public|knowledge/d.md public stat|zeta/e.md private stat"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("entries:\n%s\nwant\n%s", g, want)
	}
	if e, _ := nx.entry("knowledge/d.md"); e.blob != blob('D') || e.st != st(1900) {
		t.Errorf("changed entry: %+v", e)
	}
	var dirs []string
	for _, d := range nx.dirs {
		dirs = append(dirs, d.path)
	}
	if g := strings.Join(dirs, " "); g != ". zeta" {
		t.Errorf("folders kept: %q, want \". zeta\"", g)
	}
	if nx.stamp != newStamp || nx.key != key || nx.commits[Public] != "new" || len(nx.commits) != 1 || !nx.clean ||
		!nx.countsOK || nx.prechecked {
		t.Errorf("index: stamp %d, key %+v, commits %v, clean %v, counts %v, prechecked %v", nx.stamp, nx.key, nx.commits,
			nx.clean, nx.countsOK, nx.prechecked)
	}

	// Back to the record's entries: the stat data the new index trusts, no others.
	files := nx.recordFiles()
	if len(files) != 5 || files["knowledge/b.md"].Stat != nil || files["knowledge/aa.md"].Stat != nil ||
		files["knowledge/d.md"].Stat == nil || *files["knowledge/d.md"].Stat != st(1900) ||
		files["knowledge/aa.md"].Blob != blob('A').String() || files["knowledge/aa.md"].Scope != Private {
		t.Errorf("recordFiles: %+v", files)
	}
}

func ptr[T any](v T) *T { return &v }
