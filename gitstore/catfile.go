package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// catFile reads objects through one `git cat-file --batch` process (git-cat-file(1)), started on the
// first read and ended by Repo.Close. A short-lived process that reads a few objects of a big pack (a git
// hook's refresh of .context/) pays go-git's pack index load, its offset-to-name table of every object
// (built for the first delta) and its delta resolution without git's delta-base cache: at 10,000 entries
// and 30,000 objects that was most of the hook (docs/architecture.md "Limits of go-git"). Objects of the
// local-only store (LocalDir) are found too, as an alternate object directory.
type catFile struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	broken bool // the process failed: reads go to go-git
}

// rawReader reads objects before go-git does (Repo.cf): read returns an object's type and content, an
// error when it does not have it (go-git is asked then); Close releases what it holds.
type rawReader interface {
	read(r *Repo, h Hash) (plumbing.ObjectType, []byte, error)
	Close()
}

// errCatFileMissing is a miss of cat-file (the caller falls back to go-git, which may re-index).
var errCatFileMissing = errors.New("cat-file: missing")

// start starts git cat-file --batch on the object database of r.
// catFileCmd is `git cat-file ARG` on the repository's object database, the local-only store's
// objects (LocalDir) included as an alternate: the one way ctx starts cat-file (catFile, batchCheck).
func (r *Repo) catFileCmd(ctx context.Context, arg string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", "--git-dir="+r.commonDir, "cat-file", arg)
	env := gitEnv(os.Environ(), false)
	if isGitDir(r.LocalDir()) {
		env = append(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(r.LocalDir(), "objects"))
	}
	cmd.Env, cmd.Dir = env, r.commonDir
	return cmd
}

func (c *catFile) start(r *Repo) error {
	if !HasGit() {
		return ErrNoGit
	}
	cmd := r.catFileCmd(context.Background(), "--batch") // a long-lived reader: stop ends it
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd, c.in, c.out = cmd, in, bufio.NewReaderSize(out, 64<<10)
	return nil
}

// read returns the type and content of object h; errCatFileMissing when git does not have it, another
// error when the process failed (it is not used again).
func (c *catFile) read(r *Repo, h Hash) (plumbing.ObjectType, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken {
		return 0, nil, errors.New("cat-file: not running")
	}
	if c.cmd == nil {
		if err := c.start(r); err != nil {
			c.broken = true
			return 0, nil, err
		}
	}
	t, data, err := c.request(h)
	if err != nil && !errors.Is(err, errCatFileMissing) {
		c.broken = true
		c.stop()
	}
	return t, data, err
}

func (c *catFile) request(h Hash) (plumbing.ObjectType, []byte, error) {
	if _, err := io.WriteString(c.in, h.String()+"\n"); err != nil {
		return 0, nil, fmt.Errorf("cat-file: %w", err)
	}
	line, err := c.out.ReadSlice('\n')
	if err != nil {
		return 0, nil, fmt.Errorf("cat-file: %w", err)
	}
	// "<oid> <type> <size>\n" or "<oid> missing\n".
	f := bytes.Fields(line)
	if len(f) == 2 && string(f[1]) == "missing" {
		return 0, nil, errCatFileMissing
	}
	if len(f) != 3 || string(f[0]) != h.String() {
		return 0, nil, fmt.Errorf("cat-file: unexpected answer %q", line)
	}
	t, err := plumbing.ParseObjectType(string(f[1]))
	if err != nil {
		return 0, nil, fmt.Errorf("cat-file: %w", err)
	}
	n, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil || n < 0 {
		return 0, nil, fmt.Errorf("cat-file: unexpected answer %q", line)
	}
	if t == plumbing.CommitObject && n > MaxCommitBytes {
		// A commit too large to read whole (a hostile message): skipped unread, and go-git streams its
		// beginning (Repo.ogCommit).
		if _, err := io.CopyN(io.Discard, c.out, n+1); err != nil {
			return 0, nil, fmt.Errorf("cat-file: %w", err)
		}
		return 0, nil, errCatFileMissing
	}
	data := make([]byte, n+1) // the content and its newline
	if _, err := io.ReadFull(c.out, data); err != nil {
		return 0, nil, fmt.Errorf("cat-file: %w", err)
	}
	if data[n] != '\n' {
		return 0, nil, errors.New("cat-file: answer not followed by a newline")
	}
	return t, data[:n], nil
}

// stop ends the process (closing its input ends it).
func (c *catFile) stop() {
	if c.cmd == nil {
		return
	}
	_ = c.in.Close()
	_ = c.cmd.Wait()
	c.cmd = nil
}

// Close ends the process; a later read starts another.
func (c *catFile) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop()
}

// rawObject is an object read by cat-file, with its name known (go-git's MemoryObject would hash the
// content again).
type rawObject struct {
	h    plumbing.Hash
	t    plumbing.ObjectType
	data []byte
}

func (o *rawObject) Hash() plumbing.Hash           { return o.h }
func (o *rawObject) Type() plumbing.ObjectType     { return o.t }
func (o *rawObject) SetType(t plumbing.ObjectType) { o.t = t }
func (o *rawObject) Size() int64                   { return int64(len(o.data)) }
func (o *rawObject) SetSize(int64)                 {}
func (o *rawObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
func (o *rawObject) Writer() (io.WriteCloser, error) { return nil, errors.New("read-only object") }
