// Package objread reads a git repository's refs and objects in process, with the standard library and
// a zlib decoder only: the repository's discovery (Discover, CommonDir), loose and packed refs (ReadRef),
// and objects of packs (each .idx memory-mapped and binary-searched, as C git does) and loose objects
// (Reader). It imports no go-git, so that a small program (cmd/ctx, the lean front of docs/architecture.md
// "The lean front") can read a store without linking go-git's package initialisation; gitstore uses it for
// its in-process reads.
package objread

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ctx-dev/ctx/internal/plainfile"
	"github.com/klauspost/compress/zlib"
)

// Reader reads objects in process the way C git does, for a short-lived command that reads a few objects
// of a possibly big store: each pack's .idx is memory-mapped and binary-searched, the object is inflated
// at its offset and its delta chain applied; loose objects are inflated from their files. Version 2
// indexes only; anything it does not understand (an index of another version, an object over
// MaxObject, a blob or a commit over the Reader's blob limit, a damaged entry) is ErrMissing, and the caller falls
// back to a reader that handles it (gitstore: go-git; cmd/ctx: the full binary). Packs are mapped on the
// first read: packs written after it are not seen. Safe for concurrent use.
type Reader struct {
	mu      sync.Mutex
	dirs    []string // objects directories, searched in order
	maxBlob int64    // largest blob or commit returned whole, inflated bytes
	loaded  bool
	packs   []*packFile
	zr      io.ReadCloser // a zlib reader kept for reuse (zlib.Resetter)
	br      *bufio.Reader // the buffer loose objects are read through, kept for reuse
	cache   map[packPos]cachedObject
	cached  int // bytes held by cache
}

// MaxObject is the largest object (inflated, bytes) a Reader returns; bigger ones are ErrMissing.
const MaxObject = 256 << 20
const maxRawObject = MaxObject

// maxDeltaDepth bounds a delta chain (git's own limit on writing is 4095): a longer one, or a cycle in a
// crafted pack, is a miss.
const maxDeltaDepth = 10000

// deltaBaseCacheBytes bounds the objects of delta chains kept for reuse (bases of later reads in the process,
// as git's delta base cache).
const deltaBaseCacheBytes = 16 << 20

// ErrMissing is a miss of the pack reader.
var ErrMissing = errors.New("pack reader: missing")

type packPos struct {
	p   *packFile
	off int64
}

type cachedObject struct {
	t    Type
	data []byte
}

// packFile is one pack: its index mapped into memory, its pack file open.
type packFile struct {
	dir   string // the objects directory it is in
	idx   []byte // the whole .idx file (mapped)
	unmap func()
	n     uint32 // objects
	f     *os.File
	size  int64 // of the .pack
	// pack is the whole .pack mapped (Unix; nil elsewhere, or when it could not be mapped: pread then):
	// an object's header and zlib stream are read in place, without two system calls and a copy per
	// object, as git reads packs (bench/README.md "Sixth round", branch pull6). Git never rewrites a
	// pack in place (a new one is written beside and renamed), so the mapping stays valid as the index's.
	pack      []byte
	unmapPack func()
}

const (
	idxHeader = 8
	idxFanout = 256 * 4
)

// OnInflate, when set (tests only; nil otherwise, and never set while a Reader runs in another
// goroutine), is called with the size of every object or delta a Reader inflates from a pack.
var OnInflate func(size int64)

// NewReader reads the object directories dirs (an "objects" folder each, searched in order, each followed
// by the directories it names in objects/info/alternates, ObjectDirs); a blob of
// more than maxBlob bytes is ErrMissing (a caller that streams large blobs reads them its own way), and so
// is a commit of more than maxBlob bytes (a teammate's commit message of 60 MB: the caller reads only its
// beginning, gitstore.MaxCommitBytes).
func NewReader(maxBlob int64, dirs ...string) *Reader { return &Reader{dirs: dirs, maxBlob: maxBlob} }

