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
	// Source is the structured evidence that names the pull request's commits: "ref" (refs/pull/N/head
	// fetched from the forge), "gh pr view" (a transcript's gh pr view --json commits) or "gh pr create"
	// (a transcript's gh pr create naming the head branch).
	Source   string    `json:"source"`
	Ref      string    `json:"ref,omitempty"`      // source ref: the ref read
	Evidence *Evidence `json:"evidence,omitempty"` // source gh: the transcript's tool call and output
	Head     string    `json:"head,omitempty"`     // the pull request's head commit
	// HeadBranch and BaseBranch are the branches a gh pr create named.
	HeadBranch string        `json:"head_branch,omitempty"`
	BaseBranch string        `json:"base_branch,omitempty"`
	Base       string        `json:"base,omitempty"` // the commits of the pull request are git log base..head
	Merged     bool          `json:"merged"`         // head is in the base branch: base is the first parent of the merge commit
	Outcome    Outcome       `json:"outcome"`        // the strongest outcome among the commits
	Coverage   Coverage      `json:"coverage"`       // counts commits (not lines) by outcome
	Commits    []Attribution `json:"commits"`        // oldest first
	Note       string        `json:"note,omitempty"` // how base was chosen
}

// PullRequest attributes the commits of pull request n (1 or more), known only from structured evidence
// (docs/blame.md "Pull requests"), in this order:
//
//  1. the head ref refs/pull/<n>/head that GitHub (and Gitea, Forgejo) publish, fetched into this
//     repository (git fetch origin pull/<n>/head:refs/pull/<n>/head);
//  2. in a session working in this repository, the newest `gh pr view N --json commits` whose one
//     successful output lists the commits (all of them commits of this repository), or `gh pr create`
//     whose output prints the pull request's URL on one of this repository's remotes and whose head
//     branch is named (--head, or gh's "Creating pull request for HEAD into BASE" line) and exists here.
//
// For a head (1, 2 with gh pr create), the commits are base..head, base being the base branch (gh pr
// create's, else HEAD) while the head is not in it, else the first parent of the oldest merge commit on the
// ancestry path from the head to the base whose first parent does not hold the head (the merge of the
// pull request). ErrNoPullRequestEvidence without such evidence, or when the head is in the base with no
// merge commit (a fast-forward or squash leaves nothing that tells the pull request's commits apart).
func (b *Blamer) PullRequest(ctx context.Context, n int) (PullRequestResult, error) {
	res := PullRequestResult{Number: n}
	if n < 1 {
		return res, fmt.Errorf("%w: pull request %d: want a number of at least 1", ErrUsage, n)
	}
	ref := "refs/pull/" + strconv.Itoa(n) + "/head"
	var commits []string
	head, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	base := ""
	if err == nil && head != "" {
		res.Source, res.Ref = "ref", ref
	} else {
		p, err := b.transcriptPR(ctx, n)
		if err != nil {
			return res, err
		}
		if p == nil {
			return res, fmt.Errorf("pull request %d: %w (fetch its head: git fetch origin pull/%d/head:%s)", n, ErrNoPullRequestEvidence, n, ref)
		}
		ev := p.ev
		res.Evidence = &ev
		if p.commits != nil {
			res.Source, commits = "gh pr view", p.commits
			head = p.commits[len(p.commits)-1]
		} else {
			res.Source, res.HeadBranch, res.BaseBranch = "gh pr create", p.head, p.base
			if head = b.branchTip(ctx, p.head); head == "" {
				return res, fmt.Errorf("pull request %d: %w (its head branch %s, named by %s, is not in this repository)", n, ErrNoPullRequestEvidence, p.head, ev.EventID)
			}
			if p.base != "" {
				if base = b.branchTip(ctx, p.base); base == "" {
					return res, fmt.Errorf("pull request %d: %w (its base branch %s is not in this repository)", n, ErrNoPullRequestEvidence, p.base)
				}
			}
		}
	}
	res.Head = head
	if commits == nil {
		if commits, err = b.prCommits(ctx, n, &res, base); err != nil {
			return res, err
		}
	}
	for _, c := range commits {
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

// prCommits are the commits base..res.Head, oldest first, merges left out; base "" is HEAD.
func (b *Blamer) prCommits(ctx context.Context, n int, res *PullRequestResult, base string) ([]string, error) {
	head := res.Head
	if base == "" {
		var err error
		base, err = b.git(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
		if err != nil || base == "" {
			return nil, fmt.Errorf("%w: the repository has no commit yet", ErrUsage)
		}
	}
	res.Base = base
	if _, err := b.git(ctx, "merge-base", "--is-ancestor", head, base); err == nil {
		merges, err := b.git(ctx, "rev-list", "--ancestry-path", "--merges", "--reverse", head+".."+base)
		if err != nil {
			return nil, fmt.Errorf("pull request %d: %w", n, err)
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
			return nil, fmt.Errorf("pull request %d: %w (its head %s is in the base without a merge commit)", n, ErrNoPullRequestEvidence, head[:10])
		}
		if res.Base, err = b.git(ctx, "rev-parse", "--verify", "--quiet", m+"^1"); err != nil {
			return nil, fmt.Errorf("pull request %d: %w", n, err)
		}
		res.Merged = true
		res.Note = "merged by " + m[:10] + ": base is its first parent"
	}
	list, err := b.git(ctx, "rev-list", "--reverse", "--no-merges", head, "--not", res.Base)
	if err != nil {
		return nil, fmt.Errorf("pull request %d: %w", n, err)
	}
	var out []string
	for c := range strings.SplitSeq(list, "\n") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out, nil
}
