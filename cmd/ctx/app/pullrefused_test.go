package app

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// After a pull that refused the remote's tip (exit 5), ctx status does not say "0 ahead, 0 behind" as if
// in step with the remote: it says the last pull refused the remote's tip, and why, and --json carries
// pull_refused. A later accepted fetch clears it.
func TestStatusAfterRefusedPull(t *testing.T) {
	bare := testenv.BareRemote(t)
	dir := testenv.NewRepo(t)
	testenv.Git(t, dir, "remote", "add", "origin", bare)
	run := func(args ...string) (string, string, int) {
		t.Helper()
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
	for _, args := range [][]string{{"init"}, {"knowledge", "set", "arch", "orig"}, {"push"}} {
		if _, e, code := run(args...); code != ExitOK {
			t.Fatalf("ctx %v: %d %s", args, code, e)
		}
	}
	// A teammate pushes with plain git a tip ctx refuses (a symbolic link among the knowledge).
	tip := testenv.Git(t, dir, "rev-parse", "ctx")
	tree := testenv.WithEntry(t, dir, testenv.Git(t, dir, "rev-parse", "ctx^{tree}"), []string{"knowledge", "link.md"}, "120000",
		testenv.Blob(t, dir, "../../.git/config"))
	bad := testenv.CommitTree(t, dir, tree, tip, "teammate's git")
	testenv.Git(t, dir, "push", "-q", bare, bad+":refs/heads/ctx")
	if _, e, code := run("pull"); code != ExitTransfer {
		t.Fatalf("pull of a hostile tip: exit %d, want %d: %s", code, ExitTransfer, e)
	}
	out, e, code := run("status")
	if code != ExitOK || !strings.Contains(out, "the last pull") || !strings.Contains(out, "refused its tip "+bad[:12]) {
		t.Errorf("status after a refused pull: exit %d\n%s%s", code, out, e)
	}
	js, _, _ := run("status", "--json")
	var st struct {
		PullRefused *struct{ Remote, Tip, Reason string } `json:"pull_refused"`
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil || st.PullRefused == nil || st.PullRefused.Tip != bad || st.PullRefused.Remote != "origin" || st.PullRefused.Reason == "" {
		t.Errorf("status --json pull_refused: %+v %v\n%s", st.PullRefused, err, js)
	}
	// The remote back to an acceptable tip: the next pull accepts it and the record goes.
	testenv.Git(t, dir, "push", "-q", "-f", bare, tip+":refs/heads/ctx")
	if _, e, code := run("pull"); code != ExitOK {
		t.Fatalf("pull: exit %d: %s", code, e)
	}
	if out, _, _ := run("status"); strings.Contains(out, "refused") {
		t.Errorf("status after an accepted pull still says refused:\n%s", out)
	}
}
