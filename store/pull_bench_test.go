package store_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
)

// BenchmarkPullVsGit: `(*Store).Pull` (fetch, checks of the fetched tree, merge, refresh of .context/)
// against `git pull --no-rebase` of the same histories (fetch, merge, update of the work tree), in the
// same run: ours and theirs each changed 1,000 entries of a 10,000-entry store (benchHistories), the
// remote is a bare repository whose ctx is theirs. Between iterations (untimed) ctx is reset to ours and
// .context/ refreshed to it, and git's clone is reset --hard to ours; both sides already hold theirs'
// objects after the first iteration, so the fetch is the negotiation only on both. Each pull opens its store
// as `ctx pull` does (Open, ReadInProcess), timed. bench/README.md
// "Merge" records the figures; `-cpuprofile` shows where ctx's time goes.
func BenchmarkPullVsGit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	dir, ours, theirs := benchHistories(b)
	oursH := gitstore.NewHash(ours)
	remote := filepath.Join(b.TempDir(), "remote.git")
	testenv.Git(b, "", "clone", "-q", "--bare", dir, remote)
	testenv.Git(b, remote, "update-ref", "refs/heads/ctx", theirs)
	testenv.Git(b, dir, "remote", "add", "origin", remote)
	s, err := store.Open(bg, dir, store.Actor{Agent: "bench", Machine: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	reset := func() {
		cur, err := s.GitRepo().Resolve(bg, s.BranchRef())
		if err != nil {
			b.Fatal(err)
		}
		if cur != oursH {
			if err := s.GitRepo().UpdateRef(bg, s.BranchRef(), cur, oursH, "bench: reset"); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.Refresh(bg); err != nil {
			b.Fatal(err)
		}
	}
	var res = map[string]float64{}
	cpu := map[string]time.Duration{}
	b.Run("ctx", func(b *testing.B) {
		cpu["ctx"] = 0 // the function runs once with b.N = 1, then with b.N = -benchtime: count the last run only
		var kids time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			reset()
			b.StartTimer()
			before, beforeKids := cpuTime(), childrenTime()
			// As `ctx pull` does: a store opened for the command, reading objects with gitstore's own
			// reader (cmd/ctx/app env.open; the figures before the fifth round read through go-git).
			ps, err := store.Open(bg, dir, store.Actor{Agent: "bench", Machine: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			ps.ReadInProcess()
			r, err := ps.Pull(bg, store.PullOptions{Remote: "origin"})
			_ = ps.Close()
			cpu["ctx"] += cpuTime() - before
			kids += childrenTime() - beforeKids
			if err != nil {
				b.Fatal(err)
			}
			if r.Action != store.PullMerged || len(r.Conflicts) != 0 {
				b.Fatalf("pull: %s, %d conflicts", r.Action, len(r.Conflicts))
			}
		}
		b.StopTimer()
		res["ctx"] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		cpu["ctx"] /= time.Duration(b.N)
		b.ReportMetric(float64(cpu["ctx"].Microseconds())/1000, "cpu-ms/op")
		// The part of it in git children (ls-remote, fetch and what they run).
		b.ReportMetric(float64((kids/time.Duration(b.N)).Microseconds())/1000, "children-cpu-ms/op")
	})
	scratch := filepath.Join(b.TempDir(), "scratch")
	testenv.Git(b, "", "clone", "-q", "--no-checkout", remote, scratch)
	testenv.Git(b, scratch, "config", "user.name", "Bench")
	testenv.Git(b, scratch, "config", "user.email", "bench@example.com")
	testenv.Git(b, scratch, "checkout", "-q", "-B", "ctx", ours)
	b.Run("git", func(b *testing.B) {
		cpu["git"] = 0
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			testenv.Git(b, scratch, "reset", "-q", "--hard", ours)
			b.StartTimer()
			before := cpuTime()
			testenv.Git(b, scratch, "pull", "-q", "--no-rebase", "--no-edit", "origin", "ctx")
			cpu["git"] += cpuTime() - before
		}
		b.StopTimer()
		res["git"] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		cpu["git"] /= time.Duration(b.N)
		b.ReportMetric(float64(cpu["git"].Microseconds())/1000, "cpu-ms/op")
	})
	if c, g := res["ctx"], res["git"]; c > 0 && g > 0 {
		fmt.Fprintf(os.Stderr, "PULL-RATIO ctx=%v git=%v ratio=%.2f; cpu (user+sys, this process and its children) ctx=%v git=%v ratio=%.2f\n",
			time.Duration(c).Round(time.Millisecond), time.Duration(g).Round(time.Millisecond), c/g,
			cpu["ctx"].Round(time.Millisecond), cpu["git"].Round(time.Millisecond), float64(cpu["ctx"])/float64(cpu["git"]))
	}
}

// cpuTime is the user and system CPU time this process and its finished children have used: ctx's pull
// runs in the process (and its git fetch as a child), git's pull as a child.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// childrenTime is the user and system CPU time of this process's finished children.
func childrenTime() time.Duration {
	var kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	return time.Duration(kids.Utime.Nano() + kids.Stime.Nano())
}
