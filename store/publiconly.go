package store

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/ctx-dev/ctx/gitstore"
)

// Public-only requests (docs/security.md, "Private scopes and remote callers"). The private and
// ephemeral scopes belong to the user of the machine whose repository holds them. A request made for
// someone else, such as an MCP HTTP request authenticated by a team member's token, runs with a context
// made by WithPublicOnly: for it those scopes do not exist. Its views (RefView, CheckoutView) and history
// (HistoryTips) hold the public scope only, and a write of it that would change a private or ephemeral
// entry is refused with ErrPrivateScope, before anything is written.

type publicOnlyKey struct{}

// WithPublicOnly returns a context whose reads see only the public scope and whose writes may change
// only the public scope.
func WithPublicOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, publicOnlyKey{}, true)
}

// PublicOnly reports whether ctx was made by WithPublicOnly.
func PublicOnly(ctx context.Context) bool {
	b, _ := ctx.Value(publicOnlyKey{}).(bool)
	return b
}

// ErrPrivateScope is the error of a public-only request (WithPublicOnly) that names the private or
// ephemeral scope or would change an entry in it.
var ErrPrivateScope = fmt.Errorf("%w: the private and ephemeral scopes belong to the user of this machine; this caller can read and write the public scope only", ErrInvalid)

// PublicOnly returns the view of v's public scope: files of the private and ephemeral scopes do not
// exist in it.
func (v *View) PublicOnly() *View {
	if _, ok := v.r.(PrefixReader); ok {
		return &View{r: publicPrefixReader{publicReader{v.r}}}
	}
	return &View{r: publicReader{v.r}}
}

// everyScope is the view of every scope under v: v itself, or, for a public-only view (PublicOnly), the
// view it hides the private and ephemeral scopes of. Only for what a write computes and never shows the
// caller: a new decision's number, unique across the scopes of this machine (docs/mcp.md
// "context_record_decision over HTTP").
func (v *View) everyScope() *View {
	switch r := v.r.(type) {
	case publicReader:
		return NewView(r.r)
	case publicPrefixReader:
		return NewView(r.r)
	}
	return v
}

// scopedView is v, or its public scope for a public-only ctx.
func scopedView(ctx context.Context, v *View) *View {
	if PublicOnly(ctx) {
		return v.PublicOnly()
	}
	return v
}

type publicReader struct{ r Reader }

func (p publicReader) ReadFile(ctx context.Context, sc Scope, path string) ([]byte, error) {
	if sc != Public {
		return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	return p.r.ReadFile(ctx, sc, path)
}

func (p publicReader) List(ctx context.Context, sc Scope, dir string) ([]gitstore.Entry, error) {
	if sc != Public {
		return nil, nil
	}
	return p.r.List(ctx, sc, dir)
}

type publicPrefixReader struct{ publicReader }

func (p publicPrefixReader) ReadPrefix(ctx context.Context, sc Scope, path string, n int64) ([]byte, int64, error) {
	if sc != Public {
		return nil, 0, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	return p.r.(PrefixReader).ReadPrefix(ctx, sc, path, n)
}

// publicCheckoutView is the public-only view of the checked-out tree (root, whose files the checkout
// record gives the scopes of). .context/ holds one file per path, the copy of the first scope by
// precedence, so an entry a public-only caller wrote while the machine user holds the key privately (its
// public copy, docs/http.md "Private scopes stay the machine user's") is not in it: such paths are read
// from the public ref's tree at the tip public instead, so that the caller reads back what it wrote and
// nothing tells it a private entry of that key exists.
func (s *Store) publicCheckoutView(ctx context.Context, public gitstore.Hash, root string, rs *recordScopes) (*View, error) {
	dr := &DirReader{Root: root, Scopes: rs.scopes}
	hidden := rs.hiddenPaths()
	if len(hidden) == 0 {
		return dr.view().PublicOnly(), nil
	}
	t, err := s.repo.TreeOf(ctx, public)
	if err != nil {
		return nil, fmt.Errorf("read the public tree: %w", err)
	}
	ref := &RefReader{repo: s.repo, Trees: map[Scope]gitstore.Hash{Public: t}, skels: s.skels}
	return NewView(publicPrefixReader{publicReader{shadowedReader{dir: dr, ref: ref, hidden: hidden}}}), nil
}

// hiddenPaths are the paths scopes (a checkout record's) holds of another scope than the public one, and
// their folders with a trailing slash: what a public-only view of .context/ reads from the public ref.
func hiddenPaths(scopes map[string]Scope) map[string]bool {
	hidden := map[string]bool{}
	for p, sc := range scopes {
		if sc == Public {
			continue
		}
		hidden[p] = true
		for d := path.Dir(p); d != "." && !hidden[d+"/"]; d = path.Dir(d) {
			hidden[d+"/"] = true
		}
	}
	return hidden
}

func (d *DirReader) view() *View { return NewView(d) }

// shadowedReader reads the public scope of the checked-out tree, and from the public ref the paths that
// .context/ holds of another scope (hidden: those paths, and their folders with a trailing slash).
type shadowedReader struct {
	dir    *DirReader
	ref    *RefReader
	hidden map[string]bool
}

func (r shadowedReader) ReadFile(ctx context.Context, sc Scope, p string) ([]byte, error) {
	if r.hidden[path.Clean(p)] {
		return r.ref.ReadFile(ctx, sc, p)
	}
	return r.dir.ReadFile(ctx, sc, p)
}

func (r shadowedReader) ReadPrefix(ctx context.Context, sc Scope, p string, n int64) ([]byte, int64, error) {
	if r.hidden[path.Clean(p)] {
		return r.ref.ReadPrefix(ctx, sc, p, n)
	}
	return r.dir.ReadPrefix(ctx, sc, p, n)
}

// List is the folder's public names in .context/, and the public ref's names that .context/ holds of
// another scope (a file) or that hold such files (a folder).
func (r shadowedReader) List(ctx context.Context, sc Scope, dir string) ([]gitstore.Entry, error) {
	es, err := r.dir.List(ctx, sc, dir)
	dir = path.Clean(dir)
	if err != nil || !r.hidden[dir+"/"] {
		return es, err
	}
	more, err := r.ref.List(ctx, sc, dir)
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(es))
	for _, e := range es {
		have[e.Name] = true
	}
	added := false
	for _, e := range more {
		p := path.Join(dir, e.Name)
		if e.Dir {
			p += "/"
		}
		if !have[e.Name] && r.hidden[p] {
			es = append(es, e)
			added = true
		}
	}
	if added {
		sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	}
	return es, nil
}
