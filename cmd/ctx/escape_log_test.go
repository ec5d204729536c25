package main_test

import (
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestNoEscapeSequencesInCommits: a task holding terminal escape sequences (OSC
// sets the window title, CSI clears the screen) never reaches a commit message of the context branch,
// which `git log` prints raw to a teammate's terminal; a --session value holding one is refused. Found by a
// new user.
func TestNoEscapeSequencesInCommits(t *testing.T) {
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	// A decision title is one line without control characters: refused (exit 2). A task is free text that
	// a commit's summary quotes: escaped there.
	run(t, dir, 2, "decision", "add", "Evil \x1b]0;PWNED\a\x1b[31mRED\u009b2J", "--context", "c", "--decision", "d", "--consequences", "q")
	run(t, dir, 0, "activity", "check-in", "Evil \x1b]0;PWNED\a\x1b[31mRED\u009b2J")
	// A --session value is a key: one holding a control character is refused (exit 2), nothing written.
	run(t, dir, 2, "--session", "s\x1b[2J", "knowledge", "set", "k", "v")
	run(t, dir, 0, "--session", "s", "knowledge", "set", "k", "v")
	msgs := testenv.Git(t, dir, "log", "--format=%B", "ctx")
	for _, bad := range []string{"\x1b", "\a", "\u009b"} {
		if strings.Contains(msgs, bad) {
			t.Errorf("a commit message holds %q:\n%q", bad, msgs)
		}
	}
	if !strings.Contains(msgs, "Evil") || !strings.Contains(msgs, "Ctx-Session: s") {
		t.Errorf("the messages lost their text:\n%s", msgs)
	}
}

// TestWarnWhenCtxNotOnPath: the git hooks run `ctx` by name; ctx init and ctx hooks install say so when
// none is on PATH (they did nothing but install hooks that skip their work). Found by a new user after
// make install PREFIX=... into a folder not on PATH.
func TestWarnWhenCtxNotOnPath(t *testing.T) {
	dir := testenv.NewRepo(t)
	gitDir := strings.TrimSpace(testenv.Git(t, "", "--exec-path"))
	path := "PATH=/usr/bin:/bin:" + gitDir
	r := ctxEnv(dir, []string{path}, "init")
	if r.code != 0 || !strings.Contains(r.stderr, "no ctx on PATH") {
		t.Errorf("ctx init without ctx on PATH: exit %d, stderr %q", r.code, r.stderr)
	}
	r = ctxEnv(dir, []string{path}, "hooks", "install")
	if r.code != 0 || !strings.Contains(r.stderr, "no ctx on PATH") {
		t.Errorf("ctx hooks install without ctx on PATH: exit %d, stderr %q", r.code, r.stderr)
	}
}
