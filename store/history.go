package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/store/tipsfp"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// History: the commits of the context refs read as a stream of events (docs/mcp.md, the read tools of seed
// 004). Every scope's ref is walked along first parents; the chains are merged newest first by author
// time (ties: public, private, ephemeral), keeping each chain's own order, so that the stream is
// deterministic for a given set of tips (HistoryTips' fingerprint).

// HistoryEvent is one context commit: the trailers of docs/architecture.md "Commits" (LogEntry) and the scope
// whose ref holds it.
type HistoryEvent struct {
	LogEntry
	Scope Scope `json:"scope"`

	hash, parent, tree gitstore.Hash
	when               time.Time
}

// Hash is the event's commit.
func (e *HistoryEvent) Hash() gitstore.Hash { return e.hash }

// When is the event's author time.
func (e *HistoryEvent) When() time.Time { return e.when }

// HistoryTips returns the tips of the scopes' refs and a fingerprint of them: a short hex digest that
// changes whenever any of the refs moves (the tip the MCP cursors are bound to).
func (s *Store) HistoryTips(ctx context.Context) (map[Scope]gitstore.Hash, string, error) {
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, "", err
	}
	if tips[Public].IsZero() {
		return nil, "", ErrNotInitialized
	}
	if PublicOnly(ctx) {
		// A public-only caller's history holds the public scope only (WithPublicOnly).
		tips = map[Scope]gitstore.Hash{Public: tips[Public]}
	}
	return tips, tipsfp.Of(tips[Ephemeral].String(), tips[Private].String(), tips[Public].String()), nil
}

// History lists the context commits reachable by first parents from the given tips (HistoryTips),
// newest first across the scopes' refs.
func (s *Store) History(ctx context.Context, tips map[Scope]gitstore.Hash) ([]HistoryEvent, error) {
	return s.HistoryRecent(ctx, tips, 0)
}

// HistoryRecent is History cut to the n newest commits (n <= 0: all): each scope's first-parent chain
// is read no further than n commits back, so the cost is bounded by n, not by the branches' length.
func (s *Store) HistoryRecent(ctx context.Context, tips map[Scope]gitstore.Hash, n int) ([]HistoryEvent, error) {
	order := []Scope{Public, Private, Ephemeral}
	chains := make([][]HistoryEvent, len(order))
	total := 0
	for i, sc := range order {
		if tips[sc].IsZero() {
			continue
		}
		commits, err := s.repo.Log(ctx, tips[sc], max(n, 0), "")
		if err != nil {
			return nil, err
		}
		for _, c := range commits {
			chains[i] = append(chains[i], eventOf(c, sc))
		}
		total += len(chains[i])
	}
	if n > 0 {
		total = min(total, n)
	}
	out := make([]HistoryEvent, 0, total)
	pos := make([]int, len(chains))
	for len(out) < total {
		best := -1
		for i := range chains {
			if pos[i] >= len(chains[i]) {
				continue
			}
			if best < 0 || chains[i][pos[i]].when.After(chains[best][pos[best]].when) {
				best = i
			}
		}
		out = append(out, chains[best][pos[best]])
		pos[best]++
	}
	return out, nil
}

func eventOf(c *gitstore.Commit, sc Scope) HistoryEvent {
	t := Trailers(c.Message)
	e := HistoryEvent{LogEntry: LogEntry{Commit: c.Hash.String(), Summary: strings.SplitN(c.Message, "\n", 2)[0],
		Op: t["Ctx-Op"], Key: t["Ctx-Key"], Agent: t["Ctx-Agent"], Session: t["Ctx-Session"],
		Machine: t["Ctx-Machine"], Author: c.Author.Name + " <" + c.Author.Email + ">",
		Time: c.Author.When.UTC().Format(time.RFC3339), Parents: []string{}, Renumbered: t["Ctx-Renumbered"],
		Renamed: TrailerValues(c.Message, "Ctx-Renamed")},
		Scope: sc, hash: c.Hash, tree: c.TreeHash, when: c.Author.When}
	for i, p := range c.ParentHashes {
		if i == 0 {
			e.parent = p
		}
		e.Parents = append(e.Parents, p.String())
	}
	return e
}

// parentTree is the tree of the event's first parent, ZeroHash for a root commit.
func (s *Store) parentTree(ctx context.Context, e *HistoryEvent) (gitstore.Hash, error) {
	if e.parent.IsZero() {
		return gitstore.ZeroHash, nil
	}
	return s.repo.TreeOf(ctx, e.parent)
}

