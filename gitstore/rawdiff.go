package gitstore

import (
	"bytes"
	"context"
	"io"
	"sort"
	"sync"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
)

// rawEntry is one entry of a tree object as it is stored (gitformat-tree(5)): the name is a slice of the
// object's bytes.
type rawEntry struct {
	name []byte
	mode FileMode
	hash Hash
}

func (e rawEntry) dir() bool { return e.mode == ModeDir }

// gitOrder compares two entries in git's tree order (base_name_compare: a folder's name is compared as
// if it ended with "/").
func gitOrder(a, b rawEntry) int {
	n := min(len(a.name), len(b.name))
	if c := bytes.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	next := func(e rawEntry) int {
		switch {
		case len(e.name) > n:
			return int(e.name[n])
		case e.dir():
			return '/'
		}
		return 0
	}
	return next(a) - next(b)
}

// rawEntries reads tree h and parses its entries without decoding them into go-git's type; ok false
// when the tree is not strictly in git's order or holds a name twice (as a file and as a folder too), or
// is malformed: diffItems then takes the general path, which reports such trees. The parsed entries of
// recent trees are kept (rawCache): a write diffs the folder it edited twice (the commit's paths and the
// refresh of .context/), and the next write's old tree is this write's new one.
func (r *Repo) rawEntries(h Hash) (es []rawEntry, ok bool, err error) {
	if h.IsZero() {
		return nil, true, nil
	}
	if es, ok, hit := r.raws.get(h); hit {
		return es, ok, nil
	}
	raw, err := r.rawTree(h)
	if err != nil {
		return nil, false, err
	}
	es, ok = parseRawEntries(raw)
	r.raws.put(h, raw, es, ok)
	return es, ok, nil
}

// parseRawEntries parses the bytes of a tree object (gitformat-tree(5)); the names are slices of raw. ok
// is false when the tree is malformed, not strictly in git's order, or holds a name twice.
func parseRawEntries(raw []byte) (es []rawEntry, ok bool) {
	// An entry is at least 28 bytes ("40000 x\x00" and its object name): no entry is appended beyond
	// this capacity.
	es = make([]rawEntry, 0, len(raw)/28+1)
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		if sp <= 0 {
			return nil, false
		}
		var mode uint32
		for _, c := range raw[:sp] {
			if c < '0' || c > '7' {
				return nil, false
			}
			mode = mode<<3 | uint32(c-'0')
		}
		rest := raw[sp+1:]
		nul := bytes.IndexByte(rest, 0)
		if nul <= 0 || len(rest) < nul+1+len(Hash{}) {
			return nil, false
		}
		e := rawEntry{name: rest[:nul:nul], mode: FileMode(mode)}
		copy(e.hash[:], rest[nul+1:])
		if len(es) > 0 && gitOrder(es[len(es)-1], e) >= 0 {
			return nil, false
		}
		es = append(es, e)
		raw = rest[nul+1+len(Hash{}):]
	}
	// A folder and a file of the same name are not neighbours in git's order: look for each folder's name.
	for _, e := range es {
		if !e.dir() {
			continue
		}
		f := rawEntry{name: e.name, mode: ModeRegular}
		i := sort.Search(len(es), func(i int) bool { return gitOrder(es[i], f) >= 0 })
		if i < len(es) && bytes.Equal(es[i].name, e.name) && !es[i].dir() {
			return nil, false
		}
	}
	return es, true
}

// rawCache keeps the parsed entries (rawEntries) of recently read or written trees by object name, with
// the bytes their names point into. Trees are immutable, so an entry is never stale: a ref moved by
// another process names another tree, which misses and is read from the object database.
type rawCache struct {
	mu    sync.Mutex
	m     map[Hash]rawCached
	order []Hash
	bytes int
}

type rawCached struct {
	es   []rawEntry
	ok   bool
	size int // len(raw) + the entries' memory
}

// rawCacheSize and rawCacheBytes bound rawCache: 8 trees, about 4 MiB (a 10,000-entry folder is 370 KB
// of bytes and about 640 KB of entries). A write needs two (the folder before and after); a long-running
// server keeps no more than this whatever it writes.
const (
	rawCacheSize  = 8
	rawCacheBytes = 4 << 20
)

func (c *rawCache) get(h Hash) ([]rawEntry, bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x, hit := c.m[h]
	return x.es, x.ok, hit
}

func (c *rawCache) put(h Hash, raw []byte, es []rawEntry, ok bool) {
	size := len(raw) + cap(es)*int(unsafe.Sizeof(rawEntry{})) + 64
	if size > rawCacheBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[Hash]rawCached{}
	}
	if _, dup := c.m[h]; dup {
		return
	}
	for len(c.order) > 0 && (len(c.order) >= rawCacheSize || c.bytes+size > rawCacheBytes) {
		c.bytes -= c.m[c.order[0]].size
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[h] = rawCached{es: es, ok: ok, size: size}
	c.order = append(c.order, h)
	c.bytes += size
}

