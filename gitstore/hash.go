package gitstore

import (
	"encoding/hex"
	"fmt"
	"github.com/ctx-dev/ctx/gitstore/objwrite"
	"io"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Hash is a git object name: the 20-byte SHA-1 of a blob, tree or commit. The zero value (ZeroHash)
// means "no object" (a missing ref, an empty tree, a removal). gitstore is the only package that talks to
// go-git, so this is the type every caller uses for object names.
type Hash [20]byte

// ZeroHash is the zero object name: no object.
var ZeroHash Hash

// NewHash parses a 40-hex-digit object name. Like git's get_oid_hex it is lenient: anything that is not
// 40 hex digits gives a hash that names no object (use ParseHash to get an error instead).
func NewHash(s string) Hash { return Hash(plumbing.NewHash(s)) }

// ParseHash parses a 40-hex-digit object name, returning an error for anything else.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*len(h) {
		return ZeroHash, fmt.Errorf("object name %q: want %d hex digits", s, 2*len(h))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return ZeroHash, fmt.Errorf("object name %q: %w", s, err)
	}
	return h, nil
}

// BlobHash is the object name git gives a blob of these bytes (`git hash-object`), without writing it.
func BlobHash(b []byte) Hash { return Hash(plumbing.ComputeHash(plumbing.BlobObject, b)) }

// BlobHashOf is BlobHash of the size bytes read from r, streamed: memory stays constant whatever the size.
// An r that holds fewer or more than size bytes is an error.
func BlobHashOf(r io.Reader, size int64) (Hash, error) {
	h := plumbing.NewHasher(plumbing.BlobObject, size)
	n, err := io.Copy(h, io.LimitReader(r, size+1))
	if err != nil {
		return ZeroHash, fmt.Errorf("hash a blob: %w", err)
	}
	if n != size {
		return ZeroHash, fmt.Errorf("hash a blob: read %d bytes, want %d (the file changed)", n, size)
	}
	return Hash(h.Sum()), nil
}

// String is the 40-hex-digit form.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is ZeroHash.
func (h Hash) IsZero() bool { return h == ZeroHash }

// ph is h as go-git's type (same bytes).
func (h Hash) ph() plumbing.Hash { return plumbing.Hash(h) }

// hashes converts go-git object names to gitstore's.
func hashes(in []plumbing.Hash) []Hash {
	if in == nil {
		return nil
	}
	out := make([]Hash, len(in))
	for i, h := range in {
		out[i] = Hash(h)
	}
	return out
}

// FileMode is a tree entry's mode as git records it (octal 040000 for a folder, 100644 for a file...).
type FileMode uint32

// The modes git writes in trees.
const (
	ModeDir        FileMode = FileMode(filemode.Dir)        // 040000, a tree
	ModeRegular    FileMode = FileMode(filemode.Regular)    // 100644
	ModeExecutable FileMode = FileMode(filemode.Executable) // 100755
	ModeSymlink    FileMode = FileMode(filemode.Symlink)    // 120000
	ModeSubmodule  FileMode = FileMode(filemode.Submodule)  // 160000, a gitlink
)

// String is the mode in git's octal form (0100644).
func (m FileMode) String() string { return filemode.FileMode(m).String() }

// Signature is the author or committer of a commit: a name, an email address and a time.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

func sigOf(s object.Signature) Signature {
	return Signature{Name: s.Name, Email: s.Email, When: s.When}
}

func (s Signature) lean() objwrite.Signature {
	return objwrite.Signature{Name: s.Name, Email: s.Email, When: s.When}
}

// Commit is a decoded commit object.
type Commit struct {
	Hash         Hash
	TreeHash     Hash
	ParentHashes []Hash
	Author       Signature
	Committer    Signature
	Message      string
}

// NumParents is the number of parents (0 for a root commit, 2 or more for a merge).
func (c *Commit) NumParents() int { return len(c.ParentHashes) }

func commitOf(c *object.Commit) *Commit {
	if c == nil {
		return nil
	}
	return &Commit{
		Hash:         Hash(c.Hash),
		TreeHash:     Hash(c.TreeHash),
		ParentHashes: hashes(c.ParentHashes),
		Author:       sigOf(c.Author),
		Committer:    sigOf(c.Committer),
		Message:      c.Message,
	}
}
