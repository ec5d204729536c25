package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/ctx-dev/ctx/gitstore"
)

// Bounded reads: a reader that serves other processes (the MCP server) must know a file's size before
// it loads it, and read only the part it can use. docs/limits.md describes the limits built on these.

// PrefixReader is a Reader that can return the size of a file and its first bytes without loading the
// rest. DirReader and RefReader implement it.
type PrefixReader interface {
	// ReadPrefix returns at most the first n bytes of the file (all of it when shorter) and its size in
	// bytes; n = 0 returns the size only. A missing file is an error wrapping fs.ErrNotExist.
	ReadPrefix(ctx context.Context, sc Scope, p string, n int64) ([]byte, int64, error)
}

// ReadPrefix implements PrefixReader.
func (d *DirReader) ReadPrefix(ctx context.Context, sc Scope, p string, n int64) ([]byte, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	p = path.Clean(p)
	if d.scopeOf(p) != sc {
		return nil, 0, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	f, err := os.Open(filepath.Join(d.Root, filepath.FromSlash(p)))
	if err != nil {
		if isNotDir(err) {
			return nil, 0, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
		}
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if fi.IsDir() {
		return nil, 0, fmt.Errorf("%s is a directory: %w", p, fs.ErrNotExist)
	}
	if n <= 0 {
		return nil, fi.Size(), nil
	}
	b, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return nil, 0, err
	}
	return b, max(fi.Size(), int64(len(b))), nil
}

// ReadPrefix implements PrefixReader.
func (r *RefReader) ReadPrefix(ctx context.Context, sc Scope, p string, n int64) ([]byte, int64, error) {
	t := r.Trees[sc]
	if t.IsZero() {
		return nil, 0, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	b, size, err := r.repo.ReadFilePrefix(ctx, t, p, n)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, 0, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return b, size, err
}

// ReadPrefix returns at most the first n bytes of a file of one scope and the file's size (n = 0: the
// size only). A Reader that is not a PrefixReader loads the file whole.
func (v *View) ReadPrefix(ctx context.Context, sc Scope, p string, n int64) ([]byte, int64, error) {
	if pr, ok := v.r.(PrefixReader); ok {
		return pr.ReadPrefix(ctx, sc, p, n)
	}
	b, err := v.r.ReadFile(ctx, sc, p)
	if err != nil {
		return nil, 0, err
	}
	return b[:min(int64(len(b)), max(n, 0))], int64(len(b)), nil
}

// TooLargeError is a file over a view's read limit (View.WithMaxRead): it was not loaded.
type TooLargeError struct {
	Path      string
	Size, Max int64 // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d-byte read limit", e.Path, e.Size, e.Max)
}

// WithMaxRead returns a view of the same files whose Read and ReadIn refuse a file larger than max
// bytes with a *TooLargeError, after checking its size and without loading it (ReadPrefix still reads
// the beginning of any file). A server uses it to bound what one request may load.
func (v *View) WithMaxRead(max int64) *View {
	return &View{r: &cappedReader{r: v.r, max: max}}
}

type cappedReader struct {
	r   Reader
	max int64
}

func (c *cappedReader) ReadFile(ctx context.Context, sc Scope, p string) ([]byte, error) {
	pr, ok := c.r.(PrefixReader)
	if !ok {
		b, err := c.r.ReadFile(ctx, sc, p)
		if err == nil && int64(len(b)) > c.max {
			return nil, &TooLargeError{Path: p, Size: int64(len(b)), Max: c.max}
		}
		return b, err
	}
	_, size, err := pr.ReadPrefix(ctx, sc, p, 0)
	if err != nil {
		return nil, err
	}
	if size > c.max {
		return nil, &TooLargeError{Path: p, Size: size, Max: c.max}
	}
	// One more byte than allowed tells a file that grew after its size was read.
	b, size, err := pr.ReadPrefix(ctx, sc, p, c.max+1)
	if err != nil {
		return nil, err
	}
	if size > c.max || int64(len(b)) > c.max {
		return nil, &TooLargeError{Path: p, Size: max(size, int64(len(b))), Max: c.max}
	}
	return b, nil
}

func (c *cappedReader) List(ctx context.Context, sc Scope, dir string) ([]gitstore.Entry, error) {
	return c.r.List(ctx, sc, dir)
}

func (c *cappedReader) ReadPrefix(ctx context.Context, sc Scope, p string, n int64) ([]byte, int64, error) {
	return (&View{r: c.r}).ReadPrefix(ctx, sc, p, n)
}
