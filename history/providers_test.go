package history

import (
	"slices"
	"testing"

	"github.com/ctx-dev/ctx/internal/histsources"
)

// TestConfiguredProvidersAreProviders: the providers a root may be configured for (histsources, standard
// library only for the lean front) are this package's, in its order.
func TestConfiguredProvidersAreProviders(t *testing.T) {
	var names []string
	for _, p := range Providers {
		names = append(names, string(p))
	}
	if !slices.Equal(names, histsources.Providers) {
		t.Fatalf("histsources.Providers %v, history.Providers %v", histsources.Providers, names)
	}
}
