package adapters

import (
	"context"
	"errors"
	"sync"

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
// (<git common dir>/ctx) and which files git tracks (`git ls-files`, run once, on the first question:
// a run that asks none, such as a refresh with no client enabled, runs no git). Without git nothing is
// tracked; an error of git counts every file as tracked, so a refresh changes none. A bare repository is
// an error: there is no work tree to export into.
func OptionsFor(ctx context.Context, st *store.Store) (Options, error) {
	root := st.WorkTree()
	if root == "" {
		return Options{}, errors.New("adapters: a bare repository has no work tree to export into")
	}
	opts := Options{Root: root, StateDir: st.LocalDir()}
	var once sync.Once
	var tracked map[string]bool
	var failed bool
	opts.Tracked = func(p string) bool {
		once.Do(func() {
			files, err := st.TrackedFiles(ctx)
			switch {
			case errors.Is(err, store.ErrNoGit):
			case err != nil:
				failed = true
			default:
				tracked = make(map[string]bool, len(files))
				for _, f := range files {
					tracked[f] = true
				}
			}
		})
		return failed || tracked[p]
	}
	return opts, nil
}
