package adapters

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/store"
)

// Refresh re-exports the clients the user enabled in this work tree (Record.Enabled; nothing when none
// is), after `ctx pull` and in the post-checkout and post-merge hooks (docs/adapters.md "Refresh").
// Files git tracks (Options.Tracked) are left alone unless the Record says TrackedOK: the returned plan
// lists them as Skipped and Status reports them, so a refresh never dirties the work tree by surprise.
// It returns the plan it applied (nil when no client is enabled) and Apply's error (Problems of files
// it left alone, or I/O).
func Refresh(ctx context.Context, st *store.Store, opts Options) (*Plan, error) {
	rec, err := ReadRecord(opts)
	if err != nil {
		return nil, err
	}
	if len(rec.Enabled) == 0 {
		return nil, nil
	}
	c, err := Load(ctx, st)
	if err != nil {
		return nil, err
	}
	pl, err := PlanExport(ctx, opts, c, rec.Enabled...)
	if err != nil {
		return nil, err
	}
	pl.Refresh()
	return pl, pl.Apply(ctx)
}

// OptionsFor returns the Options of st's repository: its work tree, its local state folder
// (<git common dir>/ctx) and, when git is installed, which files git tracks (read once, now). A bare
// repository is an error: there is no work tree to export into.
func OptionsFor(ctx context.Context, st *store.Store) (Options, error) {
	root := st.Repo.WorkTree()
	if root == "" {
		return Options{}, errors.New("adapters: a bare repository has no work tree to export into")
	}
	opts := Options{Root: root, StateDir: st.Repo.CtxDir()}
	files, err := st.Repo.TrackedFiles(ctx)
	switch {
	case errors.Is(err, gitstore.ErrNoGit):
		// Without git nothing is known to be tracked.
	case err != nil:
		return Options{}, fmt.Errorf("adapters: %w", err)
	default:
		tracked := make(map[string]bool, len(files))
		for _, f := range files {
			tracked[f] = true
		}
		opts.Tracked = func(p string) bool { return tracked[p] }
	}
	return opts, nil
}
