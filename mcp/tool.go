package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// tool is one MCP tool as the server registers it: its definition (name, title, description,
// annotations, input and output schema) and its handler. Each tool has a constructor (a method of srv
// named after the tool, e.g. toolAddKnowledge) that returns it; srv.tools lists them all.
type tool struct {
	def     mcpgo.Tool
	handler server.ToolHandlerFunc
}

// toolSpec is what a tool constructor says about its tool. The input schema is the embedded
// schemas/<name>.input.json, the output schema schemas/<name>.output.json when output is set.
type toolSpec struct {
	name, title, desc string
	readOnly          bool // reads only: served to read-only callers too (docs/http.md)
	destructive       bool
	openWorld         bool // talks to a remote (push, pull)
	output            bool
	// coded selects the error model of the history read tools (docs/mcp.md): every tool error
	// has structuredContent {error_code, message}, and a paged result is shortened to fit the response
	// limit. Without it, argument errors are coded (invalid_request) and the other tool errors are text.
	coded bool
	// prepare, when set, may rewrite the raw arguments before they are validated and returns a hint
	// appended to an argument error.
	prepare func(ctx context.Context, args map[string]any) string
}

// newTool builds a tool whose handler validates the arguments against the input schema, decodes them
// into A (a struct with json tags: absent optional fields stay zero, or nil for pointer fields) and calls
// run. run's result is rendered as structuredContent plus the same JSON as text. An *argError, a
// *store.NotFoundError, a *store.AmbiguousError, a *transferFailure (push/pull), a *codedError, or an
// error wrapping store.ErrInvalidKey, store.ErrInvalid or store.ErrNotInitialized becomes a tool error
// (isError: something the model can act on); any other error is a JSON-RPC error (docs/mcp.md). Every
// argument error (*argError: the schema, arguments that are not an object, the prepare hint, run's own
// checks) carries structuredContent {"error_code": "invalid_request", "message"} (toolError,
// historyError).
func newTool[A any](sp toolSpec, run func(ctx context.Context, a A) (any, error)) tool {
	// Compiled on the tool's first call, not when the server starts: a server that is only asked to
	// initialise, list or read compiles none (TestEmbeddedSchemasCompile checks that each compiles).
	schema := sync.OnceValues(func() (*jsonschema.Schema, error) { return compileSchema(sp.name + ".input.json") })
	t := mcpgo.Tool{
		Name:           sp.name,
		Title:          sp.title,
		Description:    sp.desc,
		RawInputSchema: rawSchema(sp.name + ".input.json"),
		Annotations: mcpgo.ToolAnnotation{
			Title:           sp.title,
			ReadOnlyHint:    mcpgo.ToBoolPtr(sp.readOnly),
			DestructiveHint: mcpgo.ToBoolPtr(sp.destructive),
			IdempotentHint:  mcpgo.ToBoolPtr(sp.readOnly),
			OpenWorldHint:   mcpgo.ToBoolPtr(sp.openWorld),
		},
	}
	if sp.output {
		t.RawOutputSchema = rawSchema(sp.name + ".output.json")
	}
	fail := func(err error) (*mcpgo.CallToolResult, error) {
		if sp.coded {
			return historyError(sp.name, err)
		}
		r, jerr := toolError(sp.name, err)
		if sp.output && r != nil {
			// The output schema is the contract's, exact (get_project_context: docs/mcp.md "Errors of the
			// other tools"): it has no room for {error_code, message}, and clients that check an error's
			// structuredContent against it would throw, so the error is its text alone.
			r.StructuredContent = nil
		}
		return r, jerr
	}
	h := func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		if c := callerOf(ctx); c != nil && c.ReadOnly && !sp.readOnly {
			// filterTools hides the tool already; this holds should a call get past the filter
			return mcpgo.NewToolResultError(sp.name + ": this token is read-only: it cannot write"), nil
		}
		fail := fail // this call's: a read-only call's own deadline is its `timeout`
		if sp.readOnly {
			parent := ctx
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(context.WithValue(ctx, untimedKey{}, parent), toolCallTimeout)
			defer cancel()
			callCtx, fail0 := ctx, fail
			fail = func(err error) (*mcpgo.CallToolResult, error) {
				if r := timedOut(sp.name, parent, callCtx, err); r != nil {
					return r, nil
				}
				return fail0(err)
			}
		}
		args := req.GetArguments()
		if args == nil {
			if req.Params.Arguments != nil {
				return fail(argErrorf("invalid arguments: expected an object"))
			}
			args = map[string]any{}
		}
		hint := ""
		if sp.prepare != nil {
			hint = sp.prepare(ctx, args)
		}
		sch, err := schema()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sp.name, err)
		}
		if err := validateArgs(sch, args); err != nil {
			var ae *argError
			if hint != "" && errors.As(err, &ae) {
				err = argErrorf("%s; %s", ae.msg, hint)
			}
			return fail(err)
		}
		a, err := decodeArgs[A](args)
		if err != nil {
			return fail(err)
		}
		if sp.coded {
			out, err := run(ctx, a)
			if err != nil {
				return fail(err)
			}
			return fitResult(sp.name, out)
		}
		ctx, warnings := store.WithWarnings(ctx)
		if sa, ok := any(a).(interface{ allowSecret() bool }); ok && sa.allowSecret() {
			ctx = store.AllowSecrets(ctx)
		}
		out, err := run(ctx, a)
		if err != nil {
			return fail(err)
		}
		note := ""
		if nr, ok := out.(*notedResult); ok {
			out, note = nr.v, nr.note
		}
		return toolResult(sp.name, out, note, warnings.List())
	}
	return tool{def: t, handler: h}
}

