package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
)

// Interrupted refreshes end to end (docs/security.md, "Interrupted refreshes"): the post-checkout hook's
// ctx is killed with SIGKILL half way through a refresh of .context/; the next ctx status, ctx commit and
// ctx pull must see no hand edit, make no commit and no conflict record, and the next refresh completes.

// versions makes a store in a new repository (hooks installed) whose branch has three tips, v1, v2 and v3,
// differing in every one of n files (each also has one file of its own), and returns the repository and
// the tips.
func versions(t *testing.T, n int) (dir string, tips []string) {
	t.Helper()
	_, remote := seededRemote(t, "remote.git")
	dir = cloneURL(t, remote, "a")
	mustCtx(t, dir, nil, 0, "init")
	s, err := store.Open(context.Background(), dir, store.Actor{Agent: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"v1", "v2", "v3"} {
		_, err := s.Write(context.Background(), store.Op{Name: "test", Summary: version}, func(v *store.View) (store.Edits, error) {
			ed := store.Edits{}
			for i := 0; i < n; i++ {
				ed.Put(store.Public, fmt.Sprintf("knowledge/k%04d.md", i),
					[]byte(fmt.Sprintf("---\nauthor: a\n---\n%s of entry %d\n%s", version, i, strings.Repeat("line\n", 20))))
			}
			ed.Put(store.Public, "knowledge/only-"+version+".md", []byte(version+"\n"))
			for _, other := range []string{"v1", "v2", "v3"} {
				if other != version {
					ed.Del(store.Public, "knowledge/only-"+other+".md")
				}
			}
			return ed, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		tips = append(tips, testenv.Git(t, dir, "rev-parse", "ctx"))
	}
	mustCtx(t, dir, nil, 0, "push")
	return dir, tips
}

// afterKill is what follows a refresh killed half way towards one tip: C git moves the branch to another
// tip (a checkout of another state, a fetch), then ctx commit runs (as ctx pull does first), then ctx
// status. None may record a hand edit, a commit or a conflict; then .context/ mirrors the branch.
func afterKill(t *testing.T, dir, next, want, label string) {
	t.Helper()
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", next)
	if out := mustCtx(t, dir, nil, 0, "commit").stdout; !strings.Contains(out, "nothing to commit") {
		t.Fatalf("%s: ctx commit recorded the half-written refresh as hand edits:\n%s", label, out)
	}
	if got := testenv.Git(t, dir, "rev-parse", "ctx"); got != next {
		t.Fatalf("%s: ctx commit moved ctx", label)
	}
	if c := testenv.Git(t, dir, "ls-tree", "--name-only", "ctx", "conflicts/"); c != "" {
		t.Fatalf("%s: conflict records: %s", label, c)
	}
	var st struct {
		HandEdits []store.HandEdit `json:"hand_edits"`
	}
	out := mustCtx(t, dir, nil, 0, "status", "--json").stdout
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.HandEdits) != 0 {
		t.Fatalf("%s: ctx status lists %d spurious hand edits: %v", label, len(st.HandEdits), st.HandEdits[:min(5, len(st.HandEdits))])
	}
	b, err := os.ReadFile(filepath.Join(dir, ".context", "knowledge", "k0000.md"))
	if err != nil || !strings.Contains(string(b), want+" of entry") {
		t.Fatalf("%s: .context/knowledge/k0000.md = %.40q %v, want %s", label, b, err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, ".context", "knowledge", "only-"+want+".md")); err != nil {
		t.Fatalf("%s: only-%s.md missing: %v", label, want, err)
	}
}

// TestRefreshKilledAtKnownPoints kills the hook's refresh with SIGKILL after the first, a middle and the
// last file (CTX_TEST_KILL_REFRESH_AFTER), through `ctx hooks run post-checkout` and through a real
// `git checkout` firing the hook.
func TestRefreshKilledAtKnownPoints(t *testing.T) {
	const n = 60
	dir, tips := versions(t, n)
	i, branch := 2, 0
	for _, after := range []int{1, n / 2, n + 1} {
		for _, viaGit := range []bool{false, true} {
			i = (i + 1) % 3
			testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tips[i])
			env := []string{store.EnvKillRefreshAfter + "=" + strconv.Itoa(after), "CTX_HOOKS="}
			label := fmt.Sprintf("killed after %d files (git checkout %v) towards v%d", after, viaGit, i+1)
			if viaGit {
				branch++
				testenv.GitEnv(t, dir, env, "checkout", "-q", "-b", fmt.Sprintf("b%d", branch))
			} else {
				r := ctxEnv(dir, env, "hooks", "run", "post-checkout", "HEAD", "HEAD", "1")
				if r.code != -1 {
					t.Fatalf("%s: ctx hooks run was not killed: exit %d\n%s", label, r.code, r.stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "ctx", "checkout-journal.json")); err != nil {
				t.Fatalf("%s: no refresh journal after the kill: %v", label, err)
			}
			next := (i + 1) % 3
			afterKill(t, dir, tips[next], fmt.Sprintf("v%d", next+1), label)
			i = next
		}
	}
	// ctx pull (which records hand edits first) after one more kill makes no commit either.
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tips[0])
	mustCtx(t, dir, nil, 0, "status")
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tips[1])
	ctxEnv(dir, []string{store.EnvKillRefreshAfter + "=7", "CTX_HOOKS="}, "hooks", "run", "post-checkout", "HEAD", "HEAD", "1")
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tips[0])
	mustCtx(t, dir, nil, 0, "pull")
	if got := testenv.Git(t, dir, "rev-parse", "ctx"); got != tips[2] {
		t.Fatalf("after a killed refresh, ctx pull made ctx %s, want the remote's %s (a fast-forward, nothing recorded)", got, tips[2])
	}
	afterKill(t, dir, tips[2], "v3", "pull after a kill")
}

