package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// toolFunc runs a tool on validated arguments and returns its structured result. An *argError, a
// *store.NotFoundError, a *store.AmbiguousError, a *transferFailure (push/pull), or an error wrapping
// store.ErrInvalidKey, store.ErrInvalid or store.ErrNotInitialized becomes a tool error (isError, the
// message as text: something the model can act on); any other error is a JSON-RPC error.
type toolFunc func(ctx context.Context, args map[string]any) (any, error)

// toolDef describes one tool: its input schema is schemas/<name>.input.json.
type toolDef struct {
	name, title, desc string
	readOnly          bool
	destructive       bool
	openWorld         bool // talks to a remote (push, pull)
	output            bool // schemas/<name>.output.json is its output schema
	run               toolFunc
	// prepare, when set, may rewrite the arguments before they are validated and returns a hint
	// appended to an argument error.
	prepare func(ctx context.Context, args map[string]any) string
}

func (s *srv) toolDefs() []toolDef {
	return []toolDef{
		{name: "context_add_knowledge", title: "Add knowledge",
			desc: "Add or replace a knowledge entry (markdown) in the context store: one commit on the context branch. " +
				"Returns {key, scope, commit}; commit is empty when nothing changed.",
			run: s.addEntry(store.KnowledgeKind)},
		{name: "context_remove_knowledge", title: "Remove knowledge", destructive: true,
			desc: "Remove a knowledge entry from whichever scope holds it: one commit. Returns {key, scope, commit}.",
			run:  s.removeEntry(store.KnowledgeKind)},
		{name: "context_add_convention", title: "Add convention",
			desc: "Add or replace a team convention (markdown): one commit on the context branch. " +
				"Returns {key, scope, commit}; commit is empty when nothing changed.",
			run: s.addEntry(store.ConventionKind)},
		{name: "context_remove_convention", title: "Remove convention", destructive: true,
			desc: "Remove a convention from whichever scope holds it: one commit. Returns {key, scope, commit}.",
			run:  s.removeEntry(store.ConventionKind)},
		{name: "context_record_decision", title: "Record decision",
			desc: "Record an architectural decision (ADR: context, decision, consequences): one commit. " +
				"Returns {id, title, status, scope, commit}.",
			run: s.recordDecision},
		{name: "context_update_decision_status", title: "Update decision status",
			desc: "Change a decision's status (proposed, accepted, deprecated, superseded, rejected), by id or exact title; " +
				"with superseded, superseded_by names the replacing decision, which records supersedes in the same write. " +
				"Returns {id, title, status, superseded_by, commit}.",
			run: s.updateDecisionStatus},
		{name: "get_project_context", title: "Get project context", readOnly: true, output: true,
			desc: "Read the project's shared memory (approved facts with provenance), its team pulse (what every " +
				"agent is doing) and who is in it (its people and agents, with the address to @mention each). " +
				"Start here instead of asking teammates to re-explain the project." + s.projectHint(context.Background()),
			run: s.projectContext, prepare: s.prepareProject},
	}
}

func (s *srv) addTools() {
	defs := append(s.toolDefs(), s.modelToolDefs()...)
	defs = append(defs, s.mergeToolDefs()...)
	defs = append(defs, s.syncToolDefs()...)
	s.registerTools(defs, s.handler)
}

// registerTools adds tools to the server, each with its embedded input schema (and output schema when
// d.output) and the handler that mk builds around its run function.
func (s *srv) registerTools(defs []toolDef, mk func(name string, sch *jsonschema.Schema, run toolFunc) server.ToolHandlerFunc) {
	var tools []server.ServerTool
	for _, d := range defs {
		sch, err := compileSchema(d.name + ".input.json")
		if err != nil {
			panic(fmt.Sprintf("mcp: %v", err)) // embedded and covered by tests
		}
		t := mcpgo.Tool{
			Name:           d.name,
			Title:          d.title,
			Description:    d.desc,
			RawInputSchema: rawSchema(d.name + ".input.json"),
			Annotations: mcpgo.ToolAnnotation{
				Title:           d.title,
				ReadOnlyHint:    mcpgo.ToBoolPtr(d.readOnly),
				DestructiveHint: mcpgo.ToBoolPtr(d.destructive),
				IdempotentHint:  mcpgo.ToBoolPtr(d.readOnly),
				OpenWorldHint:   mcpgo.ToBoolPtr(d.openWorld),
			},
		}
		if d.output {
			t.RawOutputSchema = rawSchema(d.name + ".output.json")
		}
		if d.prepare != nil {
			s.prepare[d.name] = d.prepare
		}
		tools = append(tools, server.ServerTool{Tool: t, Handler: mk(d.name, sch, d.run)})
	}
	s.mcp.AddTools(tools...)
}

