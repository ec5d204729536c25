package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestLogIncludesMergedCommits: after B pulls A's writes into a merge, ctx log lists every commit of the
// branch, as git log does (A's included, not only B's first-parent line), and ctx log PATH finds A's
// commit of A's entry. Found by a new user: the audit trail left out every commit a merge brought in.
func TestLogIncludesMergedCommits(t *testing.T) {
	_, origin := seededRemote(t, "origin.git")
	a, b := cloneURL(t, origin, "a"), cloneURL(t, origin, "b")
	run(t, a, 0, "init", "--no-hooks")
	run(t, a, 0, "push")
	run(t, b, 0, "init", "--no-hooks")
	run(t, b, 0, "pull")
	for i := 0; i < 3; i++ {
		run(t, a, 0, "knowledge", "set", fmt.Sprintf("from-a-%d", i), "written on A")
		run(t, b, 0, "knowledge", "set", fmt.Sprintf("from-b-%d", i), "written on B")
	}
	run(t, a, 0, "push")
	run(t, b, 0, "pull")
	var log []struct {
		Commit, Key, Summary string
	}
	if err := json.Unmarshal([]byte(run(t, b, 0, "log", "--json")), &log); err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(testenv.Git(t, b, "rev-list", "ctx"))
	if len(log) != len(want) {
		t.Errorf("ctx log lists %d commits, git rev-list ctx %d", len(log), len(want))
	}
	got := map[string]bool{}
	for _, e := range log {
		got[e.Commit] = true
	}
	for _, h := range want {
		if !got[h] {
			t.Errorf("ctx log misses %s (%s)", h[:12], testenv.Git(t, b, "log", "-1", "--format=%s", h))
		}
	}
	one := run(t, b, 0, "log", "knowledge/from-a-1.md")
	if !strings.Contains(one, "from-a-1") || strings.Contains(one, "from-b-") {
		t.Errorf("ctx log knowledge/from-a-1.md:\n%s", one)
	}
}
