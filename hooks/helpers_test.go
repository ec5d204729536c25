package hooks

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/hooks")

const goldenDir = "../testdata/hooks"

// TestMain runs the tests in testenv's hermetic environment (which also clears ctx's switches
// CTX_HOOKS, CTX_IN_HOOK and CTX_HOOK_TIMEOUT); -update is parsed by m.Run.
func TestMain(m *testing.M) { testenv.Main(m) }

// pathWithoutCtx is $PATH without any directory that holds a ctx binary.
func pathWithoutCtx() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(d, "ctx")); err == nil && !fi.IsDir() {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// fakeCtx writes a shell script named ctx into a new bin dir. It appends its
// argv (one line) to the returned log file, then runs body.
func fakeCtx(tb testing.TB, body string) (pathEnv, logFile string) {
	tb.Helper()
	bin := tb.TempDir()
	logFile = filepath.Join(bin, "ctx.log")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> '%s'\n%s\n", logFile, body)
	if err := os.WriteFile(filepath.Join(bin, "ctx"), []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + pathWithoutCtx(), logFile
}

// gitIn runs git in dir with PATH=pathEnv ("" = $PATH without ctx), bounded
// by 8 s, and fails the test on error.
func gitIn(tb testing.TB, dir, pathEnv string, args ...string) string {
	tb.Helper()
	out, err := gitTry(dir, pathEnv, args...)
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func gitTry(dir, pathEnv string, args ...string) (string, error) {
	if pathEnv == "" {
		pathEnv = pathWithoutCtx()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+pathEnv)
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out: %w", ctx.Err())
	}
	return strings.TrimSpace(out.String()), err
}

// newRepo makes testenv.NewRepo's repository with a second commit on main that adds a.txt.
func newRepo(tb testing.TB) string {
	tb.Helper()
	dir := testenv.NewRepo(tb)
	writeFile(tb, filepath.Join(dir, "a.txt"), "a\n", 0o644)
	gitIn(tb, dir, "", "add", "a.txt")
	gitIn(tb, dir, "", "commit", "-q", "-m", "first")
	return dir
}

func writeFile(tb testing.TB, p, content string, mode os.FileMode) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		tb.Fatal(err)
	}
}

func readFile(tb testing.TB, p string) string {
	tb.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func readLog(tb testing.TB, p string) []string {
	tb.Helper()
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// golden compares got with testdata/hooks/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test ./hooks -update)", p, err)
	}
	if string(want) != got {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// snapshot lists every file under dir with its mode and content.
func snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	m := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			m[p] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m[p] = fi.Mode().String() + "\n" + string(b)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	return m
}
