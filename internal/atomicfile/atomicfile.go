// Package atomicfile replaces a file's contents so that a reader, a crash or a full disk never sees
// a partly written file: the data goes to a temporary file in the same folder, which is synced,
// renamed over the target, and the folder is synced so that the rename itself survives a crash.
// Every file ctx writes outside git's object and ref stores goes through it (docs/architecture.md,
// "Atomic files").
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ctx-dev/ctx/internal/plainfile"
)

// TempPrefix is the prefix of the temporary files of a write of a file named base (a name without
// folder): "." + base + ".tmp", followed by 12 random hex digits. A write killed half way can leave
// one behind; callers that clean up match this prefix.
func TempPrefix(base string) string { return "." + base + ".tmp" }

// IsTemp reports whether a file name (without folder) looks like a temporary file of a write.
func IsTemp(name string) bool { return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp") }

// tempDigits is the number of random hex digits that end a temporary file's name (6 random bytes).
const tempDigits = 12

// TempTarget returns the base name of the file whose write made the temporary file name (a name without
// folder), and whether name is exactly one: TempPrefix(base) followed by 12 lower-case hex digits, base not
// empty. Unlike IsTemp it matches nothing else, so that cleaners remove only what a write made.
func TempTarget(name string) (base string, ok bool) {
	const suffix = len(".tmp") + tempDigits
	if len(name) < 1+1+suffix || name[0] != '.' {
		return "", false
	}
	cut := len(name) - suffix
	if name[cut:cut+len(".tmp")] != ".tmp" {
		return "", false
	}
	for _, c := range name[len(name)-tempDigits:] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return name[1:cut], true
}

// files is the part of the file system a write uses: the operating system's, or an os.Root's.
type files interface {
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Open(name string) (*os.File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
}

type osFiles struct{}

// The operating system's files are opened out of the runtime's poller (plainfile: one system call per
// file instead of five; a front write writes its refresh journal here).
func (osFiles) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return plainfile.OpenFile(name, flag, perm)
}
func (osFiles) Open(name string) (*os.File, error)   { return plainfile.OpenFile(name, os.O_RDONLY, 0) }
func (osFiles) Rename(oldname, newname string) error { return plainfile.Rename(oldname, newname) }
func (osFiles) Remove(name string) error             { return os.Remove(name) }

// Write replaces the file at path with data, atomically and durably: after Write returns nil the
// file holds data and permission bits exactly perm (the umask does not narrow them), also after a
// crash. After an error the file is as it was and no temporary file is left, except for the one
// error that comes after the rename (syncing the folder failed: the new contents are in place but
// may not survive a crash). The folder must exist. Errors name the path and wrap the underlying
// *fs.PathError (a full disk's is syscall.ENOSPC).
func Write(path string, data []byte, perm fs.FileMode) error {
	dir, base := filepath.Split(path)
	return write(osFiles{}, dir, base, data, perm, true, Durable)
}

// WriteNoSync is Write without the fsyncs (NoSync): readers and a killed process see the old or the new
// contents whole, but after a power loss the file may be old, empty or missing. For files that a crash
// of the machine may lose without harm (a journal that its reader accepts damaged).
func WriteNoSync(path string, data []byte, perm fs.FileMode) error {
	dir, base := filepath.Split(path)
	return write(osFiles{}, dir, base, data, perm, true, NoSync)
}

// Durability says whether a write waits until its data and its rename are on disk.
type Durability int

const (
	// Durable fsyncs the file before the rename and the folder after it: the new contents survive a
	// power loss once the write returned.
	Durable Durability = iota
	// NoSync skips both fsyncs. Readers and a crash of the process still see the old or the new
	// contents whole, but after a power loss the file may be empty or old. For files that can be made
	// again from elsewhere (the checked-out view of the context refs), where an fsync per file would
	// make rewriting thousands of them several times slower.
	NoSync
)

// WriteIn is Write confined to root: name is a slash-separated path relative to root, and neither
// it nor any symbolic link on the way can lead outside root (os.Root's rules). The file is created
// with perm less the process umask, as os.WriteFile does. The folder must exist. d says whether the
// write is durable (Write always is).
func WriteIn(root *os.Root, name string, data []byte, perm fs.FileMode, d Durability) error {
	dir, base := path.Split(name)
	return write(root, dir, base, data, perm, false, d)
}

// WriteInDir is WriteIn for a file directly in root's folder (name is a base name, without a slash), with
// dir that folder opened (root.Open(".")), for writers of many files of one folder.
//
// With NoSync, the new file takes the old one's place by exchanging the two names
// (renameat2(RENAME_EXCHANGE), Linux), after which the old file, now under the temporary name, is removed:
// a reader sees the old or the new file whole at every moment, as with a rename over the old one. The
// exchange is used because ext4 (its auto_da_alloc default) starts writing a file's data back inside a
// rename that replaces another file, which a NoSync write does not ask for: that was most of the CPU time
// of refreshing 1,000 files (bench/README.md "Third round"). Where the exchange is not available (another
// system, a file system without it) or there is no old file, the temporary file is renamed as by WriteIn.
// A write killed between the exchange and the removal leaves the old content under the temporary name
// (TempPrefix), which callers that clean up remove. Durable writes are WriteIn's.
func WriteInDir(root *os.Root, dir *os.File, name string, data []byte, perm fs.FileMode, d Durability) error {
	if strings.Contains(name, "/") || name == "" || name == "." || name == ".." {
		return fmt.Errorf("write %s: not a name in the folder", name)
	}
	if d == Durable || dir == nil {
		return write(root, "", name, data, perm, false, d)
	}
	return writeInDir(root, dir, name, data, perm)
}

// write writes dir+base through fsys. chmod sets perm exactly after creating the temporary file.
func write(fsys files, dir, base string, data []byte, perm fs.FileMode, chmod bool, d Durability) error {
	return writeWith(fsys, dir, base, data, perm, chmod, d, fsys.Rename)
}

// writeWith is write, with rename putting the temporary file (written and closed) in the target's place.
func writeWith(fsys files, dir, base string, data []byte, perm fs.FileMode, chmod bool, d Durability,
	rename func(tmp, target string) error) error {
	target := dir + base
	tmp, err := writeTemp(fsys, dir, base, data, perm, chmod, d)
	if err != nil {
		return err
	}
	if err := rename(tmp, target); err != nil {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("write %s: %w", target, err)
	}
	if d != Durable {
		return nil
	}
	// The rename is done: from here on the file holds data whatever happens, so a failure to sync the
	// folder only loses durability, not atomicity. It is still reported.
	if err := syncDir(fsys, dir); err != nil {
		return fmt.Errorf("write %s: sync folder: %w", target, err)
	}
	return nil
}

// writeTemp writes data to a new temporary file of the write of dir+base (TempPrefix) through fsys, closed
// (and synced if d is Durable; its permission bits set to perm exactly if chmod), and returns its path. On
// error no temporary file is left.
func writeTemp(fsys files, dir, base string, data []byte, perm fs.FileMode, chmod bool, d Durability) (string, error) {
	target := dir + base
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("write %s: %w", target, err)
	}
	tmp := dir + TempPrefix(base) + hex.EncodeToString(rnd[:])
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", target, err)
	}
	// Every failure from here removes the file by its name (tmp, which no return statement changes).
	fail := func(err error) (string, error) {
		_ = f.Close()
		_ = fsys.Remove(tmp)
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		return fail(fmt.Errorf("write %s: %w", target, err))
	}
	if chmod {
		if err := f.Chmod(perm); err != nil {
			return fail(fmt.Errorf("write %s: %w", target, err))
		}
	}
	if d == Durable {
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("write %s: sync: %w", target, err))
		}
	}
	if err := f.Close(); err != nil {
		_ = fsys.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", target, err)
	}
	return tmp, nil
}

