package gitstore

import (
	"context"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// ReadBlobPrefix returns at most the first n bytes of a blob (all of it when it is shorter) and the
// blob's size in bytes, without keeping more than n bytes of it: readers that must bound their memory
// (the MCP server) check the size before they load a file. n = 0 returns the size only.
func (r *Repo) ReadBlobPrefix(ctx context.Context, h Hash, n int64) ([]byte, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if n < 0 {
		n = 0
	}
	var data []byte
	var size int64
	err := r.read(func() error {
		b, err := object.GetBlob(r.reader(), h.ph())
		if err != nil {
			return err
		}
		size = b.Size
		if n == 0 {
			return nil
		}
		rd, err := b.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		data, err = io.ReadAll(io.LimitReader(rd, min(n, size)))
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("read blob %s: %w", h, err)
	}
	return data, size, nil
}

// ReadFilePrefix is ReadBlobPrefix for the file at path p of tree root. Errors wrap ErrNotFound when the
// path is absent or names a directory.
func (r *Repo) ReadFilePrefix(ctx context.Context, root Hash, p string, n int64) ([]byte, int64, error) {
	e, err := r.lookup(ctx, root, p)
	if err != nil {
		return nil, 0, err
	}
	if e.Dir {
		return nil, 0, fmt.Errorf("%s is a directory: %w", p, ErrNotFound)
	}
	return r.ReadBlobPrefix(ctx, e.Hash, n)
}
