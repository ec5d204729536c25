package store

import (
	"context"
	"sync"
)

// A write that committed lands even when something after the commit fails (refreshing .context/,
// recording a pushed tip): it reports success, and the problem as a warning (docs/locks.md, "What a
// failed write leaves"), so that callers do not retry and write twice. Warnings reach the caller in the
// write's result (Committed.Warnings, PullResult.Warnings, PushResult.Warnings) and, for callers that only
// get a value back (AddDecision...), through the collector of the context (WithWarnings).

type warningsKey struct{}

// Warnings collects the warnings of the writes made with a context from WithWarnings. Safe for
// concurrent use.
type Warnings struct {
	mu   sync.Mutex
	list []string
}

// WithWarnings returns a context whose writes report their warnings to the returned collector (the CLI
// prints them on stderr, the MCP server adds them to the tool result).
func WithWarnings(ctx context.Context) (context.Context, *Warnings) {
	w := &Warnings{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

// List returns the warnings collected so far, in order.
func (w *Warnings) List() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

// warn reports a warning to the context's collector, if any, and returns it.
func warn(ctx context.Context, msg string) string {
	if w, ok := ctx.Value(warningsKey{}).(*Warnings); ok {
		w.mu.Lock()
		w.list = append(w.list, msg)
		w.mu.Unlock()
	}
	return msg
}

// Warn reports a warning to the context's collector, if any (a front end's own warning about a call that
// still succeeded, as the store's writes report theirs).
func Warn(ctx context.Context, msg string) { warn(ctx, msg) }
