package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore/gitstoretest"
)

func TestMain(m *testing.M) {
	cleanup := gitstoretest.Hermetic()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func TestNormalizeArgs(t *testing.T) {
	a := newApp(IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	cases := []struct{ in, want []string }{
		{[]string{"ctx", "convention", "set", "git", "-f", "F"}, []string{"ctx", "convention", "set", "-f", "F", "--", "git"}},
		{[]string{"ctx", "knowledge", "get", "k", "--json"}, []string{"ctx", "knowledge", "get", "--json", "--", "k"}},
		{[]string{"ctx", "mcp", "serve", "--agent", "x"}, []string{"ctx", "--agent", "x", "mcp", "serve"}},
		{[]string{"ctx", "-C", "dir", "status"}, []string{"ctx", "-C", "dir", "status"}},
		{[]string{"ctx", "log", "-n", "3", "knowledge/a.md"}, []string{"ctx", "log", "-n", "3", "--", "knowledge/a.md"}},
		{[]string{"ctx", "knowledge", "set", "k", "--", "-text starting with a dash"}, []string{"ctx", "knowledge", "set", "--", "k", "-text starting with a dash"}},
		{[]string{"ctx", "decision", "add", "T", "--status=accepted"}, []string{"ctx", "decision", "add", "--status=accepted", "--", "T"}},
	}
	for _, c := range cases {
		if got := normalizeArgs(a, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("normalizeArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRunInProcess runs commands through Run with in-memory streams: stdin content, exit codes, and errors
// on stderr.
func TestRunInProcess(t *testing.T) {
	dir := gitstoretest.NewRepo(t)
	run := func(stdin string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(stdin), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
	if _, e, code := run("", "init", "--no-hooks"); code != ExitOK {
		t.Fatalf("init: %d %s", code, e)
	}
	if _, e, code := run("from stdin\n", "knowledge", "set", "notes"); code != ExitOK {
		t.Fatalf("set from stdin: %d %s", code, e)
	}
	if out, _, _ := run("", "knowledge", "get", "notes"); out != "from stdin\n" {
		t.Errorf("get: %q", out)
	}
	f := filepath.Join(t.TempDir(), "c.md")
	os.WriteFile(f, []byte("# conv\n"), 0o644)
	if _, e, code := run("", "convention", "set", "git", "-f", f); code != ExitOK {
		t.Fatalf("flags after positionals: %d %s", code, e)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"knowledge", "get", "missing"}, ExitNotFound, "Knowledge entry 'missing' not found"},
		{[]string{"knowledge", "set", "../x", "t"}, ExitUsage, "invalid key"},
		{[]string{"knowledge", "set"}, ExitUsage, "usage"},
		{[]string{"knowledge", "set", "k", "text", "-f", f}, ExitUsage, "not both"},
		{[]string{"decision", "add", "T", "--bogus"}, ExitUsage, "flag provided but not defined"},
		{[]string{"push"}, ExitFailure, "no remote"},
	} {
		_, e, code := run("", c.args...)
		if code != c.code || !strings.Contains(e, c.msg) {
			t.Errorf("ctx %s: exit %d (want %d), stderr %q (want %q)", strings.Join(c.args, " "), code, c.code, e, c.msg)
		}
	}
	var errb bytes.Buffer
	if code := Run(context.Background(), []string{"ctx", "-C", t.TempDir(), "status"}, IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb}); code != ExitNoStore {
		t.Errorf("outside a repository: exit %d %s", code, errb.String())
	}
}
