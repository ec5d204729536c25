package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/mcp/searchpage"
	"github.com/ctx-dev/ctx/store"
)

// The agent history index behind the read tools (docs/mcp.md "History read tools", docs/history.md): the
// local index that `ctx history import` writes. The server only reads it: it never imports, never
// creates an index, and a missing index is no error (the tools answer with what the context store holds
// and a hint to run the import).

// ctxProvider is the provider name of the context store itself as a source of the read tools.
const ctxProvider = "ctx"

// ctxIDPrefix starts the ids of the context store's sessions and events in the read tools:
// "ctx:<commit>" for a commit, "ctx:<session id>" for a session of Ctx-Session trailers.
const ctxIDPrefix = "ctx:"

// importHint is the hint of a result read without an index.
const importHint = "no agent history index yet: run `ctx history import` to index this machine's coding-agent transcripts"

// publicOnlyHint is the hint of a result read over HTTP, where the index is never served (it holds this
// machine's user's transcripts; docs/http.md): importing would not change the answer.
const publicOnlyHint = "the agent history of this machine is not served over HTTP (docs/http.md): only the context store is searched; run ctx on this machine, or its MCP server over stdio, to read it"

// noIndexHint is the hint of a result read without an index: how to make one, or, over HTTP, that the
// index is not served there.
func noIndexHint(ctx context.Context) string {
	if store.PublicOnly(ctx) {
		return publicOnlyHint
	}
	return importHint
}

// historyIndex is the lazily opened index of a server.
type historyIndex struct {
	mu   sync.Mutex
	dir  string
	ix   *history.Index
	hint string // why there is no index to read although index.db exists (an older schema), else ""
	// users counts, per index opened, the tool calls that may still read it; retired holds those
	// replaced on disk (history.Index.Replaced), closed when their last call ends (or with the server).
	users   map[*history.Index]int
	retired map[*history.Index]bool
}

// use counts a call (ctx) as a user of ix until ctx ends; h.mu is held.
func (h *historyIndex) use(ctx context.Context, ix *history.Index) {
	if ctx.Done() == nil {
		return // a context that never ends: ix stays open until the server closes (closeIndex)
	}
	if h.users == nil {
		h.users = map[*history.Index]int{}
	}
	h.users[ix]++
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.users[ix]--; h.users[ix] > 0 {
			return
		}
		delete(h.users, ix)
		if h.retired[ix] {
			delete(h.retired, ix)
			_ = ix.Close()
		}
	})
}

// retire drops the current index, replaced on disk: it is closed now, or when the last call that may
// read it ends; h.mu is held.
func (h *historyIndex) retire() {
	ix := h.ix
	h.ix = nil
	if h.users[ix] == 0 {
		_ = ix.Close()
		return
	}
	if h.retired == nil {
		h.retired = map[*history.Index]bool{}
	}
	h.retired[ix] = true
}

// rebuildHint is the hint of a result read while the index has an older schema (its version, this ctx's).
const rebuildHint = "the agent history index was built by an older ctx (schema %d, this ctx reads %d): " +
	"run `ctx history import` to rebuild it; until then only the context store is searched"

// noIndexHint is the hint of a result read without an index to read: noIndexHint(ctx), or why the
// index.db there is not read (an older schema: rebuildHint).
func (s *srv) noIndexHint(ctx context.Context) string {
	if !store.PublicOnly(ctx) {
		s.hist.mu.Lock()
		defer s.hist.mu.Unlock()
		if s.hist.hint != "" {
			return s.hist.hint
		}
	}
	return noIndexHint(ctx)
}

// historyDir is the index directory: Options.HistoryDir, else history.DefaultDir of the store's git
// common dir (where `ctx history import` writes it).
func (s *srv) historyDir() string {
	if s.opt.HistoryDir != "" {
		return s.opt.HistoryDir
	}
	return history.DefaultDir(s.st.CommonDir())
}

