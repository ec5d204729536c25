package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// This file proves that ctx's transfers work over the transports a user's git works over
// (docs/architecture.md "Sync"): a path, file://, git://, smart HTTP with credential helpers,
// url.<base>.insteadOf, and that refusals, unreachable remotes, stalled servers, shallow and single-branch
// clones and racing pushers behave.

// result is one run of the ctx binary.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// ctxEnv runs the ctx binary in dir with extra environment variables (KEY=VALUE; an entry "KEY=" with
// an empty value removes KEY) and a hard limit of two minutes.
func ctxEnv(dir string, env []string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ctxBin, args...)
	cmd.Dir = dir
	cmd.Env = testenv.Environ(env)
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code = -1
		r.stderr += "\n(run: " + err.Error() + ")"
	}
	return r
}

// mustCtx runs ctx and fails the test unless the exit code is want.
func mustCtx(t testing.TB, dir string, env []string, want int, args ...string) result {
	t.Helper()
	r := ctxEnv(dir, env, args...)
	if r.code != want {
		t.Fatalf("ctx %s (in %s): exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), dir, r.code, want, r.stdout, r.stderr)
	}
	return r
}

// seededRemote is a bare repository with one commit on main, in a fresh folder base; it returns the
// folder and the repository's path (base/name).
func seededRemote(t testing.TB, name string) (base, path string) {
	t.Helper()
	base = t.TempDir()
	path = filepath.Join(base, name)
	testenv.Git(t, "", "init", "-q", "--bare", "-b", "main", path)
	seed := testenv.NewRepo(t)
	testenv.Git(t, seed, "push", "-q", path, "main")
	return base, path
}

// cloneURL clones url with the system git (extra `-c k=v` options are written to the clone's config).
func cloneURL(t testing.TB, url, name string, opts ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	testenv.Git(t, "", append(append([]string{"clone", "-q"}, opts...), url, dir)...)
	return dir
}

// roundTrip is the two-machine path over one URL: A inits, writes and pushes; B clones, pulls and reads;
// both write; B pushes, A pushes (to its machine ref; the shared branch B moved stays: docs/sync.md), A
// syncs (merges B's write, moves the shared branch), B pulls; both end at one tip holding every entry,
// equal to the remote's.
func roundTrip(t *testing.T, a, b string, env []string) {
	t.Helper()
	mustCtx(t, a, env, 0, "init", "--no-hooks")
	mustCtx(t, a, env, 0, "knowledge", "set", "from-a", "written on A")
	mustCtx(t, a, env, 0, "push")
	mustCtx(t, b, env, 0, "pull")
	if got := mustCtx(t, b, env, 0, "knowledge", "get", "from-a").stdout; got != "written on A\n" {
		t.Fatalf("B reads %q", got)
	}
	mustCtx(t, b, env, 0, "knowledge", "set", "from-b", "written on B")
	mustCtx(t, a, env, 0, "knowledge", "set", "again-a", "A again")
	mustCtx(t, b, env, 0, "push")
	if out := mustCtx(t, a, env, 0, "push").stdout; !strings.Contains(out, "refs/heads/ctx not moved: it has commits this machine has not merged yet") {
		t.Errorf("A's push should have left the shared branch to B's:\n%s", out)
	}
	if out := mustCtx(t, a, env, 0, "sync").stdout; !strings.Contains(out, "merged") || !strings.Contains(out, "push origin: refs/heads/ctx at") {
		t.Errorf("A's sync should have merged B's write and moved the shared branch:\n%s", out)
	}
	mustCtx(t, b, env, 0, "pull")
	ta := testenv.Git(t, a, "rev-parse", "refs/heads/ctx")
	tb := testenv.Git(t, b, "rev-parse", "refs/heads/ctx")
	if ta != tb {
		t.Fatalf("tips differ: A %s, B %s", ta, tb)
	}
	remoteTip := testenv.GitEnv(t, a, env, "ls-remote", "origin", "refs/heads/ctx")
	if !strings.HasPrefix(remoteTip, ta) {
		t.Fatalf("remote's ctx is %q, want %s", remoteTip, ta)
	}
	for _, dir := range []string{a, b} {
		for _, k := range []string{"from-a", "from-b", "again-a"} {
			mustCtx(t, dir, env, 0, "knowledge", "get", k)
		}
	}
}

func TestRemotePathAndFileURL(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")           // a plain path
	b := cloneURL(t, "file://"+remote, "b") // a file:// URL
	roundTrip(t, a, b, nil)
	if u := testenv.Git(t, b, "remote", "get-url", "origin"); !strings.HasPrefix(u, "file://") {
		t.Fatalf("B's origin is %s", u)
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startGitDaemon serves base with a real `git daemon` (push enabled) on 127.0.0.1 and returns its URL
// prefix, git://127.0.0.1:PORT/.
func startGitDaemon(t testing.TB, base string) string {
	t.Helper()
	daemon := filepath.Join(testenv.Git(t, "", "--exec-path"), "git-daemon")
	if _, err := os.Stat(daemon); err != nil {
		t.Skipf("no git-daemon in git's exec path: git:// not tested")
	}
	for attempt := 0; attempt < 3; attempt++ {
		port := freePort(t)
		// git-daemon itself (not the `git daemon` wrapper, whose child would outlive a kill), in its own
		// process group so that the cleanup ends the daemon and the children serving connections.
		cmd := exec.Command(daemon, "--export-all", "--enable=receive-pack", "--reuseaddr",
			"--base-path="+base, fmt.Sprintf("--port=%d", port), "--listen=127.0.0.1", base)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.WaitDelay = 2 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatalf("git daemon: %v", err)
		}
		pid := cmd.Process.Pid
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-exited
		})
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			select {
			case <-exited:
				deadline = time.Time{}
				continue
			default:
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				return "git://" + addr + "/"
			}
		}
		t.Logf("git daemon on port %d did not answer (attempt %d)", port, attempt)
	}
	t.Fatal("git daemon did not start")
	return ""
}

