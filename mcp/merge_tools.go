package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The merge-layer tools (docs/mcp.md): a pull whose two sides changed the same thing keeps a
// deterministic winner in the file and records the losing version in conflicts/<id>.json (docs/format.md
// "Conflicts"); these tools list the open records and
// settle one (store.ResolveConflict: the chosen content written and the record deleted in one commit).

func (s *srv) toolMergeStatus() tool {
	return newTool(toolSpec{name: "context_merge_status", title: "Merge status", readOnly: true,
		desc: "The context branch's sync state: commits ahead of and behind the remote-tracking branch, and " +
			"the open merge conflicts [{id, path, field, rule}]. Returns {branch, tip, remote, ahead, behind, " +
			"open_conflicts, conflicts}."},
		s.mergeStatus)
}

func (s *srv) toolConflictDetail() tool {
	return newTool(toolSpec{name: "context_conflict_detail", title: "Conflict detail", readOnly: true,
		desc: "One open merge conflict by id (or the store path it is about): base, kept (in the file now), " +
			"lost (lost_deleted when the lost version is the file's deletion), who wrote each (kept_by, lost_by), " +
			"ours/theirs for the user of this machine (ours: the version written by this git identity, else on " +
			"this machine; ours_from says which), and the unified diff kept -> lost."},
		s.conflictDetail)
}

func (s *srv) toolResolveConflict() tool {
	return newTool(toolSpec{name: "context_resolve_conflict", title: "Resolve conflict", destructive: true,
		desc: "Settle an open merge conflict: choice kept or lost (the record's versions), ours or theirs " +
			"(ours: the version written by this git identity, else on this machine, whoever made the merge), or " +
			"file with content (a hand-merged version; an entry keeps its front matter, with this writer as its " +
			"author). Writes the chosen content (or deletes the path when the chosen version is a delete) and " +
			"deletes the record in one commit. Returns {id, path, choice, commit}."},
		s.resolveConflict)
}

// conflictArgs are the arguments of context_conflict_detail.
type conflictArgs struct {
	ID string `json:"id"`
}

// resolveConflictArgs are the arguments of context_resolve_conflict; Content nil is omitted.
type resolveConflictArgs struct {
	secretArg
	ID      string  `json:"id"`
	Choice  string  `json:"choice"`
	Content *string `json:"content"`
}

type conflictItem struct {
	ID    string `json:"id"`
	Path  string `json:"path"`
	Field string `json:"field"`
	Rule  string `json:"rule"`
}

