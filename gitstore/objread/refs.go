package objread

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRepository is returned by Discover when no git repository contains the path.
var ErrNotRepository = errors.New("not a git repository (or any of the parent directories)")

// ReadRef reads ref name (a full name, "refs/heads/ctx") of a git dir: the loose file first, then
// packed-refs (gitrepository-layout(5)). A symbolic ref ("ref: ...") is followed, at most 5 levels. A
// missing ref is the zero Hash with no error; a loose ref that does not hold 40 hex digits is an error.
func ReadRef(gitDir, name string) (Hash, error) {
	var packed packedRefs
	return packed.readRef(gitDir, name)
}

// ReadRefs is ReadRef of each of names, in order, with packed-refs read at most once for all of them: a
// front run that checks two absent refs read it twice (bench/README.md "Twelfth round").
func ReadRefs(gitDir string, names ...string) ([]Hash, error) {
	var packed packedRefs
	out := make([]Hash, len(names))
	for i, name := range names {
		h, err := packed.readRef(gitDir, name)
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}

// packedRefs holds the bytes of a git dir's packed-refs once read (nil and read false before; nil after
// reading a missing file).
type packedRefs struct {
	b    []byte
	read bool
}

func (p *packedRefs) readRef(gitDir, name string) (Hash, error) {
	for depth := 0; depth < 5; depth++ {
		b, err := ReadFile(filepath.Join(gitDir, filepath.FromSlash(name)))
		if err == nil {
			s := strings.TrimSpace(string(b))
			if target, ok := strings.CutPrefix(s, "ref: "); ok {
				name = target
				continue
			}
			var h Hash
			if len(s) != 40 {
				return Hash{}, fmt.Errorf("ref %s holds %q, not an object name", name, s)
			}
			if _, err := hex.Decode(h[:], []byte(s)); err != nil {
				return Hash{}, fmt.Errorf("ref %s holds %q, not an object name", name, s)
			}
			return h, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !isDirErr(err) {
			return Hash{}, err
		}
		if !p.read {
			b, err := ReadFile(filepath.Join(gitDir, "packed-refs"))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return Hash{}, err
			}
			p.b, p.read = b, true
		}
		return findPackedRef(p.b, name)
	}
	return Hash{}, fmt.Errorf("ref %s: too many levels of symbolic refs", name)
}

func isDirErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "is a directory")
}

// findPackedRef finds ref name in the bytes b of a packed-refs file (the zero Hash when absent).
func findPackedRef(b []byte, name string) (Hash, error) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) > 1<<20 {
			return Hash{}, bufio.ErrTooLong // as the line scanner this replaced (at most 1 MiB a line)
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		hash, ref, ok := bytes.Cut(line, []byte(" "))
		if ok && string(ref) == name {
			// As lenient as git's get_oid_hex of a packed line (and go-git's NewHash): the hex digits
			// decoded up to the first bad one.
			var h Hash
			d, _ := hex.DecodeString(string(hash))
			copy(h[:], d)
			return h, nil
		}
	}
	return Hash{}, nil
}

// Discover returns the git dir and worktree root for an absolute path, as git's setup_git_directory does
// for the common cases: $GIT_DIR (with $GIT_WORK_TREE or the current directory), a .git directory or
// gitfile, or a bare repository (a directory with HEAD, objects/ and refs/); workTree is "" for a bare
// repository. Errors wrap ErrNotRepository when no repository contains abs.
func Discover(abs string) (gitDir, workTree string, err error) {
	if env := os.Getenv("GIT_DIR"); env != "" {
		gd, err := filepath.Abs(env)
		if err != nil {
			return "", "", fmt.Errorf("GIT_DIR %s: %w", env, err)
		}
		if !IsGitDir(gd) {
			return "", "", fmt.Errorf("GIT_DIR %s: %w", env, ErrNotRepository)
		}
		wt := os.Getenv("GIT_WORK_TREE")
		if wt == "" {
			if bare(gd) {
				return gd, "", nil
			}
			wt = abs
		}
		wt, err = filepath.Abs(wt)
		if err != nil {
			return "", "", fmt.Errorf("GIT_WORK_TREE: %w", err)
		}
		return gd, wt, nil
	}
	dir := abs
	for {
		dotgit := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			if fi.IsDir() && IsGitDir(dotgit) {
				return dotgit, dir, nil
			}
			if !fi.IsDir() {
				gd, err := readGitFile(dotgit)
				if err != nil {
					return "", "", err
				}
				return gd, dir, nil
			}
		}
		if IsGitDir(dir) {
			return dir, "", nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", fmt.Errorf("%s: %w", abs, ErrNotRepository)
		}
		dir = parent
	}
}

// CommonDir is the shared git dir of gitDir: the one its commondir file names (a linked worktree), else
// gitDir itself.
func CommonDir(gitDir string) string {
	b, err := ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}

// readGitFile reads a "gitdir: <path>" file (gitrepository-layout(5)).
func readGitFile(path string) (string, error) {
	b, err := ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	line := strings.TrimSpace(string(b))
	gd, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s: not a gitfile: %w", path, ErrNotRepository)
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(path), gd)
	}
	return filepath.Clean(gd), nil
}

// IsGitDir reports whether dir looks like a git dir: HEAD, and objects/ and refs/ or a commondir file.
func IsGitDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(dir, "commondir")); err == nil {
		return true
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// bare reports whether the config of a git dir says core.bare = true.
func bare(gitDir string) bool {
	b, err := ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		return false
	}
	return bytes.Contains(bytes.ToLower(b), []byte("bare = true"))
}
