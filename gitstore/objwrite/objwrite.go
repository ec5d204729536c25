// Package objwrite writes loose git objects the way C git does, with the standard library and zlib only,
// so that gitstore and the lean front (cmd/ctx-front, docs/architecture.md "The lean front") share one
// writer. It is objread's counterpart: objread reads the objects it writes.
package objwrite

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/internal/plainfile"
	"github.com/klauspost/compress/zlib"
)

// LooseCompression is the zlib level of the loose objects ctx writes: C git's default for
// core.looseCompression, 1 (best speed), since loose objects are short-lived (gc packs them). A tree of
// 10,000 entries (370 KB) compresses in 2.5 ms instead of 49 ms with compress/zlib at its default
// level, as go-git writes (docs/architecture.md "The write path").
const LooseCompression = zlib.BestSpeed

// Trees are written uncompressed whatever their size (deflate's stored blocks, writeStored, which
// every zlib reader, C git's included, inflates). A tree is mostly 20-byte object names, which do not
// compress: level 1 makes a 10,000-entry folder's tree (359 KB) only 31% smaller (246 KB), and deflating
// it on the write, then inflating it on every later read until gc packs it (packs are compressed at
// git's own level), was a third of a write's CPU in such a store (bench/README.md, "Fifth round").

// StoredMax is the largest object (its header "<type> <size>\x00" and content, bytes) written as
// stored (uncompressed) deflate blocks whatever its type: its file, at most 4,096 bytes, takes one block
// of the file system either way, while setting up a compressor and deflating cost a one-shot write more
// than anything else it does to an object (bench/README.md, "Ninth round"). Every zlib reader inflates
// stored blocks (C git's, go-git's, objread's); git gc compresses them into the pack at git's level.
const StoredMax = 4096 - storedOverhead

// storedOverhead is what zlib adds to at most 65,535 bytes written as one stored block: the stream's
// header (2 bytes), the block's (5) and the Adler-32 checksum (4).
const storedOverhead = 2 + 5 + 4

// zlibWriters holds zlib writers at LooseCompression for reuse:
// setting one up allocates and clears about 1 MB of tables, more than compressing a blob or a commit
// costs.
var zlibWriters sync.Pool

// typeNames are the header words of the object types.
var typeNames = map[objread.Type]string{objread.Commit: "commit", objread.Tree: "tree", objread.Blob: "blob", objread.Tag: "tag"}

// zlibWriter returns a zlib writer writing to dst at LooseCompression, from zlibWriters when one is
// free; put gives it back.
func zlibWriter(dst io.Writer) (w *zlib.Writer, put func(), err error) {
	pool, level := &zlibWriters, LooseCompression
	if pw, ok := pool.Get().(*zlib.Writer); ok {
		pw.Reset(dst)
		w = pw
	} else if w, err = zlib.NewWriterLevel(dst, level); err != nil {
		return nil, nil, err
	}
	return w, func() {
		w.Reset(nil) // drops the file
		pool.Put(w)
	}, nil
}

// Name is the object name git gives content of type t: the SHA-1 of "<type> <size>\x00" and content.
func Name(t objread.Type, content []byte) objread.Hash {
	h := sha1.New()
	h.Write(header(t, int64(len(content))))
	h.Write(content)
	var out objread.Hash
	h.Sum(out[:0])
	return out
}

func header(t objread.Type, size int64) []byte {
	return append(append(append([]byte(typeNames[t]), ' '), strconv.FormatInt(size, 10)...), 0)
}

// Write stores content as a loose object of type t (commit, tree, blob or tag) in the repository whose
// object folder is gitDir/objects, and returns its name (see Loose).
func Write(gitDir string, t objread.Type, content []byte) (objread.Hash, error) {
	h := Name(t, content)
	if err := Loose(gitDir, h, t, int64(len(content)), bytes.NewReader(content), nil); err != nil {
		return objread.Hash{}, err
	}
	return h, nil
}

