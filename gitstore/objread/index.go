package objread

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrIndexFormat is an index file IndexHasPath does not read (the caller asks git).
var ErrIndexFormat = errors.New("index: unknown format")

// IndexHasPath reports whether the git index file at path holds an entry named dir or below dir/ (any stage;
// a sparse index's folder entry "dir/" too). A missing index holds nothing. Versions 2, 3 and 4 of the
// format (gitformat-index(5)) with SHA-1 names; the entries are read in order up to the first that sorts
// after every name below dir/, so a big index is read only up to there. ErrIndexFormat for anything else.
func IndexHasPath(path, dir string) (bool, error) {
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

// scanIndex is IndexHasPath on the index's bytes.
func scanIndex(br *bufio.Reader, dir string) (bool, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return false, fmt.Errorf("%w: header: %v", ErrIndexFormat, err)
	}
	if string(hdr[:4]) != "DIRC" {
		return false, fmt.Errorf("%w: signature %q", ErrIndexFormat, hdr[:4])
	}
	version := binary.BigEndian.Uint32(hdr[4:8])
	if version < 2 || version > 4 {
		return false, fmt.Errorf("%w: version %d", ErrIndexFormat, version)
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
			return false, fmt.Errorf("%w: entry %d: %v", ErrIndexFormat, i, err)
		}
		flags := binary.BigEndian.Uint16(ent[60:62])
		n := fixed
		if flags&0x4000 != 0 { // extended flags (version 3 and later)
			if version < 3 {
				return false, fmt.Errorf("%w: extended flags in version %d", ErrIndexFormat, version)
			}
			if _, err := io.ReadFull(br, ent[fixed:fixed+2]); err != nil {
				return false, fmt.Errorf("%w: entry %d: %v", ErrIndexFormat, i, err)
			}
			n += 2
		}
		if version == 4 {
			strip, err := binary.ReadUvarint(br)
			if err != nil || strip > uint64(len(name)) {
				return false, fmt.Errorf("%w: entry %d: name prefix", ErrIndexFormat, i)
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
			return false, fmt.Errorf("%w: entry %d: name: %v", ErrIndexFormat, i, err)
		}
		name = append(name, suffix[:len(suffix)-1]...)
		if version < 4 {
			// 1 to 8 NULs end the entry at a multiple of 8 bytes; the name's own NUL was the first.
			total := n + len(name) + 1
			if pad := (8 - total%8) % 8; pad > 0 {
				if _, err := br.Discard(pad); err != nil {
					return false, fmt.Errorf("%w: entry %d: padding: %v", ErrIndexFormat, i, err)
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
