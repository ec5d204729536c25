package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The tools of the core model: knowledge, conventions, decisions and get_project_context. See
// docs/mcp.md for every tool's arguments, results and errors.

func (s *srv) toolAddKnowledge() tool {
	return newTool(toolSpec{name: "context_add_knowledge", title: "Add knowledge",
		desc: "Add or replace a knowledge entry (markdown) in the context store: one commit on the context branch. " +
			"Returns {key, scope, commit}; commit is empty when nothing changed."},
		s.addEntry(store.KnowledgeKind))
}

func (s *srv) toolRemoveKnowledge() tool {
	return newTool(toolSpec{name: "context_remove_knowledge", title: "Remove knowledge", destructive: true,
		desc: "Remove a knowledge entry from whichever scope holds it: one commit. Returns {key, scope, commit}."},
		s.removeEntry(store.KnowledgeKind))
}

func (s *srv) toolAddConvention() tool {
	return newTool(toolSpec{name: "context_add_convention", title: "Add convention",
		desc: "Add or replace a team convention (markdown): one commit on the context branch. " +
			"Returns {key, scope, commit}; commit is empty when nothing changed."},
		s.addEntry(store.ConventionKind))
}

func (s *srv) toolRemoveConvention() tool {
	return newTool(toolSpec{name: "context_remove_convention", title: "Remove convention", destructive: true,
		desc: "Remove a convention from whichever scope holds it: one commit. Returns {key, scope, commit}."},
		s.removeEntry(store.ConventionKind))
}

func (s *srv) toolRecordDecision() tool {
	return newTool(toolSpec{name: "context_record_decision", title: "Record decision",
		desc: "Record an architectural decision (ADR: context, decision, consequences): one commit. " +
			"Returns {id, title, status, scope, commit}."},
		s.recordDecision)
}

func (s *srv) toolUpdateDecisionStatus() tool {
	return newTool(toolSpec{name: "context_update_decision_status", title: "Update decision status",
		desc: "Change a decision's status (proposed, accepted, deprecated, superseded, rejected), by id or exact title; " +
			"with superseded, superseded_by names the replacing decision, which records supersedes in the same write. " +
			"Returns {id, title, status, superseded_by, commit}."},
		s.updateDecisionStatus)
}

func (s *srv) toolGetProjectContext() tool {
	return newTool(toolSpec{name: "get_project_context", title: "Get project context", readOnly: true, output: true,
		desc: "Read the project's shared memory (approved facts with provenance), its team pulse (what every " +
			"agent is doing) and who is in it (its people and agents, with the address to @mention each). " +
			"Start here instead of asking teammates to re-explain the project." + s.projectHint(context.Background()),
		prepare: s.prepareProject},
		s.projectContext)
}

// toolResult renders a result as structuredContent plus the same JSON as text, within the 1 MiB response
// limit (docs/limits.md): a larger one is the tool error output_limit_exceeded. note (what was left out to
// fit) becomes a second text item. Warnings (a write that committed but could not refresh .context/,
// docs/locks.md) are added to an object result as "warnings": the call succeeded, and must not be retried.
func toolResult(name string, out any, note string, warnings []string) (*mcpgo.CallToolResult, error) {
	if len(warnings) > 0 {
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("%s: encode result: %w", name, err)
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil && m != nil {
			m["warnings"] = warnings
			out = m
		}
	}
	res, size, err := render(out)
	if err != nil {
		return nil, fmt.Errorf("%s: encode result: %w", name, err)
	}
	if size+len(note)*2 > maxResponseBytes {
		return codedResult(codeOutputLimit, fmt.Sprintf("the result is %d bytes, over the %d-byte MCP response limit",
			size, maxResponseBytes)), nil
	}
	if note != "" {
		res.Content = append(res.Content, mcpgo.NewTextContent(note))
	}
	return res, nil
}

// toolError sorts an error into a tool error the model can act on, or a JSON-RPC error. A write refused
// because it would publish a secret says how to make it anyway (the allow_secret argument). An argument
// error (*argError: the input schema, an argument that is not an object, the tool's own checks) is
// isError with its diagnostic as text and structuredContent {"error_code": "invalid_request", "message"}
// (docs/mcp.md "Errors of the other tools"), and so is a value the store refuses (store.ErrInvalid,
// store.ErrInvalidKey: a reserved skill name, a bad scope) and a decision id or title that names several
// decisions (*store.AmbiguousError: a title used twice, a number two files hold); the other tool errors
// are text only.
func toolError(name string, err error) (*mcpgo.CallToolResult, error) {
	if errors.Is(err, store.ErrSecret) {
		return mcpgo.NewToolResultError(err.Error() + " by calling " + name + " again with the argument allow_secret: true"), nil
	}
	var ae *argError
	var amb *store.AmbiguousError
	if errors.As(err, &ae) || errors.As(err, &amb) || errors.Is(err, store.ErrInvalidKey) || errors.Is(err, store.ErrInvalid) {
		r := codedResult(codeInvalidRequest, err.Error())
		r.Content = []mcpgo.Content{mcpgo.NewTextContent(err.Error())} // the diagnostic as it always was
		return r, nil
	}
	var nf *store.NotFoundError
	var tf *transferFailure
	var hd *store.HandDeletionsError
	var ce *codedError
	if errors.As(err, &ce) {
		return codedResult(ce.code, ce.msg), nil
	}
	var tl *store.TooLargeError
	if errors.As(err, &tl) {
		return codedResult(codeOutputLimit, fmt.Sprintf("%v (the MCP server loads at most %d bytes of one file)", tl, maxFileRead)), nil
	}
	if errors.As(err, &nf) || errors.As(err, &tf) || errors.As(err, &hd) ||
		errors.Is(err, store.ErrNotInitialized) {
		return mcpgo.NewToolResultError(err.Error()), nil
	}
	return nil, fmt.Errorf("%s: %w", name, err)
}

