package gitstore

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Partial clones (git clone --filter=blob:none, docs/architecture.md "Sync"): git leaves out objects a
// promisor remote can send later, and fetches them on demand when git itself reads them. ctx reads
// objects in process, which fetches nothing, so the objects of every tip it reads must be in the
// repository: its fetches ask for whole objects (--no-filter, which overrides the
// remote.<name>.partialclonefilter git would apply), and what a tip still lacks (the context branch came
// with the clone, filtered, or a later plain git fetch moved it) is fetched by name from the remote
// (CompleteObjects).

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
	if len(tips) == 0 || !HasGit() || !r.PartialClone() {
		return 0, nil
	}
	if err := r.CheckRemote(remote, opt.Origin); err != nil {
		return 0, err
	}
	missing, err := r.missingObjects(ctx, tips)
	if err != nil || len(missing) == 0 {
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
	r.Reindex()
	still, err := r.missingObjects(ctx, tips)
	if err != nil {
		return len(missing), err
	}
	if len(still) > 0 {
		return len(missing), fmt.Errorf("complete the objects of a partial clone from %s: %d objects still missing (%s...)", remote, len(still), still[0])
	}
	return len(missing), nil
}

// missingObjects lists the objects reachable from tips that the repository lacks, sorted, with git
// rev-list (--missing=print: listed, not fetched).
func (r *Repo) missingObjects(ctx context.Context, tips []Hash) ([]string, error) {
	args := []string{"--git-dir=" + r.commonDir, "rev-list", "--objects", "--missing=print"}
	for _, h := range tips {
		if !h.IsZero() {
			args = append(args, h.String())
		}
	}
	args = append(args, "--")
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
