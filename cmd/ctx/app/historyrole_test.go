package app

import (
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestListEventsRefusesUnknownRole: `ctx list events --role` takes the roles MCP query_events takes
// (case-sensitive); another is a usage error (exit 2), never a silently empty stream.
func TestListEventsRefusesUnknownRole(t *testing.T) {
	run := runIn(testenv.NewRepo(t))
	for _, role := range []string{"nobody", "USER"} {
		if _, e, code := run("list", "events", "--role", role); code != ExitUsage || !strings.Contains(e, "unknown role") {
			t.Errorf("--role %s: exit %d, %q", role, code, e)
		}
	}
	if _, e, code := run("list", "events", "--role", "user"); code == ExitUsage {
		t.Errorf("--role user: %q", e)
	}
}
