package safepath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFirstLink(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a/b", "real"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a/file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "a/link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for p, want := range map[string]string{
		"a/b/c": "", "a/missing/x": "", "a/file/below": "", "a/file": "",
		"a/link": "a/link", "a/link/x/y": "a/link",
	} {
		got, err := FirstLink(root, p)
		if err != nil || got != want {
			t.Errorf("FirstLink(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
}
