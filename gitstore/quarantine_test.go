package gitstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestSweepQuarantines: taking the ctx lock removes the quarantine refs of a process that is gone (its
// holder file's flock is free: what a kill -9 leaves), and only those: a quarantine a live process holds
// (HoldQuarantine) and one without a holder file (an older ctx, maybe running) stay.
func TestSweepQuarantines(t *testing.T) {
	dir, r, a, b := twoCommits(t)
	for _, ref := range []string{
		"refs/ctx/incoming/dead/shared", "refs/ctx/incoming/dead/machines/m-1",
		"refs/ctx/incoming/live/shared", "refs/ctx/incoming/old/shared", "refs/ctx/incoming/deadflat",
	} {
		testenv.Git(t, dir, "update-ref", ref, b.String())
	}
	_ = a
	release := r.HoldQuarantine("live")
	defer release()
	// What a killed process leaves: the holder files, their flocks gone with the process.
	for _, name := range []string{"dead", "deadflat"} {
		p := filepath.Join(dir, ".git", "ctx", "incoming", name)
		writeFile(t, p, "")
	}
	unlock, err := r.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	got := testenv.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/incoming/")
	want := "refs/ctx/incoming/live/shared\nrefs/ctx/incoming/old/shared"
	if got != want {
		t.Errorf("quarantine refs after the sweep:\n%s\nwant:\n%s", got, want)
	}
	for _, p := range []string{"refs/ctx/incoming/dead", "ctx/incoming/dead", "ctx/incoming/deadflat"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", filepath.FromSlash(p))); err == nil {
			t.Errorf("%s left", p)
		}
	}
	// Released, the live one goes at the next lock as well once its refs are dropped by its owner; here
	// the owner is gone without dropping them (its holder file kept): swept.
	release()
	writeFile(t, filepath.Join(dir, ".git", "ctx", "incoming", "live"), "")
	unlock, err = r.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if got := testenv.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ctx/incoming/"); got != "refs/ctx/incoming/old/shared" {
		t.Errorf("after the holder left: %s", got)
	}
	fsck(t, dir)
}
