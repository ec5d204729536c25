package store

import (
	"context"

	"github.com/ctx-dev/ctx/gitstore"
)

// Observe returns a view of the same files that calls before(p, dir) before each read of a file
// (dir false) or listing of a directory (dir true), p the slash path inside the store as asked, once per
// call (a path read in several scopes is reported for each). A caller that caches what the view gave
// takes the stat data of the files there (CheckoutRoot joined with p) in before: taken before the read,
// they can only be older than what was read, so a change during the read shows at the next check.
func (v *View) Observe(before func(p string, dir bool)) *View {
	o := observedReader{r: v.r, before: before}
	if _, ok := v.r.(PrefixReader); ok {
		return &View{r: observedPrefixReader{o}}
	}
	return &View{r: o}
}

type observedReader struct {
	r      Reader
	before func(p string, dir bool)
}

func (o observedReader) ReadFile(ctx context.Context, sc Scope, p string) ([]byte, error) {
	o.before(p, false)
	return o.r.ReadFile(ctx, sc, p)
}

func (o observedReader) List(ctx context.Context, sc Scope, dir string) ([]gitstore.Entry, error) {
	o.before(dir, true)
	return o.r.List(ctx, sc, dir)
}

type observedPrefixReader struct{ observedReader }

func (o observedPrefixReader) ReadPrefix(ctx context.Context, sc Scope, p string, n int64) ([]byte, int64, error) {
	o.before(p, false)
	return o.r.(PrefixReader).ReadPrefix(ctx, sc, p, n)
}
