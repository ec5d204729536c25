package gitstore_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// injections are remote values that would make git run a command: each must be refused before git runs
// (marker is replaced by a file the command would create).
func injections(marker string) []string {
	return []string{
		"--upload-pack=touch " + marker + ";",
		"--receive-pack=touch " + marker + ";",
		"--exec=touch " + marker + ";",
		"-utouch " + marker,
		"--config=core.sshCommand=touch " + marker,
		"ext::sh -c touch% " + marker,
		"EXT::sh -c touch% " + marker,
		"fd::17",
		"ssh://-oProxyCommand=touch%20" + marker + "/x",
		"ssh://user@-oProxyCommand=touch " + marker + "/x",
		"-oProxyCommand=touch " + marker + ":x",
		"origin\n--upload-pack=touch " + marker,
		"evil://host/" + marker,
	}
}

// TestCheckRemote: configured names and the URLs of git's transports pass; options, command transports
// and control characters are refused, and an agent may name configured remotes only.
func TestCheckRemote(t *testing.T) {
	dir := testenv.NewRepo(t)
	bare := testenv.BareRemote(t)
	testenv.Git(t, dir, "remote", "add", "origin", bare)
	testenv.Git(t, dir, "remote", "add", "team/backup", bare)
	r := open(t, dir)
	for _, ok := range []string{"origin", "team/backup", bare, "file://" + bare, "./relative.git", "../up.git",
		"https://example.com/x.git", "ssh://git@example.com/x.git", "git@example.com:org/x.git", "git://example.com/x"} {
		if err := r.CheckRemote(ok, gitstore.FromUser); err != nil {
			t.Errorf("CheckRemote(%q, user): %v", ok, err)
		}
	}
	for _, ok := range []string{"origin", "team/backup"} {
		if err := r.CheckRemote(ok, gitstore.FromAgent); err != nil {
			t.Errorf("CheckRemote(%q, agent): %v", ok, err)
		}
	}
	for _, bad := range []string{bare, "https://example.com/x.git", "nowhere"} {
		if err := r.CheckRemote(bad, gitstore.FromAgent); err == nil {
			t.Errorf("CheckRemote(%q, agent) accepted an unconfigured remote", bad)
		}
	}
	for _, bad := range injections(filepath.Join(t.TempDir(), "pwned")) {
		for _, origin := range []gitstore.RemoteOrigin{gitstore.FromUser, gitstore.FromAgent} {
			err := r.CheckRemote(bad, origin)
			var re *gitstore.RemoteError
			if !errors.As(err, &re) || !errors.Is(err, gitstore.ErrUnsafeRemote) || !strings.Contains(err.Error(), "refused") {
				t.Errorf("CheckRemote(%q, %d) = %v, want a RemoteError", bad, origin, err)
			}
		}
	}
	// The user's own git config may allow a command transport, for the user's own values only.
	testenv.Git(t, dir, "config", "protocol.ext.allow", "always")
	if err := r.CheckRemote("ext::sh -c true", gitstore.FromUser); err != nil {
		t.Errorf("ext allowed by protocol.ext.allow: %v", err)
	}
	if err := r.CheckRemote("ext::sh -c true", gitstore.FromAgent); err == nil {
		t.Errorf("an agent may use ext:: when the user allowed it")
	}
	if err := r.CheckRemote("fd::17", gitstore.FromUser); err == nil {
		t.Errorf("fd:: allowed by protocol.ext.allow")
	}
	testenv.Git(t, dir, "config", "protocol.allow", "always")
	if err := r.CheckRemote("fd::17", gitstore.FromUser); err != nil {
		t.Errorf("fd:: with protocol.allow always: %v", err)
	}
	if err := r.CheckRemote("--upload-pack=x", gitstore.FromUser); err == nil {
		t.Errorf("an option passes when protocol.allow is always")
	}
}

// TestFetchPushRefuseInjection: Fetch and Push refuse every injection before git runs; the command never
// runs (no marker file), and a valid call with a remote path that looks like an option is impossible.
func TestFetchPushRefuseInjection(t *testing.T) {
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	set(t, r, pub, "one", map[string]string{"knowledge/a.md": "a"})
	marker := filepath.Join(t.TempDir(), "pwned")
	for _, bad := range injections(marker) {
		if _, err := r.Fetch(bg, bad, "+refs/heads/ctx:refs/remotes/x/ctx", gitstore.TransferOptions{}); !errors.Is(err, gitstore.ErrUnsafeRemote) {
			t.Errorf("Fetch(%q) = %v", bad, err)
		}
		if err := r.Push(bg, bad, spec, gitstore.TransferOptions{}); !errors.Is(err, gitstore.ErrUnsafeRemote) {
			t.Errorf("Push(%q) = %v", bad, err)
		}
	}
	for _, badSpec := range []string{"--upload-pack=touch " + marker, "refs/heads/ctx:--exec=x", "refs/heads/ctx", "HEAD:refs/heads/x", "refs/heads/a..b:refs/heads/x"} {
		if _, err := r.Fetch(bg, testenv.BareRemote(t), badSpec, gitstore.TransferOptions{}); err == nil {
			t.Errorf("Fetch with refspec %q accepted", badSpec)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("an injected command ran: %s exists", marker)
	}
}

func TestValidRemoteName(t *testing.T) {
	for _, ok := range []string{"origin", "team/backup", "a-b_c.d", "über"} {
		if err := gitstore.ValidRemoteName(ok); err != nil {
			t.Errorf("ValidRemoteName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", "a..b", ".hidden", "x.lock", "a b", "a:b", "a\x01", "@", "a@{1}", "a/", "a~1", "a*"} {
		if err := gitstore.ValidRemoteName(bad); err == nil {
			t.Errorf("ValidRemoteName(%q) accepted", bad)
		}
	}
}

// TestValidBranchName: every name ValidBranchName accepts, git check-ref-format --branch accepts too (the
// real git CLI as the peer), and names git accepts but that git's own revision lookup reads as another
// ref first (HEAD, FETCH_HEAD, refs/heads/main, heads/x) are refused.
func TestValidBranchName(t *testing.T) {
	good := []string{"ctx", "context", "team/ctx", "ctx-2", "HEADS", "MY_HEADER", "head", "Fetch_HEAD", "refsx/y"}
	bad := []string{"", "HEAD", "FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "refs/heads/main",
		"refs/x", "heads/x", "tags/v1", "remotes/origin/main", "-x", "a..b", "a b", "x.lock", "@", "a@{1}", "a/", "a~1", "a*"}
	for _, name := range good {
		if err := gitstore.ValidBranchName(name); err != nil {
			t.Errorf("ValidBranchName(%q): %v", name, err)
		}
		if out, err := exec.Command("git", "check-ref-format", "--branch", name).CombinedOutput(); err != nil {
			t.Errorf("ValidBranchName accepts %q, git check-ref-format --branch refuses it: %s", name, out)
		}
	}
	for _, name := range bad {
		if err := gitstore.ValidBranchName(name); err == nil {
			t.Errorf("ValidBranchName(%q) accepted", name)
		}
	}
}