// Read returns the type and content of object h; ErrMissing when no pack or loose object of the
// directories holds it (or holds it in a shape the Reader leaves to another reader).
func (pr *Reader) Read(h Hash) (Type, []byte, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.loaded {
		pr.load()
	}
	return pr.object(h, 0)
}

func (pr *Reader) object(h Hash, depth int) (Type, []byte, error) {
	for _, p := range pr.packs {
		if off, ok := p.find(h); ok {
			t, data, err := pr.at(p, off, depth)
			if err == nil {
				return t, data, nil
			}
		}
	}
	for _, d := range pr.dirs {
		if t, data, err := pr.loose(d, h); err == nil {
			return t, data, nil
		}
	}
	return 0, nil, ErrMissing
}

// Size returns the size of object h's content, from its header only, as `git cat-file --batch-check`
// reports it: a packed object's entry header, a packed delta's own header (the first bytes of its zlib
// stream hold the size of the object it makes), a loose object's "<type> <size>" header. Nothing past
// the header is inflated, whatever the size. ErrMissing when no pack or loose object of the directories
// holds it, or holds it in a shape the Reader leaves to another reader.
func (pr *Reader) Size(h Hash) (int64, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.loaded {
		pr.load()
	}
	for _, p := range pr.packs {
		if off, ok := p.find(h); ok {
			if n, err := pr.packedSize(p, off); err == nil {
				return n, nil
			}
		}
	}
	for _, d := range pr.dirs {
		if n, err := pr.looseSize(d, h); err == nil {
			return n, nil
		}
	}
	return 0, ErrMissing
}

// packedSize is the size of the content of the object at off of p.
func (pr *Reader) packedSize(p *packFile, off int64) (int64, error) {
	e, err := p.header(off)
	if err != nil {
		return 0, err
	}
	switch e.typ {
	case Commit, Tree, Blob, Tag:
		return e.size, nil
	}
	// A delta: its stream starts with the base's size and the result's (two varints of up to 10 bytes).
	end := p.size - 20
	if e.data < 0 || e.data > end {
		return 0, ErrMissing
	}
	var src io.Reader
	if p.pack != nil {
		src = bytes.NewReader(p.pack[e.data:end])
	} else {
		src = io.NewSectionReader(p.f, e.data, end-e.data)
	}
	if pr.zr == nil {
		zr, err := zlib.NewReader(src)
		if err != nil {
			return 0, err
		}
		pr.zr = zr
	} else if err := pr.zr.(zlib.Resetter).Reset(src, nil); err != nil {
		return 0, err
	}
	var head [20]byte
	n, err := io.ReadFull(pr.zr, head[:min(int64(len(head)), e.size)])
	if err != nil && n == 0 {
		return 0, err
	}
	size, ok := deltaResultSize(head[:n])
	if !ok || size > maxRawObject {
		return 0, ErrMissing
	}
	return int64(size), nil
}

// looseSize is the size of loose object h of objects directory dir, from its header.
func (pr *Reader) looseSize(dir string, h Hash) (int64, error) {
	s := h.String()
	file, err := openRead(filepath.Join(dir, s[:2], s[2:]))
	if err != nil {
		return 0, err
	}
	defer file.Close()
	var buf [512]byte
	n, err := io.ReadFull(file, buf[:])
	if n == 0 {
		return 0, err
	}
	if pr.zr == nil {
		zr, err := zlib.NewReader(bytes.NewReader(buf[:n]))
		if err != nil {
			return 0, err
		}
		pr.zr = zr
	} else if err := pr.zr.(zlib.Resetter).Reset(bytes.NewReader(buf[:n]), nil); err != nil {
		return 0, err
	}
	var hdr [32]byte
	i := 0
	for ; i < len(hdr); i++ {
		if _, err := io.ReadFull(pr.zr, hdr[i:i+1]); err != nil {
			return 0, err
		}
		if hdr[i] == 0 {
			break
		}
	}
	sp := bytes.IndexByte(hdr[:i], ' ')
	if i == len(hdr) || sp < 0 {
		return 0, ErrMissing
	}
	if _, ok := typeNamed[string(hdr[:sp])]; !ok {
		return 0, ErrMissing
	}
	size, err := strconv.ParseInt(string(hdr[sp+1:i]), 10, 64)
	if err != nil || size < 0 {
		return 0, ErrMissing
	}
	return size, nil
}

