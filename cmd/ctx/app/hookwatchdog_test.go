package app

import (
	"testing"
	"time"
)

// TestHookWatchdog: the watchdog that replaced timeout(1) calls stop once its time has passed, and never
// after it was cancelled.
func TestHookWatchdog(t *testing.T) {
	fired := make(chan struct{})
	cancel := hookWatchdog(time.Millisecond, func() { close(fired) })
	defer cancel()
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog never stopped the hook")
	}

	late := make(chan struct{}, 1)
	cancel2 := hookWatchdog(50*time.Millisecond, func() { late <- struct{}{} })
	cancel2()
	// A watchdog cancelled in time: a later one (the same length, started after it) fires first.
	after := make(chan struct{})
	defer hookWatchdog(100*time.Millisecond, func() { close(after) })()
	<-after
	select {
	case <-late:
		t.Error("a cancelled watchdog stopped the hook")
	default:
	}
}
