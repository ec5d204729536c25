package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/mcp/searchpage"
	"github.com/ctx-dev/ctx/mcp/storesearch"
	"github.com/ctx-dev/ctx/store"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The read tools status, sources, search, show_session, show_event and query_events over the agent
// history index, with the context store as one more source, provider "ctx" (docs/mcp.md "History read
// tools").

func (s *srv) toolStatus() tool {
	return newTool(toolSpec{name: "status", title: "Context store and history status", readOnly: true, coded: true,
		desc: "The context store's status, as `ctx status --json` (branch, tip, remote-tracking ref and " +
			"ahead/behind, entry counts, private and ephemeral tips, hand edits, clashes: look-alike keys and " +
			"decisions sharing a number or uid as the last pull or ctx doctor found them), plus read_only: true, " +
			"history: the local agent history index (path, exists, generation, sessions, events, per provider), " +
			"upgrade: whether the index and the store are at this ctx's versions and what brings them there, " +
			"and local_usage: the compact state of the local tool-call accounting (enabled, state, versions)."},
		s.statusTool)
}

func (s *srv) toolSources() tool {
	return newTool(toolSpec{name: "sources", title: "History sources", readOnly: true, coded: true,
		desc: "The local agent history sources: automatic_discovery, and per provider (claude-code, codex, " +
			"gemini-cli, opencode, cursor, copilot-cli) its root, whether it exists, how many sessions the index " +
			"holds and its selection {kind, root, group}; plus the context store itself (provider ctx) with its " +
			"refs and tips, the index, and issues."},
		s.sourcesTool)
}

func (s *srv) toolSearch() tool {
	return newTool(toolSpec{name: "search", title: "Search agent history", readOnly: true, coded: true,
		desc: "Ranked full-text search (BM25 x class weight: messages 1.0, summaries 0.9, tool calls 0.8, " +
			"outputs 0.6) over the local agent history index and the context store (provider ctx: entries " +
			"and commits). One best result per root session first. Filters: content_scope (all, transcript, " +
			"calls, outputs), event_type, providers, since/until, file, ctx_session_id, repo, primary_only. " +
			"Each result names ctx_session_id, native_session_id and ctx_event_id (for show_event). Continue " +
			"with pagination.next_cursor."},
		s.searchTool)
}

func (s *srv) toolShowSession() tool {
	return newTool(toolSpec{name: "show_session", title: "Show session", readOnly: true, coded: true,
		desc: "A session's transcript, one page at a time: the session (provider, native id, parent/root, cwd, " +
			"model, times, source file) and its events in order. mode transcript (default: everything but tool " +
			"outputs), messages (messages and summaries) or log (every event). limit 1-4096 (default 200); " +
			"continue with the same ctx_session_id and mode and pagination.next_cursor while " +
			"pagination.has_more. ctx:<id> names a session of the context store's commits."},
		s.showSessionTool)
}

func (s *srv) toolShowEvent() tool {
	return newTool(toolSpec{name: "show_event", title: "Show event", readOnly: true, coded: true,
		desc: "One event by ctx_event_id (or a unique prefix of 8+ hex digits) with up to 50 events before " +
			"and after it in its session (before, after, or window for both). ctx:<commit> names a commit of " +
			"the context store: its trailers and changed files with diffs (diff: false lists files only)."},
		s.showEventTool)
}

func (s *srv) toolQueryEvents() tool {
	return newTool(toolSpec{name: "query_events", title: "Query agent history events", readOnly: true, coded: true,
		desc: "One bounded, deterministic page (event_range_page) of the indexed agent history events selected " +
			"by ctx_session_id, providers, event_types, role, file, repo and a since/until time range, ordered " +
			"by time (order asc or desc); content full, text or none. Each page says its freshness (the index " +
			"generation and when it was imported) and frontier (its last event; reached_end). Continue with " +
			"next_cursor (bound to the request and the index generation)."},
		s.queryEventsTool)
}

// --- status, sources ---

// historyStatus is the index part of status and sources.
type historyStatus struct {
	Path       string         `json:"path"`
	Exists     bool           `json:"exists"`
	Generation int64          `json:"generation"`
	Sources    int            `json:"sources"`
	Sessions   int            `json:"sessions"`
	Events     int            `json:"events"`
	ByProvider map[string]int `json:"sessions_by_provider"`
	// Conflicts counts records that two files of a session hold with different content (the index keeps
	// the first file's; docs/history.md "A session of several files"); absent when none.
	Conflicts int `json:"conflicts,omitempty"`
	// Error is why the index cannot be read (damaged, written by a newer ctx, ...); Hint then says
	// the remedy (docs/history.md "A damaged index").
	Error string `json:"error,omitempty"`
	Hint  string `json:"hint,omitempty"`
}

// historyStatus reads the index's figures. An index that cannot be read is reported in the result
// (Error, and the remedy in Hint), not as an error: status and sources still answer (docs/mcp.md).
// The error is only ctx's.
func (s *srv) historyStatus(ctx context.Context) (historyStatus, error) {
	hs := historyStatus{Path: s.historyDir(), ByProvider: map[string]int{}}
	ix, err := s.index(ctx)
	if err == nil && ix == nil {
		hs.Hint = s.noIndexHint(ctx)
		return hs, nil
	}
	var st history.Stats
	if err == nil {
		st, err = ix.Stats(ctx)
	}
	if noted := history.DamageNoted(hs.Path); err == nil && noted != "" {
		// A read met a damaged page that Stats does not reach (docs/history.md "A damaged index").
		hs.Exists = true
		hs.Error, hs.Hint = "a read of the index failed: "+noted, indexRemedy(history.ErrDamaged, hs.Path)
		return hs, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return hs, ctx.Err()
		}
		hs.Exists = true
		hs.Error, hs.Hint = err.Error(), indexRemedy(err, hs.Path)
		return hs, nil
	}
	hs.Exists, hs.Generation, hs.Sources, hs.Sessions, hs.Events, hs.ByProvider, hs.Conflicts = true, st.Generation, st.Sources,
		st.Sessions, st.Events, st.ByProvider, st.Conflicts
	return hs, nil
}

// indexRemedy is what the user does about an index that cannot be read: err says why, dir is where.
func indexRemedy(err error, dir string) string {
	switch {
	case history.IsDamaged(err):
		return "the agent history index is damaged; it only caches the transcripts: ctx history import rebuilds it"
	case errors.Is(err, history.ErrNewerIndex):
		return "the agent history index was written by a newer ctx: use that ctx, or remove " +
			filepath.Join(dir, "index.db") + " and run ctx history import to rebuild it with this one"
	}
	return "the agent history index cannot be read; it only caches the transcripts: remove " +
		filepath.Join(dir, "index.db") + " and run ctx history import to rebuild it"
}

func (s *srv) statusTool(ctx context.Context, _ noArgs) (any, error) {
	r, err := s.statusReport(ctx)
	if err != nil {
		return nil, err
	}
	return statusResult{r, true}, nil
}