// EventPaths lists the store paths the event changed against its first parent, sorted.
func (s *Store) EventPaths(ctx context.Context, e *HistoryEvent) ([]string, error) {
	pt, err := s.parentTree(ctx, e)
	if err != nil {
		return nil, err
	}
	if pt.IsZero() {
		var out []string
		err := s.repo.Walk(ctx, e.tree, func(p string, _ gitstore.Hash) error {
			out = append(out, p)
			return nil
		})
		return out, err
	}
	paths, err := s.repo.DiffTrees(ctx, pt, e.tree)
	if paths == nil {
		paths = []string{}
	}
	return paths, err
}

// EventFile is one file an event changed, with the unified diff parent → event (UnifiedDiff, 3 lines of
// context) when asked for and the file is text.
type EventFile struct {
	Path   string     `json:"path"`
	Change FileChange `json:"change"`
	Binary bool       `json:"binary,omitempty"`
	Diff   string     `json:"diff,omitempty"`
}

// EventFiles lists the files the event changed; withDiff adds their diffs.
func (s *Store) EventFiles(ctx context.Context, e *HistoryEvent, withDiff bool) ([]EventFile, error) {
	paths, err := s.EventPaths(ctx, e)
	if err != nil {
		return nil, err
	}
	pt, err := s.parentTree(ctx, e)
	if err != nil {
		return nil, err
	}
	out := make([]EventFile, 0, len(paths))
	for _, p := range paths {
		old, hadOld, err := s.readAt(ctx, pt, p)
		if err != nil {
			return nil, err
		}
		cur, hasCur, err := s.readAt(ctx, e.tree, p)
		if err != nil {
			return nil, err
		}
		f := EventFile{Path: p, Change: ChangeModified}
		switch {
		case !hadOld:
			f.Change = ChangeAdded
		case !hasCur:
			f.Change = ChangeDeleted
		}
		if withDiff {
			if isBinary(old) || isBinary(cur) {
				f.Binary = true
			} else {
				f.Diff = UnifiedDiff(string(old), string(cur), 3)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

func isBinary(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) }

// readAt reads a file of a tree; ok is false when the tree (ZeroHash: none) does not have it.
func (s *Store) readAt(ctx context.Context, tree gitstore.Hash, p string) ([]byte, bool, error) {
	if tree.IsZero() {
		return nil, false, nil
	}
	b, err := s.repo.ReadFile(ctx, tree, p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, gitstore.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// BlameLine is one line of a file at the tip with the commit that last changed it.
type BlameLine struct {
	Line    int    `json:"line"`
	Text    string `json:"text"`
	Commit  string `json:"commit"`
	Op      string `json:"op,omitempty"`
	Key     string `json:"key,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"`
	Author  string `json:"author,omitempty"`
	Time    string `json:"time,omitempty"`
}

// Blame is the line attribution of one file.
type Blame struct {
	Path          string      `json:"path"`
	Scope         Scope       `json:"scope"`
	Tip           string      `json:"tip"`
	CommitsWalked int         `json:"commits_walked"`
	Lines         []BlameLine `json:"lines"`
}

// BlameFile attributes every line of a store file at the tip of the ref of the scope holding it (the
// first scope that has it, in read precedence) to the commit that last changed it: a first-parent walk
// from the tip diffing each changed version against its parent with go-diff in line mode. The walk has no
// commit limit: it stops when every line is attributed or the file's first version is reached. Memory is
// bounded by the file, not the history: one version of the file and one line map are held at a time, and a
// commit whose parent has the same blob (compared by object name) is passed without reading the file
// (docs/mcp.md). *NotFoundError when no scope's ref has the file.
func (s *Store) BlameFile(ctx context.Context, tips map[Scope]gitstore.Hash, p string) (*Blame, error) {
	var sc Scope
	var content []byte
	for _, x := range Scopes {
		if tips[x].IsZero() {
			continue
		}
		t, err := s.repo.TreeOf(ctx, tips[x])
		if err != nil {
			return nil, err
		}
		b, ok, err := s.readAt(ctx, t, p)
		if err != nil {
			return nil, err
		}
		if ok {
			sc, content = x, b
			break
		}
	}
	if sc == "" {
		return nil, &NotFoundError{Msg: fmt.Sprintf("File '%s' not found", p)}
	}
	lines := splitLines(string(content))
	out := &Blame{Path: p, Scope: sc, Tip: tips[sc].String(), Lines: make([]BlameLine, len(lines))}
	for i, l := range lines {
		out.Lines[i] = BlameLine{Line: i + 1, Text: strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")}
	}
	origin := make([]int, len(lines)) // line of the version being walked -> line at the tip (-1: gone)
	for i := range origin {
		origin[i] = i
	}
	left := len(lines)
	attribute := func(e *HistoryEvent, tipLine int) {
		if tipLine < 0 || out.Lines[tipLine].Commit != "" {
			return
		}
		l := &out.Lines[tipLine]
		l.Commit, l.Op, l.Key, l.Agent, l.Session, l.Author, l.Time = e.Commit, e.Op, e.Key, e.Agent, e.Session, e.Author, e.Time
		left--
	}
	cur := string(content)
	tipTree, err := s.repo.TreeOf(ctx, tips[sc])
	if err != nil {
		return nil, err
	}
	curBlob, err := s.repo.PathHash(ctx, tipTree, p)
	if err != nil {
		return nil, err
	}
	dmp := diffmatchpatch.New()
	for h := tips[sc]; !h.IsZero() && left > 0; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := s.repo.Commit(ctx, h)
		if err != nil {
			return nil, err
		}
		out.CommitsWalked++
		e := eventOf(c, sc)
		pt, err := s.parentTree(ctx, &e)
		if err != nil {
			return nil, err
		}
		var oldBlob gitstore.Hash
		if !pt.IsZero() {
			if oldBlob, err = s.repo.PathHash(ctx, pt, p); err != nil {
				return nil, err
			}
		}
		if oldBlob.IsZero() {
			for _, o := range origin {
				attribute(&e, o)
			}
			break
		}
		if oldBlob == curBlob {
			h = e.parent
			continue
		}
		oldBytes, err := s.repo.ReadBlob(ctx, oldBlob)
		if err != nil {
			return nil, err
		}
		old := string(oldBytes)
		curBlob = oldBlob
		if old != cur {
			ra, rb, _ := dmp.DiffLinesToRunes(string(old), cur)
			next := make([]int, len(ra))
			i, j := 0, 0 // lines of old, of cur
			for _, d := range dmp.DiffMainRunes(ra, rb, false) {
				n := utf8.RuneCountInString(d.Text)
				for k := 0; k < n; k++ {
					switch d.Type {
					case diffmatchpatch.DiffEqual:
						next[i] = origin[j]
						i++
						j++
					case diffmatchpatch.DiffInsert:
						attribute(&e, origin[j])
						j++
					case diffmatchpatch.DiffDelete:
						next[i] = -1
						i++
					}
				}
			}
			origin, cur = next, old
		}
		h = e.parent
	}
	return out, nil
}

// ChangedPaths lists the store paths whose files differ between two states of the context refs, from
// and to (scope -> commit id as hex; a scope absent or "" has no ref): per scope, the paths that differ
// between the two commits' trees (gitstore.Repo.DiffTrees: added, removed or changed, subtrees with the
// same object name skipped unread), merged and sorted. A scope whose ref appeared or went away lists its
// whole tree. It reads only trees (no blob), so its cost follows the change, not the store's size; an
// unreadable commit (a bad id, an object gone after a force-push and gc) is an error.
func (s *Store) ChangedPaths(ctx context.Context, from, to map[Scope]string) ([]string, error) {
	tree := func(id string) (gitstore.Hash, error) {
		if id == "" {
			return gitstore.ZeroHash, nil
		}
		h, err := gitstore.ParseHash(id)
		if err != nil {
			return gitstore.ZeroHash, fmt.Errorf("changed paths: %w", err)
		}
		t, err := s.repo.TreeOf(ctx, h)
		if err != nil {
			return gitstore.ZeroHash, fmt.Errorf("changed paths: %w", err)
		}
		return t, nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) error {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
		return nil
	}
	for _, sc := range Scopes {
		if from[sc] == to[sc] {
			continue
		}
		a, err := tree(from[sc])
		if err != nil {
			return nil, err
		}
		b, err := tree(to[sc])
		if err != nil {
			return nil, err
		}
		if a == b {
			continue
		}
		if a.IsZero() || b.IsZero() {
			whole := a
			if whole.IsZero() {
				whole = b
			}
			if err := s.repo.Walk(ctx, whole, func(p string, _ gitstore.Hash) error { return add(p) }); err != nil {
				return nil, fmt.Errorf("changed paths: %w", err)
			}
			continue
		}
		paths, err := s.repo.DiffTrees(ctx, a, b)
		if err != nil {
			return nil, fmt.Errorf("changed paths: %w", err)
		}
		for _, p := range paths {
			_ = add(p)
		}
	}
	sort.Strings(out)
	return out, nil
}
