package store_test

import (
	"testing"

	"github.com/ctx-dev/ctx/merge"
)

// mustMonth is the "YYYY/MM" month of a timestamp ctx wrote.
func mustMonth(t testing.TB, ts string) string {
	t.Helper()
	m, ok := merge.Month(ts)
	if !ok {
		t.Fatalf("timestamp %q does not parse", ts)
	}
	return m
}
