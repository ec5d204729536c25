// Package mcp is ctx's MCP server (docs/mcp.md): the `context://` resources read from the
// checked-out tree, the write tools (one commit each through the store: knowledge, conventions,
// decisions, state, sessions, skills with usage/ratings/proposals, activity and intent, scope moves,
// merge conflicts; tools.go, model_tools.go, merge_tools.go), push and pull (sync_tools.go),
// get_project_context, the prompts context_onboarding, context_handoff and context_resolve_conflicts
// (prompts.go), and notifications when the context refs move. It is the only package of ctx that
// imports mcp-go (docs/architecture.md "Packages and layering"), which it imports as mcpgo.
//
// Each tool is a constructor (srv.toolX) returning its definition and a handler that validates the
// arguments against the tool's embedded JSON Schema (schemas/<tool>.input.json) and decodes them into the
// tool's argument struct (tool.go); srv.allTools lists them. [NewServer] registers everything once on a
// [Server]; the transports serve that same registration.
//
// Transports: [Server.ServeStdio] speaks newline-delimited JSON-RPC on the given reader and writer and
// writes nothing else there; logs go to [Options].Stderr. [Server.ServeHTTP] serves the Streamable HTTP
// transport with bearer tokens (docs/http.md). [Server.Watch] runs the change notifications.
//
// Error model:
//   - a resource that names a missing entry returns the error object of docs/mcp.md as its JSON content
//     ({"error": "Knowledge entry 'x' not found"}), never a JSON-RPC error; invalid keys and names
//     (store.ValidKey) are reported the same way, as not found;
//   - a tool called with a bad argument returns a tool result with isError and a message naming the field,
//     and writes nothing; a missing entry is a tool error with the not-found text; so is a push or pull the
//     remote refused (with git's reason);
//   - store failures a model cannot act on (I/O, a broken repository) are JSON-RPC errors.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServerName is the implementation name announced at initialize.
const ServerName = "ctx"

// DefaultPollInterval is how often the context refs are checked for moves when Options.PollInterval is 0.
const DefaultPollInterval = time.Second

// Options configure the server.
type Options struct {
	// Agent is the agent name the server was started with (--agent), the Ctx-Agent trailer of its writes.
	// Empty: each client's own name, from the clientInfo.name it sent at initialize (see AgentName).
	Agent        string
	Session      string        // the session id; the Ctx-Session trailer of its writes
	Version      string        // the ctx version announced at initialize
	Stderr       io.Writer     // logs; nil discards them
	PollInterval time.Duration // how often to check whether the context refs moved; default DefaultPollInterval
	// HistoryDir is the agent history index the read tools serve (docs/history.md "The index"); empty:
	// history.DefaultDir of the store's git common dir, where `ctx history import` writes it.
	HistoryDir string
	// NoUsage switches the local usage accounting of stdio tool calls off (docs/mcp.md "Local usage");
	// CTX_MCP_USAGE=off does too.
	NoUsage bool

	oneShot    bool          // Search: one call in a process that then exits (the index is opened with history.OpenOneShot)
	raceMargin time.Duration // tests: the read cache's race margin (readcache.go); 0 is raceMargin
	noFastRead bool          // tests: ServeStdio sends every request through mcp-go (no stdio fast path)
}

// srv is the state shared by the handlers of one MCP server.
type srv struct {
	st  *store.Store // the store as opened; requests use store(ctx), which writes as the client's agent
	opt Options
	log *log.Logger
	mcp *server.MCPServer
	hub *hub

	mu     sync.Mutex
	agents map[string]*store.Store // agent name -> st writing as that agent

	toolsOnce sync.Once // ensureTools
	tools     []tool    // as registered, in the order of srv.tools (set by ensureTools)

	hist  historyIndex    // the agent history index, opened on first use (agent_history.go)
	ctxIx ctxIndex        // the search's copy of the context store, opened on first use (ctx_index.go)
	usage *usage          // local usage accounting (usage.go)
	names map[string]bool // the tools' names (set by ensureTools)

	reads *readCache // resources/read answers kept in memory (readcache.go)
}

// Server is ctx's MCP server over one store: its resources, tools and prompts registered once, served
// over stdio ([Server.ServeStdio]) or any transport of mcp-go ([Server.MCP], e.g. Streamable HTTP).
type Server struct {
	s *srv
}

// NewServer builds the MCP server over st. When opt.Agent or opt.Session is set it becomes st.Actor's Agent
// or Session, so that every write of the server carries them in its commit trailers (docs/architecture.md
// "Commits"). The server has resource capabilities subscribe and listChanged; change notifications need
// [Watch] (ServeStdio runs it).
func NewServer(st *store.Store, opt Options) *Server {
	return &Server{s: newSrv(st, opt)}
}

