package main_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// mountTmpfs mounts a tmpfs of size bytes at a new folder and unmounts it at the end of the test; it skips
// the test when it cannot (not root, no mount permission: make test runs as any user).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestDiskFull: writes on a repository whose disk fills up. Every write either exits 0 and its entry is on
// the branch, or fails, says nothing was written and is not on the branch: never "exit 1 but committed".
// No temporary object file, lock or interrupted transaction is left, and git fsck stays clean.
func TestDiskFull(t *testing.T) {
	disk := mountTmpfs(t, 6<<20)
	repo := filepath.Join(disk, "repo")
	testenv.Git(t, "", "init", "-q", "-b", "main", repo)
	testenv.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	run(t, repo, 0, "init", "--no-hooks")
	ok, failed, warned := 0, 0, 0
	for i := 0; i < 120 && failed < 12; i++ {
		size := 150 << 10
		if failed > 4 {
			size = 1 << 10 << (i % 8) // around the edge: small writes whose objects may fit and .context/ not
		}
		raw := make([]byte, size)
		rand.Read(raw)
		content := base64.StdEncoding.EncodeToString(raw)
		key := fmt.Sprintf("k%d", i)
		args, stdin := []string{"knowledge", "set", key}, content
		if i%5 == 4 {
			args, stdin = []string{"decision", "add", key, "--context", content[:min(len(content), 4000)], "--decision", "d", "--consequences", "c"}, ""
		}
		stdout, stderr, code := runCode(repo, stdin, args...)
		landed := landedEntry(repo, args[0], key, content)
		switch {
		case code == 0 && !landed:
			t.Fatalf("write %d exited 0 but is not on the branch (an acknowledged write lost)\n%s%s", i, stdout, stderr)
		case code != 0 && landed:
			t.Fatalf("write %d exited %d but committed:\n%s", i, code, stderr)
		case code != 0 && !strings.Contains(stderr, "nothing was written"):
			t.Fatalf("write %d failed without saying whether it landed (exit %d):\n%s", i, code, stderr)
		case code == 0:
			ok++
			if strings.Contains(stderr, "warning: committed") {
				warned++
			}
		default:
			failed++
		}
		if tmp := leftovers(repo); len(tmp) > 0 {
			t.Fatalf("write %d (exit %d) left %v\n%s", i, code, tmp, stderr)
		}
	}
	t.Logf("disk full: %d writes landed (%d with a refresh warning), %d refused with nothing written", ok, warned, failed)
	if failed == 0 {
		t.Fatalf("the disk never filled up")
	}
	noLocks(t, repo)
	fsck(t, repo)
}

// landedEntry reports whether the write of kind/key with content is on the context branch.
func landedEntry(repo, kind, key, content string) bool {
	if kind == "knowledge" {
		out, err := testenv.GitErr(repo, "cat-file", "blob", "refs/heads/ctx:knowledge/"+key+".md")
		return err == nil && strings.Contains(out, content)
	}
	out, err := testenv.GitErr(repo, "log", "--format=%s", "refs/heads/ctx")
	return err == nil && strings.Contains(out+"\n", "ctx: add decision "+key+"\n")
}

// leftovers lists temporary files ctx or go-git left in the repository: tmp_obj_* objects, temporary
// files of .context/ and of the journal.
func leftovers(repo string) []string {
	var out []string
	_ = filepath.WalkDir(filepath.Join(repo, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasPrefix(d.Name(), "tmp_") || strings.HasSuffix(d.Name(), ".tmp")) {
			out = append(out, p)
		}
		return nil
	})
	_ = filepath.WalkDir(filepath.Join(repo, ".context"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp") {
			out = append(out, p)
		}
		return nil
	})
	return out
}
