package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/go-git/go-git/v5/plumbing"
)

// Partial clones (git clone --filter=blob:none, docs/architecture.md "Sync"): git leaves out objects a
// promisor remote can send later, and fetches them on demand when git itself reads them. ctx reads
// objects in process, which fetches nothing, so the objects of every tip it reads must be in the
// repository: its fetches ask for whole objects (--no-filter, which overrides the
// remote.<name>.partialclonefilter git would apply), and what a tip still lacks (the context branch came
// with the clone, filtered, or a later plain git fetch moved it) is fetched by name from the remote
// (CompleteObjects).

// onRevList, when set (tests only), receives the arguments of each git rev-list of missingObjects.
var onRevList func(args []string)

// maxFetchNames bounds the object names of one git fetch's command line.
const maxFetchNames = 1000

// PartialClone reports whether the repository is a partial clone: extensions.partialClone is set, or a
// remote is marked remote.<name>.promisor (what git clone --filter and git fetch --filter write).
func (r *Repo) PartialClone() bool {
	if r.st == nil {
		return false
	}
	cfg, err := r.st.Config()
	if err != nil || cfg.Raw == nil {
		return false
	}
	if cfg.Raw.Section("extensions").Option("partialclone") != "" {
		return true
	}
	for _, sub := range cfg.Raw.Section("remote").Subsections {
		if strings.EqualFold(sub.Option("promisor"), "true") {
			return true
		}
	}
	return false
}

// CompleteObjects makes every object reachable from tips present in the repository, in a partial clone
// (PartialClone; nothing to do otherwise, or without a git binary, where go-git's transport fetches whole
// objects): the missing objects are listed with `git rev-list --objects --missing=print` (which fetches
// nothing) and fetched by name from remote, whole (--no-filter), in one transfer per 1,000 names, with
// git's fsck of received objects. remote must pass CheckRemote (opt.Origin says who named it); the object
// names come from git's output and are checked to be 40 hex digits before they reach git's command line,
// after "--". It returns how many objects were missing; an error when git fails or an object stays
// missing (a remote that no longer has it).
func (r *Repo) CompleteObjects(ctx context.Context, remote string, tips []Hash, opt TransferOptions) (int, error) {
	return r.completeObjects(ctx, remote, tips, nil, opt)
}

// completeObjects is CompleteObjects, its walk bounded by held: commits that refs named until now (the
// destinations of a fetch before it ran, so every object reachable from them is still in the repository).
// Those of held that an earlier completion found whole (the record of completeTips) are passed to git
// rev-list after --not: what is reachable from them is present, so only what the fetch brought is walked,
// not the whole history again; a tip itself recorded complete is not walked at all. The tips completed are
// added to the record.
func (r *Repo) completeObjects(ctx context.Context, remote string, tips, held []Hash, opt TransferOptions) (int, error) {
	if len(tips) == 0 || !HasGit() || !r.PartialClone() {
		return 0, nil
	}
	if err := r.CheckRemote(remote, opt.Origin); err != nil {
		return 0, err
	}
	done := map[Hash]bool{}
	if !r.repackFilter(ctx) {
		done = r.readCompleteTips()
	}
	var walk, not []Hash
	for _, h := range tips {
		if !h.IsZero() && !done[h] {
			walk = append(walk, h)
		}
	}
	if len(walk) == 0 {
		return 0, nil
	}
	for _, h := range held {
		if done[h] {
			not = append(not, h)
		}
	}
	missing, err := r.missingObjects(ctx, walk, not)
	if err != nil {
		return 0, err
	}
	for start := 0; start < len(missing); start += maxFetchNames {
		names := missing[start:min(start+maxFetchNames, len(missing))]
		args := append(fsckArgs(), "-c", "fetch.negotiationAlgorithm=noop", "--git-dir="+r.commonDir, "fetch",
			"--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--refmap=", "--no-filter", "--quiet", "--", remote)
		args = append(args, names...)
		_, stderr, err := r.runGit(ctx, opt, nil, args...)
		if err != nil {
			if isFsckFailure(stderr) {
				err = fmt.Errorf("%w: %w", ErrFsck, err)
			}
			return len(missing), &TransferError{Op: "fetch", Remote: remote, Reason: "fetch the objects a partial clone lacks: " + lastLines(stderr, err), Err: err}
		}
	}
	if len(missing) > 0 {
		r.Reindex()
		still, err := r.missingObjects(ctx, walk, not)
		if err != nil {
			return len(missing), err
		}
		if len(still) > 0 {
			return len(missing), fmt.Errorf("complete the objects of a partial clone from %s: %d objects still missing (%s...)", remote, len(still), still[0])
		}
	}
	r.recordCompleteTips(done, walk)
	return len(missing), nil
}

