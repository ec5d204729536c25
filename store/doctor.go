package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctx-dev/ctx/gitstore"
)

// Diagnosis is what `ctx doctor` reports.
type Diagnosis struct {
	// Problems are the entries of the context refs' tips that ctx does not read (TreeProblems).
	Problems []Problem `json:"unreadable"`
	// LastSafe is, per scope whose tip holds an unsafe entry, the newest commit on its first-parent line
	// whose tree holds none ("" when none was found within the commits looked at): the commit to reset the
	// branch to (docs/security.md).
	LastSafe map[Scope]string `json:"last_safe,omitempty"`
	// Clashes are entries ctx reads but would not have written side by side: look-alike keys, decisions
	// sharing a number or a uid (Clash). Never nil.
	Clashes []Clash `json:"clashes"`
	// Manifest is set when the context branch's manifest.json cannot be read (ManifestProblem): every read
	// of the project, team and adapters fails until ctx doctor --fix puts back the last one that reads.
	Manifest *ManifestProblem `json:"manifest,omitempty"`
	// Oversized are the files of the context refs' tips over MaxFileBytes (a tip of a teammate's that adds
	// one is refused by every pull; one may be on the branch from before the limit, or written with plain
	// git): readable, but to shrink or remove. Never nil.
	Oversized []Problem `json:"oversized"`
	// Records are the JSON records of the context refs' tips that ctx reads and that are malformed
	// (RecordProblem: a hand edit with plain git, a teammate's tool): their readers fail until the record
	// is written again (ctx state set replaces state.json; a fix in .context/ and ctx commit, or git, any
	// record). ctx doctor --fix does not remove them. Never nil.
	Records []Problem `json:"malformed_records"`
	// Checkout says why .context/ cannot be used (a symbolic link or a file at its place, files the user's
	// repository tracks there: CheckoutDirError; missing after it was checked out here:
	// CheckoutMissingError), with the fix; "" when it can.
	Checkout string `json:"checkout,omitempty"`
	// Orphaned are the kept tips of deleted context branches (OrphanedRefs): no problem, but entries that
	// may exist nowhere else, to restore or delete. Never nil.
	Orphaned []OrphanedRef `json:"orphaned"`
	// Leftovers are the temporary files that killed writes left in the git dir's ctx folders and in
	// .context/ (LeftoverTemps, absolute paths): no problem (every refresh and status removes those it
	// knows are leftovers), removed by ctx doctor --fix. Never nil.
	Leftovers []string `json:"leftover_temp_files"`
}

// maxSafeSearch bounds the first-parent commits Doctor looks at for LastSafe.
const maxSafeSearch = 1000

// Doctor checks the context refs' tips: every entry ctx does not read, and for a ref whose tip holds an
// unsafe one, the last commit before it that holds none; and the clashes of readable entries (Clashes).
func (s *Store) Doctor(ctx context.Context) (*Diagnosis, error) {
	// The user's own branch under the context branch's name is not ctx's to diagnose or repair.
	tip, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return nil, err
	}
	if tree, err := s.repo.TreeOf(ctx, tip); err != nil {
		return nil, err
	} else if err := s.checkContextTree(ctx, tree); err != nil {
		// A manifest deleted from a store (plain git) is the store's to repair: an earlier commit holds one.
		if mp, _, merr := s.checkManifest(ctx); merr != nil || mp == nil || mp.LastGood == "" {
			return nil, err
		}
	}
	ps, err := s.TreeProblems(ctx)
	if err != nil {
		return nil, err
	}
	d := &Diagnosis{Problems: ps}
	exists, err := s.checkCheckoutDir(ctx)
	if err == nil {
		err = s.checkoutMissing(exists)
	}
	if errors.Is(err, ErrCheckoutDir) || errors.Is(err, ErrCheckoutMissing) {
		d.Checkout = err.Error()
	} else if err != nil {
		return nil, err
	}
	if d.Problems == nil {
		d.Problems = []Problem{}
	}
	if d.Clashes, err = s.Clashes(ctx); err != nil {
		return nil, err
	}
	if d.Clashes == nil {
		d.Clashes = []Clash{}
	}
	if d.Manifest, _, err = s.checkManifest(ctx); err != nil {
		return nil, err
	}
	if d.Oversized, err = s.OversizedFiles(ctx); err != nil {
		return nil, err
	}
	if d.Records, err = s.MalformedRecords(ctx); err != nil {
		return nil, err
	}
	if d.Orphaned, err = s.OrphanedRefs(ctx); err != nil {
		return nil, err
	}
	if d.Leftovers, err = s.LeftoverTemps(ctx, false); err != nil {
		return nil, err
	}
	if d.Leftovers == nil {
		d.Leftovers = []string{}
	}
	unsafe := map[Scope]bool{}
	for _, p := range ps {
		if p.Unsafe {
			unsafe[p.Scope] = true
		}
	}
	for _, sc := range Scopes {
		if !unsafe[sc] {
			continue
		}
		if d.LastSafe == nil {
			d.LastSafe = map[Scope]string{}
		}
		d.LastSafe[sc] = ""
		h, err := s.repo.Resolve(ctx, s.RefOf(sc))
		if err != nil {
			return nil, err
		}
		for i := 0; i < maxSafeSearch && !h.IsZero(); i++ {
			c, err := s.repo.Commit(ctx, h)
			if err != nil {
				return nil, err
			}
			ps, err := s.treeProblems(ctx, h, sc, c.TreeHash, gitstore.ZeroHash)
			if err != nil {
				return nil, err
			}
			if !anyUnsafe(ps) {
				d.LastSafe[sc] = h.String()
				break
			}
			if len(c.ParentHashes) == 0 {
				break
			}
			h = c.ParentHashes[0]
		}
	}
	return d, nil
}

