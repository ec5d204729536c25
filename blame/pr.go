package blame

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNoPullRequestEvidence is returned for a pull request that no structured evidence on this machine
// binds to its commits (docs/blame.md "Pull requests"): blame names no commits rather than guess them.
var ErrNoPullRequestEvidence = errors.New("no structured evidence names this pull request and its commits")

// PullRequestResult is the attribution of the commits of one pull request.
type PullRequestResult struct {
	Number int `json:"pull_request"`
	// Source is the structured evidence that names the pull request's commits: the ref the forge publishes
	// for it (refs/pull/N/head), fetched into this repository.
	Source   string        `json:"source"`
	Head     string        `json:"head"`           // the pull request's head commit
	Base     string        `json:"base"`           // the commits of the pull request are git log base..head
	Merged   bool          `json:"merged"`         // head is in HEAD: base is the first parent of the merge commit
	Outcome  Outcome       `json:"outcome"`        // the strongest outcome among the commits
	Coverage Coverage      `json:"coverage"`       // counts commits (not lines) by outcome
	Commits  []Attribution `json:"commits"`        // oldest first
	Note     string        `json:"note,omitempty"` // how base was chosen
}

// PullRequest attributes the commits of pull request n (1 or more). The commits are known only from
// structured evidence: the head ref refs/pull/<n>/head that GitHub (and Gitea, Forgejo) publish and
// `git fetch origin pull/<n>/head:refs/pull/<n>/head` (or a refs/pull/*/head refspec) fetches. The
// commits are base..head, base being HEAD while the head is not in it, else the first parent of the
// oldest merge commit on the ancestry path from the head to HEAD whose first parent does not hold the head
// (the merge of the pull request).
// ErrNoPullRequestEvidence without that ref, or when the head is in HEAD with no merge commit (a
// fast-forward or squash leaves nothing that tells the pull request's commits apart).
func (b *Blamer) PullRequest(ctx context.Context, n int) (PullRequestResult, error) {
	res := PullRequestResult{Number: n}
	if n < 1 {
		return res, fmt.Errorf("%w: pull request %d: want a number of at least 1", ErrUsage, n)
	}
	ref := "refs/pull/" + strconv.Itoa(n) + "/head"
	head, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil || head == "" {
		return res, fmt.Errorf("pull request %d: %w (fetch its head: git fetch origin pull/%d/head:%s)", n, ErrNoPullRequestEvidence, n, ref)
	}
	res.Source, res.Head = ref, head
	base, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil || base == "" {
		return res, fmt.Errorf("%w: the repository has no commit yet", ErrUsage)
	}
	res.Base = base
	if _, err := b.git(ctx, "merge-base", "--is-ancestor", head, base); err == nil {
		merges, err := b.git(ctx, "rev-list", "--ancestry-path", "--merges", "--reverse", head+".."+base)
		if err != nil {
			return res, fmt.Errorf("pull request %d: %w", n, err)
		}
		// The merge of the pull request: the oldest merge on the path whose first parent does not hold the
		// head (a later merge of something else has the head in its first parent already).
		m := ""
		for c := range strings.SplitSeq(merges, "\n") {
			if c == "" {
				continue
			}
			if _, err := b.git(ctx, "merge-base", "--is-ancestor", head, c+"^1"); err != nil {
				m = c
				break
			}
		}
		if m == "" {
			return res, fmt.Errorf("pull request %d: %w (its head %s is in HEAD without a merge commit)", n, ErrNoPullRequestEvidence, head[:10])
		}
		if res.Base, err = b.git(ctx, "rev-parse", "--verify", "--quiet", m+"^1"); err != nil {
			return res, fmt.Errorf("pull request %d: %w", n, err)
		}
		res.Merged = true
		res.Note = "merged by " + m[:10] + ": base is its first parent"
	}
	list, err := b.git(ctx, "rev-list", "--reverse", "--no-merges", head, "--not", res.Base)
	if err != nil {
		return res, fmt.Errorf("pull request %d: %w", n, err)
	}
	for c := range strings.SplitSeq(list, "\n") {
		if c == "" {
			continue
		}
		cr, err := b.Commit(ctx, c)
		if err != nil {
			return res, err
		}
		res.Commits = append(res.Commits, cr.Attribution)
		res.Coverage.add(cr.Outcome, 1)
	}
	res.Outcome = res.Coverage.Overall()
	return res, nil
}
