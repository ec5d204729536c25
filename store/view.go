package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
)

// Reader is where a View reads files of each scope from: the context refs (RefReader) or the checked-out
// tree (the MCP server's reads, docs/mcp.md). Missing files return an error wrapping fs.ErrNotExist; a
// missing directory lists as empty.
type Reader interface {
	ReadFile(ctx context.Context, sc Scope, p string) ([]byte, error)
	List(ctx context.Context, sc Scope, dir string) ([]gitstore.Entry, error)
}

// View is a read-only view of the store's three scopes, and the read API of the context model: entries,
// decisions, sessions, skills, state, team and activity are read with View's methods. Store.RefView gives
// the view of the refs' current tips, Store.CheckoutView the view of the checked-out tree; Store is the
// write API.
type View struct {
	r Reader
}

// NewView returns a view over a Reader.
func NewView(r Reader) *View { return &View{r: r} }

// Read returns a file from the first scope that has it (ephemeral, private, public), with that scope.
func (v *View) Read(ctx context.Context, p string) ([]byte, Scope, error) {
	for _, sc := range Scopes {
		b, err := v.r.ReadFile(ctx, sc, p)
		if err == nil {
			return b, sc, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("%s: %w", p, fs.ErrNotExist)
}

// ReadIn returns a file of one scope.
func (v *View) ReadIn(ctx context.Context, sc Scope, p string) ([]byte, error) {
	return v.r.ReadFile(ctx, sc, p)
}

// Listed is a name in a directory of the union of scopes.
type Listed struct {
	Name  string
	Dir   bool
	Scope Scope
}

// List returns the union of a directory's names over the scopes, sorted by name; a name present in
// several scopes is listed once, with the scope that wins by precedence.
func (v *View) List(ctx context.Context, dir string) ([]Listed, error) {
	lists := make([][]gitstore.Entry, len(Scopes))
	only, nonEmpty := -1, 0
	for i, sc := range Scopes {
		es, err := v.r.List(ctx, sc, dir)
		if err != nil {
			return nil, err
		}
		lists[i] = es
		if len(es) > 0 {
			only, nonEmpty = i, nonEmpty+1
		}
	}
	if nonEmpty == 0 {
		return []Listed{}, nil
	}
	if nonEmpty == 1 {
		// The common case, one scope holds the folder: its names, already in order when they are files
		// (git's tree order is byte order but for folders), need no map and no sort.
		out := make([]Listed, len(lists[only]))
		for i, e := range lists[only] {
			out[i] = Listed{Name: e.Name, Dir: e.Dir, Scope: Scopes[only]}
			if i > 0 && out[i-1].Name >= e.Name {
				out = nil
				break
			}
		}
		if out != nil {
			return out, nil
		}
	}
	seen := map[string]Listed{}
	for i := len(Scopes) - 1; i >= 0; i-- {
		for _, e := range lists[i] {
			seen[e.Name] = Listed{Name: e.Name, Dir: e.Dir, Scope: Scopes[i]}
		}
	}
	out := make([]Listed, 0, len(seen))
	for _, l := range seen {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RefReader reads the trees of the context refs at fixed commits (Store.RefView makes one).
type RefReader struct {
	repo  *gitstore.Repo
	Trees map[Scope]gitstore.Hash // the tree of each scope; ZeroHash or absent: the scope is empty
	skels *skelCache              // the store's look-alike index (lookalike), or nil
}

// ReadFile implements Reader.
func (r *RefReader) ReadFile(ctx context.Context, sc Scope, p string) ([]byte, error) {
	t := r.Trees[sc]
	if t.IsZero() {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	b, err := r.repo.ReadFile(ctx, t, p)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return b, err
}

// List implements Reader. Entries ctx does not read (a gitlink, a symbolic link, a name git's fsck
// refuses; docs/security.md) are left out: ReadFile would not return them either.
func (r *RefReader) List(ctx context.Context, sc Scope, dir string) ([]gitstore.Entry, error) {
	t := r.Trees[sc]
	if t.IsZero() {
		return nil, nil
	}
	es, err := r.repo.List(ctx, t, dir)
	if err != nil {
		return nil, err
	}
	out := es[:0]
	for _, e := range es {
		if (e.Dir || e.IsFile()) && gitstore.CheckName(e.Name) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// Tips returns the current commit of each scope's ref (ZeroHash when absent).
func (s *Store) Tips(ctx context.Context) (map[Scope]gitstore.Hash, error) {
	// A scope move a killed process left half done is completed first: readers never see an entry in
	// both scopes or in neither (docs/locks.md).
	if err := s.repo.RecoverInterrupted(ctx); err != nil {
		return nil, err
	}
	out := map[Scope]gitstore.Hash{}
	for _, sc := range Scopes {
		h, err := s.repo.Resolve(ctx, s.RefOf(sc))
		if err != nil {
			return nil, err
		}
		out[sc] = h
	}
	return out, nil
}

// RefView returns a view of the refs' current tips.
func (s *Store) RefView(ctx context.Context) (*View, error) {
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, err
	}
	trees := map[Scope]gitstore.Hash{}
	for sc, c := range tips {
		t, err := s.repo.TreeOf(ctx, c)
		if err != nil {
			return nil, err
		}
		trees[sc] = t
	}
	return scopedView(ctx, NewView(&RefReader{repo: s.repo, Trees: trees, skels: s.skels})), nil
}

// DirReader reads the checked-out tree: the files of .context/ with the scope each path was checked out
// from (the checkout record); files added by hand count as public.
type DirReader struct {
	Root   string
	Scopes map[string]Scope // slash path -> scope, from the checkout record
}

func (d *DirReader) scopeOf(p string) Scope {
	if sc, ok := d.Scopes[p]; ok {
		return sc
	}
	return Public
}

// ReadFile implements Reader.
func (d *DirReader) ReadFile(ctx context.Context, sc Scope, p string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p = path.Clean(p)
	if d.scopeOf(p) != sc {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	b, err := os.ReadFile(filepath.Join(d.Root, filepath.FromSlash(p)))
	if err != nil && isNotDir(err) {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return b, err
}

func isNotDir(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "not a directory")
}

// List implements Reader.
func (d *DirReader) List(ctx context.Context, sc Scope, dir string) ([]gitstore.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir = path.Clean(dir)
	des, err := os.ReadDir(filepath.Join(d.Root, filepath.FromSlash(dir)))
	if err != nil {
		if isNotDir(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []gitstore.Entry
	for _, de := range des {
		p := path.Join(dir, de.Name())
		if de.IsDir() {
			if d.dirHas(p, sc) {
				out = append(out, gitstore.Entry{Name: de.Name(), Dir: true})
			}
			continue
		}
		if d.scopeOf(p) == sc {
			out = append(out, gitstore.Entry{Name: de.Name()})
		}
	}
	return out, nil
}

// dirHas reports whether a directory of the checked-out tree holds a file of scope sc.
func (d *DirReader) dirHas(dir string, sc Scope) bool {
	found := false
	_ = filepath.WalkDir(filepath.Join(d.Root, filepath.FromSlash(dir)), func(p string, de fs.DirEntry, err error) error {
		if err != nil || found || de.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(d.Root, p)
		if d.scopeOf(filepath.ToSlash(rel)) == sc {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}