// MCP returns the mcp-go server, for a transport other than stdio, with every tool registered.
func (x *Server) MCP() *server.MCPServer {
	x.s.ensureTools()
	return x.s.mcp
}

// Watch polls the context refs every Options.PollInterval and, when they move (a write of this server,
// another process, a pull), sends notifications/resources/list_changed to every session and
// notifications/resources/updated for each subscribed URI whose content changed. It returns when ctx is
// done.
func (x *Server) Watch(ctx context.Context) error { return x.s.watch(ctx) }

func newSrv(st *store.Store, opt Options) *srv {
	if opt.Stderr == nil {
		opt.Stderr = io.Discard
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = DefaultPollInterval
	}
	if opt.Version == "" {
		opt.Version = "dev"
	}
	// The store's actor is written only when it changes: a second server over the same store (tests) then
	// does not write what the first one's goroutines read.
	agent := st.Actor.Agent
	if opt.Agent != "" {
		agent = opt.Agent
	} else if agent == "" || agent == "cli" {
		agent = FallbackAgent // a server is never a person at the terminal
	}
	if st.Actor.Agent != agent {
		st.Actor.Agent = agent
	}
	if opt.Session != "" && st.Actor.Session != opt.Session {
		st.Actor.Session = opt.Session
	}
	s := &srv{st: st, opt: opt, log: log.New(opt.Stderr, "ctx mcp: ", log.LstdFlags), hub: newHub(),
		agents: map[string]*store.Store{}, reads: newReadCache(opt.raceMargin)}
	if opt.raceMargin == 0 {
		s.reads.margin = raceMargin
	}
	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(func(ctx context.Context, cs server.ClientSession) { s.hub.add(ctx, cs) })
	hooks.AddOnUnregisterSession(func(ctx context.Context, cs server.ClientSession) { s.hub.remove(cs) })
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, m *mcpgo.SubscribeRequest, _ *mcpgo.EmptyResult) {
		s.hub.subscribed(ctx, m.Params.URI, true)
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, m *mcpgo.UnsubscribeRequest, _ *mcpgo.EmptyResult) {
		s.hub.subscribed(ctx, m.Params.URI, false)
	})
	hooks.AddOnRequestInitialization(beforeInitialize)
	s.mcp = server.NewMCPServer(ServerName, opt.Version,
		server.WithResourceCapabilities(true, true),
		server.WithToolCapabilities(false),
		server.WithPromptCapabilities(false),
		server.WithRecovery(),
		server.WithResourceRecovery(),
		server.WithHooks(hooks),
		server.WithToolFilter(filterTools),
		server.WithInstructions("ctx is this repository's git-native context store. Read context://summary, "+
			"context://conventions, context://knowledge, context://decisions and context://skills before you start "+
			"(the context_onboarding prompt gathers them); "+
			"record what you learn with context_add_knowledge and decisions with context_record_decision. "+
			"Every write is one commit on the context branch."),
	)
	s.addResources()
	s.usage = newUsage(usagePath(st.CommonDir()), opt.NoUsage)
	s.addPrompts()
	return s
}

// ensureTools builds the tools (allTools) and registers them with mcp-go, once: ServeStdio calls it
// before it handles any message other than initialize, so that `ctx mcp serve` answers initialize
// without building them (get_project_context's description reads the store's manifest; mcp-go's
// AddTools re-encodes and decodes every input schema to check its x-mcp-header annotations: about 3 ms
// of a start's CPU); every other way to the tools (Server.MCP, ServeHTTP, Catalog) calls it first. The
// tool list is the same whenever it is built: the capabilities announced at initialize do not depend
// on it (tools, listChanged false).
func (s *srv) ensureTools() {
	s.toolsOnce.Do(func() {
		s.tools = s.allTools()
		names := make(map[string]bool, len(s.tools))
		sts := make([]server.ServerTool, 0, len(s.tools))
		for _, t := range s.tools {
			names[t.def.Name] = true
			sts = append(sts, server.ServerTool{Tool: t.def, Handler: t.handler})
		}
		s.mcp.AddTools(sts...)
		s.names = names
	})
}