// Loose stores the object named h, of type t and size bytes read from content, as a loose object of the
// repository at gitDir (its objects/ folder) the way C git does: the header "<type> <size>\x00" and the
// content, zlib-compressed (LooseCompression; stored blocks for a tree and an object of at most StoredMax
// bytes) into a temporary file
// objects/xx/tmp_obj_* (the name git's own prune knows), then renamed to objects/xx/<rest of the name>
// and made read-only. An object already there is not written again. The caller vouches that h is the
// name of that content (Name). wrap, when not nil, wraps the temporary file's writer (tests: a full
// disk). On any failure the temporary file is removed: a failed write leaves nothing behind. Errors are
// the file system's, or a content of another size than size.
func Loose(gitDir string, h objread.Hash, t objread.Type, size int64, content io.Reader, wrap func(*os.File) io.Writer) error {
	if typeNames[t] == "" {
		return fmt.Errorf("write object %s: type %d is not a loose object's", h, t)
	}
	hex := h.String()
	dir := filepath.Join(gitDir, "objects", hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	// The folder is made when the temporary file cannot be created for want of it (as git's
	// create_tmpfile does), not checked before every object.
	f, tmp, err := createTemp(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		f, tmp, err = createTemp(dir)
	}
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	var dst io.Writer = f
	if wrap != nil {
		dst = wrap(f)
	}
	if t == objread.Tree || int64(len(header(t, size)))+size <= StoredMax {
		if err := writeStored(dst, header(t, size), content, size); err != nil {
			return fail(err)
		}
		return finish(f, tmp, final)
	}
	w, put, err := zlibWriter(dst)
	if err != nil {
		return fail(err)
	}
	defer put()
	if _, err := w.Write(header(t, size)); err != nil {
		return fail(err)
	}
	n, err := io.Copy(w, content)
	if err != nil {
		return fail(err)
	}
	if n != size {
		return fail(fmt.Errorf("object of %d bytes declared as %d", n, size))
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	return finish(f, tmp, final)
}

// finish closes the temporary file tmp of an object and renames it to final, read-only; on failure tmp
// is removed.
func finish(f *os.File, tmp, final string) error {
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := plainfile.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// createTemp creates a new file dir/tmp_obj_<random> for writing, read-only (0444 less the umask) as git
// creates its objects' temporary files (object-file.c create_tmpfile), so that no chmod follows the
// rename. The file is not offered to the runtime's poller (plainfile).
func createTemp(dir string) (*os.File, string, error) {
	for try := 0; ; try++ {
		tmp := filepath.Join(dir, "tmp_obj_"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := plainfile.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o444)
		if err == nil || !errors.Is(err, fs.ErrExist) || try == 100 {
			return f, tmp, err
		}
	}
}

// writeStored writes to dst the zlib stream of hdr followed by size bytes of content as stored deflate
// blocks (RFC 1951 section 3.2.4: BTYPE 00, at most 65,535 bytes each), one Write per block. An error
// is dst's, or content holding another number of bytes than size.
func writeStored(dst io.Writer, hdr []byte, content io.Reader, size int64) error {
	const maxBlock = 65535
	total := int64(len(hdr)) + size
	buf := make([]byte, 0, storedOverhead+min(total, maxBlock))
	buf = append(buf, 0x78, 0x01) // deflate, 32 KiB window, fastest level; 0x7801 is a multiple of 31
	sum := adler32.New()
	read := int64(0)
	for remaining := total; remaining > 0; {
		n := min(remaining, maxBlock)
		final := byte(0)
		if n == remaining {
			final = 1
		}
		buf = append(buf, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		start := len(buf)
		k := min(int64(len(hdr)), n)
		buf, hdr = append(buf, hdr[:k]...), hdr[k:]
		if need := n - k; need > 0 {
			off := len(buf)
			buf = append(buf, make([]byte, need)...)
			m, err := io.ReadFull(content, buf[off:])
			read += int64(m)
			if err != nil {
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					return fmt.Errorf("object of %d bytes declared as %d", read, size)
				}
				return err
			}
		}
		_, _ = sum.Write(buf[start:])
		remaining -= n
		if final == 1 {
			buf = binary.BigEndian.AppendUint32(buf, sum.Sum32())
		}
		if _, err := dst.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
	}
	var one [1]byte
	if _, err := io.ReadFull(content, one[:]); err != io.EOF {
		if err == nil {
			return fmt.Errorf("object of more than %d bytes declared as %d", size, size)
		}
		return err
	}
	return nil
}
