//go:build ctxfault

package gitstore

import (
	"os"
	"time"
)

// FaultPoint, in a binary built with -tags ctxfault (crash tests only), stops the process for good when
// $CTX_FAULT is name or name:detail, after creating the file $CTX_FAULT_READY (if set) so that the test
// knows where it stands and can kill it with SIGKILL.
func FaultPoint(name, detail string) {
	want := os.Getenv("CTX_FAULT")
	if want == "" || (want != name && want != name+":"+detail) {
		return
	}
	if p := os.Getenv("CTX_FAULT_READY"); p != "" {
		_ = os.WriteFile(p, []byte(name+":"+detail+"\n"), 0o644)
	}
	for {
		time.Sleep(time.Hour)
	}
}
