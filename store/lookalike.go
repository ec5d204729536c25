package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ctx-dev/ctx/gitstore"

	"github.com/mtibben/confusables"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Skeleton is the form two keys share when they look alike: the NFKC form of the key (fullwidth "ａ" →
// "a"), case-folded ("ς" → "σ", "Σ" → "σ", "A" → "a"), then the skeleton of Unicode Technical Standard #39 (Cyrillic "а" → "a", "1" → "l", "rn" →
// "m"...), from the Unicode confusables table. Two different keys with the same skeleton are refused in one
// folder (docs/format.md, "Keys and names").
func Skeleton(key string) string {
	if sk, ok := asciiSkeleton(key); ok {
		return sk
	}
	// Case folding first (NFKC, full case fold, NFKC again: Unicode's NFKC_Casefold in effect), so that
	// keys one case-insensitive file system holds as one name ("σ" and final "ς") look alike too.
	return confusables.Skeleton(norm.NFKC.String(caseFold.String(norm.NFKC.String(key))))
}

// caseFold is Unicode full case folding (CaseFolding.txt, C and F mappings).
var caseFold = cases.Fold()

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
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A' // case folding of ASCII
		}
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
// files with suffix removed, or, when suffix is "", the names of its subfolders. Of several, it returns
// the one whose name comes first. A view of the refs with the store's index (RefReader.skels) answers from
// the index of each scope's folder (skelIndex); any other reads the folder's listing.
func lookalike(ctx context.Context, v *View, ed Edits, dir, suffix, key string) (string, error) {
	sk := Skeleton(key)
	check := func(name string) bool {
		return name != key && Skeleton(name) == sk
	}
	var found string
	var err error
	if rr, scopes, ok := indexedReader(v); ok {
		found, err = rr.lookalike(ctx, scopes, dir, suffix, key, sk)
	} else {
		found, err = listedLookalike(ctx, v, dir, suffix, check)
	}
	if err != nil || found != "" {
		return found, err
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

// listedLookalike is lookalike's search of dir's listing: the first key of the listing for which check
// holds.
func listedLookalike(ctx context.Context, v *View, dir, suffix string, check func(string) bool) (string, error) {
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
	return "", nil
}

// indexedReader returns the RefReader under v, with the scopes v reads, when it has the store's
// look-alike index.
func indexedReader(v *View) (*RefReader, []Scope, bool) {
	switch r := v.r.(type) {
	case *RefReader:
		return r, Scopes, r.skels != nil
	case publicReader:
		rr, ok := r.r.(*RefReader)
		return rr, []Scope{Public}, ok && rr.skels != nil
	case publicPrefixReader:
		rr, ok := r.r.(*RefReader)
		return rr, []Scope{Public}, ok && rr.skels != nil
	}
	return nil, nil, false
}

// lookalike is listedLookalike answered from the index of dir in each scope's tree: the same name
// (TestIndexedLookalikeSameAsListed). A name present in several scopes counts once, as the first scope
// holding it has it (View.List).
func (r *RefReader) lookalike(ctx context.Context, scopes []Scope, dir, suffix, key, sk string) (string, error) {
	r.skels.mu.Lock() // the indexes change under it (index)
	defer r.skels.mu.Unlock()
	var seen []*skelIndex // the indexes of the scopes before this one
	best := ""
	bestName := ""
	for _, sc := range scopes {
		t := r.Trees[sc]
		if t.IsZero() {
			continue
		}
		idx, err := r.skels.index(ctx, r.repo, skelSlot{scope: sc, dir: dir, suffix: suffix}, t)
		if err != nil {
			return "", err
		}
		if idx == nil {
			continue
		}
	names:
		for _, n := range idx.bySkel[sk] {
			for _, o := range seen {
				if o.has(sk, n.name) {
					continue names
				}
			}
			if n.key == key || n.dir != (suffix == "") {
				continue
			}
			if bestName == "" || n.name < bestName {
				best, bestName = n.key, n.name
			}
		}
		seen = append(seen, idx)
	}
	return best, nil
}

// skelIndex is the look-alike index of one folder of one scope's tree: its keys by skeleton. Keys are
// what lookalike compares: names that pass RefReader.List's filter (a file or a folder, a name CheckName
// accepts), with the suffix removed; with a suffix, names without it are left out.
type skelIndex struct {
	folder gitstore.Hash // the folder's tree object
	bySkel map[string][]skelName
}

// skelName is one name of a skelIndex: the entry's name, its key, and whether it is a folder.
type skelName struct {
	name, key string
	dir       bool
}

func (x *skelIndex) has(sk, name string) bool {
	for _, n := range x.bySkel[sk] {
		if n.name == name {
			return true
		}
	}
	return false
}

// add indexes entry e of the folder, unless lookalike does not read it. An entry of a name already held
// replaces it (a tree holding a name twice lists as its last entry, View.List).
func (x *skelIndex) add(e gitstore.Entry, suffix string) {
	if !(e.Dir || e.IsFile()) || gitstore.CheckName(e.Name) != nil {
		return
	}
	key := e.Name
	if suffix != "" {
		var ok bool
		if key, ok = strings.CutSuffix(e.Name, suffix); !ok {
			return
		}
	}
	sk := Skeleton(key)
	n := skelName{name: e.Name, key: key, dir: e.Dir}
	for i, o := range x.bySkel[sk] {
		if o.name == e.Name {
			x.bySkel[sk][i] = n
			return
		}
	}
	x.bySkel[sk] = append(x.bySkel[sk], n)
}

// remove takes name out of the index.
func (x *skelIndex) remove(name, suffix string) {
	key := name
	if suffix != "" {
		var ok bool
		if key, ok = strings.CutSuffix(name, suffix); !ok {
			return
		}
	}
	sk := Skeleton(key)
	ns := x.bySkel[sk]
	for i, n := range ns {
		if n.name == name {
			ns = append(ns[:i:i], ns[i+1:]...)
			break
		}
	}
	if len(ns) == 0 {
		delete(x.bySkel, sk)
	} else {
		x.bySkel[sk] = ns
	}
}

// skelSlot names the index of one folder (dir, keys with suffix removed) of one scope.
type skelSlot struct {
	scope       Scope
	dir, suffix string
}

// skelCache holds the look-alike index of the folders a long-lived Store (ctx mcp serve) checks, so that
// a write does not compute the skeleton of every key of a folder of 10,000 (4 ms). An index is valid for
// one tree of the folder (its object name): when the scope's ref has moved, by this process or another
// one, the folder's tree differs, and the index is moved to it by the diff of the two trees (what changed
// is indexed again; TestLookalikeIndexAfterOtherWriters). A diff of more than skelDiffMax names, or of a
// tree holding a name twice, builds the index again from the listing.
type skelCache struct {
	mu sync.Mutex
	m  map[skelSlot]*skelIndex
}

// skelDiffMax is the largest diff moved into an index; a larger one rebuilds it.
const skelDiffMax = 256

// skelSlots bounds the indexes a Store keeps (a few folders are checked: the kinds' folders, skills).
const skelSlots = 16

// index returns the index of folder dir of tree root for slot (nil when the folder is absent). The caller
// holds c.mu while it uses the index.
func (c *skelCache) index(ctx context.Context, repo *gitstore.Repo, slot skelSlot, root gitstore.Hash) (*skelIndex, error) {
	e, found, err := repo.Lookup(ctx, root, slot.dir)
	if err != nil {
		return nil, err
	}
	if !found || !e.Dir || e.Hash.IsZero() {
		return nil, nil
	}
	old := c.m[slot]
	if old != nil && old.folder == e.Hash {
		return old, nil
	}
	if old != nil {
		if ok, err := old.move(ctx, repo, e.Hash, slot.suffix); err != nil {
			return nil, err
		} else if ok {
			return old, nil
		}
		delete(c.m, slot) // a failed move may have left it half done
	}
	idx := &skelIndex{folder: e.Hash, bySkel: map[string][]skelName{}}
	es, err := repo.List(ctx, e.Hash, "")
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		idx.add(e, slot.suffix)
	}
	if c.m == nil {
		c.m = map[skelSlot]*skelIndex{}
	}
	if len(c.m) >= skelSlots {
		clear(c.m)
	}
	c.m[slot] = idx
	return idx, nil
}

// move updates the index to folder tree h by the diff from its folder; false when it cannot (too many
// names changed, a name held twice): the caller builds the index again.
func (x *skelIndex) move(ctx context.Context, repo *gitstore.Repo, h gitstore.Hash, suffix string) (bool, error) {
	added, removed, err := repo.DiffItems(ctx, x.folder, h)
	if err != nil {
		return false, err
	}
	if len(added)+len(removed) > skelDiffMax {
		return false, nil
	}
	var names []string // the names of the folder the diff touched (a leaf below a subfolder touches it)
	for _, its := range [][]gitstore.Item{added, removed} {
		for _, it := range its {
			if it.Duplicate {
				return false, nil
			}
			names = append(names, it.Names[0])
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, n := range names {
		x.remove(n, suffix)
		if gitstore.CheckName(n) != nil {
			continue
		}
		e, found, err := repo.Lookup(ctx, h, n)
		if err != nil {
			return false, err
		}
		if found {
			e.Name = n
			x.add(e, suffix)
		}
	}
	x.folder = h
	return true, nil
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