// Pending is a NoSync write made in two steps (PrepareNoSync, PrepareInDir): its temporary file written
// and closed, then put in its target's place by Commit, or removed by Discard. Until Commit, readers see the
// old file (or none); a process killed in between leaves the temporary file (TempPrefix), as a write
// killed half way does. Preparing lets a caller make and fill the file (its inode allocated, its data
// written) while it waits for something else, and put it in place later with one rename or exchange (the
// lean front's write prepares its refresh while its objects are written: docs/architecture.md "The lean
// front"). A Pending is for one goroutine; Commit or Discard, once, ends it.
type Pending struct {
	target string
	commit func() error // puts the temporary file in place; on error it is still there
	remove func()       // removes the temporary file
	done   bool
}

// Commit puts the prepared file in its target's place, as the write it was prepared for would (a rename;
// an exchange with the old file, then removed, for PrepareInDir). On error the target is as it was and the
// temporary file is removed. A second call, or one after Discard, does nothing and returns nil.
func (p *Pending) Commit() error {
	if p == nil || p.done {
		return nil
	}
	p.done = true
	if err := p.commit(); err != nil {
		p.remove()
		return fmt.Errorf("write %s: %w", p.target, err)
	}
	return nil
}

// Discard removes the prepared temporary file, unless Commit or Discard ran already.
func (p *Pending) Discard() {
	if p == nil || p.done {
		return
	}
	p.done = true
	p.remove()
}

// PrepareNoSync is the first step of WriteNoSync(path, data, perm): the temporary file written, with
// permission bits exactly perm; Commit renames it over path. Errors are WriteNoSync's; on error nothing is
// left.
func PrepareNoSync(path string, data []byte, perm fs.FileMode) (*Pending, error) {
	fsys := osFiles{}
	dir, base := filepath.Split(path)
	tmp, err := writeTemp(fsys, dir, base, data, perm, true, NoSync)
	if err != nil {
		return nil, err
	}
	return &Pending{target: path, commit: func() error { return fsys.Rename(tmp, path) },
		remove: func() { _ = fsys.Remove(tmp) }}, nil
}

// PrepareInDir is the first step of WriteInDir(root, dir, name, data, perm, NoSync): the temporary file
// written in dir (root's folder, opened, which must stay open until Commit or Discard); Commit exchanges it
// with the old file and removes that, or renames it where there is none. Errors are WriteInDir's; on error
// nothing is left.
func PrepareInDir(root *os.Root, dir *os.File, name string, data []byte, perm fs.FileMode) (*Pending, error) {
	if strings.Contains(name, "/") || name == "" || name == "." || name == ".." || dir == nil {
		return nil, fmt.Errorf("write %s: not a name in the folder", name)
	}
	tmp, err := tempInDir(root, dir, name, data, perm)
	if err != nil {
		return nil, err
	}
	return &Pending{target: name, commit: func() error { return replaceByExchange(root, dir, tmp, name) },
		remove: func() { removeInDir(root, dir, tmp) }}, nil
}

// syncDir fsyncs the folder dir ("" is the current one) so that a rename in it is on disk.
// File systems that cannot sync a folder (EINVAL, as some network file systems answer) are no error.
func syncDir(fsys files, dir string) error {
	if dir == "" {
		dir = "."
	}
	dir = filepath.Clean(dir)
	d, err := fsys.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
