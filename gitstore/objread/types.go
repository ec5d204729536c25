package objread

import (
	"bytes"
	"encoding/hex"
	"errors"
)

// Hash is a git object name: the 20-byte SHA-1 (gitstore.Hash has the same shape and converts to it).
type Hash [20]byte

// String is the 40-hex-digit form.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero name (no object).
func (h Hash) IsZero() bool { return h == Hash{} }

// Type is an object type as a pack entry's header codes it (gitformat-pack(5)).
type Type int8

// The object types (the same numbers as go-git's plumbing.ObjectType).
const (
	Commit   Type = 1
	Tree     Type = 2
	Blob     Type = 3
	Tag      Type = 4
	OFSDelta Type = 6
	REFDelta Type = 7
)

// typeNamed is the type of a loose object's header word.
var typeNamed = map[string]Type{"commit": Commit, "tree": Tree, "blob": Blob, "tag": Tag}

// FileMode is the mode of a tree entry (040000 a tree, 0100644 a file, 0100755, 0120000 a link, 0160000 a
// gitlink).
type FileMode uint32

// Modes of tree entries.
const (
	ModeDir        FileMode = 0o40000
	ModeRegular    FileMode = 0o100644
	ModeExecutable FileMode = 0o100755
)

// Entry is one entry of a tree.
type Entry struct {
	Name string
	Dir  bool
	Hash Hash
	Mode FileMode
}

// ErrMalformedTree reports a tree object whose bytes do not follow git's tree format.
var ErrMalformedTree = errors.New("malformed tree object")

// EachTreeEntry calls fn with the name (a slice of raw), mode and object name of each entry of the raw
// bytes of a tree object ("<octal mode> <name>\x00<20-byte object name>"..., gitformat-tree(5)), in the
// order stored, until fn returns false. It fails with ErrMalformedTree where the bytes do not follow git's
// tree format (entries before that point were given to fn).
func EachTreeEntry(raw []byte, fn func(name []byte, mode FileMode, h *Hash) bool) error {
	var h Hash
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		if sp <= 0 {
			return ErrMalformedTree
		}
		var mode uint32
		for _, c := range raw[:sp] {
			if c < '0' || c > '7' {
				return ErrMalformedTree
			}
			mode = mode<<3 | uint32(c-'0')
		}
		rest := raw[sp+1:]
		nul := bytes.IndexByte(rest, 0)
		if nul <= 0 || len(rest) < nul+1+len(Hash{}) {
			return ErrMalformedTree
		}
		copy(h[:], rest[nul+1:])
		if !fn(rest[:nul], FileMode(mode), &h) {
			return nil
		}
		raw = rest[nul+1+len(Hash{}):]
	}
	return nil
}

// FindTreeEntry finds name in the raw bytes of a tree object; the first entry of that name wins.
func FindTreeEntry(raw []byte, name string) (e Entry, found bool, err error) {
	err = EachTreeEntry(raw, func(n []byte, mode FileMode, h *Hash) bool {
		if string(n) != name {
			return true
		}
		e, found = Entry{Name: name, Dir: mode == ModeDir, Hash: *h, Mode: mode}, true
		return false
	})
	if err != nil {
		return Entry{}, false, err
	}
	return e, found, nil
}
