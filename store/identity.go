package store

import (
	"context"

	"github.com/ctx-dev/ctx/gitstore"
)

// WithIdentity returns a context whose writes are authored by name <email> instead of the git identity:
// the commits' author, and every field the store fills from the git identity (an entry's author, a
// session's user, the member of an activity entry, is_you). The MCP HTTP server sets it from the
// caller's token (docs/http.md). name must not be empty; neither may contain '<', '>' or a newline.
func WithIdentity(ctx context.Context, name, email string) context.Context {
	return gitstore.WithIdentity(ctx, name, email)
}

// LocalDir is the repository's private ctx directory, <git common dir>/ctx: never on the context branch,
// never pushed (config.json, the local-only refs, the MCP HTTP server's tokens).
func (s *Store) LocalDir() string { return s.repo.CtxDir() }
