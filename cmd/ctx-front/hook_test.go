package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store/checkoutrec"
)

// gitWith runs git in dir with PATH=path first, and fails the test on an error.
func gitWith(t *testing.T, dir, path string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// hookBins makes the two PATH folders of the post-checkout differential tests: front holds a copy of the
// front as ctx beside a ctx-full that logs each run to log and then runs the real one (so a run the front
// answered leaves no line); alone holds ctx-full under the name ctx, the full program that answers every
// hook (as `go install ./cmd/ctx` puts it).
func hookBins(t *testing.T) (front, alone, log string) {
	t.Helper()
	front, alone = t.TempDir(), t.TempDir()
	log = filepath.Join(front, "full.log")
	b, err := os.ReadFile(filepath.Join(bin, "ctx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(front, "ctx"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"$*\" >> '" + log + "'\nexec '" + filepath.Join(bin, "ctx-full") + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(front, "ctx-full"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bin, "ctx-full"), filepath.Join(alone, "ctx")); err != nil {
		t.Fatal(err)
	}
	return front, alone, log
}

// handedOver returns the runs of ctx-full the front started since the last call, and empties the log.
func handedOver(t *testing.T, log string) string {
	t.Helper()
	b, err := os.ReadFile(log)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// copies makes two copies of repository base (cp -a, so the checkout records start the same).
func copies(t *testing.T, base string) (a, b string) {
	t.Helper()
	parent := t.TempDir()
	a, b = filepath.Join(parent, "front"), filepath.Join(parent, "full")
	for _, d := range []string{a, b} {
		if out, err := exec.Command("cp", "-a", base, d).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
	}
	return a, b
}

// left describes what a post-checkout hook left in repository dir: the files of .context/ but the record,
// the checkout record as read (checkoutrec.Parse of the record and its log) without its generation and
// stat data, whether a log is there, the files whose stat data in the record are the file's own (a copy
// made with cp -a has other inodes: a file a refresh wrote has its own, one it did not has the copied
// record's), the hooks' stamp ("none"), whether the journal is there, and whether the tracked-files check's
// cache holds the key of the index and HEAD now.
func left(t *testing.T, dir string) string {
	t.Helper()
	var out strings.Builder
	root := filepath.Join(dir, ".context")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasPrefix(rel, ".ctx-checkout") {
			return nil
		}
		b, err := os.ReadFile(p)
		fmt.Fprintf(&out, "file %s %q\n", rel, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, checkoutrec.RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	lb, err := os.ReadFile(filepath.Join(root, checkoutrec.RecordLogFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	rec, err := checkoutrec.Parse("record", b, lb)
	if err != nil {
		t.Fatal(err)
	}
	var statOK []string
	for p, e := range rec.Files {
		if e.Stat != nil {
			fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
			if err == nil && *checkoutrec.StatOf(fi) == *e.Stat {
				statOK = append(statOK, p)
			}
			e.Stat = nil
			rec.Files[p] = e
		}
	}
	sort.Strings(statOK)
	rec.Gen = ""
	rb, _ := json.Marshal(rec)
	fmt.Fprintf(&out, "record %s\nlog %v\nstat data that are the file's %q\n", rb, len(lb) > 0, statOK)
	stamp, err := os.ReadFile(filepath.Join(dir, ".git", "ctx-hook-stamp"))
	if err != nil {
		stamp = []byte("none")
	}
	fmt.Fprintf(&out, "stamp %s\n", stamp)
	_, err = os.Stat(filepath.Join(dir, ".git", "ctx", "checkout-journal.json"))
	fmt.Fprintf(&out, "journal %v\n", err == nil)
	key := ""
	if fi, err := os.Lstat(filepath.Join(dir, ".git", "index")); err == nil {
		head := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "HEAD"))
		key = fmt.Sprintf("v1 %+v %s\n", *checkoutrec.StatOf(fi), head)
	}
	cache, _ := os.ReadFile(filepath.Join(dir, ".git", "ctx", "checkout-untracked"))
	fmt.Fprintf(&out, "untracked cache current %v\n", string(cache) == key)
	return out.String()
}

// plantMany commits files (path -> content, mode 100644) on the context branch in one commit, written
// with one git fast-import: the objects go into one pack, not one loose file each (1,800 loose objects
// cost seconds of system time to write and again to copy the repository).
func plantMany(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	parent := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"))
	var in strings.Builder
	fmt.Fprintf(&in, "commit refs/heads/ctx\ncommitter %s <%s> %d +0000\ndata 5\nplant\nfrom %s\n",
		testenv.Name, testenv.Email, time.Now().Unix(), parent)
	for p, c := range files {
		fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", p, len(c), c)
	}
	testenv.GitIn(t, dir, in.String(), "fast-import", "--quiet")
	if got := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "refs/heads/ctx^")); got != parent {
		t.Fatalf("plantMany: the new commit's parent is %s, want %s", got, parent)
	}
}

// TestPostCheckoutSameAsFull: with the hooks installed, real `git checkout`s after the context branch moved
// leave the same .context/, checkout record, stamp and tracked-files cache, and no journal, whether the
// front answered the hook or ctx-full did; the front answers the moves of knowledge and convention entries
// (added, changed, removed; a record read whole and one read lazily, whose changes go to its log) and hands
// the others to ctx-full (a decision, more than 100 paths). Two copies of one repository, the same moves.
func TestPostCheckoutSameAsFull(t *testing.T) {
	base := testenv.NewRepo(t)
	full(t, base, "init")
	for _, k := range []string{"a", "b", "c"} {
		full(t, base, "knowledge", "set", k, "entry "+k)
	}
	full(t, base, "convention", "set", "style", "gofmt")
	full(t, base, "hooks", "install")
	testenv.Git(t, base, "branch", "other")
	tip := func() string { return strings.TrimSpace(testenv.Git(t, base, "rev-parse", "refs/heads/ctx")) }
	t0 := tip()
	full(t, base, "knowledge", "set", "a", "entry a, second version")
	full(t, base, "knowledge", "rm", "b")
	full(t, base, "convention", "set", "naming", "short names")
	t1 := tip()
	full(t, base, "decision", "add", "--context", "c", "--decision", "d", "--consequences", "e", "Use git")
	t2 := tip()
	many := map[string]string{}
	for i := 0; i < 1800; i++ {
		many[fmt.Sprintf("knowledge/k%04d.md", i)] = fmt.Sprintf("---\nauthor: x\n---\nentry %d\n", i)
	}
	plantMany(t, base, many)
	t3 := tip() // 1,800 more entries: a record of more than 256 KiB (mapped by the front)
	full(t, base, "knowledge", "set", "k0007", "changed")
	full(t, base, "knowledge", "rm", "k0008")
	t4 := tip()
	testenv.Git(t, base, "update-ref", "refs/heads/ctx", t0)
	full(t, base, "hooks", "run", "post-checkout", t0, t0, "1") // .context/ at t0

	front, alone, log := hookBins(t)
	a, b := copies(t, base)
	steps := []struct {
		to     string
		served bool // the front answers
		big    bool // ctx-full run directly, with a time limit for 1,800 files
	}{
		{t0 + "~1", false, false}, // c and the conventions folder removed: a folder is ctx-full's
		{t0, false, false},        // back
		{t1, true, false},         // a changed, b removed, a convention added
		{t0, true, false},
		{t1, true, false},
		{t2, false, false}, // a decision: ctx-full's
		{t1, false, false}, // the decisions folder removed
		{t3, false, true},  // 1,800 paths
		{t4, true, false},  // one changed, one removed: a lazily read record, a line of its log
		{t3, true, false},
		{t4, true, false},
		{t1, false, true}, // 1,800 paths again
		{t0, true, false},
	}
	branch := []string{"main", "other"}
	for i, st := range steps {
		for _, d := range []string{a, b} {
			testenv.Git(t, d, "update-ref", "refs/heads/ctx", st.to)
			if !st.big {
				path := map[string]string{a: front, b: alone}[d]
				gitWith(t, d, path, "checkout", "-q", branch[i%2])
				continue
			}
			cmd := exec.Command(filepath.Join(bin, "ctx-full"), "hooks", "run", "post-checkout", st.to, st.to, "1")
			cmd.Dir, cmd.Env = d, append(os.Environ(), "CTX_HOOK_TIMEOUT=120")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("step %d: ctx-full hooks run: %v: %s", i, err, out)
			}
		}
		got := handedOver(t, log)
		if st.served && got != "" {
			t.Errorf("step %d: the front handed over: %s", i, got)
		}
		if !st.served && !st.big && !strings.Contains(got, "hooks run post-checkout") {
			t.Errorf("step %d: the front answered, want ctx-full (%q)", i, got)
		}
		l1, l2 := left(t, a), left(t, b)
		if l1 != l2 {
			t.Fatalf("step %d: the front and ctx-full left different results; lines only in the front's, then only in ctx-full's:\n%s\n--\n%s", i, onlyIn(l1, l2), onlyIn(l2, l1))
		}
		// Every record is read lazily and a change appended while the log stays under a quarter of the
		// record: a line fits the small record of steps 0 and 6 (the one before them was written whole) and
		// the big one of steps 8 to 10; the others' lines would pass the quarter (the record is rewritten).
		if lazy := strings.Contains(l1, "\nlog true\n"); lazy != (i == 0 || i == 6 || i >= 8 && i <= 10) {
			t.Errorf("step %d: the record has a log: %v", i, lazy)
		}
		// on both copies: a status writes the status index, which a later refresh of many paths carries
		// (docs/architecture.md "Carried by a refresh"), so both must have had the same runs
		for _, d := range []string{a, b} {
			if out := full(t, d, "status"); !strings.Contains(out, "/.context, clean\n") {
				t.Errorf("step %d: ctx status after the hook:\n%s", i, out)
			}
		}
	}
	// Nothing moved: the shim skips ctx (the stamp holds); run directly, the front answers with nothing.
	r := runBin(t, a, filepath.Join(front, "ctx"), "hooks", "run", "post-checkout", strings.Repeat("0", 40), strings.Repeat("0", 40), "1")
	if r != (result{}) || handedOver(t, log) != "" {
		t.Errorf("a hook with nothing moved: %+v, handed over %v", r, r)
	}
}

// TestPostCheckoutHandsOver: off the happy path, the front hands the hook to ctx-full before it writes
// anything, so what is left (files, record, stamp, journal, cache), the output and the exit code are those
// of ctx-full alone, run on a copy of the same repository; each case is one thing the front does not do.
func TestPostCheckoutHandsOver(t *testing.T) {
	base := testenv.NewRepo(t)
	full(t, base, "init")
	for _, k := range []string{"a", "b", "c"} {
		full(t, base, "knowledge", "set", k, "entry "+k)
	}
	full(t, base, "hooks", "install")
	t0 := strings.TrimSpace(testenv.Git(t, base, "rev-parse", "refs/heads/ctx"))
	full(t, base, "knowledge", "set", "c", "entry c, second version")
	t1 := strings.TrimSpace(testenv.Git(t, base, "rev-parse", "refs/heads/ctx"))
	testenv.Git(t, base, "update-ref", "refs/heads/ctx", t0)
	full(t, base, "hooks", "run", "post-checkout", t0, t0, "1")
	front, _, log := hookBins(t)

	write := func(p, content string) func(t *testing.T, d string) {
		return func(t *testing.T, d string) {
			t.Helper()
			if err := os.MkdirAll(filepath.Dir(filepath.Join(d, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, p), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	editRecord := func(old, new string) func(t *testing.T, d string) {
		return func(t *testing.T, d string) {
			t.Helper()
			p := filepath.Join(d, ".context", checkoutrec.RecordFile)
			b, err := os.ReadFile(p)
			if err != nil || !strings.Contains(string(b), old) {
				t.Fatalf("record: %v %q", err, b)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name string
		prep func(t *testing.T, d string) // on the repository both copies are made of, before the move
		move func(t *testing.T, d string) // on each copy, after the context branch moved
		to   string                       // where the context branch moves ("": t1)
		env  []string
		flag string
	}{
		{name: "hand edit", move: write(".context/knowledge/c.md", "my own text\n")},
		{name: "hand edit, same size", move: func(t *testing.T, d string) {
			p := filepath.Join(d, ".context", "knowledge", "c.md")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-2] = 'X'
			fi, _ := os.Stat(p)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_ = os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}},
		{name: "journal left", move: write(".git/ctx/checkout-journal.json", `{"write":{},"remove":null}`)},
		{name: "record incomplete", move: editRecord(`"clean":true`, `"incomplete":true,"clean":true`)},
		{name: "record not clean", move: editRecord(`,"clean":true`, ``)},
		{name: "record corrupt", move: write(".context/"+checkoutrec.RecordFile, `{"commits":`)},
		{name: "adapters", move: write(".git/ctx/adapters/0000000000000000.json", "{}")},
		{name: "rebase", move: write(".git/rebase-merge/head-name", "refs/heads/main\n")},
		{name: "hooks off", env: []string{"CTX_HOOKS=0"}},
		{name: "another index", env: []string{"GIT_INDEX_FILE=.git/index"}},
		{name: "file checkout", flag: "0"},
		{name: "a private entry", prep: func(t *testing.T, d string) {
			full(t, d, "knowledge", "set", "--scope", "private", "mine", "private text")
		}},
		{name: "activity", prep: func(t *testing.T, d string) {
			testenv.Git(t, d, "update-ref", "refs/heads/ctx", t1)
			plant(t, d, "activity/someone/cli--elsewhere.json", "100644", "{}\n")
		}, to: "ctx"},
		{name: "an executable entry", prep: func(t *testing.T, d string) {
			testenv.Git(t, d, "update-ref", "refs/heads/ctx", t1)
			plant(t, d, "knowledge/run.md", "100755", "run me\n")
		}, to: "ctx"},
		{name: "a folder entry", prep: func(t *testing.T, d string) {
			testenv.Git(t, d, "update-ref", "refs/heads/ctx", t1)
			plant(t, d, "knowledge/x/y.md", "100644", "nested\n")
		}, to: "ctx"},
		{name: "checkout lock held", move: func(t *testing.T, d string) {
			// Held for a moment by another process: the front does not wait, ctx-full does.
			holder := exec.Command("flock", filepath.Join(d, ".git", "ctx", "checkout.lock"), "sleep", "0.5")
			if err := holder.Start(); err != nil {
				t.Skip("no flock(1):", err)
			}
			t.Cleanup(func() { _ = holder.Wait() })
			for i := 0; i < 100; i++ { // until the lock is taken
				if exec.Command("flock", "-n", filepath.Join(d, ".git", "ctx", "checkout.lock"), "true").Run() != nil {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Fatal("flock(1) did not take the lock")
		}},
		{name: "tracked in HEAD", prep: func(t *testing.T, d string) {
			write("tracked/.keep", "")(t, d)
			testenv.Git(t, d, "add", "-f", ".context/knowledge/a.md")
			testenv.Git(t, d, "commit", "-q", "-m", "track a file of .context")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			caseBase := filepath.Join(t.TempDir(), "base")
			if out, err := exec.Command("cp", "-a", base, caseBase).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			to := t1
			if c.prep != nil {
				c.prep(t, caseBase)
				if c.to == "ctx" {
					to = strings.TrimSpace(testenv.Git(t, caseBase, "rev-parse", "refs/heads/ctx"))
					testenv.Git(t, caseBase, "update-ref", "refs/heads/ctx", t0)
				}
			}
			a, b := copies(t, caseBase)
			flag := "1"
			if c.flag != "" {
				flag = c.flag
			}
			var outs [2]string
			for i, d := range []string{a, b} {
				testenv.Git(t, d, "update-ref", "refs/heads/ctx", to)
				if c.move != nil {
					c.move(t, d)
				}
				prog := filepath.Join(front, "ctx")
				if d == b {
					prog = filepath.Join(bin, "ctx-full")
				}
				cmd := exec.Command(prog, "hooks", "run", "post-checkout", t0, to, flag)
				cmd.Dir, cmd.Env = d, append(os.Environ(), c.env...)
				out, err := cmd.CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				outs[i] = fmt.Sprintf("exit %d\n%s", code, strings.ReplaceAll(string(out), d, "DIR"))
			}
			if got := handedOver(t, log); !strings.Contains(got, "hooks run post-checkout") {
				t.Errorf("the front answered: want ctx-full (%q)", got)
			}
			if outs[0] != outs[1] {
				t.Errorf("through the front:\n%s\nctx-full alone:\n%s", outs[0], outs[1])
			}
			if l1, l2 := left(t, a), left(t, b); l1 != l2 {
				t.Errorf("the front left\n%s\nctx-full left\n%s", clip(l1), clip(l2))
			}
		})
	}
}

// onlyIn returns the lines of a that b does not have (for a failure's message).
func onlyIn(a, b string) string {
	have := map[string]bool{}
	for _, l := range strings.Split(b, "\n") {
		have[l] = true
	}
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !have[l] {
			out = append(out, l)
		}
	}
	return clip(strings.Join(out, "\n"))
}

// TestPostCheckoutAwayFromTrackingBranch: a checkout away from a branch whose commit tracks a file under
// .context/ (git add -f) makes git delete it. The shim's stamp still holds (no ref of ctx's moved), yet the
// shim starts ctx and the front hands the hook to ctx-full, which puts the context branch's version back.
// A checkout between two branches that track nothing there, stamp holding, starts no ctx-full.
func TestPostCheckoutAwayFromTrackingBranch(t *testing.T) {
	base := testenv.NewRepo(t)
	full(t, base, "init")
	full(t, base, "knowledge", "set", "a", "entry a")
	full(t, base, "hooks", "install")
	front, _, log := hookBins(t)
	gitWith(t, base, front, "checkout", "-q", "-b", "plain")
	gitWith(t, base, front, "checkout", "-q", "-b", "feature")
	handedOver(t, log)
	gitWith(t, base, front, "add", "-f", ".context/knowledge/a.md")
	gitWith(t, base, front, "commit", "-q", "-m", "track .context")
	gitWith(t, base, front, "checkout", "-q", "plain")
	if got := handedOver(t, log); !strings.Contains(got, "hooks run post-checkout") {
		t.Errorf("the front did not hand the hook to ctx-full: %q", got)
	}
	b, err := os.ReadFile(filepath.Join(base, ".context", "knowledge", "a.md"))
	if err != nil || !strings.Contains(string(b), "entry a") {
		t.Fatalf("the file git removed is not back: %v %q", err, b)
	}
	if st := full(t, base, "status"); !strings.Contains(st, ", clean") {
		t.Errorf("ctx status:\n%s", st)
	}
	// Between branches that track nothing under .context/: no ctx-full.
	testenv.Git(t, base, "branch", "plain2")
	gitWith(t, base, front, "checkout", "-q", "plain2")
	gitWith(t, base, front, "checkout", "-q", "plain")
	if got := handedOver(t, log); got != "" {
		t.Errorf("ctx-full ran for checkouts that removed nothing: %q", got)
	}
}
