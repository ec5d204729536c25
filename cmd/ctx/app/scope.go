package app

import (
	"context"
	"fmt"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// scopeOptions are the arguments of ctx knowledge|convention|decision|skill scope.
type scopeOptions struct {
	Kind  string // the command: knowledge, convention, decision, skill
	Key   string
	Scope store.Scope
}

// newScopeCmd is `ctx <kind> scope KEY SCOPE`: move an entry between the public, private and ephemeral
// refs in one step.
func newScopeCmd(e *env, kind string) *cli.Command {
	return withHelp(&cli.Command{
		Name: "scope", Usage: "move an entry to another scope (public, private, ephemeral)", ArgsUsage: "KEY SCOPE",
		Action: action(e, func(c *cli.Context) (scopeOptions, error) {
			if c.NArg() != 2 {
				return scopeOptions{}, usagef("usage: ctx %s scope KEY SCOPE", kind)
			}
			sc, err := store.ParseScope(c.Args().Get(1))
			if err != nil {
				return scopeOptions{}, usagef("%v", err)
			}
			return scopeOptions{Kind: kind, Key: c.Args().Get(0), Scope: sc}, nil
		}, runScope),
	}, "Moves the entry out of its scope into SCOPE in one step (a commit on each ref it touches). Moving a\n"+
		"public entry out of the public scope warns that its earlier versions stay in the public history.",
		[]string{fmt.Sprintf("ctx %s scope KEY private", kind), fmt.Sprintf("ctx %s scope KEY public", kind)},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runScope(ctx context.Context, e *env, o scopeOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	res, err := s.SetScope(ctx, o.Kind, o.Key, o.Scope)
	if err != nil {
		return err
	}
	commitLine(e.stdout, fmt.Sprintf("%s %s -> %s", o.Kind, o.Key, o.Scope), res)
	if _, fromPublic := res.Commits[store.Public]; fromPublic && o.Scope != store.Public {
		fmt.Fprintf(e.stderr, "ctx: warning: earlier versions of %s %s stay in the history of %s (and on the remote if it was pushed)\n",
			o.Kind, o.Key, s.BranchRef())
	}
	return nil
}
