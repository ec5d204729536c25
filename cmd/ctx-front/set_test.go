package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/gitstore/objwrite"
	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// runEnv runs program path with args in dir with extra environment variables.
func runEnv(t *testing.T, dir, path string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", path, err)
	}
	return result{out.String(), errb.String(), code}
}

// writeState is what a write leaves in repository dir that both programs must leave alike: the context
// branch's tip (an object name: equal tips are equal commits, trees and blobs, byte for byte), the last
// line of its reflog, the lock and mark files, the write counter, and .context/ with its checkout record
// (left).
func writeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "tip %s", testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"))
	logb, _ := os.ReadFile(filepath.Join(dir, ".git", "logs", "refs", "heads", "ctx"))
	lines := strings.Split(strings.TrimSuffix(string(logb), "\n"), "\n")
	fmt.Fprintf(&b, "reflog %d lines, last %q\n", len(lines), lines[len(lines)-1])
	for _, p := range []string{"refs/heads/ctx.lock", "ctx/transaction.json", "ctx/lock.holder"} {
		_, err := os.Lstat(filepath.Join(dir, ".git", p))
		fmt.Fprintf(&b, "%s %v\n", p, err == nil)
	}
	marks, _ := os.ReadDir(filepath.Join(dir, ".git", "ctx", "reflocks"))
	writes, _ := os.ReadFile(filepath.Join(dir, ".git", "ctx", "writes"))
	fmt.Fprintf(&b, "marks %d writes %q\n", len(marks), writes)
	b.WriteString(left(t, dir))
	return b.String()
}

// setBins is hookBins for writes: front holds the front as ctx beside a ctx-full that logs its runs,
// alone ctx-full under the name ctx.
func setBins(t *testing.T) (front, alone, log string) { return hookBins(t) }

