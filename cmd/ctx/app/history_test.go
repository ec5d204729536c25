package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/testenv"
)

func historyCorpus(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CTX_HISTORY_CORPUS"), "../../../../shared/corpus/agent-history", "/work/shared/corpus/agent-history"} {
		if c == "" {
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	t.Skip("agent-history corpus not found (set CTX_HISTORY_CORPUS)")
	return ""
}

// TestHistoryCLI: import a provider's copied root with --path, search it, show the session and an event;
// the index is under the git common dir and nothing reaches the repository's refs or working tree.
func TestHistoryCLI(t *testing.T) {
	corpus := historyCorpus(t)
	dir := testenv.NewRepo(t)
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb})
		return out.String(), errb.String(), code
	}
	refsBefore, _ := exec.Command("git", "-C", dir, "for-each-ref").Output()

	out, e, code := run("history", "import", "--provider", "claude-code", "--path", filepath.Join(corpus, "claude-code"), "--json")
	if code != ExitOK {
		t.Fatalf("import: %d %s", code, e)
	}
	var st history.ImportStats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Sources != 9 || st.Imported != 9 || st.Failed != 0 || st.BadLines != 0 || st.Events == 0 {
		t.Fatalf("import stats %+v", st)
	}
	if fi, err := os.Stat(filepath.Join(dir, ".git", "ctx", "history", "index.db")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index: %v %v", fi, err)
	}
	if out, _, _ := run("history", "import", "--provider", "claude-code", "--path", filepath.Join(corpus, "claude-code")); !strings.Contains(out, "9 unchanged") {
		t.Errorf("second import: %q", out)
	}

	out, e, code = run("history", "search", "hello", "function", "--json")
	if code != ExitOK {
		t.Fatalf("search: %d %s", code, e)
	}
	var res history.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Session.NativeID != "test-session-id" && res.Hits[0].Session.NativeID != "sample_session" {
		t.Fatalf("search hits %+v", res.Hits)
	}
	hit := res.Hits[0]
	if out, _, code := run("history", "search", "hello", "function"); code != ExitOK || !strings.Contains(out, hit.Event.ID) {
		t.Errorf("text search: %d %q", code, out)
	}

	out, e, code = run("history", "show", "session", hit.Session.ID[:8])
	if code != ExitOK || !strings.Contains(out, "Create a hello world function") || !strings.Contains(out, "9 events") {
		t.Fatalf("show session: %d %s %q", code, e, out)
	}
	out, _, code = run("history", "show", "session", hit.Session.ID, "--json", "--max-events", "2")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != ExitOK || len(lines) != 3 {
		t.Fatalf("show session --json --max-events 2: %d %q", code, out)
	}
	out, _, code = run("history", "show", "event", hit.Event.ID, "--window", "1")
	if code != ExitOK || !strings.Contains(out, "> #") {
		t.Fatalf("show event: %d %q", code, out)
	}

	for _, bad := range [][]string{
		{"history", "import", "--provider", "nope"},
		{"history", "import", "--path", corpus},
		{"history", "search", "x", "--scope", "everything"},
		{"history", "show", "session", "zz"},
	} {
		if _, _, code := run(bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, ExitUsage)
		}
	}

	refsAfter, _ := exec.Command("git", "-C", dir, "for-each-ref").Output()
	status, _ := exec.Command("git", "-C", dir, "status", "--porcelain", "--ignored").Output()
	if string(refsBefore) != string(refsAfter) || len(bytes.TrimSpace(status)) != 0 {
		t.Errorf("the import touched the repository: refs %q → %q, status %q", refsBefore, refsAfter, status)
	}
}