// statusResult is the status tool's structuredContent: the status report with read_only: true.
type statusResult struct {
	*statusReport
	ReadOnly bool `json:"read_only"`
}

// textFallback is the store's status and the history report: upgrade, local_usage and read_only are
// machine-only, in structuredContent alone (docs/mcp.md "History read tools": "The added facts remain machine-only and do not
// expand the MCP text fallback").
func (r statusResult) textFallback() any {
	return struct {
		*store.Status
		History historyStatus `json:"history"`
	}{r.Status, r.History}
}

// statusReport is the JSON of `ctx status --format json` (StatusReport): the store's status, the
// agent-history index, the upgrade state of both and the local usage of the MCP servers.
type statusReport struct {
	*store.Status
	History    historyStatus `json:"history"`
	Upgrade    upgradeStatus `json:"upgrade"`
	LocalUsage localUsage    `json:"local_usage"`
}

// upgradeStatus is status's upgrade section (docs/mcp.md "status"): whether what this ctx reads is at the
// version it writes, and what brings it there. Reading it changes nothing: the index is inspected
// read-only (history.Inspect), never rebuilt, and no migration runs.
type upgradeStatus struct {
	// State is current (nothing to do), available (an optional migration: ctx migrate) or
	// action_required (the index must be rebuilt, or was written by a newer ctx, or cannot be read).
	State        string       `json:"state"`
	CtxVersion   string       `json:"ctx_version"`
	HistoryIndex indexUpgrade `json:"history_index"`
	ContextStore storeUpgrade `json:"context_store"`
	Actions      []string     `json:"actions"`
}

// indexUpgrade is the agent-history index's part of upgradeStatus.
type indexUpgrade struct {
	// State: current, missing (no index yet: ctx history import), rebuild_required (an older schema: the
	// next ctx history import rebuilds it), newer (written by a newer ctx: this one refuses it), damaged,
	// unreadable.
	State            string `json:"state"`
	SchemaVersion    int    `json:"schema_version"` // found; 0 when missing or unreadable
	SupportedVersion int    `json:"supported_version"`
	Path             string `json:"path"` // a local diagnostic path of this machine
}

// storeUpgrade is the context store's part of upgradeStatus.
type storeUpgrade struct {
	// State: current, migration_available (the older flat layout, which ctx still reads and writes: ctx
	// migrate moves it to the sharded one) or not_initialized.
	State           string `json:"state"`
	SchemaVersion   string `json:"schema_version,omitempty"` // manifest.json's schema_version
	Layout          int    `json:"layout,omitempty"`
	SupportedLayout int    `json:"supported_layout"`
}

func (s *srv) upgradeStatus(ctx context.Context) (upgradeStatus, error) {
	u := upgradeStatus{State: "current", CtxVersion: s.opt.Version, Actions: []string{},
		ContextStore: storeUpgrade{State: "not_initialized", SupportedLayout: store.LayoutSharded}}
	if u.CtxVersion == "" {
		u.CtxVersion = "dev"
	}
	need := func(state, action string) {
		if u.State != "action_required" {
			u.State = state
		}
		u.Actions = append(u.Actions, action)
	}
	if store.PublicOnly(ctx) {
		u.HistoryIndex = indexUpgrade{State: "missing", SupportedVersion: history.SchemaVersion} // not served over HTTP
	} else {
		ist := history.Inspect(ctx, s.historyDir())
		u.HistoryIndex = indexUpgrade{SchemaVersion: ist.SchemaVersion, SupportedVersion: history.SchemaVersion, Path: ist.Path}
		switch {
		case ist.Damaged:
			u.HistoryIndex.State = "damaged"
			need("action_required", "ctx history import (rebuilds the damaged agent history index)")
		case ist.Err != nil:
			u.HistoryIndex.State = "unreadable"
			need("action_required", "check the agent history index file "+ist.Path)
		case !ist.Exists || ist.SchemaVersion == 0:
			u.HistoryIndex.State = "missing"
		case ist.SchemaVersion < history.SchemaVersion:
			u.HistoryIndex.State = "rebuild_required"
			need("action_required", "ctx history import (rebuilds the agent history index of an older ctx)")
		case ist.SchemaVersion > history.SchemaVersion:
			u.HistoryIndex.State = "newer"
			need("action_required", "upgrade ctx (the agent history index was written by a newer ctx)")
		default:
			u.HistoryIndex.State = "current"
		}
	}
	ok, err := s.store(ctx).Initialized(ctx)
	if err != nil || !ok {
		return u, err
	}
	v, err := s.view(ctx)
	if err != nil {
		return u, err
	}
	layout, err := v.Layout(ctx)
	if err != nil {
		return u, err
	}
	u.ContextStore.State, u.ContextStore.Layout = "current", layout
	if m, err := v.ReadManifest(ctx); err == nil {
		u.ContextStore.SchemaVersion = m.SchemaVersion
	}
	if layout < store.LayoutSharded {
		u.ContextStore.State = "migration_available"
		need("available", "ctx migrate (moves the context store to the date-sharded layout; optional)")
	}
	return u, nil
}

func (s *srv) statusReport(ctx context.Context) (*statusReport, error) {
	// A repository without a context branch still has the agent history: the report then carries no
	// store fields and upgrade.context_store.state is not_initialized (docs/mcp.md "status: upgrade").
	st, err := s.store(ctx).Status(ctx)
	if err != nil && !errors.Is(err, store.ErrNotInitialized) {
		return nil, err
	}
	hs, err := s.historyStatus(ctx)
	if err != nil {
		return nil, err
	}
	up, err := s.upgradeStatus(ctx)
	if err != nil {
		return nil, err
	}
	return &statusReport{st, hs, up, s.usage.report()}, nil
}

// StatusReport returns what `ctx status --format json` prints: the store's status, the agent-history
// index of opt.HistoryDir (default: the repository's) and the local usage of this clone's MCP servers;
// the MCP status tool returns the same object with read_only: true (docs/mcp.md). It reads only.
func StatusReport(ctx context.Context, st *store.Store, opt Options) (any, error) {
	opt.Agent = st.Actor.Agent
	s := &srv{st: st, opt: opt, agents: map[string]*store.Store{},
		usage: newUsage(usagePath(st.CommonDir()), opt.NoUsage)}
	defer s.closeIndex()
	return s.statusReport(ctx)
}

// selection is how a source was selected: every built-in source is automatic (its provider's root, no
// configured root or group).
type selection struct {
	Kind  string  `json:"kind"`
	Root  *string `json:"root"`
	Group *string `json:"group"`
}

type providerSource struct {
	Provider        string    `json:"provider"`
	Root            string    `json:"root"`
	EnvVar          string    `json:"env_var,omitempty"`
	FromEnv         bool      `json:"from_env"`
	Exists          bool      `json:"exists"`
	IndexedSessions int       `json:"indexed_sessions"`
	Selection       selection `json:"selection"`
	Refs            []refRow  `json:"refs,omitempty"`
	// Error: the last import could not walk this root (a bound hit, an unreadable directory).
	Error string `json:"error,omitempty"`
}

