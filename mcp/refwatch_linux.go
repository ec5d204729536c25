package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// refWatch is an inotify(7) instance watching the directories that hold the files of the read cache's
// full check (store.CheckoutViewFiles: the refs, packed-refs, the checkout record, its log and the
// refresh journal). The kernel queues an event on the instance before the system call that changed a
// file in those directories returns (a write, a rename over a file, a removal, a chmod), so a read that
// finds the queue empty knows that none of them changed since the watches were added, without stat-ing
// them: one non-blocking read(2) instead of a stat per file. Events are never interpreted: any event,
// an overflowed queue or an error means "maybe changed", and the cache does its full check and arms a
// new watch.
type refWatch struct {
	fd      int
	buf     []byte
	cleanup runtime.Cleanup
}

// refWatchMask is every event that can change a file of a watched directory or the directory itself.
const refWatchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// localFS reports whether dir is on a file system of this kernel whose every change goes through it, so
// that inotify sees them all. On a network or FUSE file system (NFS, CIFS, 9p, virtiofs: a repository
// shared with a container's host) a change made by another machine or the host raises no event; those,
// and any file system not listed, are checked by stat.
func localFS(dir string) bool {
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) != nil {
		return false
	}
	switch uint32(fs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC:
		return true
	}
	return false
}

// newRefWatch watches the directories of files, nil when it cannot or should not: inotify is unavailable
// or out of watches, a directory is on a file system other than localFS's, or a file or a directory on the way to it is a symbolic link (a change of a link's target, or a
// link retargeted, would not be seen in the watched directory). The cache then stats every file at each
// read, as without it. A directory that does not exist (refs/ctx/ while every ref is packed) is watched
// through its nearest existing ancestor: creating it is an event there.
func newRefWatch(files []string) *refWatch {
	if len(files) == 0 {
		return nil
	}
	dirs := map[string]bool{}
	for _, f := range files {
		if !filepath.IsAbs(f) {
			return nil
		}
		if fi, err := os.Lstat(f); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil
		}
		d := filepath.Dir(f)
		for {
			fi, err := os.Lstat(d)
			if err == nil && fi.IsDir() {
				break
			}
			if err == nil || !errors.Is(err, os.ErrNotExist) || filepath.Dir(d) == d {
				return nil // a symbolic link, a file where a directory should be, or unreadable
			}
			d = filepath.Dir(d)
		}
		if real, err := filepath.EvalSymlinks(d); err != nil || real != d || !localFS(d) {
			return nil
		}
		dirs[d] = true
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	for d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, d, refWatchMask); err != nil {
			_ = unix.Close(fd)
			return nil
		}
	}
	w := &refWatch{fd: fd, buf: make([]byte, 4096)}
	// A watch of a server dropped without close (an HTTP handler's) does not keep its descriptor.
	w.cleanup = runtime.AddCleanup(w, func(fd int) { _ = unix.Close(fd) }, fd)
	return w
}

// quiet reports whether no event was queued since the watches were added (a non-blocking read finds
// nothing). It consumes what it finds: after false, the watch is spent and must be closed.
func (w *refWatch) quiet() bool {
	_, err := unix.Read(w.fd, w.buf)
	return errors.Is(err, unix.EAGAIN)
}

// close closes the instance; nil is a no-op.
func (w *refWatch) close() {
	if w != nil {
		w.cleanup.Stop()
		_ = unix.Close(w.fd)
	}
}
