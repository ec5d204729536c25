package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// machineClone makes a repository with remote origin and an initialised store (adopting the remote's
// context branch when it has one).
func machineClone(t *testing.T, remote, agent string) (*store.Store, string) {
	t.Helper()
	dir := storetest.Repo(t)
	testenv.Git(t, dir, "remote", "add", "origin", remote)
	return storetest.Open(t, dir, store.Actor{Agent: agent}), dir
}

// knowledgeKeys lists the knowledge entries on ref of the repository (or bare remote) dir.
func knowledgeKeys(t *testing.T, dir, ref string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, p := range strings.Fields(testenv.Git(t, dir, "ls-tree", "--name-only", ref, "knowledge/")) {
		out[strings.TrimSuffix(strings.TrimPrefix(p, "knowledge/"), ".md")] = true
	}
	return out
}

// TestMachineID: made once per repository, kept in <git dir>/ctx/machine-id, the same for every Store of
// the repository, different between clones on one host; an id edited into an invalid one is an error.
func TestMachineID(t *testing.T) {
	remote := testenv.BareRemote(t)
	sa, a := machineClone(t, remote, "a")
	sb, _ := machineClone(t, remote, "b")
	ida, err := sa.MachineID()
	if err != nil || !strings.HasPrefix(ida, "laptop-") || store.ValidMachineID(ida) != nil {
		t.Fatalf("machine id %q, %v", ida, err)
	}
	again := storetest.Open(t, a, store.Actor{})
	if id, _ := again.MachineID(); id != ida {
		t.Errorf("the id changed between opens: %q then %q", ida, id)
	}
	if idb, _ := sb.MachineID(); idb == ida {
		t.Errorf("two clones share the id %q", ida)
	}
	file := filepath.Join(a, ".git", "ctx", "machine-id")
	if err := os.WriteFile(file, []byte("-x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := again.MachineID(); err == nil || !strings.Contains(err.Error(), "machine-id") {
		t.Errorf("an invalid id file: %v", err)
	}
	if _, err := again.Push(bg, store.PushOptions{}); err == nil {
		t.Errorf("a push with an invalid machine id succeeded")
	}
}

// TestValidMachineID: the ids a fetched machine ref may have, and the hostile ones refused.
func TestValidMachineID(t *testing.T) {
	for _, id := range []string{"laptop-3f9a2c1b", "a", "A.b_c-9", strings.Repeat("x", 64)} {
		if err := store.ValidMachineID(id); err != nil {
			t.Errorf("%q refused: %v", id, err)
		}
	}
	for _, id := range []string{"", "-x", ".x", "a..b", "a/b", "x.lock", "a\x01b", "a b", "a:b", "a@{b", "ü",
		strings.Repeat("x", 65)} {
		if err := store.ValidMachineID(id); err == nil {
			t.Errorf("%q accepted", id)
		}
	}
}

// TestMachinesConcurrentSync: N clones sync at the same moment (pull, then push, each in its own
// goroutine, as N processes would): none fails, none retries, each machine ref holds its clone's writes,
// and after one more pull every clone has every entry and the same tree; git fsck finds the remote clean.
func TestMachinesConcurrentSync(t *testing.T) {
	const n, writes = 6, 3
	remote := testenv.BareRemote(t)
	seed, _ := machineClone(t, remote, "seed")
	if _, err := seed.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	stores := make([]*store.Store, n)
	dirs := make([]string, n)
	for i := range stores {
		stores[i], dirs[i] = machineClone(t, remote, fmt.Sprintf("agent%d", i))
		for w := 0; w < writes; w++ {
			mustSet(t, stores[i], fmt.Sprintf("c%d-w%d", i, w), fmt.Sprintf("clone %d write %d\n", i, w))
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	results := make([]*store.PushResult, n)
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := stores[i].Pull(bg, store.PullOptions{}); err != nil {
				errs[i] = err
				return
			}
			results[i], errs[i] = stores[i].Push(bg, store.PushOptions{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("sync of clone %d: %v", i, err)
		}
		if r := results[i]; r.Retries != 0 || r.Machine == "" || r.Legacy {
			t.Errorf("push of clone %d: %+v", i, r)
		}
		if got := testenv.Git(t, remote, "rev-parse", results[i].Machine); got != testenv.Git(t, dirs[i], "rev-parse", "ctx") {
			t.Errorf("clone %d: %s on the remote is %s", i, results[i].Machine, got)
		}
	}
	if refs := strings.Fields(testenv.Git(t, remote, "for-each-ref", "--format=%(refname)", "refs/ctx/machines/")); len(refs) != n+1 {
		t.Errorf("machine refs on the remote: %v", refs)
	}
	trees := map[string]bool{}
	for i, s := range stores {
		if _, err := s.Pull(bg, store.PullOptions{}); err != nil {
			t.Fatalf("pull of clone %d after the storm: %v", i, err)
		}
		keys := knowledgeKeys(t, dirs[i], "ctx")
		for j := 0; j < n; j++ {
			for w := 0; w < writes; w++ {
				if !keys[fmt.Sprintf("c%d-w%d", j, w)] {
					t.Errorf("clone %d lacks c%d-w%d after one more pull", i, j, w)
				}
			}
		}
		trees[testenv.Git(t, dirs[i], "rev-parse", "ctx:knowledge")] = true
		if left := testenv.Git(t, dirs[i], "for-each-ref", "refs/ctx/incoming/"); left != "" {
			t.Errorf("clone %d kept quarantine refs: %s", i, left)
		}
	}
	if len(trees) != 1 {
		t.Errorf("the clones reached %d different knowledge trees", len(trees))
	}
	// One more sync of one clone brings the shared branch up to every write.
	if _, err := stores[0].Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if keys := knowledgeKeys(t, remote, "refs/heads/ctx"); len(keys) != n*writes {
		t.Errorf("the shared branch holds %d entries, want %d", len(keys), n*writes)
	}
	testenv.Git(t, remote, "fsck", "--strict", "--no-progress")
}

// TestMachineRefsHostile: machine refs a remote may hold that ctx refuses. An id git accepts but ctx
// does not (a leading "-", a nested name, 65 characters) is ignored with a warning and never names a
// local ref; a tip with an entry outside the store layout refuses the pull with nothing moved; more than
// MaxMachineRefs refs refuse the pull with a clear error.
func TestMachineRefsHostile(t *testing.T) {
	remote := testenv.BareRemote(t)
	sa, a := machineClone(t, remote, "a")
	mustSet(t, sa, "base", "base\n")
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	tip := testenv.Git(t, remote, "rev-parse", "refs/heads/ctx")
	for _, id := range []string{"-x", "nested/id", strings.Repeat("y", 65)} {
		testenv.Git(t, remote, "update-ref", "refs/ctx/machines/"+id, tip)
	}
	sb, b := machineClone(t, remote, "b")
	r, err := sb.Pull(bg, store.PullOptions{})
	if err != nil {
		t.Fatalf("pull with ignored machine refs: %v", err)
	}
	if len(r.Warnings) != 3 || !strings.Contains(strings.Join(r.Warnings, "\n"), `"refs/ctx/machines/-x"`) {
		t.Errorf("warnings: %q", r.Warnings)
	}
	if local := testenv.Git(t, b, "for-each-ref", "--format=%(refname)", "refs/ctx/"); strings.Contains(local, "-x") || strings.Contains(local, "nested") || strings.Contains(local, "yyy") {
		t.Errorf("an ignored machine ref named a local ref: %s", local)
	}

	// A tip holding evil.sh at the root (outside the layout), and one holding a symbolic link: each machine
	// ref is left out with a warning naming it and how to delete it; the shared branch and the other
	// machines are pulled all the same (before, every teammate's pull failed until the ref was deleted).
	tree := testenv.WithEntry(t, remote, testenv.Git(t, remote, "rev-parse", tip+"^{tree}"), []string{"evil.sh"}, "100644", testenv.Blob(t, remote, "echo hi\n"))
	evil := testenv.CommitTree(t, remote, tree, tip, "evil")
	testenv.Git(t, remote, "update-ref", "refs/ctx/machines/mallory-1", evil)
	link := testenv.WithEntry(t, remote, testenv.Git(t, remote, "rev-parse", tip+"^{tree}"), []string{"knowledge", "link.md"}, "120000", testenv.Blob(t, remote, "/etc/passwd"))
	linked := testenv.CommitTree(t, remote, link, tip, "link")
	testenv.Git(t, remote, "update-ref", "refs/ctx/machines/mallory-3", linked)
	mustSet(t, sa, "from-a", "a\n")
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, sb, "mine", "mine\n")
	r, err = sb.Pull(bg, store.PullOptions{})
	if err != nil || r.Action != store.PullMerged {
		t.Fatalf("pull beside hostile machine tips: %+v %v", r, err)
	}
	warns := strings.Join(r.Warnings, "\n")
	for _, w := range []string{"machine ref refs/ctx/machines/mallory-1", "evil.sh", "git push origin --delete refs/ctx/machines/mallory-1",
		"machine ref refs/ctx/machines/mallory-3", "symbolic link", "git push origin --delete refs/ctx/machines/mallory-3"} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings lack %q: %s", w, warns)
		}
	}
	if keys := knowledgeKeys(t, b, "ctx"); !keys["from-a"] || !keys["mine"] || keys["link"] {
		t.Errorf("after the pull: %v", keys)
	}
	if got := testenv.Git(t, b, "ls-tree", "--name-only", "ctx"); strings.Contains(got, "evil.sh") {
		t.Errorf("the refused tip was merged: %s", got)
	}
	if local := testenv.Git(t, b, "for-each-ref", "refs/ctx/remotes/", "refs/ctx/incoming/"); strings.Contains(local, evil) || strings.Contains(local, linked) {
		t.Errorf("a local ref names a refused commit: %s", local)
	}
	// The shared branch itself stays strict: the same tip there is refused, nothing moves.
	before := testenv.Git(t, b, "rev-parse", "ctx")
	sharedWas := testenv.Git(t, remote, "rev-parse", "refs/heads/ctx")
	testenv.Git(t, remote, "update-ref", "refs/heads/ctx", evil)
	_, err = sb.Pull(bg, store.PullOptions{})
	var rej *store.RejectedError
	if !errors.As(err, &rej) || !strings.Contains(err.Error(), "evil.sh") {
		t.Fatalf("pull of a hostile shared branch: %v", err)
	}
	if after := testenv.Git(t, b, "rev-parse", "ctx"); after != before {
		t.Errorf("a refused pull moved the branch")
	}
	testenv.Git(t, remote, "update-ref", "refs/heads/ctx", sharedWas)
	testenv.Git(t, remote, "update-ref", "-d", "refs/ctx/machines/mallory-1")
	testenv.Git(t, remote, "update-ref", "-d", "refs/ctx/machines/mallory-3")

	// A machine ref whose objects git's fsck refuses (a tree entry "../escape") is named as the culprit and
	// left out; the healthy refs are fetched again and pulled.
	escape := testenv.WithEntry(t, remote, testenv.Git(t, remote, "rev-parse", tip+"^{tree}"), []string{"../escape"}, "100644", testenv.Blob(t, remote, "x\n"))
	testenv.Git(t, remote, "update-ref", "refs/ctx/machines/mallory-2", testenv.CommitTree(t, remote, escape, tip, "escape"))
	mustSet(t, sa, "from-a2", "a2\n")
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err = sb.Pull(bg, store.PullOptions{})
	if err != nil || !strings.Contains(strings.Join(r.Warnings, "\n"), "git push origin --delete refs/ctx/machines/mallory-2") {
		t.Fatalf("pull beside a machine ref git's fsck refuses: %+v %v", r, err)
	}
	if !knowledgeKeys(t, b, "ctx")["from-a2"] {
		t.Errorf("the healthy machine's write was not pulled")
	}
	testenv.Git(t, remote, "update-ref", "-d", "refs/ctx/machines/mallory-2")

	// A machine ref to a blob is no machine's branch: left out with a warning, the pull goes on.
	testenv.Git(t, remote, "update-ref", "refs/ctx/machines/blobby", testenv.Blob(t, remote, "hi\n"))
	r, err = sb.Pull(bg, store.PullOptions{})
	if err != nil || !strings.Contains(strings.Join(r.Warnings, "\n"), "machine ref blobby: its tip") {
		t.Errorf("pull with a machine ref to a blob: %v, warnings %q", err, r.Warnings)
	}
	testenv.Git(t, remote, "update-ref", "-d", "refs/ctx/machines/blobby")

	// More machine refs than the bound.
	var stdin strings.Builder
	for i := 0; i <= store.MaxMachineRefs; i++ {
		fmt.Fprintf(&stdin, "create refs/ctx/machines/m%04d %s\n", i, tip)
	}
	testenv.GitIn(t, remote, stdin.String(), "update-ref", "--stdin")
	_, err = sa.Pull(bg, store.PullOptions{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d", store.MaxMachineRefs)) || !strings.Contains(err.Error(), "nothing was fetched or changed") {
		t.Fatalf("pull with too many machine refs: %v", err)
	}
	if local := testenv.Git(t, a, "for-each-ref", "refs/ctx/remotes/", "refs/ctx/incoming/"); strings.Contains(local, "m0001") {
		t.Errorf("a refused pull kept machine refs: %.200s", local)
	}
}

// TestMachinesOldLayoutInterop: a teammate with plain git (or an older ctx) reads and writes only the
// shared branch refs/heads/ctx. Its commits are merged by a pull; the pushes of ctx reach it on the shared
// branch; a remote without machine refs pulls as before.
func TestMachinesOldLayoutInterop(t *testing.T) {
	remote := testenv.BareRemote(t)
	sa, a := machineClone(t, remote, "a")
	mustSet(t, sa, "from-a", "a\n")
	// The old layout: only the shared branch on the remote, pushed by plain git.
	testenv.Git(t, a, "push", "-q", "origin", "ctx:ctx")
	old := testenv.Clone(t, remote, "old")
	testenv.Git(t, old, "fetch", "-q", "origin", "ctx:ctx")
	sb, b := machineClone(t, remote, "b")
	if !knowledgeKeys(t, b, "ctx")["from-a"] {
		t.Fatalf("a clone did not adopt the shared branch of the old layout")
	}
	// The older teammate commits on the shared branch with plain git.
	blob := testenv.Blob(t, old, "---\nkey: from-old\n---\nold\n")
	tree := testenv.WithEntry(t, old, testenv.Git(t, old, "rev-parse", "ctx^{tree}"), []string{"knowledge", "from-old.md"}, "100644", blob)
	c := testenv.CommitTree(t, old, tree, testenv.Git(t, old, "rev-parse", "ctx"), "by hand")
	testenv.Git(t, old, "push", "-q", "origin", c+":refs/heads/ctx")
	mustSet(t, sb, "from-b", "b\n")
	if r, err := sb.Pull(bg, store.PullOptions{}); err != nil || r.Action != store.PullMerged {
		t.Fatalf("pull of the older teammate's commit: %+v %v", r, err)
	}
	pr, err := sb.Push(bg, store.PushOptions{})
	if err != nil || pr.Shared != store.SharedUpdated || pr.Machine == "" {
		t.Fatalf("push: %+v %v", pr, err)
	}
	// The older teammate sees every entry on the shared branch.
	testenv.Git(t, old, "fetch", "-q", "origin", "+ctx:ctx")
	keys := knowledgeKeys(t, old, "ctx")
	for _, k := range []string{"from-a", "from-b", "from-old"} {
		if !keys[k] {
			t.Errorf("the shared branch lacks %s: %v", k, keys)
		}
	}
	if r, err := sa.Pull(bg, store.PullOptions{}); err != nil || r.Action != store.PullFastForward {
		t.Errorf("pull of A: %+v %v", r, err)
	}
}

// TestMachineRefsRefused: a remote that refuses refs/ctx/* (a hook, as some forges do) gets the shared
// branch alone, with a warning, and the fetch-merge-retry loop when it moved.
func TestMachineRefsRefused(t *testing.T) {
	remote := testenv.BareRemote(t)
	hook := "#!/bin/sh\nwhile read old new ref; do case $ref in refs/ctx/*) echo \"no custom refs: $ref\" >&2; exit 1;; esac; done\n"
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	sa, _ := machineClone(t, remote, "a")
	pr, err := sa.Push(bg, store.PushOptions{})
	if err != nil || !pr.Legacy || pr.Machine != "" || len(pr.Warnings) != 1 || !strings.Contains(pr.Warnings[0], "refuses refs/ctx/machines/") {
		t.Fatalf("push to a remote refusing machine refs: %+v %v", pr, err)
	}
	sb, b := machineClone(t, remote, "b")
	mustSet(t, sa, "from-a", "a\n")
	mustSet(t, sb, "from-b", "b\n")
	if _, err := sa.Push(bg, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	pr, err = sb.Push(bg, store.PushOptions{})
	if err != nil || !pr.Legacy || pr.Retries != 1 || pr.Shared != store.SharedUpdated {
		t.Fatalf("push that lost the race: %+v %v", pr, err)
	}
	keys := knowledgeKeys(t, remote, "refs/heads/ctx")
	if !keys["from-a"] || !keys["from-b"] {
		t.Errorf("the shared branch: %v", keys)
	}
	if refs := testenv.Git(t, remote, "for-each-ref", "refs/ctx/"); refs != "" {
		t.Errorf("machine refs on a remote that refuses them: %s", refs)
	}
	_ = b
}

// TestPullFetchesOnlyWhatMoved: a pull lists the remote's refs and fetches only the tips that moved since
// the last pull (git's reference-transaction hook logs the quarantine refs git writes): none when nothing
// moved, the moved machine's ref and the branch when one machine pushed, never an unchanged machine's.
func TestPullFetchesOnlyWhatMoved(t *testing.T) {
	remote := testenv.BareRemote(t)
	sa, _ := machineClone(t, remote, "a")
	sc, _ := machineClone(t, remote, "c")
	sb, b := machineClone(t, remote, "b")
	for _, s := range []*store.Store{sa, sc} {
		mustSet(t, s, "k-"+s.Actor.Agent, "v\n")
		if _, err := s.Push(bg, store.PushOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sb.Pull(bg, store.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "refs.log")
	hook := "#!/bin/sh\n[ \"$1\" = committed ] || exit 0\ngrep ' refs/ctx/incoming/' >> '" + log + "'\nexit 0\n"
	if err := os.WriteFile(filepath.Join(b, ".git", "hooks", "reference-transaction"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	fetched := func() string {
		t.Helper()
		out, _ := os.ReadFile(log)
		_ = os.Remove(log)
		return string(out)
	}
	if r, err := sb.Pull(bg, store.PullOptions{}); err != nil || r.Action != store.PullUpToDate {
		t.Fatalf("pull with nothing moved: %+v %v", r, err)
	}
	if got := fetched(); got != "" {
		t.Errorf("a pull with nothing moved fetched:\n%s", got)
	}
	mustSet(t, sa, "k-a2", "v\n")
	pa, err := sa.Push(bg, store.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idc, _ := sc.MachineID()
	if r, err := sb.Pull(bg, store.PullOptions{}); err != nil || r.Action == store.PullUpToDate {
		t.Fatalf("pull after A pushed: %+v %v", r, err)
	}
	got := fetched()
	ida := strings.TrimPrefix(pa.Machine, store.MachineRefPrefix)
	if !strings.Contains(got, "/machines/"+ida) || strings.Contains(got, "/machines/"+idc) {
		t.Errorf("fetched %q, want A's machine ref (%s) and not C's (%s)", got, ida, idc)
	}
	if !knowledgeKeys(t, b, "ctx")["k-a2"] {
		t.Errorf("B lacks A's new write")
	}
}