// completeTipsFile records the commits whose every reachable object a completion found in the repository
// (completeObjects), newest last, at most maxCompleteTips: a cache, whose loss costs one walk of the whole
// history.
func (r *Repo) completeTipsFile() string { return filepath.Join(r.CtxDir(), "partial-complete") }

// maxCompleteTips bounds the record of completeTipsFile.
const maxCompleteTips = 256

// repackFilter reports whether gc.repackFilter is set (in any config git reads): git gc then drops
// objects of complete tips from the repository (a promisor remote has them), so no record of complete tips
// holds. An error of git counts as set.
func (r *Repo) repackFilter(ctx context.Context) bool {
	out, _, err := gitCmd{dir: r.commonDir, args: []string{"--git-dir=" + r.commonDir, "config", "--get", "gc.repackFilter"}}.run(ctx)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return false // unset
	}
	return err != nil || strings.TrimSpace(out) != ""
}

// readCompleteTips reads the record of completeTipsFile; lines that are no object name are skipped, a
// missing or unreadable file is an empty record.
func (r *Repo) readCompleteTips() map[Hash]bool {
	out := map[Hash]bool{}
	b, err := os.ReadFile(r.completeTipsFile())
	if err != nil || len(b) > 64*maxCompleteTips {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		if len(line) == 40 && plumbing.IsHash(line) {
			out[NewHash(line)] = true
		}
	}
	return out
}

// recordCompleteTips adds tips to the record of completeTipsFile (done, as read), keeping the newest
// maxCompleteTips. A failed write is left: the next fetch walks more.
func (r *Repo) recordCompleteTips(done map[Hash]bool, tips []Hash) {
	b, _ := os.ReadFile(r.completeTipsFile())
	var lines []string
	seen := map[string]bool{}
	for _, h := range tips {
		seen[h.String()] = true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if len(line) == 40 && done[NewHash(line)] && !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	for _, h := range tips {
		lines = append(lines, h.String())
	}
	if len(lines) > maxCompleteTips {
		lines = lines[len(lines)-maxCompleteTips:]
	}
	if err := os.MkdirAll(r.CtxDir(), 0o755); err != nil {
		return
	}
	_ = atomicfile.WriteNoSync(r.completeTipsFile(), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// missingObjects lists the objects reachable from tips and not from not that the repository lacks, sorted,
// with git rev-list (--missing=print: listed, not fetched).
func (r *Repo) missingObjects(ctx context.Context, tips, not []Hash) ([]string, error) {
	args := []string{"--git-dir=" + r.commonDir, "rev-list", "--objects", "--missing=print"}
	for _, h := range tips {
		if !h.IsZero() {
			args = append(args, h.String())
		}
	}
	if len(not) > 0 {
		args = append(args, "--not")
		for _, h := range not {
			args = append(args, h.String())
		}
	}
	args = append(args, "--")
	if onRevList != nil {
		onRevList(args)
	}
	stdout, stderr, err := gitCmd{dir: r.commonDir, args: args}.run(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the objects a partial clone lacks: %s", lastLines(stderr, err))
	}
	var out []string
	for _, line := range strings.Split(stdout, "\n") {
		name, ok := strings.CutPrefix(line, "?")
		if !ok {
			continue
		}
		if len(name) != 40 || !plumbing.IsHash(name) {
			return nil, fmt.Errorf("list the objects a partial clone lacks: unexpected line %q of git rev-list", line)
		}
		out = append(out, strings.ToLower(name))
	}
	sort.Strings(out)
	return out, nil
}
