package store

import (
	"context"

	"github.com/ctx-dev/ctx/gitstore"
)

// The few facts of the repository that callers of store need, so that they never hold a *gitstore.Repo.

// Types of gitstore that callers of store see, so that they need not import gitstore.
type (
	// Remote is a remote of the repository config: its name and fetch URL.
	Remote = gitstore.Remote
	// Signature is a git identity (name, email) with a time.
	Signature = gitstore.Signature
	// LockInfo describes a ref lock a write found taken (docs/locks.md).
	LockInfo = gitstore.LockInfo
	// LockOwner says whose a ref lock is: LockForeign, LockStale or LockLive.
	LockOwner = gitstore.LockOwner
	// TransferError is a fetch or push that git refused or that timed out.
	TransferError = gitstore.TransferError
)

// Lock owners (LockInfo.Owner).
const (
	LockForeign = gitstore.LockForeign
	LockStale   = gitstore.LockStale
	LockLive    = gitstore.LockLive
)

// Errors of the repository layer, matched with errors.Is.
var (
	// ErrNotRepository: no git repository contains the directory Open was given.
	ErrNotRepository = gitstore.ErrNotRepository
	// ErrUnsafeRemote: a remote value that would reach git as an option or a command transport.
	ErrUnsafeRemote = gitstore.ErrUnsafeRemote
	// ErrNoGit: the operation needs the git binary and none is installed.
	ErrNoGit = gitstore.ErrNoGit
)

// Branch is the context branch's short name (refs/heads/<Branch> holds the public scope).
func (s *Store) Branch() string { return s.cfg.Branch }

// WorkTree is the root of the current worktree, "" for a bare repository.
func (s *Store) WorkTree() string { return s.repo.WorkTree() }

// Bare reports whether the repository has no worktree.
func (s *Store) Bare() bool { return s.repo.Bare() }

// CurrentBranch is the short name of the branch this worktree's HEAD points at ("main"), "" when HEAD is
// detached or the repository is bare.
func (s *Store) CurrentBranch() string { return s.repo.CurrentBranch() }

// WorkTreeFiles lists the files git would show in the worktree (tracked, and untracked but not ignored),
// slash-separated and relative to its root; none for a bare repository. ErrNoGit without a git binary.
func (s *Store) WorkTreeFiles(ctx context.Context) ([]string, error) {
	return s.repo.WorkTreeFiles(ctx)
}

// TrackedFiles lists the files git tracks (the index, `git ls-files`) in the whole work tree, slash-separated
// and relative to its root; none for a bare repository. ErrNoGit without a git binary.
func (s *Store) TrackedFiles(ctx context.Context) ([]string, error) {
	return s.repo.TrackedFiles(ctx, ".")
}

// Remotes lists the repository's remotes, sorted by name.
func (s *Store) Remotes(ctx context.Context) ([]Remote, error) { return s.repo.Remotes(ctx) }

// Identity is the author identity git would use for a commit here (gitstore.Repo.Identity); When is now.
func (s *Store) Identity(ctx context.Context) (Signature, error) { return s.repo.Identity(ctx) }

// Resolve returns the commit a full ref name points to, ZeroHash when the ref does not exist.
func (s *Store) Resolve(ctx context.Context, ref string) (Hash, error) {
	return s.repo.Resolve(ctx, ref)
}

// CommonDir is the git common dir of the repository that holds dir (for a linked worktree, the main
// repository's git dir): where ctx keeps what is never pushed. Unlike Open it writes nothing to the
// repository. ErrNotRepository outside one.
func CommonDir(ctx context.Context, dir string) (string, error) {
	r, err := gitstore.Open(ctx, dir)
	if err != nil {
		return "", err
	}
	defer func() { _ = r.Close() }()
	return r.CommonDir(), nil
}
