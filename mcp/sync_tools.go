package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctx-dev/ctx/store"
)

// The sync tools (docs/mcp.md), over store.Push and store.Pull: push publishes the context
// branch without force (to this machine's ref and the shared branch, docs/sync.md), pull fetches and merges
// it and every machine's ref. Neither writes
// anything else; pull may make merge commits (one per machine tip it merges). A transfer the remote refused or could not do is a tool
// error carrying git's reason (never reported as success), since the model can relay it; a store that is
// not initialised is too.

// transferFailure is a push or pull that failed: a tool error (isError) with the reason.
type transferFailure struct{ err error }

func (e *transferFailure) Error() string { return e.err.Error() }
func (e *transferFailure) Unwrap() error { return e.err }

func (s *srv) toolPush() tool {
	return newTool(toolSpec{name: "context_push", title: "Push context", openWorld: true,
		desc: "Publish the context branch to this machine's ref on the remote (refs/ctx/machines/<id>) and try " +
			"to move the shared branch to it; shared is \"behind\" when another machine moved it first, which is " +
			"no failure (the next pull merges both). Never forced. Private and ephemeral entries are never pushed. " +
			"Returns {remote, tip, machine_ref, shared, retries, merges, pulls, warnings}."},
		s.push)
}

func (s *srv) toolPull() tool {
	return newTool(toolSpec{name: "context_pull", title: "Pull context", openWorld: true,
		desc: "Fetch the remote's context branch and every machine's ref and merge what is new (fast-forward or " +
			"merge commits); conflicts " +
			"keep a deterministic winner and are listed by context_merge_status. " +
			"Returns {remote, found, action, old, new, conflicts, decided, notes, hand_edits, refresh_kept, " +
			"refresh_skipped, warnings}."},
		s.pull)
}

// remoteArgs are the arguments of context_push and context_pull.
type remoteArgs struct {
	secretArg
	Remote string `json:"remote"`
}

// remoteArg is the remote argument, else the store's remote (store.RemoteName: configured, origin, or
// the only one), with the options that say who named it. An argument is an agent's value, never trusted:
// it must be the name of a remote configured in the repository (store.CheckRemote with
// store.RemoteFromAgent; docs/security.md, "Trust boundaries: remotes and arguments"), else a tool error
// before git runs. The default remote is the user's own setting.
func (s *srv) remoteArg(ctx context.Context, a remoteArgs) (string, store.PullOptions, error) {
	if r := a.Remote; r != "" {
		o := store.PullOptions{Origin: store.RemoteFromAgent}
		if err := s.st.CheckRemote(r, o.Origin); err != nil {
			return "", o, argErrorf("argument 'remote': %v", err)
		}
		return r, o, nil
	}
	r := s.store(ctx).RemoteName(ctx)
	if r == "" {
		return "", store.PullOptions{}, &transferFailure{errors.New("this repository has no remote: add one with `git remote add`")}
	}
	return r, store.PullOptions{Origin: store.RemoteFromUser}, nil
}

// push is context_push (store.Push).
func (s *srv) push(ctx context.Context, a remoteArgs) (any, error) {
	remote, o, err := s.remoteArg(ctx, a)
	if err != nil {
		return nil, err
	}
	res, err := s.store(ctx).Push(ctx, store.PushOptions{Remote: remote, Strategy: o.Strategy, Origin: o.Origin})
	if err != nil {
		return nil, &transferFailure{err}
	}
	return res.Report(), nil
}

// pull is context_pull (store.Pull).
func (s *srv) pull(ctx context.Context, a remoteArgs) (any, error) {
	remote, o, err := s.remoteArg(ctx, a)
	if err != nil {
		return nil, err
	}
	o.Remote = remote
	st := s.store(ctx)
	res, err := st.Pull(ctx, o)
	if err != nil {
		return nil, &transferFailure{err}
	}
	if res.Found && res.Action != store.PullUpToDate {
		// As ctx pull: a merge can bring clashes (look-alike keys, decisions sharing a number or uid); the
		// check records them for the status tool (store.RecordedClashes). A failure leaves the last record.
		if _, err := st.Clashes(ctx); err != nil {
			store.Warn(ctx, fmt.Sprintf("looking for clashes after the pull: %v", err))
		}
	}
	return res.Report(), nil
}
