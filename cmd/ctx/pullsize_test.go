package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// A teammate's (or a hostile remote's) oversized entry must not take a pull down (docs/limits.md "Files
// of the store"): a 48 MiB blob on the shared branch or on a machine ref is refused from its size, and the
// blob is never read: ctx's peak RSS stays below the blob's size. With C git, and with go-git's transport
// (no git binary), whose size check goes through go-git's object storage (its fetch holds the pack in
// memory, so there only the refusal is checked).

// bigBlobBytes is over store.MaxFileBytes (32 MiB + 256 KiB).
const bigBlobBytes = 48 << 20

// maxrssMain is the test binary run as "maxrss PROGRAM [ARGS...]": it runs PROGRAM with its own standard
// streams, then writes "maxrss-kb: N" on a last line of standard error, N being wait4's ru_maxrss of the
// program (which counts the processes the program waited for), and exits with its exit code. The
// measurement needs a small parent: a child started with vfork from a large process (the test itself,
// holding a 48 MiB blob) inherits the parent's peak RSS in its ru_maxrss at exec.
func maxrssMain() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "maxrss:", err)
		os.Exit(2)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		fmt.Fprintf(os.Stderr, "\nmaxrss-kb: %d\n", ru.Maxrss)
	}
	os.Exit(code)
}

// ctxPeak runs ctx in dir with env through maxrssMain and returns its result and peak resident memory in
// bytes (kilobytes on Linux): ctx's and that of the git processes it waited for (the test makes git
// stream large blobs with core.bigFileThreshold, so that they stay small).
func ctxPeak(t *testing.T, dir string, env []string, args ...string) (result, int64) {
	t.Helper()
	helper, err := lookIn(scriptPath, "maxrss")
	if err != nil {
		t.Skipf("no maxrss helper: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, helper, append([]string{ctxBin}, args...)...)
	cmd.Dir = dir
	cmd.Env = testenv.Environ(env)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ctx %s: %v", strings.Join(args, " "), err)
	}
	rest, kb, ok := strings.Cut(r.stderr, "\nmaxrss-kb: ")
	if !ok {
		t.Skipf("no rusage to measure ctx's memory:\n%s", r.stderr)
	}
	r.stderr = rest
	n, err := strconv.ParseInt(strings.TrimSpace(kb), 10, 64)
	if err != nil {
		t.Fatalf("maxrss: %q", kb)
	}
	return r, n << 10
}

// lookIn finds the executable name in the folders of path (a PATH value).
func lookIn(path, name string) (string, error) {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, path)
}

func TestPullOversizedEntry(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ru_maxrss is in kilobytes on Linux only")
	}
	for _, tc := range []struct {
		name  string
		ref   string // where the teammate pushes the large tip
		want  string // the refusal names it
		noGit bool
	}{
		{"shared-branch", "refs/heads/ctx", "of origin's ctx branch: it holds files over the size limit", false},
		// a machine ref ctx refuses is skipped with a warning: the shared branch and the others are pulled
		// (docs/sync.md); the pull succeeds and takes nothing of it
		{"machine-ref", "refs/ctx/machines/evil-b", "ignored origin's machine ref refs/ctx/machines/evil-b: ctx refuses its tip", false},
		{"shared-branch-go-git", "refs/heads/ctx", "of origin's ctx branch: it holds files over the size limit", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, remote := seededRemote(t, "remote.git")
			a := cloneURL(t, remote, "a")
			mustCtx(t, a, nil, 0, "init", "--no-hooks")
			mustCtx(t, a, nil, 0, "knowledge", "set", "arch", "The architecture.")
			mustCtx(t, a, nil, 0, "push")

			// B adds knowledge/big.md of 48 MiB with plumbing and pushes it (git streams it: bigFileThreshold).
			b := cloneURL(t, remote, "b")
			testenv.Git(t, b, "fetch", "-q", "origin", "ctx")
			parent := testenv.Git(t, b, "rev-parse", "FETCH_HEAD")
			content := strings.Repeat("a line of a very large entry\n", bigBlobBytes/29+1)
			blob := testenv.Blob(t, b, content)
			tree := testenv.WithEntry(t, b, testenv.Git(t, b, "rev-parse", "FETCH_HEAD^{tree}"), []string{"knowledge", "big.md"}, "100644", blob)
			big := testenv.CommitTree(t, b, tree, parent, "a very large entry")
			testenv.Git(t, b, "-c", "core.bigFileThreshold=1m", "push", "-q", "origin", big+":"+tc.ref)

			// Every git process streams blobs over 1 MiB, the remote's upload-pack (a child of ctx over the
			// local transport, which does not pass GIT_CONFIG_COUNT on) included: a global config.
			global := filepath.Join(t.TempDir(), "gitconfig")
			if err := os.WriteFile(global, []byte(testenv.GitConfig+"[core]\n\tbigFileThreshold = 1m\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			env := []string{"GIT_CONFIG_GLOBAL=" + global}
			if tc.noGit {
				env = append(env, "PATH="+filepath.Dir(ctxBin))
			}
			before := refs(t, a)
			for _, cmd := range []string{"pull", "sync"} {
				r, peak := ctxPeak(t, a, env, cmd)
				if wantCode := map[bool]int{false: 5, true: 0}[strings.HasPrefix(tc.ref, "refs/ctx/machines/")]; r.code != wantCode {
					t.Fatalf("ctx %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", cmd, r.code, wantCode, r.stdout, r.stderr)
				}
				for _, w := range []string{tc.want, fmt.Sprintf(`"knowledge/big.md" (file): %d bytes (48.0 MiB), over the limit of one file of the store`, len(content))} {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("ctx %s: the refusal does not say %q:\n%s", cmd, w, r.stderr)
					}
				}
				t.Logf("ctx %s: peak RSS %.1f MiB with a %d MiB blob", cmd, float64(peak)/(1<<20), bigBlobBytes>>20)
				// go-git's transport (no git binary) holds the fetched pack in memory itself: only C git's
				// fetch is bounded (docs/limits.md "Files of the store").
				if !tc.noGit && peak >= bigBlobBytes {
					t.Errorf("ctx %s: peak RSS %d bytes, at least the blob's %d: the blob was read", cmd, peak, bigBlobBytes)
				}
				if got := refs(t, a); got != before {
					t.Errorf("ctx %s moved refs:\nbefore:\n%s\nafter:\n%s", cmd, before, got)
				}
			}
			if got := testenv.Git(t, b, "ls-remote", "origin", tc.ref); !strings.HasPrefix(got, big) {
				t.Errorf("the remote's %s is %q after the refused syncs, want %s", tc.ref, got, big)
			}
		})
	}
}