func TestRemoteGitDaemon(t *testing.T) {
	base, _ := seededRemote(t, "remote.git")
	url := startGitDaemon(t, base) + "remote.git"
	a := cloneURL(t, url, "a")
	b := cloneURL(t, url, "b")
	roundTrip(t, a, b, nil)
}

// httpGit serves the bare repositories under base with a real `git http-backend` behind net/http/cgi,
// requiring basic auth user:pass. It counts the requests refused for lack of credentials and the
// authenticated ones.
type httpGit struct {
	URL            string
	refused, authd atomic.Int64
}

func startHTTPGit(t testing.TB, base, user, pass string) *httpGit {
	t.Helper()
	execPath := testenv.Git(t, "", "--exec-path")
	backend := filepath.Join(execPath, "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("no git-http-backend in %s: smart HTTP not tested", execPath)
	}
	h := &httpGit{}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			h.refused.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="ctx-test"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		h.authd.Add(1)
		(&cgi.Handler{
			Path: backend,
			Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=" + user,
				"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.Getenv("GIT_CONFIG_GLOBAL"), "HOME=" + os.Getenv("HOME")},
		}).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL + "/"
	return h
}

// TestRemoteSmartHTTPCredentialHelper: ctx runs the system git, so the user's credential helper (here
// `store --file=...` in the repository's config) answers the server's 401; credentials in the URL work too;
// without credentials the transfer fails at once with exit 5 rather than waiting for a prompt.
func TestRemoteSmartHTTPCredentialHelper(t *testing.T) {
	base, _ := seededRemote(t, "remote.git")
	srv := startHTTPGit(t, base, "ada", "s3cret")
	plain := srv.URL + "remote.git"
	withCreds := strings.Replace(plain, "http://", "http://ada:s3cret@", 1)

	credFile := filepath.Join(t.TempDir(), "git-credentials")
	if err := os.WriteFile(credFile, []byte(strings.TrimSuffix(strings.Replace(srv.URL, "http://", "http://ada:s3cret@", 1), "/")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A: credentials in the URL. B: a credential helper in the repository's config, a URL without them.
	a := cloneURL(t, withCreds, "a")
	b := cloneURL(t, plain, "b", "-c", "credential.helper=store --file="+credFile)
	if got := testenv.Git(t, b, "config", "credential.helper"); !strings.Contains(got, credFile) {
		t.Fatalf("B's credential.helper is %q", got)
	}
	before := srv.refused.Load()
	roundTrip(t, a, b, nil)
	if srv.refused.Load() == before {
		t.Errorf("the server never asked for credentials: the helper was not exercised")
	}

	// No credentials at all: a clean, quick failure with the transfer exit code, nothing prompted.
	c := cloneURL(t, withCreds, "c")
	testenv.Git(t, c, "remote", "set-url", "origin", plain)
	r := ctxEnv(c, nil, "pull", "--timeout", "20s")
	if r.code != 5 {
		t.Fatalf("pull without credentials: exit %d, want 5\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "Authentication failed") && !strings.Contains(r.stderr, "could not read Username") {
		t.Errorf("pull without credentials should say why:\n%s", r.stderr)
	}
	if r.took > 10*time.Second {
		t.Errorf("pull without credentials took %v", r.took)
	}
}

// TestRemoteSSH runs the two-machine path over ssh:// against a real sshd on 127.0.0.1 (key
// authentication only). The clones reach it through core.sshCommand in their config, which ctx must honour
// (it only adds BatchMode when the user configured no ssh command). .ci/run installs openssh-server.
func TestRemoteSSH(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("gap: /usr/sbin/sshd is not installed here (apt-get install openssh-server), so push/pull over " +
			"ssh:// is not proven by this run")
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("gap: ssh-keygen not found")
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if me.Uid == "0" {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege separation directory
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	for _, k := range []string{"host", "user"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
	}
	pub, _ := os.ReadFile(filepath.Join(dir, "user.pub"))
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	conf := fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s\nPidFile %s\nAuthorizedKeysFile %s\n"+
		"StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"+
		"PermitRootLogin prohibit-password\nSetEnv PATH=%s\n",
		port, filepath.Join(dir, "host"), filepath.Join(dir, "sshd.pid"), filepath.Join(dir, "authorized_keys"), os.Getenv("PATH"))
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	sshd := exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	var sshdLog bytes.Buffer
	sshd.Stderr = &sshdLog
	if err := sshd.Start(); err != nil {
		t.Skipf("gap: sshd does not start here: %v", err)
	}
	t.Cleanup(func() { _ = sshd.Process.Kill(); _ = sshd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Skipf("gap: sshd did not listen: %s", sshdLog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, remote := seededRemote(t, "remote.git")
	sshCmd := "ssh -i " + filepath.Join(dir, "user") + " -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
	url := fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", me.Username, port, remote)
	a := cloneURL(t, url, "a", "-c", "core.sshCommand="+sshCmd)
	b := cloneURL(t, url, "b", "-c", "core.sshCommand="+sshCmd)
	roundTrip(t, a, b, nil)
}

// TestRemoteInsteadOf: a url.<base>.insteadOf rule in the repository's config rewrites the remote's URL
// for ctx's transfers as it does for git's.
func TestRemoteInsteadOf(t *testing.T) {
	base, _ := seededRemote(t, "remote.git")
	rule := []string{"-c", "url.file://" + base + "/.insteadOf=team:"}
	a := cloneURL(t, "team:remote.git", "a", rule...)
	b := cloneURL(t, "team:remote.git", "b", rule...)
	if u := testenv.Git(t, a, "config", "remote.origin.url"); u != "team:remote.git" {
		t.Fatalf("origin is %s", u)
	}
	roundTrip(t, a, b, nil)
	// Without the rule, the same URL means nothing to git: ctx fails (exit 5).
	testenv.Git(t, a, "config", "--unset", "url.file://"+base+"/.insteadOf")
	r := ctxEnv(a, nil, "pull")
	if r.code != 5 {
		t.Fatalf("pull without the insteadOf rule: exit %d, want 5\n%s", r.code, r.stderr)
	}
}

// TestRemoteCommandAndRemoteFlag: `ctx remote` names the remote and refspecs; --remote picks another one
// for remote, push and pull; `ctx config remote` changes the default.
func TestRemoteCommandAndRemoteFlag(t *testing.T) {
	_, origin := seededRemote(t, "origin.git")
	_, backup := seededRemote(t, "backup.git")
	a := cloneURL(t, origin, "a")
	testenv.Git(t, a, "remote", "add", "backup", backup)
	mustCtx(t, a, nil, 0, "init", "--no-hooks")

	out := mustCtx(t, a, nil, 0, "remote").stdout
	for _, want := range []string{"remote: origin " + origin, "fetch:  +refs/heads/ctx:refs/remotes/origin/ctx", "push:   refs/heads/ctx:refs/heads/ctx"} {
		if !strings.Contains(out, want) {
			t.Errorf("ctx remote lacks %q:\n%s", want, out)
		}
	}
	out = mustCtx(t, a, nil, 0, "remote", "--remote", "backup").stdout
	if !strings.Contains(out, "remote: backup "+backup) || !strings.Contains(out, "refs/remotes/backup/ctx") {
		t.Errorf("ctx remote --remote backup:\n%s", out)
	}

	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v")
	mustCtx(t, a, nil, 0, "push", "--remote", "backup")
	if _, err := testenv.GitErr(origin, "rev-parse", "--verify", "-q", "refs/heads/ctx"); err == nil {
		t.Errorf("push --remote backup also pushed to origin")
	}
	tip := testenv.Git(t, a, "rev-parse", "refs/heads/ctx")
	if got := testenv.Git(t, backup, "rev-parse", "refs/heads/ctx"); got != tip {
		t.Errorf("backup has %s, want %s", got, tip)
	}
	if got := testenv.Git(t, a, "rev-parse", "refs/remotes/backup/ctx"); got != tip {
		t.Errorf("tracking ref of backup is %s", got)
	}

	mustCtx(t, a, nil, 0, "config", "remote", "backup")
	if out := mustCtx(t, a, nil, 0, "remote").stdout; !strings.Contains(out, "remote: backup") {
		t.Errorf("after ctx config remote backup:\n%s", out)
	}
	// B pulls from its second remote by name.
	b := cloneURL(t, origin, "b")
	testenv.Git(t, b, "remote", "add", "backup", backup)
	mustCtx(t, b, nil, 0, "pull", "--remote", "backup")
	if got := mustCtx(t, b, nil, 0, "knowledge", "get", "k").stdout; got != "v\n" {
		t.Errorf("B pulled %q from backup", got)
	}
	if _, err := testenv.GitErr(b, "rev-parse", "--verify", "-q", "refs/remotes/backup/ctx"); err != nil {
		t.Errorf("pull --remote backup did not fill refs/remotes/backup/ctx")
	}
}

// storeState is everything of the local store a failed transfer must leave as it was.
func storeState(t testing.TB, dir string) string {
	t.Helper()
	refs, _ := testenv.GitErr(dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/ctx", "refs/remotes", "refs/ctx")
	return refs
}

// TestRemoteRefusesOrUnreachable: a pre-receive hook refusing refs/heads/ctx, a port nobody listens on,
// and a path that is no repository: each is exit 5 with git's or the remote's own words, and the local
// store does not change.
func TestRemoteRefusesOrUnreachable(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	hook := "#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = refs/heads/ctx ]; then\n" +
		"    echo \"policy: refs/heads/ctx is frozen by the release team\" >&2\n    exit 1\n  fi\ndone\nexit 0\n"
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v")
	before := storeState(t, a)

	r := ctxEnv(a, nil, "push")
	if r.code != 5 {
		t.Fatalf("refused push: exit %d, want 5\nstdout:%s\nstderr:%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "frozen by the release team") || !strings.Contains(r.stderr, "pre-receive hook declined") {
		t.Errorf("refused push should carry the remote's words:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "push origin: refs/heads/ctx -> refs/heads/ctx: [remote rejected]") {
		t.Errorf("refused push should name the refused ref:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "push origin: refs/heads/ctx at") {
		t.Errorf("refused push reported as success:\n%s", r.stdout)
	}
	if got := storeState(t, a); got != before {
		t.Errorf("local store changed by a refused push:\nbefore:\n%s\nafter:\n%s", before, got)
	}
	if _, err := testenv.GitErr(remote, "rev-parse", "--verify", "-q", "refs/heads/ctx"); err == nil {
		t.Errorf("the remote has refs/heads/ctx despite its hook")
	}

	// Nobody listens on the port: connection refused.
	dead := fmt.Sprintf("git://127.0.0.1:%d/remote.git", freePort(t))
	testenv.Git(t, a, "remote", "add", "dead", dead)
	testenv.Git(t, a, "remote", "add", "gone", filepath.Join(t.TempDir(), "no-such.git"))
	for _, args := range [][]string{{"push", "--remote", "dead"}, {"pull", "--remote", "dead"}, {"pull", "--remote", "gone"}, {"push", "--remote", "gone"}} {
		r := ctxEnv(a, nil, args...)
		if r.code != 5 {
			t.Errorf("ctx %v: exit %d, want 5\n%s", args, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "unable to connect") && !strings.Contains(r.stderr, "Connection refused") &&
			!strings.Contains(r.stderr, "does not appear to be a git repository") {
			t.Errorf("ctx %v should say why:\n%s", args, r.stderr)
		}
		if got := storeState(t, a); got != before {
			t.Errorf("ctx %v changed the local store:\n%s", args, got)
		}
	}
}

// stallServer accepts TCP connections on 127.0.0.1 and never answers; it returns host:port.
func stallServer(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// TestRemoteTimeout: --timeout 1s against a server that accepts and then says nothing gives up within a
// few seconds with exit 5, over git:// (git itself waits) and http:// (git's remote helper waits).
func TestRemoteTimeout(t *testing.T) {
	repo := testenv.NewRepo(t)
	mustCtx(t, repo, nil, 0, "init", "--no-hooks")
	addr := stallServer(t)
	testenv.Git(t, repo, "remote", "add", "stall-git", "git://"+addr+"/remote.git")
	testenv.Git(t, repo, "remote", "add", "stall-http", "http://"+addr+"/remote.git")
	before := storeState(t, repo)
	for _, url := range []string{"stall-git", "stall-http"} {
		for _, op := range []string{"pull", "push"} {
			r := ctxEnv(repo, nil, op, "--remote", url, "--timeout", "1s")
			if r.code != 5 {
				t.Errorf("ctx %s %s --timeout 1s: exit %d, want 5\n%s", op, url, r.code, r.stderr)
			}
			if r.took > 4*time.Second {
				t.Errorf("ctx %s %s --timeout 1s took %v", op, url, r.took)
			}
			if !strings.Contains(r.stderr, "deadline exceeded") || !strings.Contains(r.stderr, "gave up after 1s") || !strings.Contains(r.stderr, "ctx config sync.timeout") {
				t.Errorf("ctx %s %s: the error should say it timed out:\n%s", op, url, r.stderr)
			}
			t.Logf("ctx %s %s --timeout 1s: exit %d after %v", op, url, r.code, r.took.Round(time.Millisecond))
		}
	}
	if got := storeState(t, repo); got != before {
		t.Errorf("a timed-out transfer changed the local store:\n%s", got)
	}
}

// TestRemoteShallowAndSingleBranchClones: a clone made with --depth 1 (with and without
// --no-single-branch) or --single-branch still pulls the context branch, and when both sides wrote, the
// pull makes a real merge although the clone lacks the old history; the user's shallow main stays shallow.
func TestRemoteShallowAndSingleBranchClones(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	for i := 0; i < 3; i++ {
		mustCtx(t, a, nil, 0, "knowledge", "set", fmt.Sprintf("old-%d", i), "history")
	}
	mustCtx(t, a, nil, 0, "push")
	// More history on main, so that depth 1 really cuts it.
	for i := 0; i < 3; i++ {
		if err := os.WriteFile(filepath.Join(a, "f.txt"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Git(t, a, "add", "f.txt")
		testenv.Git(t, a, "commit", "-qm", fmt.Sprint("main ", i))
	}
	testenv.Git(t, a, "push", "-q", "origin", "main")

	for _, tc := range []struct {
		name string
		opts []string
	}{
		{"depth1", []string{"--depth", "1"}},
		{"depth1-all-branches", []string{"--depth", "1", "--no-single-branch"}},
		{"single-branch", []string{"--single-branch", "--branch", "main"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := cloneURL(t, "file://"+remote, "b", tc.opts...)
			shallow := testenv.Git(t, b, "rev-parse", "--is-shallow-repository") == "true"
			mustCtx(t, b, nil, 0, "pull")
			if got := mustCtx(t, b, nil, 0, "knowledge", "get", "old-0").stdout; got != "history\n" {
				t.Fatalf("B reads %q", got)
			}
			key := "b-" + tc.name
			mustCtx(t, b, nil, 0, "knowledge", "set", key, "from B")
			mustCtx(t, a, nil, 0, "pull")
			mustCtx(t, a, nil, 0, "knowledge", "set", "a-"+tc.name, "from A")
			mustCtx(t, a, nil, 0, "push")
			out := mustCtx(t, b, nil, 0, "pull").stdout
			if !strings.Contains(out, "merged") {
				t.Errorf("B's pull should merge:\n%s", out)
			}
			parents := strings.Fields(testenv.Git(t, b, "log", "-1", "--format=%P", "refs/heads/ctx"))
			if len(parents) != 2 {
				t.Errorf("B's tip has parents %v, want a merge", parents)
			}
			mustCtx(t, b, nil, 0, "push")
			mustCtx(t, a, nil, 0, "pull")
			for _, dir := range []string{a, b} {
				for _, k := range []string{"old-0", "old-2", key, "a-" + tc.name} {
					mustCtx(t, dir, nil, 0, "knowledge", "get", k)
				}
			}
			if ta, tb := testenv.Git(t, a, "rev-parse", "refs/heads/ctx"), testenv.Git(t, b, "rev-parse", "refs/heads/ctx"); ta != tb {
				t.Errorf("tips differ: A %s B %s", ta, tb)
			}
			testenv.Git(t, b, "fsck", "--no-dangling")
			if shallow {
				if n := testenv.Git(t, b, "rev-list", "--count", "main"); n != "1" {
					t.Errorf("ctx deepened the user's shallow main to %s commits", n)
				}
			}
		})
	}
}

// TestRemoteRacingPushers: racingClones clones (5 in make test, 10 under make stress) push to one bare
// remote at once, racingRounds rounds (2; 3 under make stress); every push succeeds at
// once (each to its own machine ref, docs/sync.md: no fetch-merge-retry) and no write is lost: the remote
// holds every write on its refs, every clone has every write after one more pull, and the shared branch
// after one more sync.
func TestRemoteRacingPushers(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	_, remote := seededRemote(t, "remote.git")
	first := cloneURL(t, remote, "first")
	mustCtx(t, first, nil, 0, "init", "--no-hooks")
	mustCtx(t, first, nil, 0, "push")
	const clones, rounds = racingClones, racingRounds
	dirs := make([]string, clones)
	for i := range dirs {
		dirs[i] = cloneURL(t, remote, fmt.Sprintf("c%d", i))
		mustCtx(t, dirs[i], nil, 0, "pull")
	}
	maxRetries := 0
	for round := 0; round < rounds; round++ {
		for i, d := range dirs {
			mustCtx(t, d, nil, 0, "knowledge", "set", fmt.Sprintf("r%d-c%d", round, i), fmt.Sprintf("round %d clone %d", round, i))
		}
		var wg sync.WaitGroup
		results := make([]result, clones)
		start := make(chan struct{})
		for i, d := range dirs {
			wg.Add(1)
			go func(i int, d string) {
				defer wg.Done()
				<-start
				results[i] = ctxEnv(d, nil, "push")
			}(i, d)
		}
		close(start)
		wg.Wait()
		for i, r := range results {
			retries := strings.Count(r.stdout, "pull origin:")
			if retries > maxRetries {
				maxRetries = retries
			}
			if r.code != 0 {
				t.Errorf("round %d clone %d: push exit %d after %d merge(s)\n%s\n%s", round, i, r.code, retries, r.stdout, r.stderr)
			}
		}
	}
	if maxRetries != 0 {
		t.Errorf("a push merged %d times: pushes to machine refs never race", maxRetries)
	}
	refs := append([]string{"refs/heads/ctx"}, strings.Fields(testenv.Git(t, remote, "for-each-ref", "--format=%(refname)", "refs/ctx/machines/"))...)
	var keys string
	for _, ref := range refs {
		keys += testenv.Git(t, remote, "ls-tree", "--name-only", ref, "knowledge/") + "\n"
	}
	want := func(where, keys string) {
		for round := 0; round < rounds; round++ {
			for i := range dirs {
				if k := fmt.Sprintf("knowledge/r%d-c%d.md", round, i); !strings.Contains(keys, k) {
					t.Errorf("%s lacks %s", where, k)
				}
			}
		}
	}
	want("the remote", keys)
	for _, d := range dirs {
		mustCtx(t, d, nil, 0, "pull")
		want(d, testenv.Git(t, d, "ls-tree", "--name-only", "refs/heads/ctx", "knowledge/"))
	}
	mustCtx(t, dirs[0], nil, 0, "sync")
	want("the shared branch", testenv.Git(t, remote, "ls-tree", "--name-only", "refs/heads/ctx", "knowledge/"))
	testenv.Git(t, remote, "fsck", "--no-dangling")
}

// TestRemoteAlternatesClones: a clone that borrows its objects from another repository through
// objects/info/alternates (git clone --shared, git clone --reference, and an alternates file holding a
// comment and a relative path) pulls the context branch, whose objects are all in the borrowed
// directory, reads it, writes and pushes; its own writes go to its own objects directory, never the
// borrowed one.
func TestRemoteAlternatesClones(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v")
	mustCtx(t, a, nil, 0, "state", "set", "current_task", "ship")
	mustCtx(t, a, nil, 0, "push")
	for _, tc := range []struct {
		name string
		opts []string
		alt  func(dir string) string // the alternates file's content to write instead of git's; nil: git's
	}{
		{"shared", []string{"--shared"}, nil},
		{"reference", []string{"--reference", remote, "--no-local"}, nil},
		{"relative-with-comment", []string{"--shared"}, func(dir string) string {
			rel, err := filepath.Rel(filepath.Join(dir, ".git", "objects"), filepath.Join(remote, "objects"))
			if err != nil {
				t.Fatal(err)
			}
			return "# borrowed from the remote\n\n" + rel + "\n"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cloneURL(t, remote, "c", tc.opts...)
			altFile := filepath.Join(c, ".git", "objects", "info", "alternates")
			if tc.alt != nil {
				if err := os.WriteFile(altFile, []byte(tc.alt(c)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(altFile); err != nil {
				t.Fatalf("git wrote no alternates file: %v", err)
			}
			// The context branch's commit is only in the borrowed directory: without the alternates file,
			// git does not find it.
			tip := testenv.Git(t, remote, "rev-parse", "refs/heads/ctx")
			if err := os.Rename(altFile, altFile+".off"); err != nil {
				t.Fatal(err)
			}
			if _, err := testenv.GitErr(c, "cat-file", "-e", tip); err == nil {
				t.Fatalf("the clone holds the tip's object itself: the test proves nothing")
			}
			if err := os.Rename(altFile+".off", altFile); err != nil {
				t.Fatal(err)
			}
			before := testenv.Git(t, remote, "count-objects", "-v")
			mustCtx(t, c, nil, 0, "pull")
			if got := mustCtx(t, c, nil, 0, "knowledge", "get", "k").stdout; got != "v\n" {
				t.Errorf("knowledge k = %q", got)
			}
			if got := mustCtx(t, c, nil, 0, "state", "show").stdout; !strings.Contains(got, "ship") {
				t.Errorf("state task = %q", got)
			}
			mustCtx(t, c, nil, 0, "knowledge", "set", "from-"+tc.name, "written in the clone")
			// The clone's writes went to its own objects directory, never the borrowed one.
			if after := testenv.Git(t, remote, "count-objects", "-v"); after != before {
				t.Errorf("ctx wrote into the borrowed objects directory:\n%s\nthen\n%s", before, after)
			}
			mustCtx(t, c, nil, 0, "push")
			mustCtx(t, a, nil, 0, "pull")
			if got := mustCtx(t, a, nil, 0, "knowledge", "get", "from-"+tc.name).stdout; got != "written in the clone\n" {
				t.Errorf("A reads %q", got)
			}
			testenv.Git(t, c, "fsck", "--no-dangling")
		})
	}
}

// missingIn counts the objects reachable from rev that the partial clone dir lacks (git rev-list
// --missing=print, which fetches nothing).
func missingIn(t testing.TB, dir, rev string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(testenv.Git(t, dir, "rev-list", "--objects", "--missing=print", rev), "\n") {
		if strings.HasPrefix(line, "?") {
			n++
		}
	}
	return n
}

// TestRemotePartialClone: a partial clone (git clone --filter=blob:none, over file:// and git daemon)
// gets the context branch with its refs but without its blobs; ctx pull adopts it, ctx init adopts it in
// another such clone, a pull after a plain (filtered) git fetch that already moved the remote-tracking
// branch merges it, and the pushes go through; every tip ctx reads ends complete in the clone.
func TestRemotePartialClone(t *testing.T) {
	base, remote := seededRemote(t, "remote.git")
	testenv.Git(t, remote, "config", "uploadpack.allowFilter", "true")
	a := cloneURL(t, remote, "a")
	mustCtx(t, a, nil, 0, "init", "--no-hooks")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v")
	mustCtx(t, a, nil, 0, "state", "set", "current_task", "ship")
	mustCtx(t, a, nil, 0, "push")
	for _, tc := range []struct {
		name, url string
	}{
		{"file", "file://" + remote},
		{"git-daemon", startGitDaemon(t, base) + "remote.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := cloneURL(t, tc.url, "b", "--filter=blob:none")
			if n := missingIn(t, b, "refs/remotes/origin/ctx"); n == 0 {
				t.Fatal("the partial clone has every object of origin/ctx: the test proves nothing")
			}
			mustCtx(t, b, nil, 0, "pull")
			if got := mustCtx(t, b, nil, 0, "knowledge", "get", "k").stdout; got != "v\n" {
				t.Errorf("B reads k = %q", got)
			}
			if got := mustCtx(t, b, nil, 0, "state", "show").stdout; !strings.Contains(got, "ship") {
				t.Errorf("B's state = %q", got)
			}

			// ctx init in another partial clone adopts origin/ctx.
			c := cloneURL(t, tc.url, "c", "--filter=blob:none")
			mustCtx(t, c, nil, 0, "init", "--no-hooks")
			if got := mustCtx(t, c, nil, 0, "knowledge", "get", "k").stdout; got != "v\n" {
				t.Errorf("C reads k = %q", got)
			}

			// A writes; B's plain git fetch moves origin/ctx without the new blobs; B writes and pulls.
			key := "a-" + tc.name
			mustCtx(t, a, nil, 0, "pull")
			mustCtx(t, a, nil, 0, "knowledge", "set", key, "from A")
			mustCtx(t, a, nil, 0, "sync")
			mustCtx(t, b, nil, 0, "knowledge", "set", "b-"+tc.name, "from B")
			testenv.Git(t, b, "fetch", "-q", "origin")
			if n := missingIn(t, b, "refs/remotes/origin/ctx"); n == 0 {
				t.Fatal("git fetch brought the new blobs: the test proves nothing")
			}
			if out := mustCtx(t, b, nil, 0, "pull").stdout; !strings.Contains(out, "merged") {
				t.Errorf("B's pull should merge:\n%s", out)
			}
			if got := mustCtx(t, b, nil, 0, "knowledge", "get", key).stdout; got != "from A\n" {
				t.Errorf("B reads %s = %q", key, got)
			}
			mustCtx(t, b, nil, 0, "push")
			mustCtx(t, a, nil, 0, "pull")
			if got := mustCtx(t, a, nil, 0, "knowledge", "get", "b-"+tc.name).stdout; got != "from B\n" {
				t.Errorf("A reads B's write as %q", got)
			}
			for _, dir := range []string{b, c} {
				if n := missingIn(t, dir, "refs/heads/ctx"); n != 0 {
					t.Errorf("%s lacks %d objects of its context branch", dir, n)
				}
			}
		})
	}
}

// TestFreshCloneFindsTheTeamsBranchName: a team whose context branch is not ctx (`ctx init --branch
// team-ctx`): a fresh clone's pull does not adopt the machine refs into a branch ctx (it used to, then
// published a second shared branch), it names team-ctx and the command to run; a clone that made its own
// branch ctx does not publish it either; after `ctx init --branch team-ctx` the pull adopts the team's.
func TestFreshCloneFindsTheTeamsBranchName(t *testing.T) {
	_, remote := seededRemote(t, "remote.git")
	a, b, c := cloneURL(t, remote, "a"), cloneURL(t, remote, "b"), cloneURL(t, remote, "c")
	mustCtx(t, a, nil, 0, "init", "--no-hooks", "--branch", "team-ctx")
	mustCtx(t, a, nil, 0, "knowledge", "set", "k", "v")
	mustCtx(t, a, nil, 0, "push")
	r := mustCtx(t, b, nil, 2, "pull")
	if !strings.Contains(r.stderr, "ctx init --branch team-ctx") {
		t.Errorf("pull of a fresh clone: %s", r.stderr)
	}
	if out := testenv.Git(t, b, "for-each-ref", "refs/heads/ctx"); out != "" {
		t.Errorf("the refused pull made %s", out)
	}
	mustCtx(t, c, nil, 0, "init", "--no-hooks")
	mustCtx(t, c, nil, 0, "knowledge", "set", "x", "y")
	if r := mustCtx(t, c, nil, 2, "push"); !strings.Contains(r.stderr, "ctx init --branch team-ctx") {
		t.Errorf("push of a second branch: %s", r.stderr)
	}
	if heads := testenv.Git(t, a, "ls-remote", "origin", "refs/heads/ctx"); heads != "" {
		t.Errorf("a second shared branch was published: %s", heads)
	}
	mustCtx(t, b, nil, 0, "init", "--no-hooks", "--branch", "team-ctx")
	mustCtx(t, b, nil, 0, "pull")
	if got := mustCtx(t, b, nil, 0, "knowledge", "get", "k").stdout; got != "v\n" {
		t.Errorf("after init --branch team-ctx: k is %q", got)
	}
}