type refRow struct {
	Name   string      `json:"name"`
	Ref    string      `json:"ref"`
	Kind   string      `json:"kind"` // branch, private, ephemeral, remote_tracking
	Scope  store.Scope `json:"scope,omitempty"`
	Remote string      `json:"remote,omitempty"`
	Pushed bool        `json:"pushed"`
	Tip    *string     `json:"tip"`
}

type sourceIssue struct {
	Code     string `json:"code"`
	Provider string `json:"provider"`
	Message  string `json:"message"`
}

// ctxRefs lists the refs of the context store with their tips; nil when it is not initialised.
func (s *srv) ctxRefs(ctx context.Context) ([]refRow, error) {
	st := s.store(ctx)
	ok, err := st.Initialized(ctx)
	if err != nil || !ok {
		return nil, err
	}
	rows := []refRow{
		{Name: string(store.Public), Ref: st.RefOf(store.Public), Kind: "branch", Scope: store.Public, Pushed: true},
		{Name: string(store.Private), Ref: st.RefOf(store.Private), Kind: "private", Scope: store.Private},
		{Name: string(store.Ephemeral), Ref: st.RefOf(store.Ephemeral), Kind: "ephemeral", Scope: store.Ephemeral},
	}
	if store.PublicOnly(ctx) {
		rows = rows[:1] // the private and ephemeral refs are the machine user's (store.WithPublicOnly)
	}
	remotes, err := st.Remotes(ctx)
	if err != nil {
		return nil, err
	}
	sort.Slice(remotes, func(i, j int) bool { return remotes[i].Name < remotes[j].Name })
	for _, r := range remotes {
		rows = append(rows, refRow{Name: r.Name + "/" + st.Branch(), Ref: st.TrackingRef(r.Name), Kind: "remote_tracking", Remote: r.Name})
	}
	for i := range rows {
		h, err := st.Resolve(ctx, rows[i].Ref)
		if err != nil {
			return nil, err
		}
		if !h.IsZero() {
			t := h.String()
			rows[i].Tip = &t
		}
	}
	return rows, nil
}

// SourcesReport returns what `ctx history sources --json` prints: the object the MCP sources tool returns
// (docs/mcp.md "History read tools"), for the index of opt.HistoryDir (default: the repository's). st nil
// (outside a git repository) gives the providers' roots only, with the issue not_a_repository instead of
// the configured roots and the row of provider ctx. It reads only (stats the roots, never walks them).
func SourcesReport(ctx context.Context, st *store.Store, opt Options) (any, error) {
	s := &srv{st: st, opt: opt, agents: map[string]*store.Store{}}
	if st != nil {
		s.opt.Agent = st.Actor.Agent
	}
	defer s.closeIndex()
	return s.sourcesTool(ctx, noArgs{})
}

func (s *srv) sourcesTool(ctx context.Context, _ noArgs) (any, error) {
	if s.st == nil {
		return s.sourcesOutside(), nil
	}
	hs, err := s.historyStatus(ctx)
	if err != nil {
		return nil, err
	}
	rows := []providerSource{}
	issues := []sourceIssue{}
	// indexed counts the sessions whose source is under a root (0 when the index cannot be read: hs says
	// why).
	indexed := func(provider, dir string) (int, error) {
		if hs.Error != "" {
			return 0, nil
		}
		return s.sessionsUnder(ctx, history.Provider(provider), dir)
	}
	for _, r := range history.Roots(history.Env{}) {
		if store.PublicOnly(ctx) {
			break // the providers' roots are folders of this machine's user (docs/http.md)
		}
		n, err := indexed(string(r.Provider), r.Path)
		if err != nil {
			return nil, err
		}
		rows = append(rows, providerSource{Provider: string(r.Provider), Root: r.Path, EnvVar: r.EnvVar, FromEnv: r.FromEnv,
			Exists: r.Exists, IndexedSessions: n, Selection: selection{Kind: "automatic"}})
		if r.FromEnv && !r.Exists {
			issues = append(issues, sourceIssue{Code: "root_missing", Provider: string(r.Provider),
				Message: r.EnvVar + " names a directory that does not exist"})
		}
	}
	if !store.PublicOnly(ctx) {
		conf, err := s.store(ctx).HistorySources()
		if err != nil {
			return nil, err
		}
		for _, h := range conf {
			sel := selection{Kind: "configured", Root: &h.Root}
			if h.Group != "" {
				sel.Group = &h.Group
			}
			fi, err := os.Stat(h.Path)
			exists := err == nil && fi.IsDir()
			n, err := indexed(h.Provider, h.Path)
			if err != nil {
				return nil, err
			}
			rows = append(rows, providerSource{Provider: h.Provider, Root: h.Path, Exists: exists, IndexedSessions: n, Selection: sel})
			if !exists {
				issues = append(issues, sourceIssue{Code: "root_missing", Provider: h.Provider,
					Message: "configured root " + h.Root + " names a directory that does not exist"})
			}
		}
	}
	// The roots the last import could not walk (a bound hit): their new sessions are not being imported.
	if ix, err := s.index(ctx); err == nil && ix != nil && hs.Error == "" && !store.PublicOnly(ctx) {
		for _, d := range ix.DiscoveryErrors(ctx) {
			for i := range rows {
				if rows[i].Provider == string(d.Provider) && rows[i].Root == d.Root {
					rows[i].Error = d.Error
				}
			}
			issues = append(issues, sourceIssue{Code: "discovery_failed", Provider: string(d.Provider),
				Message: d.Error + " (the last import could not walk this root: its new sessions were not imported)"})
		}
	}
	refs, err := s.ctxRefs(ctx)
	if err != nil {
		return nil, err
	}
	ctxRow := providerSource{Provider: ctxProvider, Root: s.st.CheckoutRoot(), Exists: refs != nil, Selection: selection{Kind: "automatic"}, Refs: refs}
	if refs == nil {
		issues = append(issues, sourceIssue{Code: "not_initialized", Provider: ctxProvider,
			Message: "no context branch here: ctx init or ctx pull"})
	}
	rows = append(rows, ctxRow)
	return sourcesResult{true, rows, hs, issues, false}, nil
}

// sourcesResult is the sources tool's structured content (and `ctx history sources --json`).
type sourcesResult struct {
	AutomaticDiscovery bool             `json:"automatic_discovery"`
	Sources            []providerSource `json:"sources"`
	Index              historyStatus    `json:"index"`
	Issues             []sourceIssue    `json:"issues"`
	Truncated          bool             `json:"truncated"`
}

// sourcesOutside is SourcesReport outside a git repository: the providers' roots, no index (it lives in a
// repository's git dir unless opt.HistoryDir names one), no configured roots, no context store.
func (s *srv) sourcesOutside() sourcesResult {
	rows := []providerSource{}
	issues := []sourceIssue{{Code: "not_a_repository", Provider: ctxProvider,
		Message: "not in a git repository: no context store, no configured roots, no index"}}
	for _, r := range history.Roots(history.Env{}) {
		rows = append(rows, providerSource{Provider: string(r.Provider), Root: r.Path, EnvVar: r.EnvVar, FromEnv: r.FromEnv,
			Exists: r.Exists, Selection: selection{Kind: "automatic"}})
		if r.FromEnv && !r.Exists {
			issues = append(issues, sourceIssue{Code: "root_missing", Provider: string(r.Provider),
				Message: r.EnvVar + " names a directory that does not exist"})
		}
	}
	return sourcesResult{true, rows, historyStatus{ByProvider: map[string]int{}, Hint: importHint}, issues, false}
}