// mergeStatus is context_merge_status: store.Status's ahead/behind and store.ListConflicts of the
// checked-out tree.
func (s *srv) mergeStatus(ctx context.Context, _ noArgs) (any, error) {
	st, err := s.store(ctx).Status(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.view(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the checked-out tree: %w", err)
	}
	recs, err := s.store(ctx).ListConflicts(ctx, v)
	if err != nil {
		return nil, err
	}
	items := make([]conflictItem, 0, len(recs))
	for _, r := range recs {
		items = append(items, conflictItem{r.ID, r.Path, r.Field, r.Rule})
	}
	return struct {
		Branch        string         `json:"branch"`
		Tip           string         `json:"tip"`
		Remote        string         `json:"remote"`
		Ahead         int            `json:"ahead"`
		Behind        int            `json:"behind"`
		OpenConflicts int            `json:"open_conflicts"`
		Conflicts     []conflictItem `json:"conflicts"`
	}{st.Branch, st.Tip, st.Remote, st.Ahead, st.Behind, len(items), items}, nil
}

// findConflict resolves the id argument (an id, a record path or the store path a conflict is about)
// among the open conflicts of v; a store path with several conflicts is an error naming id and listing
// them, a missing one "Conflict 'x' not found".
func (s *srv) findConflict(ctx context.Context, v *store.View, id string) (store.ConflictRecord, error) {
	recs, err := s.store(ctx).ListConflicts(ctx, v)
	if err != nil {
		return store.ConflictRecord{}, err
	}
	var ids []string
	for _, r := range recs {
		if r.Path == strings.Trim(id, "/") {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) > 1 {
		return store.ConflictRecord{}, argErrorf("argument 'id': %s has %d open conflicts (%s): pass one id", id, len(ids), strings.Join(ids, ", "))
	}
	return s.store(ctx).GetConflict(ctx, v, id)
}

// conflictDetail is context_conflict_detail (store.GetConflict).
func (s *srv) conflictDetail(ctx context.Context, a conflictArgs) (any, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the checked-out tree: %w", err)
	}
	return s.findConflict(ctx, v, a.ID)
}

// resolveConflict is context_resolve_conflict (store.ResolveConflict): content goes with choice file
// only.
func (s *srv) resolveConflict(ctx context.Context, a resolveConflictArgs) (any, error) {
	choice := a.Choice
	content, hasContent := "", a.Content != nil
	if hasContent {
		content = *a.Content
	}
	if choice == "file" && !hasContent {
		return nil, argErrorf("argument 'content': required with choice file")
	}
	if choice != "file" && hasContent {
		return nil, argErrorf("argument 'content': only with choice file")
	}
	v, err := s.refView(ctx)
	if err != nil {
		return nil, err
	}
	id := a.ID
	if _, err := s.findConflict(ctx, v, id); err != nil {
		return nil, err
	}
	r, c, err := s.store(ctx).ResolveConflict(ctx, id, choice, []byte(content))
	if err != nil {
		return nil, err
	}
	return struct {
		ID     string `json:"id"`
		Path   string `json:"path"`
		Choice string `json:"choice"`
		Commit string `json:"commit"`
	}{r.ID, r.Path, choice, firstCommit(c)}, nil
}

// resolveConflictsPrompt is the context_resolve_conflicts prompt: every open conflict with its diff
// kept -> lost, and how to settle each with context_resolve_conflict. Bounded like the other prompts.
func (s *srv) resolveConflictsPrompt(ctx context.Context, req mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, fmt.Errorf("context_resolve_conflicts: read the checked-out tree: %w", err)
	}
	recs, err := s.store(ctx).ListConflicts(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("context_resolve_conflicts: %w", err)
	}
	sec := section{title: "Open conflicts", empty: "(none: the context branch has no open merge conflicts)",
		unit: "conflicts", uri: "context_merge_status"}
	for _, r := range recs {
		diff := r.Diff
		if len(diff) > maxPromptItem {
			cut := truncUTF8(diff, maxPromptItem)
			diff = cut + fmt.Sprintf("\n[truncated: %d more bytes; call context_conflict_detail {\"id\": %q}]", len(diff)-len(cut), r.ID)
		}
		field := r.Field
		if field == "" {
			field = "(whole file)"
		}
		sec.items = append(sec.items, fmt.Sprintf("### %s (id %s)\n\nfield: %s; rule: %s; ours is the %s version\n\n"+
			"```diff\n%s\n```\n\n", r.Path, r.ID, field, r.Rule, r.OursIs, strings.TrimRight(diff, "\n")))
	}
	header := "# Resolve merge conflicts\n\nA pull merged both sides of the context branch; where both changed " +
		"the same thing, the file holds a deterministic winner (kept) and the other version (lost) waits in a " +
		"conflict record. The diffs below go from kept to lost.\n\n"
	footer := "## How to settle one\n\nFor each conflict, read it whole with context_conflict_detail {\"id\": ...}, " +
		"then call context_resolve_conflict {\"id\": ..., \"choice\": \"kept\" | \"lost\" | \"ours\" | \"theirs\"}, " +
		"or {\"choice\": \"file\", \"content\": \"...\"} with both versions merged by hand. Each is one commit; " +
		"push with context_push when done.\n"
	return promptText("Open merge conflicts", fit(header, []section{sec}, footer, PromptLimit)), nil
}
