package objread

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/internal/plainfile"
)

// maxAlternateDepth bounds the nesting of alternates, as git's link_alt_odb_entries does: the repository's
// own alternates file is read at depth 0, an alternate's at one more, and a file at a depth over 5 is
// ignored (so a chain reaches 6 directories past the repository's own).
const maxAlternateDepth = 5

// maxAlternatesFile bounds the bytes read of one objects/info/alternates file.
const maxAlternatesFile = 1 << 20

// ObjectDirs returns objectsDir followed by the object directories it borrows from through
// objects/info/alternates (gitrepository-layout(5)), recursively, in git's order (each directory's own
// alternates right after it, depth first): one path per line, blank lines and lines starting with "#"
// skipped, a line starting with '"' read as a C-quoted path, a relative path taken relative to the
// objects directory whose file names it. Only existing directories are kept; a directory named twice (or
// naming the repository's own) is kept once; alternates nested deeper than git reads them (maxAlternateDepth) are
// ignored. Nothing but the directories named is opened: an alternate is only ever read from.
func ObjectDirs(objectsDir string) []string {
	dirs := []string{objectsDir}
	var seen map[string]bool // made at the first alternate: a repository without any resolves no path
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		for _, alt := range readAlternates(dir) {
			if seen == nil {
				seen = map[string]bool{canonicalDir(objectsDir): true}
			}
			key := canonicalDir(alt)
			if seen[key] {
				continue
			}
			if fi, err := os.Stat(alt); err != nil || !fi.IsDir() {
				continue
			}
			seen[key] = true
			dirs = append(dirs, alt)
			if depth < maxAlternateDepth {
				walk(alt, depth+1)
			}
		}
	}
	walk(objectsDir, 0)
	return dirs
}

// readAlternates returns the paths objects/info/alternates of the objects directory dir names, made
// absolute (relative ones against dir); none when it is absent or unreadable.
func readAlternates(dir string) []string {
	f, err := plainfile.OpenFile(filepath.Join(dir, "info", "alternates"), os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, maxAlternatesFile))
	sc.Buffer(make([]byte, 0, 4096), maxAlternatesFile)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			p, err := strconv.Unquote(line)
			if err != nil {
				continue
			}
			line = p
		}
		if strings.ContainsRune(line, 0) {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(dir, line)
		}
		out = append(out, filepath.Clean(line))
	}
	return out
}

// canonicalDir names a directory for the duplicate check: its path with symbolic links resolved when it
// resolves, else its cleaned absolute path.
func canonicalDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if p, err := filepath.EvalSymlinks(dir); err == nil {
		return p
	}
	return filepath.Clean(dir)
}