// Has reports whether objects directory dir (one of the reader's) holds h, in a pack the reader has
// mapped or as a loose object.
func (pr *Reader) Has(dir string, h Hash) bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.loaded {
		pr.load()
	}
	for _, p := range pr.packs {
		if p.dir == dir {
			if _, ok := p.find(h); ok {
				return true
			}
		}
	}
	s := h.String()
	_, err := os.Stat(filepath.Join(dir, s[:2], s[2:]))
	return err == nil
}

// load maps the index of every pack of the directories; a pack it cannot read is left to the caller's other reader.
func (pr *Reader) load() {
	pr.loaded = true
	// The directories the given ones borrow from (objects/info/alternates: git clone --shared,
	// --reference) are read after each, as git reads them.
	var dirs []string
	for _, d := range pr.dirs {
		dirs = append(dirs, ObjectDirs(d)...)
	}
	pr.dirs = dirs
	for _, d := range pr.dirs {
		for _, idx := range packIndexes(filepath.Join(d, "pack")) {
			if p, err := openPackFile(idx); err == nil {
				p.dir = d
				pr.packs = append(pr.packs, p)
			}
		}
	}
}

// packIndexes returns the paths of the files pack-*.idx of folder dir, sorted (filepath.Glob's answer,
// with the folder opened out of the runtime's poller); none when it cannot be read.
func packIndexes(dir string) []string {
	f, err := plainfile.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(-1)
	_ = f.Close()
	var idxs []string
	for _, n := range names {
		if strings.HasPrefix(n, "pack-") && strings.HasSuffix(n, ".idx") {
			idxs = append(idxs, filepath.Join(dir, n))
		}
	}
	sort.Strings(idxs)
	return idxs
}

// openPackFile maps idx and opens its pack, checking both headers and the index's sizes.
func openPackFile(idx string) (*packFile, error) {
	data, unmap, err := mapFile(idx)
	if err != nil {
		return nil, err
	}
	p := &packFile{idx: data, unmap: unmap}
	if err := p.checkIndex(); err != nil {
		p.close()
		return nil, fmt.Errorf("%s: %w", idx, err)
	}
	f, err := plainfile.OpenFile(idx[:len(idx)-len(".idx")]+".pack", os.O_RDONLY, 0)
	if err != nil {
		p.close()
		return nil, err
	}
	p.f = f
	fi, err := f.Stat()
	if err != nil {
		p.close()
		return nil, err
	}
	p.size = fi.Size()
	// The pack mapped from the descriptor just opened (mapFile would open it again), its header read from
	// the mapping: five system calls fewer in every process that reads a pack (bench/README.md "Twelfth
	// round").
	if MapPacks {
		if data, unmap, err := mapOpen(f, p.size); err == nil {
			p.pack, p.unmapPack = data, unmap
		}
	}
	var hdr [12]byte
	if p.pack != nil && len(p.pack) >= len(hdr) {
		copy(hdr[:], p.pack)
	} else if _, err := f.ReadAt(hdr[:], 0); err != nil {
		p.close()
		return nil, err
	}
	if string(hdr[:4]) != "PACK" || binary.BigEndian.Uint32(hdr[8:]) != p.n {
		p.close()
		return nil, fmt.Errorf("%s: not the pack of its index", f.Name())
	}
	if v := binary.BigEndian.Uint32(hdr[4:]); v != 2 && v != 3 {
		p.close()
		return nil, fmt.Errorf("%s: pack version %d", f.Name(), v)
	}
	return p, nil
}