// OversizedFiles lists the files of the context refs' tips over MaxFileBytes, every scope, sorted by scope
// then path, from the objects' sizes (no file is read). Never nil.
func (s *Store) OversizedFiles(ctx context.Context) ([]Problem, error) {
	return s.tipProblems(ctx, checkSizes, func(p Problem) bool { return p.Size > 0 })
}

// MalformedRecords lists the JSON records of the context refs' tips that ctx reads and that are malformed
// (RecordProblem, and activity records whose team pulse fields break their rules: activityPulseProblem), every scope, sorted by scope then path. It reads every record. Never nil.
func (s *Store) MalformedRecords(ctx context.Context) ([]Problem, error) {
	return s.tipProblems(ctx, checkRecords|checkPulse, func(p Problem) bool { return p.Record })
}

// tipProblems runs checkTree with checks over the whole tree of each context ref's tip, every scope in
// order, and keeps the problems keep accepts. Never nil.
func (s *Store) tipProblems(ctx context.Context, checks treeChecks, keep func(Problem) bool) ([]Problem, error) {
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, err
	}
	out := []Problem{}
	for _, sc := range Scopes {
		if tips[sc].IsZero() {
			continue
		}
		tree, err := s.repo.TreeOf(ctx, tips[sc])
		if err != nil {
			return nil, err
		}
		ps, err := checkTree(ctx, s.repo, tips[sc], sc, tree, gitstore.ZeroHash, checks)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if keep(p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func anyUnsafe(ps []Problem) bool {
	for _, p := range ps {
		if p.Unsafe {
			return true
		}
	}
	return false
}

// RemoveProblems removes from the tip of every context ref the entries ctx does not read (TreeProblems),
// one commit per ref that had some (`ctx doctor --fix`), and refreshes the checked-out tree. It returns
// the entries removed. The history keeps them: a commit with an unsafe entry is still refused by git's
// fsck on every fetch of that history, so such a branch is repaired by resetting it (Diagnosis.LastSafe),
// not by this commit alone (docs/security.md).
func (s *Store) RemoveProblems(ctx context.Context) (*Committed, []Problem, error) {
	var removed []Problem
	if err := s.checkBranchNotCheckedOut(); err != nil {
		return nil, nil, err
	}
	refs := s.Refs()
	res, err := s.repo.Transact(ctx, refs, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		removed = nil
		if err := s.checkContextTree(ctx, tips[s.BranchRef()].Tree); err != nil {
			return nil, err
		}
		w := map[string]*gitstore.Write{}
		for _, sc := range Scopes {
			tip := tips[s.RefOf(sc)]
			if tip.Commit.IsZero() {
				continue
			}
			ps, err := s.treeProblems(ctx, tip.Commit, sc, tip.Tree, gitstore.ZeroHash)
			if err != nil {
				return nil, err
			}
			if len(ps) == 0 {
				continue
			}
			var names [][]string
			for _, p := range ps {
				names = append(names, p.names)
			}
			tree, err := s.repo.RemoveItems(ctx, s.RefOf(sc), tip.Tree, names)
			if err != nil {
				return nil, err
			}
			removed = append(removed, ps...)
			msg := s.Message(Op{Name: "doctor.fix", Summary: fmt.Sprintf("remove %d entries ctx does not read", len(ps))})
			w[s.RefOf(sc)] = &gitstore.Write{Tree: &tree, Message: msg}
		}
		return w, nil
	})
	if err != nil {
		return nil, nil, err
	}
	out := &Committed{Commits: map[Scope]gitstore.Hash{}}
	for i, r := range res {
		if r.Committed {
			out.Commits[Scopes[i]] = r.New
		}
	}
	if out.Changed() {
		if _, err := s.Refresh(ctx); err != nil {
			return out, removed, fmt.Errorf("committed, but refreshing %s failed: %w", CheckoutDir, err)
		}
	}
	return out, removed, nil
}
