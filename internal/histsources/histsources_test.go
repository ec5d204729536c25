package histsources

import (
	"strings"
	"testing"
)

// TestCheckProvider : a configured root of a provider ctx does not know is refused, naming
// the entry and not the rejected name; every provider of Providers is accepted.
func TestCheckProvider(t *testing.T) {
	for _, p := range Providers {
		if err := Check([]Source{{Root: "r", Provider: p, Path: "/tmp/x"}}); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{"nosuch", "", "Codex", "codex\n"} {
		err := Check([]Source{{Root: "lap", Provider: p, Path: "/tmp/x"}})
		if err == nil || !strings.Contains(err.Error(), "history source lap: the provider is not one of claude-code") || (p != "" && strings.Contains(err.Error(), p+" ")) {
			t.Errorf("provider %q: %v", p, err)
		}
	}
}