// sessionsUnder counts the indexed sessions of provider whose source is inside dir (0 without an index).
func (s *srv) sessionsUnder(ctx context.Context, provider history.Provider, dir string) (int, error) {
	ix, err := s.index(ctx)
	if err != nil || ix == nil {
		return 0, err
	}
	return ix.SessionsUnder(ctx, provider, dir)
}

// selectSources resolves the search selectors source_roots and source_groups (already checked for shape)
// against the configured roots (ctx history sources add): nil when both are empty, else every root named
// or in a group named, {provider, directory} (one OR set, docs/mcp.md). A name that matches no configured
// root or group is an invalid_request whose message does not repeat it.
func (s *srv) selectSources(ctx context.Context, roots, groups []string) ([]history.SourceDir, error) {
	if len(roots) == 0 && len(groups) == 0 {
		return nil, nil
	}
	var conf []store.HistorySource
	if !store.PublicOnly(ctx) { // configured roots are this machine's folders, not served over HTTP
		c, err := s.store(ctx).HistorySources()
		if err != nil {
			return nil, err
		}
		conf = c
	}
	dirs := []history.SourceDir{}
	for _, list := range []struct {
		names []string
		of    func(store.HistorySource) string
	}{{roots, func(h store.HistorySource) string { return h.Root }}, {groups, func(h store.HistorySource) string { return h.Group }}} {
		for _, n := range list.names {
			found := false
			for _, h := range conf {
				if list.of(h) == n {
					found = true
					dirs = append(dirs, history.SourceDir{Provider: history.Provider(h.Provider), Dir: h.Path})
				}
			}
			if !found {
				return nil, argErrorf("argument 'source_roots'/'source_groups': names no configured source root or group (see the sources tool)")
			}
		}
	}
	return dirs, nil
}

// --- search ---

// searchArgs are the arguments of search.
type searchArgs struct {
	page
	Query                 string   `json:"query"`
	ContentScope          *string  `json:"content_scope,omitempty"`
	EventType             string   `json:"event_type,omitempty"`
	Providers             []string `json:"providers,omitempty"`
	SourceRoots           []string `json:"source_roots,omitempty"`
	SourceGroups          []string `json:"source_groups,omitempty"`
	PrimaryOnly           bool     `json:"primary_only,omitempty"`
	IncludeCurrentSession *bool    `json:"include_current_session,omitempty"`
	Since                 string   `json:"since,omitempty"`
	Until                 string   `json:"until,omitempty"`
	File                  string   `json:"file,omitempty"`
	SessionID             string   `json:"ctx_session_id,omitempty"`
	Repo                  string   `json:"repo,omitempty"`
}

// searchMaxHits bounds the hits one search pages through.
const searchMaxHits = searchpage.MaxHits

// searchResult is one search hit, of the index or of the context store (provider ctx).
type searchResult = searchpage.Result

// timeArg parses an optional time argument as the CLI's --since/--until (history.ParseTimeBound: RFC 3339,
// or YYYY-MM-DD for UTC midnight); v "" is omitted.
func timeArg(v, key string) (time.Time, bool, error) {
	if v == "" {
		return time.Time{}, false, nil
	}
	t, err := history.ParseTimeBound(v)
	if err != nil {
		return time.Time{}, false, argErrorf("argument '%s': not an RFC 3339 time or a YYYY-MM-DD date (e.g. 2025-01-31T09:00:00Z, 2025-01-31)", key)
	}
	return t, true, nil
}

func timeRange(since, until string) (time.Time, time.Time, error) {
	s, _, err := timeArg(since, "since")
	if err != nil {
		return s, s, err
	}
	u, _, err := timeArg(until, "until")
	if err != nil {
		return s, u, err
	}
	if !s.IsZero() && !u.IsZero() && u.Before(s) {
		return s, u, argErrorf("argument 'until': before 'since'")
	}
	return s, u, nil
}

// providerSet splits a providers argument into the index's providers and whether ctx is included
// (everything when the list is empty).
func providerSet(list []string) ([]history.Provider, bool) {
	if len(list) == 0 {
		return nil, true
	}
	var ps []history.Provider
	withCtx := false
	for _, p := range list {
		if p == ctxProvider {
			withCtx = true
		} else if hp, ok := history.ParseProvider(p); ok {
			ps = append(ps, hp)
		}
	}
	return ps, withCtx
}

// indexFile is the file filter of search and query_events as the index holds paths (docs/mcp.md "search"):
// cleaned (history.CleanFilePath), and a relative path taken from the repository's top level (the agents'
// tools record absolute paths), a trailing "/" (a folder prefix) kept. Without a work tree (a bare
// repository) a relative path stays relative. "" stays "".
func (s *srv) indexFile(file string) string {
	c := history.CleanFilePath(file)
	if c == "" || history.IsAbsPath(c) { // a Windows path is absolute too (docs/history.md "Windows paths")
		return c
	}
	wt := s.st.WorkTree()
	if wt == "" {
		return c
	}
	abs := filepath.Join(wt, c)
	if strings.HasSuffix(c, "/") {
		abs += "/"
	}
	return abs
}

// indexRepo is the repo filter as the index compares it: a relative path (".", "sub", "..") is taken from
// the repository's top level, as a file filter is (it matched nothing); without a work tree
// it is an invalid_request (docs/mcp.md).
func (s *srv) indexRepo(repo string) (string, error) {
	if repo == "" || history.IsAbsPath(repo) {
		return repo, nil
	}
	wt := ""
	if s.st != nil {
		wt = s.st.WorkTree()
	}
	if wt == "" {
		return "", argErrorf("argument 'repo': a relative path needs a repository work tree; give an absolute path")
	}
	return filepath.Join(wt, repo), nil
}

