package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/merge"
)

// TestStrategyKeepsSupersedeCycleOut: ours supersedes 3 by 4, theirs 4 by 3 (4 later). The merge keeps
// theirs' supersede and records 3's as a conflict whose lost version closes the cycle (docs/merge.md
// "Supersede cycles"); --strategy ours, which would take that lost version, is refused naming the
// decisions, --strategy theirs decides it.
func TestStrategyKeepsSupersedeCycleOut(t *testing.T) {
	const p3, p4 = "decisions/0003-d.md", "decisions/0004-d.md"
	dec := func(n, date, extra string) []byte {
		return []byte("---\nid: " + n + "\ntitle: D" + n + "\n" + extra + "date: \"" + date + "\"\n---\n## Decision\n\nD" + n + ".\n")
	}
	d3, d4 := "2026-11-01T10:00:00Z", "2026-11-02T10:00:00Z"
	base := merge.Files{p3: dec("3", d3, "status: accepted\n"), p4: dec("4", d4, "status: accepted\n")}
	ours := merge.Files{p3: dec("3", d3, "status: superseded\nsuperseded_by: 4\n"), p4: dec("4", d4, "supersedes: [3]\nstatus: accepted\n")}
	theirs := merge.Files{p3: dec("3", d3, "supersedes: [4]\nstatus: accepted\n"), p4: dec("4", d4, "status: superseded\nsuperseded_by: 3\n")}
	for _, st := range []Strategy{StrategyOurs, StrategyTheirs} {
		m := merge.Tree(base, ours, theirs)
		if len(m.Conflicts) != 1 {
			t.Fatalf("conflicts: %+v", m.Conflicts)
		}
		decided, err := applyStrategy(&m, st, ours, theirs)
		if st == StrategyOurs {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "supersede cycle") || !strings.Contains(err.Error(), "3 -> 4 -> 3") || !strings.Contains(err.Error(), "without --strategy") {
				t.Errorf("--strategy ours: %v (decided %d)", err, len(decided))
			}
			continue
		}
		if err != nil || len(decided) != 1 || strings.Contains(string(m.Files[p3]), "superseded_by") {
			t.Errorf("--strategy theirs: %v, decided %d, 3:\n%s", err, len(decided), m.Files[p3])
		}
	}
}