// checkIndex checks a version 2 index: its magic, an ascending fan-out and a size that holds the tables.
func (p *packFile) checkIndex() error {
	b := p.idx
	if len(b) < idxHeader+idxFanout+40 || !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return errors.New("not a version 2 pack index")
	}
	prev := uint32(0)
	for i := 0; i < 256; i++ {
		v := binary.BigEndian.Uint32(b[idxHeader+4*i:])
		if v < prev {
			return errors.New("pack index: fan-out not ascending")
		}
		prev = v
	}
	p.n = prev
	n := uint64(p.n)
	min := uint64(idxHeader+idxFanout) + n*(20+4+4) + 40
	if uint64(len(b)) < min || (uint64(len(b))-min)%8 != 0 {
		return errors.New("pack index: size does not match its object count")
	}
	return nil
}

// find returns the offset of h in the pack.
func (p *packFile) find(h Hash) (int64, bool) {
	b := p.idx
	lo := uint32(0)
	if h[0] > 0 {
		lo = binary.BigEndian.Uint32(b[idxHeader+4*(int(h[0])-1):])
	}
	hi := binary.BigEndian.Uint32(b[idxHeader+4*int(h[0]):])
	names := b[idxHeader+idxFanout:]
	for lo < hi {
		mid := lo + (hi-lo)/2
		switch c := bytes.Compare(names[20*uint64(mid):20*uint64(mid)+20], h[:]); {
		case c == 0:
			return p.offset(mid)
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

// offset is the pack offset of the i-th object of the index.
func (p *packFile) offset(i uint32) (int64, bool) {
	n := uint64(p.n)
	offs := uint64(idxHeader+idxFanout) + n*24
	o := binary.BigEndian.Uint32(p.idx[offs+4*uint64(i):])
	off := int64(o)
	if o&0x80000000 != 0 {
		at := offs + n*4 + 8*uint64(o&0x7fffffff)
		if at+8 > uint64(len(p.idx))-40 {
			return 0, false
		}
		u := binary.BigEndian.Uint64(p.idx[at:])
		if u > 1<<62 {
			return 0, false
		}
		off = int64(u)
	}
	if off < 12 || off >= p.size-20 {
		return 0, false
	}
	return off, true
}

// at reads the object at offset off of p, applying its deltas.
func (pr *Reader) at(p *packFile, off int64, depth int) (Type, []byte, error) {
	type link struct {
		pos   packPos
		delta []byte
	}
	var chain []link
	var t Type
	var data []byte
	var base packPos // where data was inflated from, when it was (not cached, not another pack's)
	for {
		if depth+len(chain) > maxDeltaDepth {
			return 0, nil, ErrMissing
		}
		pos := packPos{p, off}
		if c, ok := pr.cache[pos]; ok {
			t, data = c.t, c.data
			break
		}
		e, err := p.header(off)
		if err != nil {
			return 0, nil, err
		}
		if (e.typ == Blob || e.typ == Commit) && len(chain) == 0 && e.size > pr.maxBlob {
			return 0, nil, ErrMissing // the caller streams it (a commit: reads its beginning only)
		}
		raw, err := pr.inflate(p, e.data, e.size)
		if err != nil {
			return 0, nil, err
		}
		if e.typ != OFSDelta && e.typ != REFDelta {
			t, data, base = e.typ, raw, pos
			break
		}
		chain = append(chain, link{pos, raw})
		if e.typ == OFSDelta {
			off = e.base
			continue
		}
		// A base named by hash: anywhere in this pack, else in another pack or loose.
		if boff, ok := p.find(e.baseHash); ok {
			off = boff
			continue
		}
		t, data, err = pr.object(e.baseHash, depth+len(chain))
		if err != nil {
			return 0, nil, err
		}
		break
	}
	// The bases of a chain are the likeliest bases of the next reads (the next tree of a history, the
	// same tree's neighbours). So is a whole tree, and a chain's whole base: git keeps the newest version
	// whole and older ones as deltas of it, so a refresh that diffs a folder's old tree (a delta) against
	// its new one (the whole base) inflated the base twice (359 KB at 10,000 entries, 3 ms).
	if base.p != nil && (len(chain) > 0 || t == Tree) && len(data) < deltaBaseCacheBytes/16 {
		pr.keep(base, t, data)
	}
	// The objects of the chain nearest the one read are kept (the likeliest bases of the next reads: its
	// neighbours in history), within a sixteenth of the cache; the others are written into two scratch
	// buffers used in turn. After git gc, a 10,000-entry folder's tree (359 KB) sits 42 deltas deep: each
	// delta applied into a new slice was 15 MB of fresh memory per read, a third of a refresh hook's CPU in
	// copies and page faults (bench/README.md "Sixth round", hook6).
	keepTo, budget := 0, deltaBaseCacheBytes/16
	for i := 1; i < len(chain); i++ {
		n, ok := deltaResultSize(chain[i].delta)
		if !ok || n > uint64(budget) {
			break
		}
		budget -= int(n)
		keepTo = i
	}
	var scratch [2][]byte
	for i := len(chain) - 1; i >= 0; i-- {
		var dst []byte // nil: a new slice, for what is kept or returned
		if i > keepTo {
			dst = scratch[i&1] // never data's: the step before wrote the other one, or data is not scratch
		}
		out, err := applyDelta(dst, data, chain[i].delta)
		if err != nil {
			return 0, nil, err
		}
		if i > keepTo {
			scratch[i&1] = out
		}
		data = out
		if i > 0 && i <= keepTo {
			pr.keep(chain[i].pos, t, data)
		}
	}
	if len(chain) > 0 && len(data) < deltaBaseCacheBytes/16 {
		// Kept as a base only if small (a tree of a big folder is read once per command).
		pr.keep(chain[0].pos, t, data)
	}
	return t, data, nil
}

func (pr *Reader) keep(pos packPos, t Type, data []byte) {
	if _, ok := pr.cache[pos]; ok {
		return
	}
	if pr.cache == nil || pr.cached+len(data) > deltaBaseCacheBytes {
		pr.cache, pr.cached = map[packPos]cachedObject{}, 0
	}
	if len(data) > deltaBaseCacheBytes/2 {
		return
	}
	pr.cache[pos] = cachedObject{t, data}
	pr.cached += len(data)
}

// packEntry is the header of an object in a pack.
type packEntry struct {
	typ      Type
	size     int64 // inflated size of the object or of its delta
	data     int64 // offset of the compressed data
	base     int64 // OFS_DELTA: offset of the base
	baseHash Hash  // REF_DELTA: name of the base
}

// badEntry is the error of a damaged entry header at off (made only then: header runs once per object read).
func (p *packFile) badEntry(off int64) error {
	return fmt.Errorf("pack %s: bad entry at %d", filepath.Base(p.f.Name()), off)
}

// header parses the entry header at off (gitformat-pack(5)).
func (p *packFile) header(off int64) (packEntry, error) {
	var b []byte
	if p.pack != nil {
		if off < 0 || off >= int64(len(p.pack)) {
			return packEntry{}, io.EOF // as ReadAt past the end
		}
		b = p.pack[off:min(off+64, int64(len(p.pack)))]
	} else {
		var buf [64]byte
		n, err := p.f.ReadAt(buf[:], off)
		if n == 0 && err != nil {
			return packEntry{}, err
		}
		b = buf[:n]
	}
	var e packEntry
	i := 0
	c := b[i]
	i++
	e.typ = Type((c >> 4) & 7)
	size := uint64(c & 15)
	shift := uint(4)
	for c&0x80 != 0 {
		if i >= len(b) || shift > 56 {
			return e, p.badEntry(off)
		}
		c = b[i]
		i++
		size |= uint64(c&0x7f) << shift
		shift += 7
	}
	if size > maxRawObject {
		return e, ErrMissing
	}
	e.size = int64(size)
	switch e.typ {
	case Commit, Tree, Blob, Tag:
	case OFSDelta:
		if i >= len(b) {
			return e, p.badEntry(off)
		}
		c = b[i]
		i++
		rel := uint64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(b) || rel > 1<<55 {
				return e, p.badEntry(off)
			}
			c = b[i]
			i++
			rel = (rel+1)<<7 | uint64(c&0x7f)
		}
		if rel == 0 || rel > uint64(off) {
			return e, p.badEntry(off)
		}
		e.base = off - int64(rel)
	case REFDelta:
		if i+20 > len(b) {
			return e, p.badEntry(off)
		}
		copy(e.baseHash[:], b[i:i+20])
		i += 20
	default:
		return e, p.badEntry(off)
	}
	e.data = off + int64(i)
	return e, nil
}

// inflate reads size bytes of the zlib stream at off. The stream is read with one pread of as many bytes
// as a stream of size bytes takes at most in practice (zlib stores incompressible data in blocks with a
// few bytes of header), then, if it is longer, from the file as it goes.
func (pr *Reader) inflate(p *packFile, off, size int64) ([]byte, error) {
	if OnInflate != nil {
		OnInflate(size)
	}
	end := p.size - 20
	if p.pack != nil {
		if off < 0 || off > end {
			return nil, fmt.Errorf("inflate: offset %d past the pack's objects", off)
		}
		return pr.inflateFrom(bytes.NewReader(p.pack[off:end]), size)
	}
	want := size + size/256 + 64
	if want > end-off {
		want = end - off
	}
	buf := make([]byte, want)
	n, err := p.f.ReadAt(buf, off)
	if int64(n) == want || (err == io.EOF && n > 0) {
		if out, err := pr.inflateFrom(bytes.NewReader(buf[:n]), size); err == nil {
			return out, nil
		}
	}
	return pr.inflateFrom(io.NewSectionReader(p.f, off, end-off), size)
}

func (pr *Reader) inflateFrom(src io.Reader, size int64) ([]byte, error) {
	if pr.zr == nil {
		zr, err := zlib.NewReader(src)
		if err != nil {
			return nil, err
		}
		pr.zr = zr
	} else if err := pr.zr.(zlib.Resetter).Reset(src, nil); err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(pr.zr, out); err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	if err := streamEnd(pr.zr); err != nil {
		return nil, err
	}
	return out, nil
}

// streamEnd checks that the zlib stream of zr ends where its object does: the reader checks the stream's
// Adler-32 at its end, so a damaged object is an error, not other bytes.
func streamEnd(zr io.Reader) error {
	var one [1]byte
	n, err := zr.Read(one[:])
	for tries := 0; n == 0 && err == nil && tries < 8; tries++ {
		n, err = zr.Read(one[:])
	}
	if n != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = errors.New("longer than its header says")
		}
		return fmt.Errorf("inflate: %w", err)
	}
	return nil
}