func (s *srv) searchTool(ctx context.Context, args searchArgs) (any, error) {
	var err error
	if args.Repo, err = s.indexRepo(args.Repo); err != nil {
		return nil, err
	}
	if strings.TrimSpace(args.Query) == "" {
		return nil, argErrorf("argument 'query': must not be blank")
	}
	if args.ContentScope != nil && args.EventType != "" {
		return nil, argErrorf("argument 'event_type': conflicts with content_scope (give one of them)")
	}
	for _, sel := range [][]string{args.SourceRoots, args.SourceGroups} {
		for _, n := range sel {
			if !store.ValidSourceName(n) { // the shape of configured roots' and groups' names (docs/mcp.md)
				return nil, argErrorf("argument 'source_roots'/'source_groups': an entry is not 1 to 64 ASCII letters, digits, '-' or '_'")
			}
		}
	}
	sourceDirs, err := s.selectSources(ctx, args.SourceRoots, args.SourceGroups)
	if err != nil {
		return nil, err
	}
	selected := sourceDirs != nil
	since, until, err := timeRange(args.Since, args.Until)
	if err != nil {
		return nil, err
	}
	scope := history.ScopeAll
	if args.ContentScope != nil {
		scope = *args.ContentScope
	}
	provs, withCtx := providerSet(args.Providers)
	if selected {
		// Only the selected configured roots: the context store is not one of them (docs/mcp.md).
		withCtx = false
	}
	withIndex := len(args.Providers) == 0 || len(provs) > 0
	limit := args.limitOr(20)

	// A search of the context store alone (providers ["ctx"]) does not need the index: it reports the
	// index's generation when the index can be read, and 0 when it cannot (damaged), instead of failing.
	ix, gen, err := s.indexGeneration(ctx)
	if err != nil && withIndex {
		return nil, err
	}
	tip, err := s.ctxTip(ctx)
	if err != nil {
		return nil, err
	}
	cur := newCursorFor("search", args, fmt.Sprintf("g%d/%s", gen, tip))
	off, err := cur.start(args.page)
	if err != nil {
		return nil, err
	}
	want := min(searchMaxHits, off+limit+1)
	var hits []searchResult
	relaxed := false
	window := 0 // the rank window, when more events matched than a search ranks (docs/history.md "Search")
	if ix != nil && withIndex {
		sessionID := args.SessionID
		if sessionID != "" && !strings.HasPrefix(sessionID, ctxIDPrefix) {
			// A prefix or the provider's own id names the session as in show_session and query_events
			// (history.Index.Session); an unknown one is not_found, not an empty answer.
			sess, err := ix.Session(ctx, sessionID)
			if err != nil {
				return nil, err
			}
			sessionID = sess.ID
		}
		res, err := ix.Search(ctx, history.Query{Text: args.Query, Providers: provs, Since: since, Until: until,
			File: s.indexFile(args.File), SessionID: sessionID, Repo: args.Repo, Scope: scope,
			EventType: history.EventType(args.EventType), PrimaryOnly: args.PrimaryOnly, SourceDirs: sourceDirs, Limit: want})
		if err != nil {
			return nil, err
		}
		relaxed, window = res.Relaxed, res.Window
		hits = searchpage.IndexResults(res.Hits)
	}
	if withCtx && tip != "" && scope != history.ScopeCalls && scope != history.ScopeOutputs && args.Repo == "" {
		ch, err := s.ctxSearch(ctx, args, since, until)
		if err != nil {
			return nil, err
		}
		hits = storesearch.MergeHits(hits, ch)
	}
	if len(hits) > want {
		hits = hits[:want]
	}
	if err := checkOffset(off, len(hits)); err != nil {
		return nil, err
	}
	filters := map[string]any{"content_scope": scope}
	if args.EventType != "" {
		filters["event_type"] = args.EventType
	}
	for k, v := range map[string]string{"since": args.Since, "until": args.Until, "file": args.File,
		"ctx_session_id": args.SessionID, "repo": args.Repo} {
		if v != "" {
			filters[k] = v
		}
	}
	if len(args.Providers) > 0 {
		filters["providers"] = args.Providers
	}
	if args.PrimaryOnly {
		filters["primary_only"] = true
	}
	if len(args.SourceRoots) > 0 {
		filters["source_roots"] = args.SourceRoots
	}
	if len(args.SourceGroups) > 0 {
		filters["source_groups"] = args.SourceGroups
	}
	hint := ""
	if ix == nil {
		hint = s.noIndexHint(ctx)
	}
	return pageOf(hits, off, limit, cur.next, func(items []searchResult, pg pagination) any {
		return searchpage.Page(args.Query, filters, relaxed, window, gen, items, pg, hint)
	}), nil
}

// ctxSearchCommits bounds the context store's commits a search ranks: the newest 200 across the scopes'
// refs (docs/mcp.md "search"). Reading every commit of a 10,000-commit context branch cost a search
// 0.2-0.6 s; 1,000 about 23 ms of CPU; 200 a few ms (bench/README.md "CLI search of the context store").
const ctxSearchCommits = 200

// ctxDoc is an entry or a commit of the context store as the search sees it.
type ctxDoc = storesearch.Doc

// ctxSearch ranks the context store's entries (as messages) and commits (as summaries) with BM25 (k1
// 1.2, b 0.75) times the class weight, under the search's filters.
func (s *srv) ctxSearch(ctx context.Context, args searchArgs, since, until time.Time) ([]searchResult, error) {
	et := args.EventType
	withEntries := (et == "" || et == string(history.Message)) && since.IsZero() && until.IsZero() && args.SessionID == ""
	withCommits := et == "" || et == string(history.Summary)
	if args.SessionID != "" && !strings.HasPrefix(args.SessionID, ctxIDPrefix) {
		return nil, nil
	}
	terms := storesearch.Terms(args.Query)
	if len(terms) == 0 {
		return nil, nil
	}
	docs, err := s.ctxDocs(ctx, terms, withEntries, withCommits, args.File != "")
	if err != nil {
		return nil, err
	}
	kept := docs[:0]
	for _, d := range docs {
		if d.Commit {
			if (!since.IsZero() && d.When.Before(since)) || (!until.IsZero() && !d.When.Before(until)) {
				continue
			}
			if args.SessionID != "" && ctxIDPrefix+d.Session != args.SessionID {
				continue
			}
		}
		kept = append(kept, d)
	}
	docs = kept
	if args.File != "" {
		// The store's paths (knowledge/x.md) are relative to the branch: the filter cleaned as the index's.
		file := history.CleanFilePath(args.File)
		kept := docs[:0]
		for _, d := range docs {
			for _, p := range d.Paths {
				if p == file || (strings.HasSuffix(file, "/") && strings.HasPrefix(p, file)) {
					kept = append(kept, d)
					break
				}
			}
		}
		docs = kept
	}
	return storesearch.Rank(ctx, docs, args.Query, terms)
}

// --- show_session ---

// showSessionArgs are the arguments of show_session.
type showSessionArgs struct {
	page
	SessionID string `json:"ctx_session_id"`
	Mode      string `json:"mode,omitempty"`
}

// Transcript modes of show_session.
const (
	modeTranscript = "transcript" // every event but tool outputs
	modeMessages   = "messages"   // messages and summaries
	modeLog        = "log"        // every event
)

func inMode(mode string, t history.EventType) bool {
	switch mode {
	case modeMessages:
		return t == history.Message || t == history.Summary
	case modeLog:
		return true
	}
	return t != history.ToolOutput
}

