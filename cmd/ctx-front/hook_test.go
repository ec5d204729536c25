package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// gitWith runs git in dir with PATH=path first, and fails the test on an error.
func gitWith(t *testing.T, dir, path string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkedOut is what a refresh leaves in a worktree: the files of .context/ other than the record (path ->
// content), the record without its stat data and generation (which name this copy's inodes and times), and
// the hooks' stamp.
func checkedOut(t *testing.T, dir string) (files map[string]string, record, stamp string) {
	t.Helper()
	files = map[string]string{}
	root := filepath.Join(dir, ".context")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasPrefix(rel, ".ctx-checkout") {
			return nil
		}
		b, err := os.ReadFile(p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ".ctx-checkout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	delete(rec, "gen")
	if fs, ok := rec["files"].(map[string]any); ok {
		for _, f := range fs {
			if m, ok := f.(map[string]any); ok {
				delete(m, "stat")
			}
		}
	}
	rb, _ := json.Marshal(rec)
	if log, err := os.ReadFile(filepath.Join(root, ".ctx-checkout.log")); err == nil {
		rb = append(rb, log...) // changes appended since the record was written whole
	}
	s, err := os.ReadFile(filepath.Join(dir, ".git", "ctx-hook-stamp"))
	if err != nil {
		t.Fatal(err)
	}
	return files, string(rb), string(s)
}

// TestHookShimStartsFull: with the pair installed side by side, the post-checkout shim starts ctx-full
// itself (the front never runs), and what the hook leaves after the context branch moved (the files of
// .context/, the checkout record, the stamp, no journal left over, a clean ctx status) is what the same
// hook leaves when it reaches ctx-full through the front, as hooks installed from a ctx reached through a
// symbolic link do: two copies of one repository, the same moves, real git checkouts.
func TestHookShimStartsFull(t *testing.T) {
	base := testenv.NewRepo(t)
	full(t, base, "init")
	for _, k := range []string{"a", "b", "c"} {
		full(t, base, "knowledge", "set", k, "entry "+k)
	}
	full(t, base, "hooks", "install")
	parent := t.TempDir()
	direct, viaFront := filepath.Join(parent, "direct"), filepath.Join(parent, "front")
	for _, d := range []string{direct, viaFront} {
		if out, err := exec.Command("cp", "-a", base, d).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
	}
	// direct: a ctx that logs and runs the real front, beside the real ctx-full; the shim must start the
	// latter. viaFront: a link to the front from another folder (no ctx-full beside the link).
	pair := t.TempDir()
	frontLog := filepath.Join(pair, "front.log")
	script := "#!/bin/sh\necho \"$*\" >> '" + frontLog + "'\nexec '" + filepath.Join(bin, "ctx") + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(pair, "ctx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bin, "ctx-full"), filepath.Join(pair, "ctx-full")); err != nil {
		t.Fatal(err)
	}
	links := t.TempDir()
	if err := os.Symlink(filepath.Join(bin, "ctx"), filepath.Join(links, "ctx")); err != nil {
		t.Fatal(err)
	}
	path := map[string]string{direct: pair, viaFront: links}

	tip := strings.TrimSpace(gitWith(t, base, links, "rev-parse", "refs/heads/ctx"))
	steps := []struct{ ref, to string }{
		{tip + "~1", "other"}, // c disappears
		{tip, "main"},         // c comes back
		{tip + "~2", "other"}, // b and c disappear
		{tip + "~2", "main"},  // nothing moved: the shim skips ctx
	}
	gitWith(t, direct, pair, "branch", "other")
	gitWith(t, viaFront, links, "branch", "other")
	for i, st := range steps {
		for _, d := range []string{direct, viaFront} {
			gitWith(t, d, path[d], "update-ref", "refs/heads/ctx", st.ref)
			gitWith(t, d, path[d], "checkout", "-q", st.to)
			if _, err := os.Stat(filepath.Join(d, ".git", "ctx", "checkout-journal.json")); err == nil {
				t.Errorf("step %d: %s: the refresh journal is left over", i, filepath.Base(d))
			}
			if out := full(t, d, "status"); !strings.Contains(out, "/.context, clean\n") {
				t.Errorf("step %d: %s: ctx status after the hook:\n%s", i, filepath.Base(d), out)
			}
		}
		f1, r1, s1 := checkedOut(t, direct)
		f2, r2, s2 := checkedOut(t, viaFront)
		if len(f1) != len(f2) {
			t.Errorf("step %d: files %v, through the front %v", i, f1, f2)
		}
		for p, c := range f2 {
			if f1[p] != c {
				t.Errorf("step %d: %s = %q, through the front %q", i, p, f1[p], c)
			}
		}
		if r1 != r2 || s1 != s2 {
			t.Errorf("step %d: record or stamp differ:\n%s\n%s\nthrough the front:\n%s\n%s", i, r1, s1, r2, s2)
		}
		_, hasC := f1[filepath.Join("knowledge", "c.md")]
		if want := st.ref == tip; hasC != want {
			t.Errorf("step %d: knowledge/c.md checked out %v, want %v", i, hasC, want)
		}
	}
	if b, err := os.ReadFile(frontLog); err == nil {
		t.Errorf("the shim started the front beside ctx-full: %q", b)
	}
}
