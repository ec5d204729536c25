package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
)

// ErrForeignCheckout is wrapped by Init's error (with ErrInvalid) when .context/ already holds files ctx
// did not write: no checkout record (RecordFile) and files that no context ref holds with that content.
// Adopting them silently would publish them with the next ctx sync as hand edits (docs/layout.md).
var ErrForeignCheckout = errors.New(".context/ holds files ctx did not write")

// maxForeignNamed bounds the files an ErrForeignCheckout error names.
const maxForeignNamed = 5

// foreignCheckoutFiles lists, sorted, the files of .context/ that ctx did not write, when it has no
// checkout record: those whose path and content are in none of trees (scope -> tree of the ref the
// checkout will be made from; ZeroHash: empty). Folders alone, and a .context/ that is a checkout of those
// refs (after ctx restore, or a re-init whose record was lost), give none. A .context/ with a record is
// ctx's own: none. Anything that is not a regular file (a link, a FIFO) counts as foreign.
func (s *Store) foreignCheckoutFiles(ctx context.Context, trees map[Scope]gitstore.Hash) ([]string, error) {
	root := s.CheckoutRoot()
	if root == "" {
		return nil, nil
	}
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		return nil, nil // missing (the usual case), or not a folder: checkCheckoutDir's to report
	}
	if _, err := os.Lstat(filepath.Join(root, RecordFile)); err == nil {
		return nil, nil
	}
	r := &RefReader{repo: s.repo, Trees: trees}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() || checkPath(rel) != nil {
			out = append(out, rel)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Size() > MaxFileBytes {
			out = append(out, rel)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == IgnoreFile && string(data) == IgnoreContent {
			return nil // ctx's own, written before the record (a first refresh that did not finish)
		}
		for _, sc := range Scopes {
			if b, err := r.ReadFile(ctx, sc, rel); err == nil && bytes.Equal(b, data) {
				return nil
			}
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look at the existing %s/: %w", CheckoutDir, err)
	}
	return out, nil
}

// foreignCheckoutError is the refusal of files (foreignCheckoutFiles, not empty) by cmd, the command that
// would take them ("ctx init", or "ctx pull" adopting the remote's branch).
func foreignCheckoutError(cmd string, files []string) error {
	named := files
	if len(named) > maxForeignNamed {
		named = named[:maxForeignNamed]
	}
	more := ""
	if len(files) > len(named) {
		more = fmt.Sprintf(" and %d more", len(files)-len(named))
	}
	return &invalidError{wrapped: ErrForeignCheckout, msg: fmt.Sprintf(
		"%s/ already holds %d file(s) ctx did not write (%s%s): %s would take them into the context branch, "+
			"and the next ctx sync would publish them; move them out of %s/ first, or run ctx init --adopt to "+
			"commit them to the context branch as they are (nothing was written)",
		CheckoutDir, len(files), strings.Join(named, ", "), more, cmd, CheckoutDir)}
}

// refuseForeignCheckout returns an ErrForeignCheckout error when .context/ holds files ctx did not write
// (foreignCheckoutFiles) for a checkout whose public scope is commit pub (ZeroHash: a new branch) and
// whose other scopes are the local refs. Init and a pull that adopts the remote's branch call it before
// they write anything.
func (s *Store) refuseForeignCheckout(ctx context.Context, cmd string, pub gitstore.Hash) error {
	trees := map[Scope]gitstore.Hash{}
	for _, sc := range Scopes {
		c := pub
		if sc != Public {
			var err error
			if c, err = s.repo.Resolve(ctx, s.RefOf(sc)); err != nil {
				return err
			}
		}
		t, err := s.repo.TreeOf(ctx, c)
		if err != nil {
			return err
		}
		trees[sc] = t
	}
	files, err := s.foreignCheckoutFiles(ctx, trees)
	if err != nil || len(files) == 0 {
		return err
	}
	return foreignCheckoutError(cmd, files)
}
