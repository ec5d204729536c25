package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// NothingTrackedIn reports, without starting git, that neither the worktree's index nor HEAD's tree holds
// a file at or below dir, a single folder name at the work tree's root (".context"): what `git ls-files --
// dir` and `git ls-tree -r HEAD -- dir` would both print nothing for. It answers true only when it is sure;
// false means "maybe" (an entry there, or an index or object it does not read: a split index, an index
// version it does not know, GIT_INDEX_FILE naming another index, HEAD's commit not readable in process)
// and the caller asks git (TrackedFiles, TrackedInHead), whose lists also name the files. A bare
// repository tracks nothing there.
//
// The index is read only up to the entries that sort after dir (git keeps them sorted by name); HEAD's tree
// is read only when this Repo reads objects in process (ReadInProcess), as its root tree's names only: a
// blob, link, tree or submodule named dir there is a "maybe".
func (r *Repo) NothingTrackedIn(ctx context.Context, dir string) bool {
	if r.workTree == "" {
		return true
	}
	if dir == "" || strings.ContainsAny(dir, "/\x00") || dir == "." || dir == ".." {
		return false
	}
	if _, ok := r.cf.(*packReader); !ok {
		return false // go-git would index the user's packs: git ls-tree is cheaper
	}
	if os.Getenv("GIT_INDEX_FILE") != "" {
		return false // another index than the worktree's: git reads the one it names
	}
	if split, err := r.splitIndex(); err != nil || split {
		return false
	}
	if found, err := indexHasPath(filepath.Join(r.gitDir, "index"), dir); err != nil || found {
		return false
	}
	head, err := r.ResolveHEAD(ctx)
	if err != nil {
		return false
	}
	if head.IsZero() {
		return true // unborn: HEAD has no tree
	}
	root, err := r.TreeOf(ctx, head)
	if err != nil {
		return false
	}
	t, err := r.tree(root)
	if err != nil {
		return false
	}
	for _, e := range t.Entries {
		if e.Name == dir {
			return false
		}
	}
	return true
}

// splitIndex reports whether the worktree's index may be split (core.splitIndex: its entries partly in a
// sharedindex.<hash> file beside it), which indexHasPath does not read.
func (r *Repo) splitIndex() (bool, error) {
	for _, d := range []string{r.gitDir, r.commonDir} {
		m, err := filepath.Glob(filepath.Join(d, "sharedindex.*"))
		if err != nil {
			return false, err
		}
		if len(m) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// errIndexFormat is an index file indexHasPath does not read (the caller asks git).
var errIndexFormat = errors.New("index: unknown format")

// indexHasPath reports whether the git index file at path holds an entry named dir or below dir/ (any stage;
// a sparse index's folder entry "dir/" too). A missing index holds nothing. Versions 2, 3 and 4 of the
// format (gitformat-index(5)) with SHA-1 names; the entries are read in order up to the first that sorts
// after every name below dir/, so a big index is read only up to there. errIndexFormat for anything else.
func indexHasPath(path, dir string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the index: %w", err)
	}
	defer func() { _ = f.Close() }()
	return scanIndex(bufio.NewReaderSize(f, 32<<10), dir)
}

// scanIndex is indexHasPath on the index's bytes.
func scanIndex(br *bufio.Reader, dir string) (bool, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return false, fmt.Errorf("%w: header: %v", errIndexFormat, err)
	}
	if string(hdr[:4]) != "DIRC" {
		return false, fmt.Errorf("%w: signature %q", errIndexFormat, hdr[:4])
	}
	version := binary.BigEndian.Uint32(hdr[4:8])
	if version < 2 || version > 4 {
		return false, fmt.Errorf("%w: version %d", errIndexFormat, version)
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	prefix := []byte(dir + "/")
	// Every name at or below dir sorts before this one ('0' follows '/'); git keeps the entries sorted.
	past := []byte(dir + "0")
	const fixed = 62 // ctime, mtime, dev, ino, mode, uid, gid, size (40), SHA-1 (20), flags (2)
	var ent [fixed + 2]byte
	var name []byte
	for i := uint32(0); i < count; i++ {
		if _, err := io.ReadFull(br, ent[:fixed]); err != nil {
			return false, fmt.Errorf("%w: entry %d: %v", errIndexFormat, i, err)
		}
		flags := binary.BigEndian.Uint16(ent[60:62])
		n := fixed
		if flags&0x4000 != 0 { // extended flags (version 3 and later)
			if version < 3 {
				return false, fmt.Errorf("%w: extended flags in version %d", errIndexFormat, version)
			}
			if _, err := io.ReadFull(br, ent[fixed:fixed+2]); err != nil {
				return false, fmt.Errorf("%w: entry %d: %v", errIndexFormat, i, err)
			}
			n += 2
		}
		if version == 4 {
			strip, err := binary.ReadUvarint(br)
			if err != nil || strip > uint64(len(name)) {
				return false, fmt.Errorf("%w: entry %d: name prefix", errIndexFormat, i)
			}
			name = name[:len(name)-int(strip)]
		} else {
			name = name[:0]
		}
		suffix, err := br.ReadSlice(0)
		for errors.Is(err, bufio.ErrBufferFull) { // a name longer than the buffer
			name = append(name, suffix...)
			suffix, err = br.ReadSlice(0)
		}
		if err != nil {
			return false, fmt.Errorf("%w: entry %d: name: %v", errIndexFormat, i, err)
		}
		name = append(name, suffix[:len(suffix)-1]...)
		if version < 4 {
			// 1 to 8 NULs end the entry at a multiple of 8 bytes; the name's own NUL was the first.
			total := n + len(name) + 1
			if pad := (8 - total%8) % 8; pad > 0 {
				if _, err := br.Discard(pad); err != nil {
					return false, fmt.Errorf("%w: entry %d: padding: %v", errIndexFormat, i, err)
				}
			}
		}
		if string(name) == dir || bytes.HasPrefix(name, prefix) {
			return true, nil
		}
		if bytes.Compare(name, past) >= 0 {
			return false, nil
		}
	}
	return false, nil
}
