package main_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store/storetest"
)

// The kill -9 suite (docs/locks.md, "Crash tests"): ctx processes killed with SIGKILL at random moments
// of writes (knowledge set, decision add, scope moves across two refs) and of pushes, each followed by
// the next ctx command. It checks that no acknowledged write (exit 0) is ever lost, that the next command
// never fails on what the killed one left, that no lock, mark or journal is left, and that git fsck
// stays clean. `make test` runs stressIterations (5) of each; `make stress` builds with -tags stress
// (100 each) and prints the figures.

// killOutcome is what became of one killed or completed ctx process.
type killOutcome int

const (
	finished killOutcome = iota // exit 0 before the kill: acknowledged
	failed                      // exited non-zero before the kill
	killed                      // killed with SIGKILL
)

// runKilled runs the fault binary with args in dir and kills it (and its direct children, git) with
// SIGKILL either at a fault point (fault != "") or after delay; it returns what happened.
func runKilled(t *testing.T, dir, stdin, fault string, delay time.Duration, args ...string) (killOutcome, string) {
	t.Helper()
	cmd := exec.Command(ctxFaultBin(t), args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	ready := filepath.Join(t.TempDir(), "ready")
	cmd.Env = faultEnv()
	if fault != "" {
		cmd.Env = append(cmd.Env, "CTX_FAULT="+fault, "CTX_FAULT_READY="+ready)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var timer <-chan time.Time
	if fault == "" {
		timer = time.After(delay)
	}
	poll := time.NewTicker(2 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case err := <-exited:
			if err != nil {
				return failed, out.String()
			}
			return finished, out.String()
		case <-timer:
		case <-poll.C:
			if fault == "" || !exists(ready) {
				continue
			}
		}
		for _, c := range children(cmd.Process.Pid) {
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		if err := <-exited; err == nil {
			return finished, out.String() // it won the race
		}
		return killed, out.String()
	}
}

// children lists the direct child processes of pid (Linux /proc; none elsewhere).
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// timeIt returns how long the fault binary (without a fault point) takes to run ctx args in dir: the
// range of random kill times of the process runKilled kills.
func timeIt(t *testing.T, dir string, args ...string) time.Duration {
	t.Helper()
	cmd := exec.Command(ctxFaultBin(t), args...)
	cmd.Dir = dir
	cmd.Env = faultEnv()
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ctx %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return time.Since(start)
}

var writeFaults = []string{"ref-marked:refs/heads/ctx", "ref-locked:refs/heads/ctx", "objects-written", "refs-prepared", "ref-renamed:refs/ctx/private", "ref-locked:refs/ctx/private"}

// TestKillStress is the kill -9 suite of writes and pushes.
func TestKillStress(t *testing.T) {
	n := stressIterations
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d, %d iterations each", seed, n)
	_, origin := seededRemote(t, "origin.git")
	dir := cloneURL(t, origin, "a")
	run(t, dir, 0, "init", "--no-hooks")
	ctxFaultBin(t)
	writeTime := timeIt(t, dir, "knowledge", "set", "warmup", "w")

	// Writes.
	type ack struct{ kind, key, value, scope string }
	var acked []ack
	stats := map[string]int{}
	scopes := map[string]string{} // key -> scope of the last acknowledged write or move
	start := time.Now()
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("k%d", rng.IntN(8))
		value := fmt.Sprintf("value %d", i)
		args := []string{"knowledge", "set", key, value}
		op := "set"
		switch rng.IntN(4) {
		case 0:
			if sc, ok := scopes[key]; ok {
				to := map[string]string{"public": "private", "private": "public"}[sc]
				args, op = []string{"knowledge", "scope", key, to}, "scope "+to
			}
		case 1:
			args, op = []string{"decision", "add", fmt.Sprintf("Decision %d", i), "--context", "c", "--decision", "d", "--consequences", "q"}, "decision"
		}
		fault := ""
		delay := time.Duration(rng.Int64N(int64(writeTime*3/2) + 1))
		if rng.IntN(2) == 0 {
			fault = writeFaults[rng.IntN(len(writeFaults))]
			if strings.HasPrefix(op, "scope ") && rng.IntN(2) == 0 {
				fault = "ref-renamed:refs/ctx/private" // between the two refs of the move
			}
		}
		outcome, out := runKilled(t, dir, "", fault, delay, args...)
		stats[[]string{"finished", "failed", "killed"}[outcome]]++
		// The next command must work on whatever the kill left (it completes an interrupted scope move).
		if st := ctxEnv(dir, nil, "status"); st.code != 0 {
			t.Fatalf("status after write %d (%s, %s): exit %d\n%s", i, op, fault, st.code, st.stderr)
		}
		switch {
		case outcome == finished && op == "set":
			sc := scopes[key]
			if sc == "" {
				sc = "public"
			}
			acked = append(acked, ack{"knowledge", key, value, sc})
			scopes[key] = sc
		case outcome == finished && strings.HasPrefix(op, "scope "):
			scopes[key] = strings.TrimPrefix(op, "scope ")
		case outcome == finished:
			acked = append(acked, ack{kind: "decision", key: args[2]})
		case outcome == failed:
			t.Fatalf("write %d (%s) failed without being killed:\n%s", i, strings.Join(args, " "), out)
		case outcome == killed && op == "set":
			// Not acknowledged: it may or may not have landed; the next write decides the value.
			delete(scopes, key)
			if _, sc, ok := knowledgeAt(t, dir, key); ok {
				scopes[key] = sc
			}
		case outcome == killed && strings.HasPrefix(op, "scope "):
			if _, sc, ok := knowledgeAt(t, dir, key); ok {
				scopes[key] = sc
			} else {
				t.Fatalf("write %d: a killed scope move left %s in no scope", i, key)
			}
		}
		if fault != "" && outcome == killed {
			stats["killed at "+strings.SplitN(fault, ":", 2)[0]]++
		}
	}
	// A last write sweeps whatever the kills left: then nothing may be left at all.
	run(t, dir, 0, "knowledge", "set", "final", "f")
	noLocks(t, dir)
	fsck(t, dir)
	lost := 0
	last := map[string]ack{}
	for _, a := range acked {
		if a.kind == "knowledge" {
			last[a.key] = a
		} else if !decisionOnBranch(t, dir, a.key) {
			lost++
			t.Errorf("acknowledged decision %q lost", a.key)
		}
	}
	for key, a := range last {
		v, _, ok := knowledgeAt(t, dir, key)
		// A later killed write may have landed over it (not acknowledged, but allowed to land whole): the
		// value must be the acknowledged one or a later one.
		var got, want int
		// A missing or unreadable value reads as 0 and is reported as lost below.
		_, _ = fmt.Sscanf(v, "value %d", &got)
		_, _ = fmt.Sscanf(a.value, "value %d", &want)
		if !ok || got < want {
			lost++
			t.Errorf("acknowledged %s=%q lost (now %q, present %v)", key, a.value, v, ok)
		}
	}
	t.Logf("writes: %d runs in %s (%v), %d acknowledged, %d lost, fsck clean, no lock left",
		n, time.Since(start).Round(time.Millisecond), sortedStats(stats), len(acked), lost)

	// Pushes.
	pushTime := timeIt(t, dir, "push")
	stats = map[string]int{}
	var pushed []string
	start = time.Now()
	for i := 0; i < n; i++ {
		run(t, dir, 0, "knowledge", "set", fmt.Sprintf("p%d", i%4), fmt.Sprintf("push %d", i))
		tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
		fault := ""
		if rng.IntN(4) == 0 {
			fault = "ref-locked:refs/remotes/origin/ctx" // only reached when git did not record the push
		}
		outcome, out := runKilled(t, dir, "", fault, time.Duration(rng.Int64N(int64(pushTime*3/2)+1)), "push")
		stats[[]string{"finished", "failed", "killed"}[outcome]]++
		switch outcome {
		case finished:
			pushed = append(pushed, tip)
			if !isAncestor(origin, tip) {
				t.Fatalf("push %d exited 0 but the remote lacks %s:\n%s", i, tip[:12], out)
			}
		case failed:
			t.Fatalf("push %d failed without being killed:\n%s", i, out)
		}
		if st := ctxEnv(dir, nil, "status"); st.code != 0 {
			t.Fatalf("status after push %d: exit %d\n%s", i, st.code, st.stderr)
		}
	}
	run(t, dir, 0, "push")
	tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
	if got := testenv.Git(t, origin, "rev-parse", "refs/heads/ctx"); got != tip {
		t.Fatalf("after the last push the remote has %s, not %s", got, tip)
	}
	if st := run(t, dir, 0, "status"); !strings.Contains(st, "0 ahead, 0 behind") || strings.Contains(st, "locked:") {
		t.Errorf("status after the last push:\n%s", st)
	}
	lostPushes := 0
	for _, p := range pushed {
		if !isAncestor(origin, p) {
			lostPushes++
		}
	}
	noLocks(t, dir)
	fsck(t, dir)
	fsck(t, origin)
	t.Logf("pushes: %d runs in %s (%v), %d acknowledged, %d lost, remote = local, fsck clean (local and remote), no lock left",
		n, time.Since(start).Round(time.Millisecond), sortedStats(stats), len(pushed), lostPushes)
	if lostPushes > 0 {
		t.Errorf("%d acknowledged pushes lost", lostPushes)
	}
}

// knowledgeAt returns a knowledge entry's content and scope as the refs hold it.
func knowledgeAt(t *testing.T, dir, key string) (value, scope string, ok bool) {
	t.Helper()
	for _, sc := range []struct{ ref, name string }{{"refs/ctx/private", "private"}, {"refs/heads/ctx", "public"}} {
		out, err := testenv.GitErr(dir, append(storetest.RefArgs(t, dir, sc.ref), "cat-file", "blob", sc.ref+":knowledge/"+key+".md")...)
		if err == nil {
			if i := strings.LastIndex(out, "\n---\n"); i >= 0 {
				out = out[i+5:]
			}
			return strings.TrimSpace(out), sc.name, true
		}
	}
	return "", "", false
}

func decisionOnBranch(t *testing.T, dir, title string) bool {
	t.Helper()
	out, err := testenv.GitErr(dir, "log", "--format=%s", "refs/heads/ctx")
	return err == nil && strings.Contains(out+"\n", "ctx: add decision "+title+"\n")
}

func isAncestor(repo, commit string) bool {
	_, err := testenv.GitErr(repo, "merge-base", "--is-ancestor", commit, "refs/heads/ctx")
	return err == nil
}

func sortedStats(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