// TestRefreshKilledAtRandom is the kill -9 of a real `ctx hooks run post-checkout` process at a random
// moment of its refresh, repeated (CTX_STRESS_KILLS, default 5; 100 for the stress figure). It prints how
// many kills landed inside a refresh and fails on any spurious hand edit, commit or conflict.
func TestRefreshKilledAtRandom(t *testing.T) {
	kills := 5
	if v, err := strconv.Atoi(os.Getenv("CTX_STRESS_KILLS")); err == nil && v > 0 {
		kills = v
	}
	const n = 200
	dir, tips := versions(t, n)
	hook := func() *exec.Cmd {
		cmd := exec.Command(ctxBin, "hooks", "run", "post-checkout", "HEAD", "HEAD", "1")
		cmd.Dir = dir
		cmd.Env = testenv.Environ([]string{"CTX_HOOKS=", "CTX_HOOK_TIMEOUT=60"})
		return cmd
	}
	// How long a whole refresh of n files takes here (the kills land within it).
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tips[0])
	start := time.Now()
	if out, err := hook().CombinedOutput(); err != nil {
		t.Fatalf("ctx hooks run: %v\n%s", err, out)
	}
	full := time.Since(start)
	inside, i := 0, 0
	for k := 0; k < kills; k++ {
		i = (i + 1) % 3
		testenv.Git(t, dir, "update-ref", "refs/heads/ctx", tips[i])
		cmd := hook()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(float64(full) * (0.3 + 0.6*rand.Float64())))
		_ = cmd.Process.Kill() // SIGKILL
		_ = cmd.Wait()
		if _, err := os.Stat(filepath.Join(dir, ".git", "ctx", "checkout-journal.json")); err == nil {
			inside++
		}
		next := (i + 1) % 3
		afterKill(t, dir, tips[next], fmt.Sprintf("v%d", next+1), fmt.Sprintf("kill %d", k+1))
		i = next
	}
	t.Logf("%d kill -9 of ctx hooks run post-checkout (a refresh of %d files takes %v here): %d landed inside a refresh; 0 spurious hand edits, commits or conflicts", kills, n+1, full.Round(time.Millisecond), inside)
}
