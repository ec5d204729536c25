package identcache_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore/identcache"
)

// repo makes a git dir with a config file, the global config at an empty file of its own.
func repo(t *testing.T) (gitDir, path string) {
	t.Helper()
	dir := t.TempDir()
	gitDir = filepath.Join(dir, ".git")
	if err := os.MkdirAll(filepath.Join(gitDir, "ctx"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "config"), []byte("[user]\n\tname = A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(dir, "global")
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return gitDir, filepath.Join(gitDir, "ctx", identcache.FileName)
}

var pair = identcache.Pair{Author: identcache.Ident{Name: "Ann Author", Email: "ann@example.com"},
	Committer: identcache.Ident{Name: "Carl Committer", Email: "carl@example.com"}}

// TestSaveLoad: what is saved under a stamp loads under the same stamp, and under no other one: a
// changed config file, a changed GIT_* variable.
func TestSaveLoad(t *testing.T) {
	gitDir, path := repo(t)
	stamp := identcache.Stamp(gitDir, gitDir)
	identcache.Save(path, stamp, pair)
	if got, ok := identcache.Load(path, stamp); !ok || got != pair {
		t.Fatalf("load: %v %v", got, ok)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "GIT_CONFIG_GLOBAL") || !strings.Contains(string(b), identcache.Digest(stamp)) {
		t.Fatalf("the file holds the stamp itself, or not its digest: %s", b)
	}
	t.Setenv("GIT_AUTHOR_NAME", "Other")
	if identcache.Stamp(gitDir, gitDir) == stamp {
		t.Fatal("a GIT_ variable does not change the stamp")
	}
	if _, ok := identcache.Load(path, identcache.Stamp(gitDir, gitDir)); ok {
		t.Fatal("loaded under another environment")
	}
	os.Unsetenv("GIT_AUTHOR_NAME")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(gitDir, "config"), later, later); err != nil {
		t.Fatal(err)
	}
	if _, ok := identcache.Load(path, identcache.Stamp(gitDir, gitDir)); ok {
		t.Fatal("loaded after the config changed")
	}
}

// TestIncludeNotTrusted: a config that may include another file makes a stamp no other process trusts:
// nothing is saved, nothing loaded.
func TestIncludeNotTrusted(t *testing.T) {
	gitDir, path := repo(t)
	if err := os.WriteFile(filepath.Join(gitDir, "config"), []byte("[include]\n\tpath = other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stamp := identcache.Stamp(gitDir, gitDir)
	if identcache.Digest(stamp) != "" {
		t.Fatal("an including config has a digest")
	}
	identcache.Save(path, stamp, pair)
	if _, err := os.Stat(path); err == nil {
		t.Fatal("saved under an untrusted stamp")
	}
}

// TestLoadRefuses: a file that is not a valid cache (not JSON, too large, an identity a commit header
// cannot hold) loads nothing.
func TestLoadRefuses(t *testing.T) {
	gitDir, path := repo(t)
	stamp := identcache.Stamp(gitDir, gitDir)
	d := identcache.Digest(stamp)
	for name, content := range map[string]string{
		"not json":   "{",
		"too large":  `{"stamp":"` + d + `","author_name":"A","author_email":"a@x","committer_name":"C","committer_email":"c@x","pad":"` + strings.Repeat("x", 5000) + `"}`,
		"angle":      `{"stamp":"` + d + `","author_name":"A <b>","author_email":"a@x","committer_name":"C","committer_email":"c@x"}`,
		"newline":    `{"stamp":"` + d + `","author_name":"A","author_email":"a@x\nx","committer_name":"C","committer_email":"c@x"}`,
		"no email":   `{"stamp":"` + d + `","author_name":"A","author_email":"","committer_name":"C","committer_email":"c@x"}`,
		"other hash": `{"stamp":"00","author_name":"A","author_email":"a@x","committer_name":"C","committer_email":"c@x"}`,
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if p, ok := identcache.Load(path, stamp); ok {
			t.Errorf("%s: loaded %v", name, p)
		}
	}
	good := `{"stamp":"` + d + `","author_name":"A","author_email":"a@x","committer_name":"C","committer_email":"c@x"}`
	if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := identcache.Load(path, stamp); !ok {
		t.Fatal("a valid cache does not load")
	}
}
