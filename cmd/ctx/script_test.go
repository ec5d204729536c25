package main_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the CLI acceptance tests in testdata/script/*.txtar, one script per command family,
// with the real git CLI. "ctx" in a script is this test binary running app.Main in-process
// (testscript.Main in TestMain), so the scripts need no build. Each script starts in an empty $WORK with
// a hermetic git configuration.
//
// Besides testscript's commands, a script has
//
//	exits CODE PROGRAM [ARGS...]
//
// which runs PROGRAM and fails unless it exits with CODE (its output is then checked with stdout and
// stderr as after exec).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// testenv's hermetic environment, with a HOME of the script's own in $WORK/home.
			home := filepath.Join(env.WorkDir, "home")
			if err := testenv.WriteConfig(home); err != nil {
				return err
			}
			for k, v := range testenv.Vars(home) {
				env.Setenv(k, v)
			}
			env.Setenv("CTX_MACHINE", "laptop")
			env.Setenv("PATH", scriptPath)
			env.Setenv("CORPUS", filepath.Join(mustAbs("../../testdata/corpus")))
			// Under -race, ctx (this test binary) would sleep a second at every exit waiting for race
			// reports (the race runtime's atexit_sleep_ms): a race still fails the command, exit 66.
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": exits},
	})
}

// exits is the script command `exits CODE PROGRAM [ARGS...]`.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: CODE %q is no number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s: exit %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return a
}
