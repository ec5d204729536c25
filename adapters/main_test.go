package adapters

import (
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestMain runs the tests in testenv's hermetic environment: no user or system git configuration, a
// fixed identity, a private HOME.
func TestMain(m *testing.M) { testenv.Main(m) }
