package gitstore

import "github.com/go-git/go-git/v5/storage/memory"

// newMemory is a repository whose objects live in go-git's in-memory storage. The object operations
// (blobs, trees, commits, history walks, tree diffs) behave as on a repository on disk, which the
// conformance tests check; refs, locks, transfers and the worktree are files by nature and have no
// in-memory form (a memory repository must not be handed to them).
func newMemory() *Repo { return &Repo{objs: memory.NewStorage()} }