// decodeArgs decodes validated arguments into a tool's argument struct. The schema checked the types
// already, so an error here is a value the struct cannot hold (a number out of an int's range).
func decodeArgs[A any](args map[string]any) (A, error) {
	var a A
	b, err := json.Marshal(args)
	if err != nil {
		return a, argErrorf("invalid arguments: %v", err)
	}
	if err := json.Unmarshal(b, &a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return a, argErrorf("argument '%s': %s is not a valid %s", te.Field, te.Value, te.Type)
		}
		return a, argErrorf("invalid arguments: %v", err)
	}
	return a, nil
}

// noArgs is the argument struct of a tool without arguments.
type noArgs struct{}

// secretArg is the allow_secret argument every write tool takes (docs/security.md): write even when
// text going to the public scope looks like a secret. Argument structs embed it.
type secretArg struct {
	AllowSecret bool `json:"allow_secret"`
}

func (a secretArg) allowSecret() bool { return a.AllowSecret }

// idArg is an argument the schema allows as a string or an integer (a decision's id or exact title).
// It holds the string, or the number in decimal; number reports which.
type idArg struct {
	text   string
	number bool
}

// UnmarshalJSON accepts a JSON string or a whole number.
func (a *idArg) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		a.number = false
		return json.Unmarshal(b, &a.text)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a string or a number: %s", b)
	}
	if f != float64(int64(f)) {
		return fmt.Errorf("not a whole number: %s", b)
	}
	a.text, a.number = strconv.FormatInt(int64(f), 10), true
	return nil
}

// MarshalJSON writes the argument back as it came (used by the cursors' argument hash).
func (a idArg) MarshalJSON() ([]byte, error) {
	if a.number {
		return []byte(a.text), nil
	}
	return json.Marshal(a.text)
}

// trimmed is the argument's text with surrounding white space removed.
func (a idArg) trimmed() string { return strings.TrimSpace(a.text) }

// page is the paging arguments of the paged read tools: cursor (a pagination.next_cursor) and limit.
type page struct {
	Cursor *string `json:"cursor,omitempty"`
	Limit  *int    `json:"limit,omitempty"`
}

// limitOr is the limit argument, def when absent.
func (p page) limitOr(def int) int {
	if p.Limit != nil {
		return *p.Limit
	}
	return def
}
