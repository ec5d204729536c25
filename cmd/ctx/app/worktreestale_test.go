package app

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// A write in a second worktree leaves the first one's .context/ behind; ctx status there brings it up to
// date and says so, rather than only "clean". A second status has nothing to bring.
func TestStatusSaysItRefreshedAStaleCheckout(t *testing.T) {
	dir := testenv.NewRepo(t)
	run := func(in string, args ...string) (string, string, int) {
		t.Helper()
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", in}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
	if _, e, code := run(dir, "init"); code != ExitOK {
		t.Fatalf("init: %s", e)
	}
	wt := filepath.Join(t.TempDir(), "wt2")
	testenv.Git(t, dir, "worktree", "add", "-q", "-b", "other", wt)
	if _, e, code := run(wt, "knowledge", "set", "fromwt2", "written in the second worktree"); code != ExitOK {
		t.Fatalf("set in wt2: %s", e)
	}
	out, e, code := run(dir, "status")
	if code != ExitOK || !strings.Contains(out, "was behind the context branch") || !strings.Contains(out, "brought up to date (1 file written") {
		t.Errorf("status in the first worktree: exit %d\n%s%s", code, out, e)
	}
	if out, _, _ := run(dir, "status"); strings.Contains(out, "brought up to date") {
		t.Errorf("second status says it refreshed again:\n%s", out)
	}
}
