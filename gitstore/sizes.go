package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// ObjectSizes returns the size in bytes of the content of each object of hs (a blob's length), read from
// the objects' headers only: no object is inflated past its header, so learning that a fetched blob holds
// 150 MB costs a few hundred bytes of reading, not 150 MB of memory. With a git binary and a repository on
// disk it asks one `git cat-file --batch-check` process (git-cat-file(1): a loose object's header, a packed
// object's header, and for a delta only the header of the delta, which holds the result's size); without
// one, go-git's EncodedObjectSize, which for a packed delta inflates the delta's instructions (not the
// object they make). Objects of the local-only store (LocalDir) are found too. An object the repository
// does not have is an error wrapping plumbing.ErrObjectNotFound.
func (r *Repo) ObjectSizes(ctx context.Context, hs []Hash) (map[Hash]int64, error) {
	out := make(map[Hash]int64, len(hs))
	if len(hs) == 0 {
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The in-process reader (ReadInProcess) reads the headers where it finds the objects, without starting
	// git: a pull's checks ask twice (its new commits, the files of the fetched tip).
	if pr, ok := r.cf.(*packReader); ok {
		var miss []Hash
		for _, h := range hs {
			if _, ok := out[h]; ok {
				continue
			}
			if n, err := pr.r.Size(objread.Hash(h)); err == nil {
				out[h] = n
			} else {
				miss = append(miss, h)
			}
		}
		if len(miss) == 0 {
			return out, nil
		}
		hs = miss
	}
	if _, onDisk := r.objs.(*filesystem.Storage); onDisk && HasGit() {
		err := r.batchCheck(ctx, hs, out)
		if err == nil || errors.Is(err, plumbing.ErrObjectNotFound) || ctx.Err() != nil {
			return out, err
		}
		// git failed (not a miss): go-git answers.
		for _, h := range hs {
			delete(out, h)
		}
	}
	err := r.read(func() error {
		rd := r.reader()
		for _, h := range hs {
			if _, ok := out[h]; ok {
				continue
			}
			n, err := rd.EncodedObjectSize(h.ph())
			if err != nil {
				return fmt.Errorf("size of object %s: %w", h, err)
			}
			out[h] = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// batchCheck fills out with the sizes of hs from one `git cat-file --batch-check` process.
func (r *Repo) batchCheck(ctx context.Context, hs []Hash, out map[Hash]int64) error {
	cmd := r.catFileCmd(ctx, "--batch-check=%(objectname) %(objectsize)")
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	// The names are written while the answers are read: a pipe holds only so much of either.
	go func() {
		w := bufio.NewWriter(in)
		for _, h := range hs {
			if _, err := w.WriteString(h.String() + "\n"); err != nil {
				break
			}
		}
		_ = w.Flush()
		_ = in.Close()
	}()
	sc := bufio.NewScanner(stdout)
	var missing error
	for i := 0; i < len(hs) && sc.Scan(); i++ {
		// "<oid> <size>" or "<oid> missing".
		f := bytes.Fields(sc.Bytes())
		if len(f) != 2 || string(f[0]) != hs[i].String() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("git cat-file --batch-check: unexpected answer %q", sc.Bytes())
		}
		if string(f[1]) == "missing" {
			if missing == nil {
				missing = fmt.Errorf("size of object %s: %w", hs[i], plumbing.ErrObjectNotFound)
			}
			continue
		}
		n, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil || n < 0 {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("git cat-file --batch-check: unexpected answer %q", sc.Bytes())
		}
		out[hs[i]] = n
	}
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git cat-file --batch-check: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("git cat-file --batch-check: %w", err)
	}
	if missing != nil {
		return missing
	}
	if len(out) < len(hs) {
		for _, h := range hs {
			if _, ok := out[h]; !ok {
				return fmt.Errorf("git cat-file --batch-check: no answer for %s", h)
			}
		}
	}
	return nil
}