func (s *srv) showSessionTool(ctx context.Context, args showSessionArgs) (any, error) {
	mode := args.Mode
	if mode == "" {
		mode = modeTranscript
	}
	if id, ok := strings.CutPrefix(args.SessionID, ctxIDPrefix); ok {
		return s.showCtxSession(ctx, args, id, mode)
	}
	limit := args.limitOr(200)
	ix, err := s.index(ctx)
	if err != nil {
		return nil, err
	}
	if ix == nil {
		return nil, codedErrorf(codeNotFound, "session %q not found: %s", args.SessionID, s.noIndexHint(ctx))
	}
	sess, err := ix.Session(ctx, args.SessionID)
	if err != nil {
		return nil, err
	}
	gen, err := ix.Generation(ctx)
	if err != nil {
		return nil, err
	}
	cur := newCursorFor("show_session", struct {
		ID   string `json:"id"`
		Mode string `json:"mode"`
	}{sess.ID, mode}, fmt.Sprintf("g%d", gen))
	after, err := cur.start(args.page)
	if err != nil {
		return nil, err
	}
	if after > 0 {
		// The cursor names the last event of the previous page: an event of this session.
		at, err := ix.Events(ctx, sess.ID, int64(after-1), 1)
		if err != nil {
			return nil, err
		}
		if len(at) == 0 || at[0].Seq != int64(after) {
			return nil, codedErrorf(codeInvalidCursor, "the cursor is malformed: pass a pagination.next_cursor unchanged")
		}
	}
	// The page's candidates: the next limit+1 events of the mode after the cursor's sequence number.
	var evs []history.Event
	seq := int64(after)
	for len(evs) <= limit {
		chunk, err := ix.Events(ctx, sess.ID, seq, 512)
		if err != nil {
			return nil, err
		}
		for _, e := range chunk {
			if inMode(mode, e.Type) {
				evs = append(evs, e)
			}
		}
		if len(chunk) < 512 {
			break
		}
		seq = chunk[len(chunk)-1].Seq
	}
	more := len(evs) > limit
	if more {
		evs = evs[:limit]
	}
	rows := make([]historyEvent, len(evs))
	for i, e := range evs {
		rows[i] = eventOut(e, sess.Provider)
	}
	page := func(evs []historyEvent) any {
		k := len(evs)
		pg := pagination{Limit: limit, Returned: k, HasMore: k < len(rows) || more}
		if pg.HasMore {
			pg.NextCursor = cur.next(int(rows[k-1].Seq))
		}
		return struct {
			Kind       string          `json:"kind"`
			Session    history.Session `json:"session"`
			Mode       string          `json:"mode"`
			Generation int64           `json:"generation"`
			Events     []historyEvent  `json:"events"`
			Pagination pagination      `json:"pagination"`
			Content    string          `json:"content"`
		}{"session_transcript", sess, mode, gen, evs, pg, quotedNote}
	}
	return &paged{N: len(rows), Build: func(k int) any { return page(rows[:k]) },
		First: func() (string, string) {
			return rows[0].ID, cursorAfterFirst(len(rows), more, func() string { return cur.next(int(rows[0].Seq)) })
		}}, nil
}

// showCtxSession is show_session of a session of the context store: the commits with its Ctx-Session
// trailer, oldest first, and its history/<id>.json record.
func (s *srv) showCtxSession(ctx context.Context, args showSessionArgs, id, mode string) (any, error) {
	if err := validKeyArg("ctx_session_id", id); err != nil {
		return nil, err
	}
	limit := args.limitOr(200)
	tips, fp, err := s.store(ctx).HistoryTips(ctx)
	if err != nil {
		return nil, err
	}
	cur := newCursorFor("show_session", struct {
		ID   string `json:"id"`
		Mode string `json:"mode"`
	}{args.SessionID, mode}, fp)
	off, err := cur.start(args.page)
	if err != nil {
		return nil, err
	}
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	var rec *store.SessionSummary
	r, err := v.GetSession(ctx, id)
	var nf *store.NotFoundError
	switch {
	case err == nil:
		rec = &r
	case !errors.As(err, &nf):
		return nil, err
	}
	all, err := s.store(ctx).History(ctx, tips)
	if err != nil {
		return nil, err
	}
	var sel []store.HistoryEvent
	for i := len(all) - 1; i >= 0; i-- { // oldest first
		if all[i].Session == id {
			sel = append(sel, all[i])
		}
	}
	if rec == nil && len(sel) == 0 {
		return nil, &store.NotFoundError{Msg: fmt.Sprintf("Session '%s' not found", id)}
	}
	if err := checkOffset(off, len(sel)); err != nil {
		return nil, err
	}
	rows, err := s.eventRows(ctx, sel[off:min(off+limit, len(sel))])
	if err != nil {
		return nil, err
	}
	// generation is the index's, as search reports it beside ctx hits (0 without an index)
	_, gen, err := s.indexGeneration(ctx)
	if err != nil {
		return nil, err
	}
	return pageWindow(rows, off, limit, len(sel), cur.next, func(items []eventRow, pg pagination) any {
		return struct {
			Kind       string                `json:"kind"`
			SessionID  string                `json:"ctx_session_id"`
			Provider   string                `json:"provider"`
			Mode       string                `json:"mode"`
			Generation int64                 `json:"generation"`
			Session    *store.SessionSummary `json:"session"`
			Events     []eventRow            `json:"events"`
			Pagination pagination            `json:"pagination"`
			Content    string                `json:"content"`
		}{"session_transcript", args.SessionID, ctxProvider, mode, gen, rec, items, pg, quotedNote}
	}), nil
}

// --- show_event ---

// showEventArgs are the arguments of show_event; Diff nil is the default, true.
type showEventArgs struct {
	EventID string `json:"ctx_event_id"`
	Before  *int   `json:"before,omitempty"`
	After   *int   `json:"after,omitempty"`
	Window  *int   `json:"window,omitempty"`
	Diff    *bool  `json:"diff,omitempty"`
}

func (s *srv) showEventTool(ctx context.Context, args showEventArgs) (any, error) {
	if args.Window != nil && (args.Before != nil || args.After != nil) {
		return nil, argErrorf("argument 'window': conflicts with before and after (give window, or before and after)")
	}
	before, after := 0, 0
	if args.Window != nil {
		before, after = *args.Window, *args.Window
	}
	if args.Before != nil {
		before = *args.Before
	}
	if args.After != nil {
		after = *args.After
	}
	if commit, ok := strings.CutPrefix(args.EventID, ctxIDPrefix); ok {
		return s.showCommit(ctx, commit, before, after, args.Diff)
	}
	ix, err := s.index(ctx)
	if err != nil {
		return nil, err
	}
	if ix == nil {
		return nil, codedErrorf(codeNotFound, "event %q not found: %s", args.EventID, s.noIndexHint(ctx))
	}
	e, _, err := ix.Event(ctx, args.EventID, 0)
	if err != nil {
		return nil, err
	}
	sess, err := ix.Session(ctx, e.SessionID)
	if err != nil {
		return nil, err
	}
	var around []history.Event
	if before+after > 0 {
		if around, err = ix.Events(ctx, e.SessionID, max(0, e.Seq-int64(before)-1), before+after+1); err != nil {
			return nil, err
		}
	}
	bs, as := []historyEvent{}, []historyEvent{}
	for _, x := range around {
		switch {
		case x.Seq < e.Seq && x.Seq >= e.Seq-int64(before):
			bs = append(bs, eventOut(x, sess.Provider))
		case x.Seq > e.Seq && x.Seq <= e.Seq+int64(after):
			as = append(as, eventOut(x, sess.Provider))
		}
	}
	return shownEvent{eventOut(e, sess.Provider), sess, bs, as, quotedNote}, nil
}