// index returns the agent history index, nil (and no error) while none exists. It is opened on the
// first call that finds index.db, and again when that file was replaced (removed, or rebuilt by `ctx
// history import`: history.Index.Replaced, one stat per call), so that the server never answers from a
// deleted index; the index it replaces is closed when the calls that were reading it end.
func (s *srv) index(ctx context.Context) (*history.Index, error) {
	if store.PublicOnly(ctx) {
		// The index holds the transcripts of this machine's user: a token holder over HTTP gets the
		// context store only, as if no index existed (docs/http.md).
		return nil, nil
	}
	h := &s.hist
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ix != nil && h.ix.Replaced() {
		h.retire()
	}
	if h.ix != nil {
		h.use(ctx, h.ix)
		return h.ix, nil
	}
	if h.dir == "" {
		h.dir = s.historyDir()
	}
	fi, err := os.Lstat(filepath.Join(h.dir, "index.db"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agent history index: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("agent history index: %s is not a regular file", filepath.Join(h.dir, "index.db"))
	}
	// The server never rebuilds an index of an older schema (Open would empty it): it is read as no index,
	// with a hint to rebuild it, until `ctx history import` does (docs/mcp.md "History read tools").
	h.hint = ""
	if st := history.Inspect(ctx, h.dir); st.Exists && st.Err == nil && !st.Damaged && st.SchemaVersion > 0 &&
		st.SchemaVersion < history.SchemaVersion {
		h.hint = fmt.Sprintf(rebuildHint, st.SchemaVersion, history.SchemaVersion)
		return nil, nil
	}
	open := history.Open
	if s.opt.oneShot {
		open = history.OpenOneShot // a CLI search (Search): one call, then the process exits
	}
	ix, err := open(ctx, h.dir)
	if err != nil {
		return nil, err
	}
	h.ix = ix
	h.use(ctx, ix)
	return ix, nil
}

// closeIndex closes the index (and the search's copy of the store) when they were opened.
func (s *srv) closeIndex() {
	s.ctxIx.close()
	s.hist.mu.Lock()
	defer s.hist.mu.Unlock()
	if s.hist.ix != nil {
		_ = s.hist.ix.Close()
		s.hist.ix = nil
	}
	for ix := range s.hist.retired {
		_ = ix.Close()
	}
	s.hist.retired = nil
}

// indexGeneration is the index (s.index: nil without one) and its generation (0 without an index), which
// the history tools bind their cursors to and report.
func (s *srv) indexGeneration(ctx context.Context) (*history.Index, int64, error) {
	ix, err := s.index(ctx)
	if err != nil || ix == nil {
		return nil, 0, err
	}
	gen, err := ix.Generation(ctx)
	if err != nil {
		return nil, 0, err
	}
	return ix, gen, nil
}

// ctxTip is the fingerprint of the context refs' tips, "" when the store is not initialised.
func (s *srv) ctxTip(ctx context.Context) (string, error) {
	_, fp, err := s.store(ctx).HistoryTips(ctx)
	if errors.Is(err, store.ErrNotInitialized) {
		return "", nil
	}
	return fp, err
}

// historyErrorCode sorts the history package's errors into typed tool errors.
func historyCode(err error) string {
	switch {
	case errors.Is(err, history.ErrInvalidID): // before ErrNotFound, which it wraps too
		return codeInvalidRequest
	case errors.Is(err, history.ErrNotFound):
		return codeNotFound
	case errors.Is(err, history.ErrAmbiguous), errors.Is(err, history.ErrBadQuery):
		return codeInvalidRequest
	}
	return ""
}

// activity is the activity block of an event row: an MCP tool call recorded in a transcript.
type activity struct {
	Invocation invocation `json:"invocation"`
}

type invocation struct {
	Protocol string `json:"protocol"`
	Server   string `json:"server"`
	Tool     string `json:"tool"`
}

// activityOf is the activity of an MCP tool call or its output, nil for any other event.
func activityOf(e *history.Event) *activity {
	if e.Tool == nil || e.Tool.Protocol != "mcp" {
		return nil
	}
	name := e.Tool.Name
	// Claude names MCP tools mcp__<server>__<tool>, Codex <server>__<tool>.
	if rest, ok := strings.CutPrefix(name, "mcp__"+e.Tool.Server+"__"); ok {
		name = rest
	} else if rest, ok := strings.CutPrefix(name, e.Tool.Server+"__"); ok {
		name = rest
	}
	return &activity{Invocation: invocation{Protocol: "mcp", Server: e.Tool.Server, Tool: name}}
}

// historyEvent is an event of the index as the read tools show it: the normalised event (docs/history.md
// "Events") with its provider and, for MCP tool calls, activity. Text and tool fields quote local agent
// history: data, never instructions. Its `at` is the event's time in atFormat (RFC 3339, UTC, milliseconds),
// as in query_events' text and none rows and search results, in place of the event's own encoding.
type historyEvent struct {
	history.Event
	At       string           `json:"at,omitempty"` // over Event.At: "" when the provider recorded no time
	Provider history.Provider `json:"provider"`
	Activity *activity        `json:"activity,omitempty"`
}

func eventOut(e history.Event, p history.Provider) historyEvent {
	out := historyEvent{Event: e, Provider: p, Activity: activityOf(&e)}
	if !e.At.IsZero() {
		out.At = e.At.Format(atFormat)
	}
	return out
}

// quotedNote is stated in every result that carries text of agent transcripts.
const quotedNote = searchpage.QuotedNote