// diffSorted is diffItems for two trees whose entries are in git's order with no name twice: a merge of
// the two lists, which touches no entry twice and allocates only for what changed.
func (r *Repo) diffSorted(ctx context.Context, ea, eb []rawEntry, names []string, added, removed *[]Item, bud *diffBudget) error {
	path := func(n []byte) []string {
		p := make([]string, len(names)+1)
		copy(p, names)
		p[len(names)] = string(n)
		return p
	}
	var onlyA, onlyB []rawEntry
	type pair struct{ a, b rawEntry }
	var changed []pair
	i, j := 0, 0
	for i < len(ea) && j < len(eb) {
		switch c := gitOrder(ea[i], eb[j]); {
		case c < 0:
			onlyA = append(onlyA, ea[i])
			i++
		case c > 0:
			onlyB = append(onlyB, eb[j])
			j++
		default:
			if ea[i].mode != eb[j].mode || ea[i].hash != eb[j].hash {
				changed = append(changed, pair{ea[i], eb[j]})
			}
			i++
			j++
		}
	}
	onlyA = append(onlyA, ea[i:]...)
	onlyB = append(onlyB, eb[j:]...)
	// A name that is a file on one side and a folder on the other is a change of that name.
	byName := map[string]int{}
	for k, e := range onlyA {
		byName[string(e.name)] = k
	}
	usedA := make([]bool, len(onlyA))
	var newOnly []rawEntry
	for _, e := range onlyB {
		if k, ok := byName[string(e.name)]; ok {
			changed = append(changed, pair{onlyA[k], e})
			usedA[k] = true
			continue
		}
		newOnly = append(newOnly, e)
	}
	if err := bud.take(len(onlyA)-(len(onlyB)-len(newOnly))+len(changed), len(changed)+len(newOnly)); err != nil {
		return err
	}
	for _, p := range changed {
		if err := r.diffName(ctx, &p.a, p.b, path(p.b.name), added, removed, bud); err != nil {
			return err
		}
	}
	for _, e := range newOnly {
		if err := r.diffName(ctx, nil, e, path(e.name), added, removed, bud); err != nil {
			return err
		}
	}
	for k, e := range onlyA {
		if usedA[k] {
			continue
		}
		if e.dir() {
			if err := r.diffItems(ctx, e.hash, ZeroHash, path(e.name), &[]Item{}, removed, bud); err != nil {
				return err
			}
			continue
		}
		*removed = append(*removed, Item{Names: path(e.name), Mode: e.mode, Hash: e.hash})
	}
	return nil
}

// diffName is diffItems' rule for one name p of tree b, present in a as ea (nil: absent), not identical.
func (r *Repo) diffName(ctx context.Context, ea *rawEntry, eb rawEntry, p []string, added, removed *[]Item, bud *diffBudget) error {
	inA := ea != nil
	if eb.dir() {
		var base Hash
		if inA && ea.dir() {
			base = ea.hash
		}
		before := len(*added)
		if err := r.diffItems(ctx, base, eb.hash, p, added, removed, bud); err != nil {
			return err
		}
		if len(*added) == before && (!inA || !ea.dir()) {
			// A new folder with no leaves: its name must still be seen.
			*added = append(*added, Item{Names: p, Mode: eb.mode, Hash: eb.hash})
		}
		if inA && !ea.dir() {
			*removed = append(*removed, Item{Names: p, Mode: ea.mode, Hash: ea.hash})
		}
		return nil
	}
	*added = append(*added, Item{Names: p, Mode: eb.mode, Hash: eb.hash})
	if inA && ea.dir() {
		return r.diffItems(ctx, ea.hash, ZeroHash, p, &[]Item{}, removed, bud)
	}
	return nil
}

// rawTree returns the bytes of tree object h as stored (gitformat-tree(5)), without decoding them: the
// bytes git cat-file gave (ReadWithGit) as they are, else go-git's object inflated.
func (r *Repo) rawTree(h Hash) ([]byte, error) {
	var raw []byte
	err := r.read(func() error {
		o, err := r.reader().EncodedObject(plumbing.TreeObject, h.ph())
		if err != nil {
			return err
		}
		if ro, isRaw := o.(*rawObject); isRaw {
			raw = ro.data
			return nil
		}
		rd, err := o.Reader()
		if err != nil {
			return err
		}
		defer func() { _ = rd.Close() }()
		raw, err = io.ReadAll(rd)
		return err
	})
	return raw, err
}
