package gitstore_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
)

// fullDisk is a writer that accepts limit bytes, then fails as a full disk does.
type fullDisk struct {
	w     io.Writer
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.limit {
		n, _ := d.w.Write(p[:d.limit])
		d.limit = 0
		return n, &fs.PathError{Op: "write", Path: "object", Err: syscall.ENOSPC}
	}
	d.limit -= len(p)
	return d.w.Write(p)
}

func tmpObjects(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(filepath.Join(dir, ".git", "objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "tmp_") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestDiskFullWrite: a write whose objects hit a full disk fails with a WriteError that says nothing was
// written, the ref does not move, and no temporary object file is left (go-git's writer left tmp_obj_*
// in objects/pack). The next write, with space again, works. The real full disk is in cmd/ctx
// (TestDiskFull, a small tmpfs).
func TestDiskFullWrite(t *testing.T) {
	dir, r, _, _ := twoCommits(t)
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		b.WriteString(strconv.Itoa(i * 7919 % 10007))
	}
	big := b.String() // compresses poorly
	first := set(t, r, pub, "one", map[string]string{"a.md": "a"})
	for _, limit := range []int{0, 10, 200} {
		restore := gitstore.SetObjectFile(func(f *os.File) io.Writer { return &fullDisk{w: f, limit: limit} })
		_, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
			return map[string]*gitstore.Write{pub: {Changes: []gitstore.Change{{Path: "big.md", Data: []byte(big)}}, Message: "big"}}, nil
		})
		restore()
		var we *gitstore.WriteError
		if !errors.As(err, &we) || we.Landed || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "nothing was written") {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if got := revParse(t, dir, pub); got != first.New.String() {
			t.Fatalf("limit %d: the ref moved to %s", limit, got)
		}
		if tmp := tmpObjects(t, dir); len(tmp) > 0 {
			t.Fatalf("limit %d: left behind %v", limit, tmp)
		}
	}
	set(t, r, pub, "two", map[string]string{"big.md": big})
	fsck(t, dir)
}
