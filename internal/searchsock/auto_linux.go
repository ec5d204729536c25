package searchsock

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// AutoOn reports whether the automatic start's marker (AutoName) in dir is on: a regular file (not
// followed) of this user's that no one else may write. It costs one lstat; a symlink, a FIFO, a folder
// or a file of another user is off.
func AutoOn(dir string) bool {
	return checkOwned(filepath.Join(dir, AutoName), unix.S_IFREG, uint32(os.Getuid()), 0o022) == nil //nolint:gosec // a uid
}

// CheckDir checks that dir is a folder of this user's with no access for group or others, as the
// server (Listen) and the front (Dial) want the index folder.
func CheckDir(dir string) error {
	return checkOwned(dir, unix.S_IFDIR, uint32(os.Getuid()), 0o077) //nolint:gosec // a uid
}

// AutoStart starts the server of the index in dir, `exe --server run dir --auto` (its default idle exit;
// --auto: the server stops at once when, holding the lock, it finds the marker gone), as
// `ctx history server start` does but without waiting for it to listen: in its own session, in /, its
// standard input /dev/null and its output appended to its log (LogName in dir, emptied past 1 MiB).
// Only one caller at a time starts one: the caller that creates the start stamp (StartingName, O_EXCL;
// a stamp older than StartingFresh is removed first), and only when dir is this user's alone and no
// server holds the lock (Running); the server removes the stamp once it listens. It reports whether it
// started a process; it never waits for it.
func AutoStart(dir, exe string) bool {
	if CheckDir(dir) != nil {
		return false // the server would refuse the folder: do not try at every search
	}
	stamp := filepath.Join(dir, StartingName)
	if !createStamp(stamp) {
		return false
	}
	if Running(dir) {
		os.Remove(stamp)
		return false
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		os.Remove(stamp)
		return false
	}
	defer null.Close()
	logf, err := os.OpenFile(filepath.Join(dir, LogName), os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		os.Remove(stamp)
		return false
	}
	defer logf.Close()
	if fi, err := logf.Stat(); err == nil && fi.Size() > 1<<20 {
		_ = logf.Truncate(0)
	}
	p, err := os.StartProcess(exe, []string{filepath.Base(exe), "--server", "run", dir, "--auto"}, &os.ProcAttr{
		Dir:   "/",
		Files: []*os.File{null, logf, logf},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		os.Remove(stamp)
		return false
	}
	_ = p.Release()
	return true
}

// createStamp creates the start stamp at path, replacing one older than StartingFresh; false when a
// fresh one is there (another process is starting the server) or it cannot be created.
func createStamp(path string) bool {
	for try := 0; try < 2; try++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err == nil {
			f.Close()
			return true
		}
		if !errors.Is(err, os.ErrExist) {
			return false
		}
		fi, err := os.Lstat(path)
		if err != nil {
			continue // removed meanwhile (the server listens): try once more
		}
		if time.Since(fi.ModTime()) < StartingFresh {
			return false
		}
		os.Remove(path) // a start that failed: try again
	}
	return false
}
