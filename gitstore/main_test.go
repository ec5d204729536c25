package gitstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/go-git/go-git/v5/plumbing"
)

// TestMain runs the tests in testenv's hermetic environment: no user or system git configuration, a
// fixed identity, a private HOME.
func TestMain(m *testing.M) { testenv.Main(m) }

var bg = context.Background()

// open opens the repository at dir or fails the test.
func open(t testing.TB, dir string) *gitstore.Repo {
	t.Helper()
	r, err := gitstore.Open(bg, dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return r
}

// hash parses git's output as an object name.
func hash(t testing.TB, s string) gitstore.Hash {
	t.Helper()
	s = strings.TrimSpace(s)
	if !plumbing.IsHash(s) {
		t.Fatalf("not an object name: %q", s)
	}
	return gitstore.NewHash(s)
}

// set is a Transact on one ref that writes files (path -> content) with msg.
func set(t testing.TB, r *gitstore.Repo, ref, msg string, files map[string]string) gitstore.Result {
	t.Helper()
	var ch []gitstore.Change
	for p, c := range files {
		ch = append(ch, gitstore.Change{Path: p, Data: []byte(c)})
	}
	res, err := r.Transact(bg, []string{ref}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		return map[string]*gitstore.Write{ref: {Changes: ch, Message: msg}}, nil
	})
	if err != nil {
		t.Fatalf("Transact %s: %v", ref, err)
	}
	return res[0]
}

// realpath resolves symlinks so that paths from git and from Open compare equal.
func realpath(t testing.TB, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(r)
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fsck(t testing.TB, dir string) {
	t.Helper()
	out, err := testenv.GitErr(dir, "fsck", "--strict", "--no-dangling", "--no-progress")
	if err != nil || out != "" {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

var _ = fmt.Sprint