// TestSetSameAsFull: `ctx knowledge set KEY TEXT` and `ctx convention set KEY TEXT` of existing public
// entries, written by the front on two copies of one repository, one whose ctx is the pair and one whose
// ctx is ctx-full alone, with one clock (CTX_TEST_NOW): the same standard output, standard error and
// exit code, the same commit (so the same blob, trees and commit bytes), reflog line, counter,
// .context/ files and checkout record, and git fsck clean. Each write the front must answer is checked to
// have started no ctx-full; each case it must hand over (a flag, a new key, a private entry, a ref locked
// by git, an interrupted transaction, a hand edit, a secret, a missing identity cache, the branch checked
// out, front matter that is not flat (flatMeta)...) is checked to have started ctx-full and to leave what ctx-full alone
// leaves.
func TestSetSameAsFull(t *testing.T) {
	base := testenv.NewRepo(t)
	full(t, base, "init")
	for _, k := range []string{"arch", "raw", "fm", "agent"} {
		full(t, base, "knowledge", "set", k, "entry "+k)
	}
	full(t, base, "convention", "set", "style", "gofmt")
	// Front matter a teammate's tool wrote: unknown keys, comments, odd quoting, kept by both.
	plant(t, base, "knowledge/fm.md", "100644", "---\ntitle: \"A: title\"\n# a comment\nauthor: someone <s@x>\ntags: [a, b]\nupdated_at: 2020-01-01T00:00:00Z\nprovenance: owner_approved\nextra:\n  nested: 1\n---\nbody\n")
	plant(t, base, "knowledge/raw.md", "100644", "no front matter at all")
	// Front matter of ctx's flat shape with keys and quoting ctx does not write: the front serves it.
	plant(t, base, "knowledge/flat.md", "100644", "---\ntitle: \"A: title\"\nauthor: someone <s@x>\nversion: 2\nupdated_at: 2020-01-01T00:00:00Z\nprovenance: owner_approved\n---\nbody\n")
	full(t, base, "knowledge", "set", "agent", "refresh after the plants")
	frontBin, aloneBin, log := setBins(t)
	a, b := copies(t, base)
	clock := 1_800_000_000
	step := func(name string, served bool, env []string, args ...string) {
		t.Helper()
		clock += 7
		env = append([]string{fmt.Sprintf("CTX_TEST_NOW=%d", clock)}, env...)
		handedOver(t, log)
		got := runEnv(t, a, filepath.Join(frontBin, "ctx"), env, args...)
		runs := handedOver(t, log)
		want := runEnv(t, b, filepath.Join(aloneBin, "ctx"), env, args...)
		if served && runs != "" || !served && runs == "" {
			t.Errorf("%s: ctx %q: ctx-full ran %q, want served by the front %v", name, args, runs, served)
		}
		if got != want {
			t.Errorf("%s: ctx %q:\nfront: exit %d %q stderr %q\nctx-full: exit %d %q stderr %q", name, args,
				got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
		}
		if ga, gb := writeState(t, a), writeState(t, b); ga != gb {
			t.Errorf("%s: ctx %q left\n%s\nctx-full alone left\n%s", name, args, ga, gb)
		}
	}
	// The copies have new paths: the identity cache's stamp does not hold, so the first write is ctx-full's
	// (which asks git and saves the cache).
	step("missing identity cache", false, nil, "knowledge", "set", "arch", "first version here")
	step("changed entry", true, nil, "knowledge", "set", "arch", "second version\nwith two lines")
	step("same content", true, nil, "knowledge", "set", "arch", "second version\nwith two lines")
	step("convention", true, nil, "convention", "set", "style", "gofmt and vet")
	// Comments, a list, a nested mapping: yaml.v3's (ctx-full's), not the front's flat reader.
	step("unknown front matter kept", false, nil, "knowledge", "set", "fm", "new body: with a colon")
	step("flat front matter of another tool", true, nil, "knowledge", "set", "flat", "new body")
	step("no front matter", true, nil, "knowledge", "set", "raw", "now with front matter")
	step("agent and session", true, []string{"CTX_AGENT=claude-code", "CTX_SESSION=s-1", "CTX_MACHINE=box"},
		"knowledge", "set", "agent", "written by an agent")
	step("quoting", true, nil, "knowledge", "set", "arch", "'quotes' \"and\" # hashes: --- yes\n---\nno: front")
	step("unicode", true, nil, "knowledge", "set", "arch", "naïve café — 日本語 ✓\ttab")
	step("a flag", false, nil, "knowledge", "set", "--provenance", "owner_approved", "arch", "x y")
	step("text like a flag", false, nil, "knowledge", "set", "arch", "-x")
	step("new key", false, nil, "knowledge", "set", "newkey", "a new entry")
	step("blank", false, nil, "knowledge", "set", "arch", "   ")
	step("secret in the text", false, nil, "knowledge", "set", "arch", "token: ghp_Zx8Kq2Lm9Np4Rt6Vw1Yb3Cd5Fg7Hj0Ks2Mq4")
	for _, d := range []string{a, b} {
		if err := os.WriteFile(filepath.Join(d, ".context", "knowledge", "arch.md"), []byte("edited by hand\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	step("hand-edited file", false, nil, "knowledge", "set", "arch", "over a hand edit")
	for _, d := range []string{a, b} {
		if err := os.WriteFile(filepath.Join(d, ".git", "ctx", "transaction.json"), []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	step("interrupted transaction", false, nil, "knowledge", "set", "style", "after a journal")
	step("served again", true, nil, "knowledge", "set", "style", "after a journal, again")
	// A .context/ of an older ctx (no .gitignore there, no line in info/exclude: a branch from plain git),
	// then one whose .gitignore was edited: ctx-full puts both back (store.ensureIgnored), the front never
	// writes without them.
	for i, edit := range []func(d string) error{
		func(d string) error {
			if err := os.Remove(filepath.Join(d, ".context", ".gitignore")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(d, ".git", "info", "exclude"), nil, 0o644)
		},
		func(d string) error {
			return os.WriteFile(filepath.Join(d, ".context", ".gitignore"), []byte("!*\n"), 0o644)
		},
	} {
		for _, d := range []string{a, b} {
			if err := edit(d); err != nil {
				t.Fatal(err)
			}
		}
		step("no .gitignore of ctx's in .context", false, nil, "knowledge", "set", "style", fmt.Sprintf("ignored again %d", i))
		for _, d := range []string{a, b} {
			if ig, err := os.ReadFile(filepath.Join(d, ".context", ".gitignore")); err != nil || !strings.HasSuffix(string(ig), "\n*\n") {
				t.Fatalf(".context/.gitignore after the write: %q, %v", ig, err)
			}
			if ex, _ := os.ReadFile(filepath.Join(d, ".git", "info", "exclude")); i == 0 && !strings.Contains(string(ex), "/.context/") {
				t.Fatalf("info/exclude after the write: %q", ex)
			}
			if st := testenv.Git(t, d, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Fatalf("git status after the write: %q", st)
			}
		}
		step("served with it back", true, nil, "knowledge", "set", "style", fmt.Sprintf("served again %d", i))
	}
	for _, d := range []string{a, b} {
		testenv.Git(t, d, "checkout", "-q", "ctx")
	}
	step("branch checked out", false, nil, "knowledge", "set", "style", "on the checked-out branch")
	for _, d := range []string{a, b} {
		testenv.Git(t, d, "checkout", "-q", "-")
	}
	step("served once more", true, nil, "knowledge", "set", "style", "back on the main branch")
	step("private entry", false, nil, "knowledge", "set", "--scope", "private", "mine", "private")
	step("with a private ref", false, nil, "knowledge", "set", "style", "a private ref is there")
	step("remove the private entry", false, nil, "knowledge", "rm", "mine")
	// The private ref stays (its tip an empty tree): every later write is ctx-full's.
	step("a private ref, empty", false, nil, "knowledge", "set", "style", "the private ref is still there")
	for _, d := range []string{a, b} {
		if out, err := exec.Command("git", "-C", d, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
			t.Errorf("git fsck in %s: %v\n%s", d, err, out)
		}
	}
}

// TestSetRefLocked: a <ref>.lock of git's (not ctx's) makes the front hand over before it writes; ctx-full
// waits for it and refuses, and the branch does not move.
func TestSetRefLocked(t *testing.T) {
	dir := testenv.NewRepo(t)
	full(t, dir, "init")
	full(t, dir, "knowledge", "set", "arch", "one")
	frontBin, _, log := setBins(t)
	tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
	if err := os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "ctx.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runEnv(t, dir, filepath.Join(frontBin, "ctx"), nil, "knowledge", "set", "arch", "two")
	if r.code == 0 || !strings.Contains(r.stderr, "is locked") || handedOver(t, log) == "" {
		t.Fatalf("with a foreign ref lock: exit %d, stderr %q, want ctx-full's refusal", r.code, r.stderr)
	}
	if now := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"); now != tip {
		t.Fatal("the branch moved under a foreign lock")
	}
}

// TestSetConcurrent: several processes of the pair and of ctx-full alone write at once, each its own
// entries in turn: every write is acknowledged, each entry ends as its last write, the branch holds a
// commit per write, and git fsck is clean. Fronts that find the ctx lock taken hand over to ctx-full,
// which waits for it.
func TestSetConcurrent(t *testing.T) {
	dir := testenv.NewRepo(t)
	full(t, dir, "init")
	const procs, writes = 6, 8
	for p := 0; p < procs; p++ {
		full(t, dir, "knowledge", "set", fmt.Sprintf("p%d", p), "start")
	}
	frontBin, aloneBin, _ := setBins(t)
	before := strings.TrimSpace(testenv.Git(t, dir, "rev-list", "--count", "refs/heads/ctx"))
	var wg sync.WaitGroup
	errs := make(chan string, procs*writes)
	for p := 0; p < procs; p++ {
		bin := filepath.Join(frontBin, "ctx")
		if p%3 == 2 {
			bin = filepath.Join(aloneBin, "ctx")
		}
		wg.Add(1)
		go func(p int, bin string) {
			defer wg.Done()
			for i := 0; i < writes; i++ {
				cmd := exec.Command(bin, "knowledge", "set", fmt.Sprintf("p%d", p), fmt.Sprintf("write %d of %d", i, p))
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), ": committed ") {
					errs <- fmt.Sprintf("p%d write %d: %v %s", p, i, err, out)
				}
			}
		}(p, bin)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for p := 0; p < procs; p++ {
		got := full(t, dir, "knowledge", "get", fmt.Sprintf("p%d", p))
		if want := fmt.Sprintf("write %d of %d\n", writes-1, p); got != want {
			t.Errorf("p%d holds %q, want %q", p, got, want)
		}
	}
	after := strings.TrimSpace(testenv.Git(t, dir, "rev-list", "--count", "refs/heads/ctx"))
	nb, err := strconv.Atoi(before)
	if err != nil {
		t.Fatal(err)
	}
	na, err := strconv.Atoi(after)
	if err != nil {
		t.Fatal(err)
	}
	if na-nb != procs*writes {
		t.Errorf("%d commits for %d writes", na-nb, procs*writes)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	if st := full(t, dir, "status"); strings.Contains(st, "hand") {
		t.Errorf("status after concurrent writes: %s", st)
	}
}

// TestSetRefreshFailureWarns: a write the front commits whose refresh of .context/ then fails (here the
// hooks' stamp, which the refresh removes first, is a folder that holds a file) exits 0 with the
// commit on standard output and ctx-full's warning on standard error: committed, .context/ not
// refreshed, the next ctx command refreshes it. Once the cause is gone, the next ctx-full command does.
func TestSetRefreshFailureWarns(t *testing.T) {
	dir := testenv.NewRepo(t)
	full(t, dir, "init")
	full(t, dir, "knowledge", "set", "arch", "one")
	frontBin, alone, log := setBins(t)
	stamp := filepath.Join(dir, ".git", "ctx-hook-stamp")
	os.Remove(stamp)
	if err := os.MkdirAll(filepath.Join(stamp, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
	r := runEnv(t, dir, filepath.Join(frontBin, "ctx"), nil, "knowledge", "set", "arch", "two")
	if h := handedOver(t, log); h != "" {
		t.Fatalf("the front handed over: %s", h)
	}
	want := "ctx: warning: committed, but refreshing .context failed (the next ctx command refreshes it; ctx status shows what it holds)"
	if r.code != 0 || !strings.Contains(r.stdout, "knowledge arch: committed ") || !strings.HasPrefix(r.stderr, want) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if testenv.Git(t, dir, "rev-parse", "refs/heads/ctx") == tip {
		t.Fatal("the branch did not move")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".context", "knowledge", "arch.md")); strings.Contains(string(b), "two") {
		t.Fatal("the refresh did not fail: the test's fault is not one")
	}
	// ctx-full alone says the same, with the error.
	r = runEnv(t, dir, filepath.Join(alone, "ctx"), nil, "knowledge", "set", "arch", "three")
	if r.code != 0 || !strings.HasPrefix(r.stderr, strings.TrimSuffix(want, ")")) {
		t.Fatalf("ctx-full alone: exit %d, stderr %q", r.code, r.stderr)
	}
	// The cause gone, the next ctx command refreshes .context/.
	if err := os.RemoveAll(stamp); err != nil {
		t.Fatal(err)
	}
	full(t, dir, "status")
	if b, _ := os.ReadFile(filepath.Join(dir, ".context", "knowledge", "arch.md")); !strings.Contains(string(b), "three") {
		t.Fatalf("after ctx status, .context/knowledge/arch.md is %q", b)
	}
}

// TestStoreKeepsObjects: store.read answers from what the process kept (the objects a write wrote, which
// its refresh reads again) and keeps the commits and trees it read, so that a second read of one does not
// go to the repository (here: its loose file removed in between); blobs read are not kept.
func TestStoreKeepsObjects(t *testing.T) {
	dir := testenv.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "a.md")
	testenv.Git(t, dir, "commit", "-q", "-m", "one")
	s, ok := openStoreIn(dir)
	if !ok {
		// No ctx store here: a store of the repository's objects alone.
		s = &store{r: objread.NewReader(maxEntryBytes, filepath.Join(dir, ".git", "objects"))}
	}
	defer s.close()
	loose := func(h string) string { return filepath.Join(dir, ".git", "objects", h[:2], h[2:]) }
	var names []string
	for _, rev := range [][]string{{"rev-parse", "HEAD"}, {"log", "-1", "--format=%T"}, {"hash-object", "a.md"}} {
		names = append(names, testenv.Git(t, dir, rev...))
	}
	for _, name := range names {
		rev := name
		h, _ := parseHash(name)
		typ, first, err := s.read(h)
		if err != nil {
			t.Fatalf("%s: %v", rev, err)
		}
		if err := os.Chmod(filepath.Dir(loose(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(loose(name)); err != nil {
			t.Fatal(err)
		}
		again, second, err := s.read(h)
		kept := typ != objread.Blob
		if kept && (err != nil || again != typ || !bytes.Equal(first, second)) {
			t.Errorf("%s: read again: %v %v %v", rev, again, err, bytes.Equal(first, second))
		}
		if !kept && err == nil {
			t.Errorf("%s: a blob was kept", rev)
		}
	}
	data := []byte("kept, never written\n")
	h := objwrite.Name(objread.Blob, data)
	if _, _, err := s.read(h); err == nil {
		t.Fatal("an object neither written nor kept was read")
	}
	s.keep(h, objread.Blob, data)
	if typ, got, err := s.read(h); err != nil || typ != objread.Blob || !bytes.Equal(got, data) {
		t.Fatalf("kept object: %v %q %v", typ, got, err)
	}
}

// TestSetLinkedFolderHandsOver: with .context/conventions replaced by a symbolic link, the front writes
// nothing through it and hands the write to ctx-full, which commits, warns and leaves its record
// incomplete; with the link removed, the next write is ctx-full's again (the record is incomplete), which
// checks the entry out, and the one after is the front's.
func TestSetLinkedFolderHandsOver(t *testing.T) {
	dir := testenv.NewRepo(t)
	full(t, dir, "init")
	full(t, dir, "convention", "set", "style", "gofmt")
	frontBin, _, log := setBins(t)
	full(t, dir, "convention", "set", "style", "gofmt, the identity cache saved")
	conv, target := filepath.Join(dir, ".context", "conventions"), t.TempDir()
	if err := os.RemoveAll(conv); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, conv); err != nil {
		t.Fatal(err)
	}
	r := runEnv(t, dir, filepath.Join(frontBin, "ctx"), nil, "convention", "set", "style", "through a link?")
	if r.code != 0 || handedOver(t, log) == "" || !strings.Contains(r.stderr, "conventions/style.md") {
		t.Fatalf("write with a linked folder: exit %d, stderr %q; want ctx-full's warning", r.code, r.stderr)
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Fatalf("written through the link: %v", ents)
	}
	if err := os.Remove(conv); err != nil {
		t.Fatal(err)
	}
	if r := runEnv(t, dir, filepath.Join(frontBin, "ctx"), nil, "convention", "set", "style", "after the link"); r.code != 0 || handedOver(t, log) == "" {
		t.Fatalf("write after the link: exit %d %q, want ctx-full's (incomplete record)", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(conv, "style.md")); err != nil || !strings.Contains(string(b), "after the link") {
		t.Fatalf("style.md not checked out: %q %v", b, err)
	}
	if r := runEnv(t, dir, filepath.Join(frontBin, "ctx"), nil, "convention", "set", "style", "served"); r.code != 0 || handedOver(t, log) != "" {
		t.Fatalf("the next write: exit %d %q, want the front's", r.code, r.stderr)
	}
}

// TestSetObjectsFailLeaveNothing: a write whose objects cannot be written (every missing fan-out folder of
// .git/objects is a file here) hands over after the front made its refresh's files under temporary names
// and took the ref lock, while its objects were being written (setWrite.run): the branch does not move,
// and no temporary file, journal, ref lock or mark of the front is left. Once the objects can be written,
// the front serves the write.
func TestSetObjectsFailLeaveNothing(t *testing.T) {
	dir := testenv.NewRepo(t)
	full(t, dir, "init")
	full(t, dir, "knowledge", "set", "arch", "one")
	frontBin, _, log := setBins(t)
	env := []string{"CTX_TEST_NOW=1800000000"}
	if r := runEnv(t, dir, filepath.Join(frontBin, "ctx"), env, "knowledge", "set", "arch", "two"); r.code != 0 || handedOver(t, log) != "" {
		t.Fatalf("first write: exit %d, stderr %q, or handed over", r.code, r.stderr)
	}
	objects := filepath.Join(dir, ".git", "objects")
	var blockers []string
	for i := 0; i < 256; i++ {
		p := filepath.Join(objects, fmt.Sprintf("%02x", i))
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		blockers = append(blockers, p)
	}
	tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
	r := runEnv(t, dir, filepath.Join(frontBin, "ctx"), env, "knowledge", "set", "arch", "three")
	if handedOver(t, log) == "" || r.code == 0 {
		t.Fatalf("objects not writable: exit %d, stdout %q: want the front to hand over and ctx-full to fail", r.code, r.stdout)
	}
	if now := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"); now != tip {
		t.Fatal("the branch moved")
	}
	for _, d := range []string{filepath.Join(dir, ".context", "knowledge"), filepath.Join(dir, ".git", "ctx"),
		filepath.Join(dir, ".git", "ctx", "reflocks"), filepath.Join(dir, ".git", "refs", "heads")} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			if strings.Contains(e.Name(), ".tmp") || e.Name() == "checkout-journal.json" || strings.HasSuffix(d, "reflocks") ||
				strings.HasSuffix(d, "heads") && strings.HasSuffix(e.Name(), ".lock") {
				t.Errorf("left in %s: %s", d, e.Name())
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".context", "knowledge", "arch.md")); !strings.Contains(string(b), "two") {
		t.Errorf(".context/knowledge/arch.md changed: %q", b)
	}
	for _, p := range blockers {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	r = runEnv(t, dir, filepath.Join(frontBin, "ctx"), env, "knowledge", "set", "arch", "three")
	if r.code != 0 || !strings.Contains(r.stdout, "knowledge arch: committed ") || handedOver(t, log) != "" {
		t.Fatalf("after the objects could be written: exit %d, stdout %q, stderr %q, or handed over", r.code, r.stdout, r.stderr)
	}
	if st := full(t, dir, "status"); !strings.Contains(st, "clean") {
		t.Errorf("status: %s", st)
	}
}

// temps lists the temporary files of atomic writes (atomicfile.TempTarget's names) in the git dir's ctx
// folder and anywhere in .context/ of repository dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, root := range []string{filepath.Join(dir, ".git", "ctx"), filepath.Join(dir, ".context")} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if _, ok := atomicfile.TempTarget(d.Name()); ok {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// TestSetKilledLeavesNoTemps: a front write killed with SIGKILL (CTX_TEST_FRONT_KILL) after it made its
// refresh's files under temporary names — before the ref moved, after it moved with the ctx lock held, after
// the journal was put in place — leaves temporary files (tester C13 C10: nothing removed them). The next
// write is handed to ctx-full (the lock's holder record, or the journal, says a write was interrupted),
// which removes every one of them and only them, and writes; the write after that is the front's again.
// The branch holds what the killed write committed, and .context/ mirrors it.
func TestSetKilledLeavesNoTemps(t *testing.T) {
	dir := testenv.NewRepo(t)
	full(t, dir, "init")
	full(t, dir, "knowledge", "set", "arch", "zero")
	full(t, dir, "knowledge", "set", "other", "zero")
	frontBin, _, log := setBins(t)
	ctxBin := filepath.Join(frontBin, "ctx")
	if r := runEnv(t, dir, ctxBin, nil, "knowledge", "set", "arch", "one"); r.code != 0 || handedOver(t, log) != "" {
		t.Fatalf("first write: exit %d, stderr %q, or handed over", r.code, r.stderr)
	}
	// A user's files with names close to the temporary files' are never removed.
	mine := []string{filepath.Join(dir, ".context", "knowledge", ".arch.md.tmp"), filepath.Join(dir, ".context", "knowledge", ".arch.md.tmp0123456789AB")}
	for _, p := range mine {
		if err := os.WriteFile(p, []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := "one"
	for _, point := range []string{"prepared", "committed", "journaled"} {
		tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
		r := runEnv(t, dir, ctxBin, []string{"CTX_TEST_FRONT_KILL=" + point}, "knowledge", "set", "arch", "killed "+point)
		if r.code == 0 || handedOver(t, log) != "" {
			t.Fatalf("%s: exit %d, stdout %q: want the front killed", point, r.code, r.stdout)
		}
		if moved := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx") != tip; moved != (point != "prepared") {
			t.Fatalf("%s: the branch moved: %v", point, moved)
		}
		if point != "prepared" {
			want = "killed " + point
		}
		if left := temps(t, dir); len(left) == 0 {
			t.Fatalf("%s: the killed write left no temporary file (the kill came too late)", point)
		}
		r = runEnv(t, dir, ctxBin, nil, "knowledge", "set", "other", "after "+point)
		if r.code != 0 || handedOver(t, log) == "" {
			t.Fatalf("%s: next write: exit %d, stderr %q; want ctx-full's", point, r.code, r.stderr)
		}
		if left := temps(t, dir); len(left) != 0 {
			t.Errorf("%s: temporary files left after the next write: %v", point, left)
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git", "ctx", "checkout-journal.json")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: journal left: %v", point, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, ".context", "knowledge", "arch.md")); err != nil || !strings.Contains(string(b), want+"\n") {
			t.Errorf("%s: arch.md %q, %v; want %q", point, b, err, want)
		}
		if r := runEnv(t, dir, ctxBin, nil, "knowledge", "set", "other", "front "+point); r.code != 0 || handedOver(t, log) != "" {
			t.Fatalf("%s: the write after: exit %d, stderr %q, or handed over", point, r.code, r.stderr)
		}
	}
	for _, p := range mine {
		if b, err := os.ReadFile(p); err != nil || string(b) != "mine" {
			t.Errorf("a user's file %s: %q, %v", p, b, err)
		}
	}
	if st := full(t, dir, "status"); !strings.Contains(st, "clean") {
		t.Errorf("status: %s", st)
	}
}