// handler validates the arguments against the tool's input schema, runs the tool and renders its result
// as structuredContent plus the same JSON as text content.
func (s *srv) handler(name string, sch *jsonschema.Schema, run toolFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		args := req.GetArguments()
		if args == nil {
			if req.Params.Arguments != nil {
				return mcpgo.NewToolResultError("invalid arguments: expected an object"), nil
			}
			args = map[string]any{}
		}
		hint := ""
		if p := s.prepare[name]; p != nil {
			hint = p(ctx, args)
		}
		if err := validateArgs(sch, args); err != nil {
			var ae *argError
			if hint != "" && errors.As(err, &ae) {
				err = argErrorf("%s; %s", ae.msg, hint)
			}
			return toolError(name, err)
		}
		ctx, warnings := store.WithWarnings(ctx)
		if allow, _ := args["allow_secret"].(bool); allow {
			ctx = store.AllowSecrets(ctx)
		}
		out, err := run(ctx, args)
		if err != nil {
			return toolError(name, err)
		}
		note := ""
		if nr, ok := out.(*notedResult); ok {
			out, note = nr.v, nr.note
		}
		return toolResult(name, out, note, warnings.List())
	}
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
// because it would publish a secret says how to make it anyway (the allow_secret argument).
func toolError(name string, err error) (*mcpgo.CallToolResult, error) {
	if errors.Is(err, store.ErrSecret) {
		return mcpgo.NewToolResultError(err.Error() + " by calling " + name + " again with the argument allow_secret: true"), nil
	}
	var ae *argError
	var nf *store.NotFoundError
	var amb *store.AmbiguousError
	var tf *transferFailure
	var ce *codedError
	if errors.As(err, &ce) {
		return codedResult(ce.code, ce.msg), nil
	}
	var tl *store.TooLargeError
	if errors.As(err, &tl) {
		return codedResult(codeOutputLimit, fmt.Sprintf("%v (the MCP server loads at most %d bytes of one file)", tl, maxFileRead)), nil
	}
	if errors.As(err, &ae) || errors.As(err, &nf) || errors.As(err, &amb) || errors.As(err, &tf) ||
		errors.Is(err, store.ErrInvalidKey) || errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrNotInitialized) {
		return mcpgo.NewToolResultError(err.Error()), nil
	}
	return nil, fmt.Errorf("%s: %w", name, err)
}

func str(args map[string]any, key string) string {
	v, _ := args[key].(string)
	return v
}

// entryResult is the result of the entry tools.
type entryResult struct {
	Key    string      `json:"key"`
	Scope  store.Scope `json:"scope"`
	Commit string      `json:"commit"`
}

// addEntry is context_add_knowledge / context_add_convention. An omitted scope keeps the entry's current
// scope (public for a new entry), so that updating a private entry never publishes it; an omitted
// provenance keeps the entry's, agent_generated for a new one (docs/format.md).
func (s *srv) addEntry(k store.Kind) toolFunc {
	return func(ctx context.Context, args map[string]any) (any, error) {
		key, err := store.NormalizeKey(str(args, "key"))
		if err != nil {
			return nil, argErrorf("argument 'key': %v", err)
		}
		c, err := s.store(ctx).SetEntry(ctx, k, store.SetEntry{Key: key, Content: str(args, "content"),
			Scope: store.Scope(str(args, "scope")), Provenance: str(args, "provenance")})
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
func (s *srv) removeEntry(k store.Kind) toolFunc {
	return func(ctx context.Context, args map[string]any) (any, error) {
		key, err := store.NormalizeKey(str(args, "key"))
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

// recordDecision is context_record_decision (seed 000's ADR fields; status default proposed, scope
// default public).
func (s *srv) recordDecision(ctx context.Context, args map[string]any) (any, error) {
	title := strings.TrimSpace(str(args, "title"))
	if title == "" {
		return nil, argErrorf("argument 'title': must not be blank")
	}
	sc, err := store.ParseScope(str(args, "scope"))
	if err != nil {
		return nil, argErrorf("argument 'scope': %v", err)
	}
	d, c, err := s.store(ctx).AddDecision(ctx, store.NewDecision{Title: title, Status: str(args, "status"), Scope: sc,
		Context: str(args, "context"), Decision: str(args, "decision"), Consequences: str(args, "consequences")})
	if err != nil {
		return nil, err
	}
	// The commit this write made, not the tip after it: another writer may have moved the ref since.
	return decisionResult{ID: d.ID, Title: d.Title, Status: d.Status, Scope: d.Scope, Commit: commitOf(c, d.Scope)}, nil
}

// updateDecisionStatus is context_update_decision_status: id is a number or an exact title (seed 000's
// decisions/{id}); superseded_by only goes with status superseded.
func (s *srv) updateDecisionStatus(ctx context.Context, args map[string]any) (any, error) {
	var ref string
	switch id := args["id"].(type) {
	case float64:
		ref = strconv.FormatInt(int64(id), 10)
	case string:
		ref = strings.TrimSpace(id)
	}
	if ref == "" {
		return nil, argErrorf("argument 'id': must be a decision id or title")
	}
	status := str(args, "status")
	by := 0
	if v, ok := args["superseded_by"].(float64); ok {
		by = int(v)
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
