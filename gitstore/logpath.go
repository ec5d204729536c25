package gitstore

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// gitPathOK reports whether path (a "/"-separated path of a ref's tree, as LogAll takes it) can be given
// to git as a literal pathspec: relative, without empty, "." or ".." segments, without NUL. Anything else
// is left to logAllWalk, which only looks names up in trees.
func gitPathOK(path string) bool {
	if path == "" || strings.ContainsRune(path, 0) || strings.HasPrefix(path, "/") {
		return false
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// graphNode is one commit of the history as `git rev-list --parents --timestamp` prints it.
type graphNode struct {
	hash    Hash
	when    int64 // committer time, seconds since the epoch
	parents []Hash
}

// logPathGit is LogAll with a path, done with C git (docs/architecture.md "Commits"): two git processes
// run side by side,
//
//   - `git rev-list --parents --timestamp TIP`: the commit graph with committer times (no tree is read);
//   - `git --literal-pathspecs rev-list --full-history TIP -- PATH`: the commits whose tree at PATH
//     differs from that of at least one parent (git compares only the trees on the path);
//
// then the graph is walked here in LogAll's order (newest committer time first, ties by hash), keeping the
// commits of the second list. A merge in that list is kept only when its tree at path differs from that of
// every parent (LogAll's rule; git's --full-history keeps a merge that differs from one parent), which is
// looked up in the trees of that merge and its parents only. Only the commits returned are decoded.
// path must pass gitPathOK. Errors: git's (the caller falls back to logAllWalk), or reading a commit.
func (r *Repo) logPathGit(ctx context.Context, tip Hash, n int, path string) ([]*Commit, error) {
	var (
		wg               sync.WaitGroup
		graphOut         string
		graphErr, setErr error
		setOut           string
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		graphOut, graphErr = r.Git(ctx, "--no-replace-objects", "rev-list", "--parents", "--timestamp", tip.String())
	}()
	setOut, setErr = r.Git(ctx, "--no-replace-objects", "--literal-pathspecs", "rev-list", "--full-history",
		tip.String(), "--", path)
	wg.Wait()
	if graphErr != nil {
		return nil, graphErr
	}
	if setErr != nil {
		return nil, setErr
	}
	changed := map[Hash]bool{}
	for _, line := range strings.Split(setOut, "\n") {
		if line == "" {
			continue
		}
		h, err := ParseHash(line)
		if err != nil {
			return nil, fmt.Errorf("git rev-list --full-history: %q: %w", line, err)
		}
		changed[h] = true
	}
	graph, err := parseGraph(graphOut)
	if err != nil {
		return nil, err
	}
	if _, ok := graph[tip]; !ok {
		return nil, fmt.Errorf("git rev-list: %s not listed", tip)
	}
	// pathAt is the object at path in a commit's tree (merges of the changed list and their parents only).
	at := map[Hash]Hash{}
	pathAt := func(h Hash) (Hash, error) {
		if v, ok := at[h]; ok {
			return v, nil
		}
		t, err := r.TreeOf(ctx, h)
		if err != nil {
			return ZeroHash, err
		}
		v, err := r.PathHash(ctx, t, path)
		if err == nil {
			at[h] = v
		}
		return v, err
	}
	var out []*Commit
	seen := map[Hash]bool{tip: true}
	q := &graphQueue{graph[tip]}
	for q.Len() > 0 {
		if n > 0 && len(out) >= n {
			break
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		c := heap.Pop(q).(*graphNode)
		for _, p := range c.parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			pn, ok := graph[p]
			if !ok {
				return out, fmt.Errorf("git rev-list: parent %s of %s not listed", p, c.hash)
			}
			heap.Push(q, pn)
		}
		keep := changed[c.hash]
		if keep && len(c.parents) > 1 {
			mine, err := pathAt(c.hash)
			if err != nil {
				return out, err
			}
			for _, p := range c.parents {
				theirs, err := pathAt(p)
				if err != nil {
					return out, err
				}
				if theirs == mine {
					keep = false
					break
				}
			}
		}
		if keep {
			cm, err := r.Commit(ctx, c.hash)
			if err != nil {
				return out, err
			}
			out = append(out, cm)
		}
	}
	return out, nil
}

// parseGraph reads `git rev-list --parents --timestamp` output: "TIME HASH [PARENT...]" per line.
func parseGraph(s string) (map[Hash]*graphNode, error) {
	graph := map[Hash]*graphNode{}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("git rev-list --parents --timestamp: %q", line)
		}
		when, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("git rev-list --parents --timestamp: %q: %w", line, err)
		}
		node := &graphNode{when: when}
		if node.hash, err = ParseHash(f[1]); err != nil {
			return nil, fmt.Errorf("git rev-list --parents --timestamp: %q: %w", line, err)
		}
		for _, p := range f[2:] {
			ph, err := ParseHash(p)
			if err != nil {
				return nil, fmt.Errorf("git rev-list --parents --timestamp: %q: %w", line, err)
			}
			node.parents = append(node.parents, ph)
		}
		graph[node.hash] = node
	}
	return graph, nil
}

// graphQueue is a max-heap of graph nodes in allQueue's order: newest committer time first, ties by the
// greater hash (hexadecimal order is byte order).
type graphQueue []*graphNode

func (q graphQueue) Len() int { return len(q) }
func (q graphQueue) Less(i, j int) bool {
	if q[i].when == q[j].when {
		return bytes.Compare(q[i].hash[:], q[j].hash[:]) > 0
	}
	return q[i].when > q[j].when
}
func (q graphQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *graphQueue) Push(x any)   { *q = append(*q, x.(*graphNode)) }
func (q *graphQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
