package atomicfile

import (
	"errors"
	"fmt"
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