// loose reads loose object h of objects directory dir.
func (pr *Reader) loose(dir string, h Hash) (Type, []byte, error) {
	s := h.String()
	file, err := openRead(filepath.Join(dir, s[:2], s[2:]))
	if err != nil {
		return 0, nil, err
	}
	defer file.Close()
	// One read for an object of a few KiB; a large one is not read past its header (the blob limit). One
	// buffer serves every loose object the Reader reads: a front write reads a dozen, and a buffer each
	// was three quarters of the bytes it allocated (bench/README.md "Eleventh round").
	if pr.br == nil {
		pr.br = bufio.NewReaderSize(file, 64<<10)
	} else {
		pr.br.Reset(file)
	}
	f := pr.br
	defer f.Reset(nil) // drops the file
	if pr.zr == nil {
		zr, err := zlib.NewReader(f)
		if err != nil {
			return 0, nil, err
		}
		pr.zr = zr
	} else if err := pr.zr.(zlib.Resetter).Reset(f, nil); err != nil {
		return 0, nil, err
	}
	// "<type> <size>\0" then the content.
	var hdr [32]byte
	n := 0
	for ; n < len(hdr); n++ {
		if _, err := io.ReadFull(pr.zr, hdr[n:n+1]); err != nil {
			return 0, nil, err
		}
		if hdr[n] == 0 {
			break
		}
	}
	sp := bytes.IndexByte(hdr[:n], ' ')
	if n == len(hdr) || sp < 0 {
		return 0, nil, ErrMissing
	}
	t, ok := typeNamed[string(hdr[:sp])]
	if !ok {
		return 0, nil, ErrMissing
	}
	size, err := strconv.ParseInt(string(hdr[sp+1:n]), 10, 64)
	if err != nil || size < 0 || size > maxRawObject || (t == Blob || t == Commit) && size > pr.maxBlob {
		return 0, nil, ErrMissing
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(pr.zr, out); err != nil {
		return 0, nil, err
	}
	if err := streamEnd(pr.zr); err != nil {
		return 0, nil, err
	}
	return t, out, nil
}

// applyDelta applies a git delta (gitformat-pack(5) "Deltified representation") to base.
func ApplyDelta(base, delta []byte) ([]byte, error) { return applyDelta(nil, base, delta) }

// deltaResultSize is the size of the object delta makes (the second number of its header).
func deltaResultSize(delta []byte) (uint64, bool) {
	i := 0
	var v uint64
	for field := 0; field < 2; field++ {
		v = 0
		shift := uint(0)
		for {
			if i >= len(delta) || shift > 56 {
				return 0, false
			}
			c := delta[i]
			i++
			v |= uint64(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
	}
	return v, true
}

// applyDelta is ApplyDelta writing into dst's memory when it is large enough (dst must not overlap base or
// delta), else into a new slice.
func applyDelta(dst, base, delta []byte) ([]byte, error) {
	bad := errors.New("pack reader: bad delta")
	i := 0
	varint := func() (uint64, bool) {
		var v uint64
		shift := uint(0)
		for i < len(delta) && shift <= 56 {
			c := delta[i]
			i++
			v |= uint64(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	src, ok := varint()
	if !ok || src != uint64(len(base)) {
		return nil, bad
	}
	size, ok := varint()
	if !ok || size > maxRawObject {
		return nil, bad
	}
	var out []byte
	if uint64(cap(dst)) >= size {
		out = dst[:0]
	} else {
		out = make([]byte, 0, size)
	}
	for i < len(delta) {
		op := delta[i]
		i++
		switch {
		case op&0x80 != 0:
			var off, n uint64
			for k := uint(0); k < 4; k++ {
				if op&(1<<k) != 0 {
					if i >= len(delta) {
						return nil, bad
					}
					off |= uint64(delta[i]) << (8 * k)
					i++
				}
			}
			for k := uint(0); k < 3; k++ {
				if op&(0x10<<k) != 0 {
					if i >= len(delta) {
						return nil, bad
					}
					n |= uint64(delta[i]) << (8 * k)
					i++
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) || uint64(len(out))+n > size {
				return nil, bad
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			n := int(op)
			if i+n > len(delta) || uint64(len(out)+n) > size {
				return nil, bad
			}
			out = append(out, delta[i:i+n]...)
			i += n
		default:
			return nil, bad
		}
	}
	if uint64(len(out)) != size {
		return nil, bad
	}
	return out, nil
}

// Close unmaps the indexes and closes the packs; a later read maps them again.
func (pr *Reader) Close() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for _, p := range pr.packs {
		p.close()
	}
	pr.packs, pr.loaded, pr.cache, pr.cached = nil, false, nil, 0
}

func (p *packFile) close() {
	if p.unmap != nil {
		p.unmap()
		p.unmap = nil
	}
	p.idx = nil
	if p.unmapPack != nil {
		p.unmapPack()
		p.unmapPack = nil
	}
	p.pack = nil
	if p.f != nil {
		_ = p.f.Close()
		p.f = nil
	}
}

// TreeEntry looks for name in tree h while inflating it, and stops at the first entry of that name (as
// FindTreeEntry does): a read of one path through a folder of 10,000 entries inflates the folder's tree only
// up to that entry, as much as half of it on average. handled is false when h is not a whole tree in a
// mapped pack (a delta, a loose object, a miss, a damaged stream): the caller reads it whole. A tree
// whose bytes do not follow git's format before the entry is ErrMalformedTree.
func (pr *Reader) TreeEntry(h Hash, name string) (e Entry, found, handled bool, err error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.loaded {
		pr.load()
	}
	var src io.Reader
	var size int64
	for _, p := range pr.packs {
		off, ok := p.find(h)
		if !ok {
			continue
		}
		hd, err := p.header(off)
		if err != nil || hd.typ != Tree {
			return Entry{}, false, false, nil
		}
		src, size = bufio.NewReaderSize(io.NewSectionReader(p.f, hd.data, p.size-20-hd.data), 32<<10), hd.size
		break
	}
	if src == nil {
		return Entry{}, false, false, nil
	}
	if pr.zr == nil {
		if pr.zr, err = zlib.NewReader(src); err != nil {
			pr.zr = nil
			return Entry{}, false, false, nil
		}
	} else if err := pr.zr.(zlib.Resetter).Reset(src, nil); err != nil {
		return Entry{}, false, false, nil
	}
	buf := make([]byte, 0, min(size, 32<<10))
	var read int64
	pos := 0
	for {
		for {
			rest := buf[pos:]
			nul := bytes.IndexByte(rest, 0)
			if nul < 0 || len(rest) < nul+1+len(Hash{}) {
				break
			}
			one := rest[:nul+1+len(Hash{})]
			if err := EachTreeEntry(one, func(n []byte, mode FileMode, eh *Hash) bool {
				if string(n) == name {
					e, found = Entry{Name: name, Dir: mode == ModeDir, Hash: *eh, Mode: mode}, true
				}
				return false
			}); err != nil {
				return Entry{}, false, true, err
			}
			if found {
				return e, true, true, nil
			}
			pos += len(one)
		}
		if read == size {
			if pos != len(buf) {
				return Entry{}, false, true, ErrMalformedTree
			}
			if streamEnd(pr.zr) != nil {
				return Entry{}, false, false, nil
			}
			return Entry{}, false, true, nil
		}
		n := copy(buf, buf[pos:])
		buf, pos = buf[:n], 0
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, cap(buf))...)[:n]
		}
		want := min(int64(cap(buf)-len(buf)), size-read)
		m, err := io.ReadFull(pr.zr, buf[len(buf):len(buf)+int(want)])
		if err != nil {
			return Entry{}, false, false, nil
		}
		buf = buf[:len(buf)+m]
		read += int64(m)
	}
}

// Packs is the number of packs the Reader has mapped (0 before its first read).
func (pr *Reader) Packs() int {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return len(pr.packs)
}

// Deltas counts the entries of the mapped packs stored as offset deltas and as deltas naming their base
// (for tests that must read both kinds); an entry whose offset or header does not parse is an error.
func (pr *Reader) Deltas() (ofs, ref int, err error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for _, p := range pr.packs {
		for i := uint32(0); i < p.n; i++ {
			off, ok := p.offset(i)
			if !ok {
				return 0, 0, fmt.Errorf("object %d: no offset", i)
			}
			e, err := p.header(off)
			if err != nil {
				return 0, 0, err
			}
			switch e.typ {
			case OFSDelta:
				ofs++
			case REFDelta:
				ref++
			}
		}
	}
	return ofs, ref, nil
}