// shownEvent is show_event's result for an event of the index.
type shownEvent struct {
	Event   historyEvent    `json:"event"`
	Session history.Session `json:"session"`
	Before  []historyEvent  `json:"before"`
	After   []historyEvent  `json:"after"`
	Content string          `json:"content"`
}

// oversized is output_limit_exceeded for the event when the result cannot fit (oversizable): the
// contract bounds the window by before and after, with no "fewer", so a window is never shortened. It
// names the event asked for when its row alone is over the limit or the largest of the result (by its
// JSON row's size); else the window's largest event, which makes the result too large, with the command
// that prints that one and a smaller window.
func (r shownEvent) oversized(size int) *mcpgo.CallToolResult {
	n := len(r.Before) + len(r.After)
	if n == 0 {
		return oversizedEvent(r.Event.ID, "", fmt.Sprintf("(%d bytes)", size))
	}
	big, bigSize := r.Event.ID, rowSize(r.Event)
	for _, e := range append(append([]historyEvent{}, r.Before...), r.After...) {
		if m := rowSize(e); m > bigSize {
			big, bigSize = e.ID, m
		}
	}
	if big == r.Event.ID || rowSize(r.Event) > maxResponseBytes { // the event asked for cannot fit alone
		return oversizedEvent(r.Event.ID, "", fmt.Sprintf("with its window of %d events (%d bytes): ask for a smaller window (before, after), or", n, size))
	}
	return oversizedEvent(big, "", fmt.Sprintf("(%d bytes) in the window of %d events around event %s (%d bytes): ask for a window without it (before, after), or",
		bigSize, n, r.Event.ID, size))
}

// rowSize is the size in bytes of e's JSON row (0 when it cannot be encoded).
func rowSize(e historyEvent) int {
	b, err := json.Marshal(e)
	if err != nil {
		return 0
	}
	return len(b)
}

// showCommit is show_event of a commit of the context store.
func (s *srv) showCommit(ctx context.Context, commit string, before, after int, diff *bool) (any, error) {
	if len(commit) < 7 || len(commit) > 40 || strings.Trim(strings.ToLower(commit), "0123456789abcdef") != "" {
		return nil, argErrorf("argument 'ctx_event_id': ctx: must be followed by 7 to 40 hex digits of a commit")
	}
	want := strings.ToLower(commit)
	withDiff := diff == nil || *diff
	tips, _, err := s.store(ctx).HistoryTips(ctx)
	if err != nil {
		return nil, err
	}
	all, err := s.store(ctx).History(ctx, tips)
	if err != nil {
		return nil, err
	}
	idx := -1
	for i := range all {
		if strings.HasPrefix(all[i].Commit, want) {
			if idx >= 0 && all[idx].Commit != all[i].Commit {
				return nil, argErrorf("argument 'ctx_event_id': '%s' is ambiguous: give more hex digits", want)
			}
			idx = i
		}
	}
	if idx < 0 {
		return nil, &store.NotFoundError{Msg: fmt.Sprintf("Event '%s' not found on the context refs", want)}
	}
	e := &all[idx]
	rows, err := s.eventRows(ctx, all[idx:idx+1])
	if err != nil {
		return nil, err
	}
	files, err := s.store(ctx).EventFiles(ctx, e, withDiff)
	if err != nil {
		return nil, err
	}
	// all is newest first: older neighbours follow idx, newer ones precede it. Both lists oldest first.
	older := append([]store.HistoryEvent(nil), all[idx+1:min(idx+1+before, len(all))]...)
	for i, j := 0, len(older)-1; i < j; i, j = i+1, j-1 {
		older[i], older[j] = older[j], older[i]
	}
	newer := all[max(0, idx-after):idx]
	newerChron := make([]store.HistoryEvent, 0, len(newer))
	for i := len(newer) - 1; i >= 0; i-- {
		newerChron = append(newerChron, newer[i])
	}
	beforeRows, err := s.eventRows(ctx, older)
	if err != nil {
		return nil, err
	}
	afterRows, err := s.eventRows(ctx, newerChron)
	if err != nil {
		return nil, err
	}
	type eventDetail struct {
		eventRow
		Files []store.EventFile `json:"files"`
	}
	// session is the store's record of the commit's Ctx-Session (null when it has none or none is kept)
	var rec *store.SessionSummary
	if e.Session != "" {
		v, err := s.view(ctx)
		if err != nil {
			return nil, err
		}
		r, err := v.GetSession(ctx, e.Session)
		var nf *store.NotFoundError
		switch {
		case err == nil:
			rec = &r
		case !errors.As(err, &nf) && !errors.Is(err, store.ErrInvalid) && !errors.Is(err, store.ErrInvalidKey):
			return nil, err
		}
	}
	out := struct {
		Provider string                `json:"provider"`
		Event    eventDetail           `json:"event"`
		Session  *store.SessionSummary `json:"session"`
		Before   []eventRow            `json:"before"`
		After    []eventRow            `json:"after"`
		Content  string                `json:"content"`
	}{ctxProvider, eventDetail{rows[0], files}, rec, beforeRows, afterRows, quotedNote}
	if withDiff {
		// An event whose diffs cannot fit is reported with the hint to ask again without them.
		if _, size, err := render(out); err == nil && size > maxResponseBytes {
			return nil, codedErrorf(codeOutputLimit, "event %s with its diffs is %d bytes, over the %d-byte "+
				"response limit: call show_event again with diff: false", e.Commit, size, maxResponseBytes)
		}
	}
	return out, nil
}

// --- query_events ---

// queryEventsArgs are the arguments of query_events.
type queryEventsArgs struct {
	page
	SessionID  string   `json:"ctx_session_id,omitempty"`
	Providers  []string `json:"providers,omitempty"`
	EventTypes []string `json:"event_types,omitempty"`
	Role       string   `json:"role,omitempty"`
	File       string   `json:"file,omitempty"`
	Repo       string   `json:"repo,omitempty"`
	Since      string   `json:"since,omitempty"`
	Until      string   `json:"until,omitempty"`
	Order      string   `json:"order,omitempty"`
	Content    string   `json:"content,omitempty"`
}

// textEvent is an event row of query_events with content "text" or "none".
type textEvent struct {
	ID        string `json:"ctx_event_id"`
	SessionID string `json:"ctx_session_id"`
	Provider  string `json:"provider"`
	Seq       int64  `json:"seq"`
	At        string `json:"at,omitempty"`
	Type      string `json:"type"`
	Role      string `json:"role,omitempty"`
	Text      string `json:"text,omitempty"`
	Tool      string `json:"tool,omitempty"`
}

