package gitstore

import (
	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/go-git/go-git/v5/plumbing"
)

// packReader is objread's in-process reader of packs and loose objects as a rawReader of a Repo: each
// pack's .idx is memory-mapped and binary-searched (go-git decodes and checksums the whole index, then
// builds an offset-to-name table of every object before its first delta), the object is inflated at its
// offset and its delta chain applied. Anything it does not understand (an index of another version, an
// object over objread.MaxObject, a blob over largeObjectBytes, a damaged entry) is a miss, and the caller
// falls back to go-git, which also finds packs written after the first read (Repo.read re-indexes on a
// miss) and streams large blobs, so that a read of a large blob's size or first bytes (ReadBlobPrefix:
// ctx knowledge list, the MCP server's limits) does not load a teammate's 30 MiB entry. Objects of the
// local-only store (LocalDir) are found too. Safe for concurrent use.
type packReader struct{ r *objread.Reader }

// errRawMissing is a miss of the pack reader.
var errRawMissing = objread.ErrMissing

// newPackReader reads the object directories dirs (an "objects" folder each).
func newPackReader(dirs ...string) *packReader {
	return &packReader{objread.NewReader(largeObjectBytes, dirs...)}
}

// read returns the type and content of object h; errRawMissing when no pack or loose object of the
// directories holds it (or holds it in a shape the reader leaves to go-git).
func (pr *packReader) read(_ *Repo, h Hash) (plumbing.ObjectType, []byte, error) {
	t, data, err := pr.r.Read(objread.Hash(h))
	return plumbing.ObjectType(t), data, err
}

// has reports whether objects directory dir (one of the reader's) holds h.
func (pr *packReader) has(dir string, h Hash) bool { return pr.r.Has(dir, objread.Hash(h)) }

// Close unmaps the indexes and closes the packs; a later read maps them again.
func (pr *packReader) Close() { pr.r.Close() }

// treeEntry is objread.Reader.TreeEntry: name in tree h, inflating the tree only up to that entry.
func (pr *packReader) treeEntry(h Hash, name string) (e Entry, found, handled bool, err error) {
	oe, found, handled, err := pr.r.TreeEntry(objread.Hash(h), name)
	if err == objread.ErrMalformedTree {
		err = errMalformedTree
	}
	return Entry{Name: oe.Name, Dir: oe.Dir, Hash: Hash(oe.Hash), Mode: FileMode(oe.Mode)}, found, handled, err
}

// applyDelta applies a git delta (gitformat-pack(5) "Deltified representation") to base.
func applyDelta(base, delta []byte) ([]byte, error) { return objread.ApplyDelta(base, delta) }