// allTools is every tool of the server, each from its constructor (tools/list sorts them by name).
func (s *srv) allTools() []tool {
	return []tool{
		// knowledge, conventions, decisions, project context (tools.go)
		s.toolAddKnowledge(), s.toolRemoveKnowledge(), s.toolAddConvention(), s.toolRemoveConvention(),
		s.toolRecordDecision(), s.toolUpdateDecisionStatus(), s.toolGetProjectContext(),
		// state, sessions, skills, activity, scopes (model_tools.go)
		s.toolUpdateState(), s.toolAppendSession(), s.toolEndSession(),
		s.toolAddSkill(), s.toolRemoveSkill(), s.toolReportSkillUsage(), s.toolRateSkill(),
		s.toolProposeSkillImprovement(), s.toolListSkillProposals(), s.toolResolveSkillProposal(),
		s.toolCheckIn(), s.toolCheckOut(), s.toolSetIntent(), s.toolSetScope(),
		// merge conflicts (merge_tools.go), push and pull (sync_tools.go)
		s.toolMergeStatus(), s.toolConflictDetail(), s.toolResolveConflict(),
		s.toolPush(), s.toolPull(),
		// history read tools (history_tools.go)
		s.toolStatus(), s.toolSources(), s.toolSearch(), s.toolQueryEvents(), s.toolShowSession(),
		s.toolShowEvent(), s.toolBlame(), s.toolShareSession(),
	}
}

// jsonContents wraps a JSON document as a resource's contents (mimeType application/json).
func jsonContents(uri string, b []byte) []mcpgo.ResourceContents {
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}
}

// FallbackAgent is the agent recorded for a client that gave no usable clientInfo.name when the server
// was started without --agent.
const FallbackAgent = "mcp"

// AgentName turns an MCP client's clientInfo.name into the agent name ctx records (Ctx-Agent): its slug
// (lower-case ASCII letters and digits, every other run as one '-', at most 40 bytes: "Claude Code" →
// "claude-code"), "" when nothing usable is left. "cli", ctx's name for a person at the terminal, becomes
// "mcp-cli".
func AgentName(clientName string) string {
	a := Slugify(clientName, maxAgentName)
	if a == "cli" {
		return "mcp-cli"
	}
	if store.ValidKey(a) != nil {
		return ""
	}
	return a
}

// clientAgent is the agent of the request's client: the agent of an HTTP caller's token when it names
// one, else Options.Agent when set, else the clientInfo.name of the request (protocol 2026-07-28 sends it
// with each request) or of its session's initialize. Never a tool argument.
func (s *srv) clientAgent(ctx context.Context) string {
	if c := callerOf(ctx); c != nil && c.Agent != "" {
		return c.Agent
	}
	if s.opt.Agent != "" {
		return s.opt.Agent
	}
	name := ""
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
		name = info.ClientInfo.Name
	}
	if name == "" {
		if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
			name = cs.GetClientInfo().Name
		}
	}
	if a := AgentName(name); a != "" {
		return a
	}
	return s.st.Actor.Agent
}

// store returns the store a request reads and writes through: the server's, writing as the request's
// client (clientAgent).
func (s *srv) store(ctx context.Context) *store.Store {
	a := s.clientAgent(ctx)
	if a == s.st.Actor.Agent {
		return s.st
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.agents[a]
	if !ok {
		if len(s.agents) >= maxAgents {
			clear(s.agents) // a client renaming itself on every request must not grow this without bound
		}
		st = s.st.WithActor(store.Actor{Agent: a, Session: s.st.Actor.Session, Machine: s.st.Actor.Machine})
		s.agents[a] = st
	}
	return st
}

// maxAgents bounds the stores kept per agent name.
const maxAgents = 64

// serverMemoryLimit is the Go runtime's soft memory limit for a server process (LimitMemory).
const serverMemoryLimit = 48 << 20

// LimitMemory sets the Go runtime's soft memory limit of a long-running server process to 48 MiB,
// unless the GOMEMLIMIT environment variable sets one: the garbage collector then runs more often as the
// heap nears it, instead of letting the heap double between collections (GOGC) after each write's
// big-tree work. It is a soft limit: a request that needs more still gets it. Call it once, from main
// (`ctx mcp serve`); it changes the whole process.
func LimitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serverMemoryLimit)
	}
}

// beforeInitialize refuses a request of a session that has not been initialised (mcp-go answers the error
// as -32600 Invalid Request): the MCP lifecycle (protocol 2025-06-18, "Lifecycle") has the client send
// initialize first and nothing but pings before the server answered it. Allowed: initialize, ping,
// server/discover, and any request of protocol 2026-07-28, which has no handshake (its _meta carries
// what initialize did). A request outside a session (none in the context) is left to mcp-go.
func beforeInitialize(ctx context.Context, _ any, message any) error {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil || cs.Initialized() {
		return nil
	}
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Meta *mcpgo.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil // mcp-go reports a malformed request
	}
	switch mcpgo.MCPMethod(m.Method) {
	case mcpgo.MethodInitialize, mcpgo.MethodPing, mcpgo.MethodServerDiscover:
		return nil
	}
	if mcpgo.IsModernProtocol(m.Params.Meta.ProtocolVersion()) {
		return nil
	}
	return fmt.Errorf("%s before initialize: send initialize first (the MCP lifecycle), then notifications/initialized", m.Method)
}
