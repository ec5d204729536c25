package store

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/merge"
)

// A merge's changes made on one side only (docs/merge.md "What a pull reads"): a path that ours changed
// since the merge base and theirs did not stays as ours has it; one that theirs changed and ours did not
// takes theirs' blob. merge.Tree would decide both so from the files' contents; mergeCommit decides them
// from the tree entries instead, as git's merge does, when merge.OneSided and merge.NeedsOneSided allow
// it, and reads neither the base's nor ours' version (a 1,000 × 1,000 merge on 10,000 entries read 3,500
// blobs, 2,000 now).

// oneSidedOff, set by tests, makes every merge read and merge every changed path (as before one-sided
// changes were taken by name), to compare the two.
var oneSidedOff bool

// oneSidedTaken counts the paths merges decided by name (tests check that a merge took them).
var oneSidedTaken atomic.Int64

// changedPaths is DiffTrees(a, b) (the paths of the files that differ, sorted) with the paths of entries
// that share their name with another entry of their tree (a damaged or hostile tree: never taken by name).
func (s *Store) changedPaths(ctx context.Context, a, b gitstore.Hash) ([]string, map[string]bool, error) {
	added, removed, err := s.repo.DiffItems(ctx, a, b)
	if err != nil {
		return nil, nil, err
	}
	seen := make(map[string]bool, len(added)+len(removed))
	dup := map[string]bool{}
	var out []string
	for _, it := range append(added, removed...) {
		if it.Mode == gitstore.ModeDir { // an empty folder: no file changed
			continue
		}
		p := it.Path()
		if it.Duplicate {
			dup[p] = true
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, dup, nil
}

// splitOneSided splits the paths ours and theirs changed (each sorted) into those the merge reads (changed
// on both sides, or not to be taken by name) and those changed on one side only that may be (oursOnly,
// theirsOnly): merge.OneSided, a store path whose names are all valid (so that it names the same entry
// in every tree), no duplicate entry on either side.
func splitOneSided(ours, theirs []string, dupOurs, dupTheirs map[string]bool) (read, oursOnly, theirsOnly []string) {
	plain := func(p string) bool {
		return !oneSidedOff && merge.OneSided(p) && checkPath(p) == nil && !dupOurs[p] && !dupTheirs[p]
	}
	i, j := 0, 0
	for i < len(ours) || j < len(theirs) {
		switch {
		case j == len(theirs) || i < len(ours) && ours[i] < theirs[j]:
			if p := ours[i]; plain(p) {
				oursOnly = append(oursOnly, p)
			} else {
				read = append(read, p)
			}
			i++
		case i == len(ours) || theirs[j] < ours[i]:
			if p := theirs[j]; plain(p) {
				theirsOnly = append(theirsOnly, p)
			} else {
				read = append(read, p)
			}
			j++
		default:
			read = append(read, ours[i])
			i, j = i+1, j+1
		}
	}
	return read, oursOnly, theirsOnly
}

// takeTheirs decides the paths only theirs changed from the entries of ours' and theirs' trees (found as
// FilesAt finds the files it reads): theirs' file replaces or adds ours' (a Change by blob name), theirs'
// delete removes it, the same blob changes nothing (merge.Tree compares contents: equal blobs, equal
// contents). data holds each taken blob's content, read once here, for the size limit and the refresh.
// rest are the paths it does not decide (an entry that is not a regular or executable file: a link, a
// gitlink), which the merge reads and merges as any other.
func (s *Store) takeTheirs(ctx context.Context, oursTree, theirTree gitstore.Hash, paths []string) (taken []gitstore.Change, data map[string][]byte, rest []string, err error) {
	if len(paths) == 0 {
		return nil, nil, nil, nil
	}
	eo, err := s.repo.EntriesAt(ctx, oursTree, paths)
	if err != nil {
		return nil, nil, nil, err
	}
	et, err := s.repo.EntriesAt(ctx, theirTree, paths)
	if err != nil {
		return nil, nil, nil, err
	}
	file := func(e gitstore.Entry) bool {
		return e.Mode == gitstore.ModeRegular || e.Mode == gitstore.ModeExecutable
	}
	data = map[string][]byte{}
	for _, p := range paths {
		o, ook := eo[p]
		t, tok := et[p]
		if ook && !file(o) || tok && !file(t) {
			rest = append(rest, p)
			continue
		}
		switch {
		case tok && (!ook || o.Hash != t.Hash):
			b, err := s.repo.ReadBlob(ctx, t.Hash)
			if gitstore.IsMissingBlob(err) {
				rest = append(rest, p) // FilesAt takes it for absent: merged as before
				continue
			}
			if err != nil {
				return nil, nil, nil, fmt.Errorf("merge: read %s: %w", p, err)
			}
			taken = append(taken, gitstore.Change{Path: p, Blob: t.Hash})
			data[p] = b
		case !tok && ook:
			taken = append(taken, gitstore.Change{Path: p, Delete: true})
		}
	}
	return taken, data, rest, nil
}
