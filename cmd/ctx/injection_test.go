package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// remoteInjections are remote values that made git run a command (docs/security.md, "Trust boundaries:
// remotes and arguments"); marker is the file the command would create.
func remoteInjections(marker string) []string {
	return []string{
		"--upload-pack=touch " + marker + ";",
		"--receive-pack=touch " + marker + ";",
		"--exec=touch " + marker + ";",
		"-utouch " + marker,
		"ext::sh -c touch% " + marker,
		"fd::17",
		"ssh://-oProxyCommand=touch%20" + marker + "/x",
		"-oProxyCommand=touch " + marker + ":x",
	}
}

func noMarker(t *testing.T, marker, what string) {
	t.Helper()
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("%s ran the injected command: %s exists", what, marker)
	}
}

// TestOptionInjectionCLI: every command that takes a remote, a branch or a path refuses each injection
// with exit 2 and a message that says why, and the command never runs — also when the bad value was saved
// in ctx's config by an older version and is used by every sync.
func TestOptionInjectionCLI(t *testing.T) {
	_, origin := seededRemote(t, "origin.git")
	a := cloneURL(t, origin, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v")
	mustCtx(t, a, nil, 0, "push")
	marker := filepath.Join(t.TempDir(), "pwned")
	for _, bad := range remoteInjections(marker) {
		for _, args := range [][]string{
			{"pull", "--remote", bad},
			{"push", "--remote", bad},
			{"sync", "--remote", bad},
			{"config", "remote", "--", bad},
		} {
			r := ctxEnv(a, nil, args...)
			noMarker(t, marker, "ctx "+strings.Join(args, " "))
			if r.code != 2 || !strings.Contains(r.stderr, "refused") {
				t.Errorf("ctx %q: exit %d, want 2 with a refusal\n%s", args, r.code, r.stderr)
			}
		}
		fresh := cloneURL(t, origin, "fresh")
		r := ctxEnv(fresh, nil, "init", "--no-hooks", "--remote", bad)
		noMarker(t, marker, "ctx init --remote")
		if r.code != 2 || !strings.Contains(r.stderr, "refused") {
			t.Errorf("ctx init --remote %q: exit %d\n%s", bad, r.code, r.stderr)
		}
		// `ctx remote` only prints; the pre-push hook gets the remote from git.
		ctxEnv(a, nil, "remote", "--remote", bad)
		ctxEnv(a, nil, "hooks", "run", "pre-push", bad, bad)
		noMarker(t, marker, "ctx remote / pre-push hook")
	}
	if got := mustCtx(t, a, nil, 0, "config", "remote").stdout; strings.TrimSpace(got) != "" {
		t.Errorf("a refused remote was saved: %q", got)
	}

	// A value saved by an older ctx is refused at every sync.
	cfg := filepath.Join(a, ".git", "ctx", "config.json")
	bad := "--upload-pack=touch " + marker + ";"
	if err := os.WriteFile(cfg, []byte(`{"branch":"ctx","remote":"`+bad+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"pull", "push", "sync"} {
		r := ctxEnv(a, nil, cmd)
		noMarker(t, marker, "ctx "+cmd+" with a saved remote")
		if r.code != 2 || !strings.Contains(r.stderr, "refused") {
			t.Errorf("ctx %s with a saved bad remote: exit %d\n%s", cmd, r.code, r.stderr)
		}
	}
	if err := os.WriteFile(cfg, []byte(`{"branch":"ctx"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A branch name and a log path are never options either.
	fresh := cloneURL(t, origin, "branchy")
	for _, branch := range []string{"--upload-pack=touch " + marker, "-x", "a..b", "x.lock"} {
		r := ctxEnv(fresh, nil, "init", "--no-hooks", "--branch", branch)
		if r.code != 2 || !strings.Contains(r.stderr, "invalid branch name") {
			t.Errorf("ctx init --branch %q: exit %d\n%s", branch, r.code, r.stderr)
		}
	}
	ctxEnv(a, nil, "log", "--", "--output="+marker)
	noMarker(t, marker, "ctx log PATH")

	// The user's own git config may allow a command transport: then ctx hands it to git.
	testenv.Git(t, a, "config", "protocol.ext.allow", "always")
	ran := filepath.Join(t.TempDir(), "allowed")
	ctxEnv(a, nil, "pull", "--remote", "ext::sh -c touch% "+ran)
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("ext:: allowed by the user's git config did not reach git")
	}
}
