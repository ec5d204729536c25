package store

import (
	"context"
	"fmt"
	"io/fs"

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
