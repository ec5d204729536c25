package atomicfile

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"

	"golang.org/x/sys/unix"
)

// replaceByExchange puts the file tmp of the folder dir (root's) in target's place: exchanged with the old
// target, which is then removed (WriteInDir); renamed over it where the exchange is not possible. On
// error the target is as it was and tmp is still there (the caller removes it).
func replaceByExchange(root *os.Root, dir *os.File, tmp, target string) error {
	fd := int(dir.Fd())
	err := ignoringEINTR(func() error { return unix.Renameat2(fd, tmp, fd, target, unix.RENAME_EXCHANGE) })
	switch {
	case err == nil:
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS),
		errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EXDEV):
		// No old file, or no exchange on this file system: a plain rename.
		return root.Rename(tmp, target)
	default:
		return &os.LinkError{Op: "renameat2", Old: tmp, New: target, Err: err}
	}
	// tmp now names the old file. A folder exchanged with the new file (a rename over a folder fails, and
	// so must this write) cannot be unlinked: put it back.
	if err := ignoringEINTR(func() error { return unix.Unlinkat(fd, tmp, 0) }); err != nil {
		if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
			if berr := ignoringEINTR(func() error { return unix.Renameat2(fd, tmp, fd, target, unix.RENAME_EXCHANGE) }); berr != nil {
				return fmt.Errorf("%s is a folder, exchanged with the new file, and could not be put back (it is %s now): %w", target, tmp, berr)
			}
			return &os.LinkError{Op: "rename", Old: tmp, New: target, Err: unix.EISDIR}
		}
		// The new file is in place; the old one stays under the temporary name, which callers that clean up
		// remove (TempPrefix).
		return nil
	}
	return nil
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// writeInDir is WriteInDir's NoSync write on Linux: the temporary file is made, written and closed with
// system calls on the folder's descriptor, then exchanged with the old file (replaceByExchange). Through
// os.OpenFile each file cost five more calls (two fcntl to set O_NONBLOCK, an epoll_ctl the kernel refuses
// for a regular file, two fcntl to clear it) and an os.File with its finalizer, and its random name a
// getrandom: a refresh that writes 1,000 files made 6,000 calls more than C git's checkout of them
// (bench/README.md "Fifth round"). The name's 12 hex digits come from math/rand/v2 (no system call): the
// file is created O_EXCL, so a name already there is another try, never another file written. Errors are
// WriteIn's: the name and an *fs.PathError (a full disk's wraps syscall.ENOSPC); on error name is as it
// was and the temporary file is removed.
func writeInDir(root *os.Root, dir *os.File, name string, data []byte, perm fs.FileMode) error {
	tmp, err := tempInDir(root, dir, name, data, perm)
	if err != nil {
		return err
	}
	if err := replaceByExchange(root, dir, tmp, name); err != nil {
		removeInDir(root, dir, tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// tempInDir makes, writes and closes writeInDir's temporary file in dir and returns its name; on error
// nothing is left.
func tempInDir(_ *os.Root, dir *os.File, name string, data []byte, perm fs.FileMode) (string, error) {
	dfd := int(dir.Fd())
	var tmp string
	fd := -1
	for tries := 0; fd < 0; tries++ {
		var rnd [6]byte
		v := rand.Uint64()
		for i := range rnd {
			rnd[i] = byte(v >> (8 * i))
		}
		tmp = TempPrefix(name) + hex.EncodeToString(rnd[:])
		err := ignoringEINTR(func() (err error) {
			fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC,
				uint32(perm.Perm()))
			return err
		})
		if err != nil {
			fd = -1
			if errors.Is(err, unix.EEXIST) && tries < 8 {
				continue
			}
			return "", fmt.Errorf("write %s: %w", name, &fs.PathError{Op: "open", Path: tmp, Err: err})
		}
	}
	fail := func(err error) (string, error) {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	for rest := data; len(rest) > 0; {
		var n int
		err := ignoringEINTR(func() (err error) { n, err = unix.Write(fd, rest); return err })
		if err == nil && n == 0 {
			err = unix.EIO
		}
		if err != nil {
			_ = unix.Close(fd)
			return fail(&fs.PathError{Op: "write", Path: tmp, Err: err})
		}
		rest = rest[n:]
	}
	// Not retried on EINTR: Linux releases the descriptor whatever close returns.
	if err := unix.Close(fd); err != nil {
		return fail(&fs.PathError{Op: "close", Path: tmp, Err: err})
	}
	return tmp, nil
}

// removeInDir removes the temporary file tmp of dir.
func removeInDir(_ *os.Root, dir *os.File, tmp string) {
	_ = unix.Unlinkat(int(dir.Fd()), tmp, 0)
}
