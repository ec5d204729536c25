// Package reflock is the ref lock protocol ctx shares between gitstore and the lean front
// (docs/locks.md "Which ref locks are ctx's own", docs/architecture.md "The write path" step 5): a
// <ref>.lock created as a hard link of its mark <common dir>/ctx/reflocks/<ref, escaped>, the new value
// written and fsynced, the lock renamed over the ref, and the reflog line C git writes. The waiting,
// classifying and sweeping of locks stay in gitstore. Standard library and internal/plainfile only (its
// files are not offered to the runtime's poller).
package reflock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/internal/plainfile"
)

// MarkPath is where ctx hard-links a ref lock it creates: <ctxDir>/reflocks/<name, path-escaped>.
func MarkPath(ctxDir, name string) string {
	return filepath.Join(ctxDir, "reflocks", pathEscape(name))
}

// pathEscape is url.PathEscape (net/url, whose package initialisation the lean front need not pay): every
// byte but ASCII letters, digits and -_.~$&+:=@ as %XX in upper-case hex.
func pathEscape(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~$&+:=@", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// CreateMarked creates lockPath as a hard link of a new mark file at mark and returns the file open for
// writing. The error wraps fs.ErrExist when lockPath exists; the mark of an existing lock is left alone.
// Where the file system has no hard links, the lock is created with O_EXCL unmarked. afterMark, when not
// nil, runs between the mark's creation and its link (gitstore's fault point "ref-marked").
func CreateMarked(mark, lockPath string, afterMark func()) (*os.File, error) {
	if _, err := os.Lstat(lockPath); err == nil {
		return nil, fs.ErrExist
	}
	if err := os.MkdirAll(filepath.Dir(mark), 0o777); err != nil {
		return plainfile.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	}
	// No lock exists, so a mark of this ref is left over from a process killed before its link: stale.
	_ = os.Remove(mark)
	f, err := plainfile.OpenFile(mark, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return plainfile.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	}
	if afterMark != nil {
		afterMark()
	}
	if err := os.Link(mark, lockPath); err != nil {
		f.Close()
		_ = os.Remove(mark)
		if errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		return plainfile.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	}
	return f, nil
}

// WriteLock writes an object name (40 hex digits) and a newline into a lock file, fsyncs and closes it.
func WriteLock(f *os.File, hex string) error {
	if _, err := f.WriteString(hex + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write lock: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync lock: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close lock: %w", err)
	}
	return nil
}

// WriteLockNoSync is WriteLock without the fsync, as C git writes a ref by default (its core.fsync leaves
// out references; `git update-ref` calls no fsync): the rename that follows still makes the move atomic
// for every reader and for a killed process; only a power loss may leave the old value.
func WriteLockNoSync(f *os.File, hex string) error {
	if _, err := f.WriteString(hex + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write lock: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close lock: %w", err)
	}
	return nil
}

// Rename puts a written lock in place: renames refPath+".lock" over refPath, then removes the mark.
func Rename(refPath, mark string) error {
	if err := plainfile.Rename(refPath+".lock", refPath); err != nil {
		return fmt.Errorf("rename lock: %w", err)
	}
	_ = os.Remove(mark)
	return nil
}

// Drop removes a lock that was not put in place, and its mark.
func Drop(refPath, mark string) {
	_ = os.Remove(refPath + ".lock")
	_ = os.Remove(mark)
}

// ReflogLine is the line C git appends to logs/<ref> for a move from old to new (40 hex digits each) by
// "name <email>" at when: the time in seconds and when's zone offset, a tab, and the first line of msg
// with its tabs made spaces.
func ReflogLine(old, new, name, email string, when time.Time, msg string) string {
	_, offset := when.Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	msg = strings.ReplaceAll(strings.SplitN(msg, "\n", 2)[0], "\t", " ")
	return fmt.Sprintf("%s %s %s <%s> %d %c%02d%02d\t%s\n", old, new, name, email, when.Unix(),
		sign, offset/3600, (offset%3600)/60, msg)
}

// AppendReflog appends line to the reflog logPath of ref name as gitstore does: only when the log exists
// or the ref is a branch (core.logAllRefUpdates); failures are ignored, as in git.
func AppendReflog(logPath, name, line string) {
	if _, err := os.Stat(logPath); err != nil && !strings.HasPrefix(name, "refs/heads/") {
		return
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o777); err != nil {
		return
	}
	f, err := plainfile.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(line)
}