// entryResult is the result of the entry tools.
type entryResult struct {
	Key    string      `json:"key"`
	Scope  store.Scope `json:"scope"`
	Commit string      `json:"commit"`
}

// entryArgs are the arguments of context_add_knowledge and context_add_convention.
type entryArgs struct {
	secretArg
	Key        string `json:"key"`
	Content    string `json:"content"`
	Scope      string `json:"scope"`
	Provenance string `json:"provenance"`
}

// keyArgs are the arguments of context_remove_knowledge and context_remove_convention.
type keyArgs struct {
	secretArg
	Key string `json:"key"`
}

// addEntry is context_add_knowledge / context_add_convention. An omitted scope keeps the entry's current
// scope (public for a new entry), so that updating a private entry never publishes it; an omitted
// provenance keeps the entry's, agent_generated for a new one (docs/format.md).
func (s *srv) addEntry(k store.Kind) func(context.Context, entryArgs) (any, error) {
	return func(ctx context.Context, a entryArgs) (any, error) {
		key, err := store.NormalizeKey(a.Key)
		if err != nil {
			return nil, argErrorf("argument 'key': %v", err)
		}
		c, err := s.store(ctx).SetEntry(ctx, k, store.SetEntry{Key: key, Content: a.Content,
			Scope: store.Scope(a.Scope), Provenance: a.Provenance})
		if err != nil {
			return nil, err
		}
		v, err := s.refView(ctx)
		if err != nil {
			return nil, err
		}
		e, err := v.GetEntry(ctx, k, key)
		if err != nil {
			return nil, err
		}
		return entryResult{Key: key, Scope: e.Scope, Commit: commitOf(c, e.Scope)}, nil
	}
}

// removeEntry is context_remove_knowledge / context_remove_convention.
func (s *srv) removeEntry(k store.Kind) func(context.Context, keyArgs) (any, error) {
	return func(ctx context.Context, a keyArgs) (any, error) {
		key, err := store.NormalizeKey(a.Key)
		if err != nil {
			return nil, argErrorf("argument 'key': %v", err)
		}
		c, err := s.store(ctx).RemoveEntry(ctx, k, key)
		if err != nil {
			return nil, err
		}
		for _, sc := range store.Scopes {
			if h, ok := c.Commits[sc]; ok {
				return entryResult{Key: key, Scope: sc, Commit: h.String()}, nil
			}
		}
		return entryResult{Key: key}, nil
	}
}

func commitOf(c *store.Committed, sc store.Scope) string {
	if c == nil {
		return ""
	}
	if h, ok := c.Commits[sc]; ok {
		return h.String()
	}
	return ""
}

type decisionResult struct {
	ID           int         `json:"id"`
	Title        string      `json:"title"`
	Status       string      `json:"status"`
	Scope        store.Scope `json:"scope"`
	SupersededBy int         `json:"superseded_by,omitempty"`
	Commit       string      `json:"commit"`
}

// recordDecisionArgs are the arguments of context_record_decision.
type recordDecisionArgs struct {
	secretArg
	Title        string `json:"title"`
	Status       string `json:"status"`
	Scope        string `json:"scope"`
	Context      string `json:"context"`
	Decision     string `json:"decision"`
	Consequences string `json:"consequences"`
}

// recordDecision is context_record_decision (the ADR fields of docs/format.md; status default proposed,
// scope default public).
func (s *srv) recordDecision(ctx context.Context, a recordDecisionArgs) (any, error) {
	title := strings.TrimSpace(a.Title)
	if title == "" {
		return nil, argErrorf("argument 'title': must not be blank")
	}
	sc, err := store.ParseScope(a.Scope)
	if err != nil {
		return nil, argErrorf("argument 'scope': %v", err)
	}
	d, c, err := s.store(ctx).AddDecision(ctx, store.NewDecision{Title: title, Status: a.Status, Scope: sc,
		Context: a.Context, Decision: a.Decision, Consequences: a.Consequences})
	if err != nil {
		return nil, err
	}
	// The commit this write made, not the tip after it: another writer may have moved the ref since.
	return decisionResult{ID: d.ID, Title: d.Title, Status: d.Status, Scope: d.Scope, Commit: commitOf(c, d.Scope)}, nil
}

// updateDecisionStatusArgs are the arguments of context_update_decision_status.
type updateDecisionStatusArgs struct {
	secretArg
	ID           idArg  `json:"id"`
	Status       string `json:"status"`
	SupersededBy *int   `json:"superseded_by"`
}

// updateDecisionStatus is context_update_decision_status: id is a number or an exact title (as in
// context://decisions/{id}); superseded_by only goes with status superseded.
func (s *srv) updateDecisionStatus(ctx context.Context, a updateDecisionStatusArgs) (any, error) {
	ref := a.ID.trimmed()
	if ref == "" {
		return nil, argErrorf("argument 'id': must be a decision id or title")
	}
	status := a.Status
	by := 0
	if a.SupersededBy != nil {
		by = *a.SupersededBy
		if status != "superseded" {
			return nil, argErrorf("argument 'superseded_by': only with status superseded")
		}
	}
	d, c, err := s.store(ctx).SetDecisionStatus(ctx, ref, status, by)
	if err != nil {
		return nil, err
	}
	return decisionResult{ID: d.ID, Title: d.Title, Status: d.Status, Scope: d.Scope, SupersededBy: d.SupersededBy,
		Commit: commitOf(c, d.Scope)}, nil
}