func (s *srv) queryEventsTool(ctx context.Context, args queryEventsArgs) (any, error) {
	var err error
	if args.Repo, err = s.indexRepo(args.Repo); err != nil {
		return nil, err
	}
	since, until, err := timeRange(args.Since, args.Until)
	if err != nil {
		return nil, err
	}
	order, content := args.Order, args.Content
	if order == "" {
		order = "asc"
	}
	if content == "" {
		content = "full"
	}
	limit := args.limitOr(100)
	ix, err := s.index(ctx)
	if err != nil {
		return nil, err
	}
	fresh := freshness{State: "no_index", RefreshedBy: "ctx history import"}
	var gen int64
	if ix != nil {
		var changed time.Time
		if gen, changed, err = ix.Freshness(ctx); err != nil {
			return nil, err
		}
		fresh.State, fresh.Generation = "indexed", gen
		if !changed.IsZero() {
			c := changed.Format(atFormat)
			fresh.ChangedAt = &c
		}
	} else if s.noIndexHint(ctx) != noIndexHint(ctx) {
		fresh.State = "rebuild_required"
	}
	q := history.EventQuery{Role: args.Role, File: s.indexFile(args.File), Repo: args.Repo, Since: since, Until: until,
		Desc: order == "desc", Limit: limit + 1}
	if content != "none" {
		// Before loading: an event whose stored projection alone is over the limit cannot fit (its JSON is
		// never shorter), and is refused without being read (docs/mcp.md "Oversized events").
		q.MaxBytes, q.Projection = int64(maxResponseBytes-responseEnvelope), content
	}
	for _, p := range args.Providers {
		hp, _ := history.ParseProvider(p)
		q.Providers = append(q.Providers, hp)
	}
	for _, t := range args.EventTypes {
		q.Types = append(q.Types, history.EventType(t))
	}
	selection := map[string]any{"order": order, "content": content}
	for k, v := range map[string]string{"role": args.Role, "file": args.File, "repo": args.Repo,
		"since": args.Since, "until": args.Until} {
		if v != "" {
			selection[k] = v
		}
	}
	if len(args.Providers) > 0 {
		selection["providers"] = args.Providers
	}
	if len(args.EventTypes) > 0 {
		selection["event_types"] = args.EventTypes
	}
	if ix != nil && args.SessionID != "" {
		sess, err := ix.Session(ctx, args.SessionID)
		if err != nil {
			return nil, err
		}
		q.SessionID = sess.ID
		selection["ctx_session_id"] = sess.ID
	}
	cur := newCursorFor("query_events", args, fmt.Sprintf("g%d", gen))
	var evs []history.ListedEvent
	if q.After, err = cur.startPos(args.page); err != nil {
		return nil, err
	}
	if ix != nil {
		if evs, err = ix.ListEvents(ctx, q); err != nil {
			return nil, err
		}
	}
	more := len(evs) > limit
	if more {
		evs = evs[:limit]
	}
	shortened := false
	for i, le := range evs {
		if !le.Oversized {
			continue
		}
		if i == 0 {
			next := cursorAfterFirst(len(evs), more, func() string { return cur.nextPos(le.Pos) })
			return nil, &oversizedError{id: le.Event.ID, next: next,
				why: fmt.Sprintf("(its stored %s projection is %d bytes)", content, le.Bytes)}
		}
		// The page ends before it: the next page begins with it, and fails.
		evs, more, shortened = evs[:i], true, true
		break
	}
	rows := make([]any, len(evs))
	for i, le := range evs {
		switch content {
		case "full":
			rows[i] = eventOut(le.Event, le.Provider)
		default:
			r := textEvent{ID: le.Event.ID, SessionID: le.Event.SessionID, Provider: string(le.Provider), Seq: le.Event.Seq,
				Type: string(le.Event.Type), Role: le.Event.Role}
			if !le.Event.At.IsZero() {
				r.At = le.Event.At.Format(atFormat)
			}
			if content == "text" {
				r.Text = le.Event.Text
				if le.Event.Tool != nil {
					r.Tool = le.Event.Tool.Name
				}
			}
			rows[i] = r
		}
	}
	hint := ""
	if ix == nil {
		hint = s.noIndexHint(ctx)
	}
	page := func(rows []any) any {
		k := len(rows)
		pg := pagination{Limit: limit, Returned: k, HasMore: k < len(evs) || more}
		if pg.HasMore {
			pg.NextCursor = cur.nextPos(evs[k-1].Pos)
		}
		fr := frontier{ReachedEnd: !pg.HasMore}
		if k > 0 {
			last := evs[k-1].Event
			fr.LastEventID = &last.ID
			if !last.At.IsZero() {
				a := last.At.Format(atFormat)
				fr.LastAt = &a
			}
		}
		return struct {
			Kind       string         `json:"kind"`
			Generation int64          `json:"generation"`
			Selection  map[string]any `json:"selection"`
			Events     []any          `json:"events"`
			Freshness  freshness      `json:"freshness"`
			Frontier   frontier       `json:"frontier"`
			Terminal   bool           `json:"terminal"`
			Truncated  bool           `json:"truncated"`
			NextCursor string         `json:"next_cursor,omitempty"`
			Pagination pagination     `json:"pagination"`
			Content    string         `json:"content"`
			Hint       string         `json:"hint,omitempty"`
		}{"event_range_page", gen, selection, rows, fresh, fr, !pg.HasMore, k < len(evs) || shortened, pg.NextCursor, pg, quotedNote, hint}
	}
	return &paged{N: len(rows), Build: func(k int) any { return page(rows[:k]) },
		First: func() (string, string) {
			return evs[0].Event.ID, cursorAfterFirst(len(evs), more, func() string { return cur.nextPos(evs[0].Pos) })
		}}, nil
}

// cursorAfterFirst is the cursor of the page that follows a page's first item (next, made at that item's
// position) for a page of n items with more after them, "" when that item is the last of all: what an
// item too large for the response limit even alone is reported with (docs/mcp.md "Oversized events").
func cursorAfterFirst(n int, more bool, next func() string) string {
	if n > 1 || more {
		return next()
	}
	return ""
}

// freshness is how current an event_range_page's data is (docs/mcp.md "query_events"): the server never
// imports, so a page is as of the last `ctx history import` that changed the index.
type freshness struct {
	// State: indexed, no_index (none yet) or rebuild_required (an index of an older ctx, not read).
	State      string  `json:"state"`
	Generation int64   `json:"generation"`
	ChangedAt  *string `json:"changed_at"` // when that import ran (null: not recorded, or no index)
	// RefreshedBy is the command that brings the index up to the providers' files.
	RefreshedBy string `json:"refreshed_by"`
}

// frontier is where an event_range_page stands in its selection, at its generation: the last event of
// the page (the position the next page continues from) and whether the selection ends there. A client
// that reached the end can later ask again from last_at (since, order asc) for what an import added.
type frontier struct {
	ReachedEnd  bool    `json:"reached_end"`
	LastEventID *string `json:"last_event_id"`
	LastAt      *string `json:"last_at"`
}

// atFormat is the time of an event in search and text rows: RFC 3339 in UTC with milliseconds (the
// index's resolution), so that the strings sort as the times do.
const atFormat = searchpage.AtFormat
