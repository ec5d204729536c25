package app

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// gcSettings reads the collector's percent and soft memory limit without changing them.
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// deferGC turns the collector off below startHeap, and the first collection puts the defaults back; with
// GOGC set it changes nothing.
func TestDeferGC(t *testing.T) {
	testenv.Unsetenv(t, "GOGC", "GOMEMLIMIT")
	defer normalGC()
	deferGC()
	if p, l := gcSettings(); p != -1 || l != startHeap || !gcDeferred.Load() {
		t.Fatalf("after deferGC: GOGC %d, limit %d", p, l)
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for gcDeferred.Load() && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	if p, l := gcSettings(); p != 100 || l != math.MaxInt64 || gcDeferred.Load() {
		t.Fatalf("after the first collection: GOGC %d, limit %d, deferred %v", p, l, gcDeferred.Load())
	}

	t.Setenv("GOGC", "50")
	deferGC()
	if p, l := gcSettings(); p != 100 || l != math.MaxInt64 || gcDeferred.Load() {
		t.Fatalf("with GOGC set: GOGC %d, limit %d", p, l)
	}
}
