// Package integrations registers `ctx mcp serve` as a local (stdio) MCP
// server in the file-backed configuration of coding-agent clients, and
// removes or reports that registration again.
//
// It backs `ctx integrations install|remove|status mcp`. The rules, shared
// by every client:
//
//   - Install adds one entry (named [Server.Name], "ctx" by default) and keeps
//     every other entry and key of the file as it was, byte for byte where
//     the file's format allows: the file is edited in place (the new entry is
//     spliced in, indented like its siblings) rather than re-serialised, so
//     indentation, key order, comments (JSONC, TOML) and trailing commas
//     survive, and a file with CRLF line endings gets CRLF in the new entry.
//     Installing an identical entry again is a no-op
//     ([ActionUnchanged], file not rewritten).
//   - An entry of the same name that differs from the one being installed is
//     a conflict: it is left untouched and reported as [ActionConflict] with
//     an error wrapping [ErrConflict], unless force is set, in which case it
//     is replaced ([ActionUpdated]).
//   - Remove deletes only the named entry. An absent entry or absent file is
//     success ([ActionAbsent]). An entry that is not a ctx MCP entry (its
//     command is not `ctx` or does not run `mcp serve`, see [IsCtxServer]) is
//     a conflict and left untouched unless force is set. Install keeps a
//     receipt of what the file held before (receipt.go): while the file is
//     still byte for byte what Install wrote, Remove gives back exactly the
//     user's earlier file, or deletes the file Install created; a file edited
//     since loses only the entry, and is deleted only when Install had
//     created it and nothing else is left. A file the user had before
//     install is never deleted. Directories created by Install are left in
//     place.
//   - A file that cannot be parsed, or whose server table has the wrong type,
//     is never modified: [ActionInvalid] with an error wrapping [ErrInvalid].
//   - Every write is atomic: the new content goes to a temporary file in the
//     same directory which is synced, given the original file's permission
//     bits (0644 for a new project file, 0600 for a new file under the home
//     directory) and renamed over the original. Missing parent directories are
//     created. A symlinked config file is written through to its target.
//
// Install and Remove always return one [Result] per selected client, plus a
// non-nil error (an [errors.Join] of per-client errors) when any client ended
// in a conflict, an invalid file or an I/O failure; callers map a non-nil
// error to a non-zero exit status while still printing every Result.
// Status reports states, not failures: its error is non-nil only for I/O
// failures and bad arguments.
//
// Supported clients and their files (projectDir = P, homeDir = ~):
//
//	client       project scope            user scope                                   key          format
//	claude-code  P/.mcp.json              ~/.claude.json                               mcpServers   JSON
//	cursor       P/.cursor/mcp.json       ~/.cursor/mcp.json                           mcpServers   JSON
//	vscode       P/.vscode/mcp.json       <VS Code user dir>/mcp.json                  servers      JSONC
//	codex        P/.codex/config.toml     ~/.codex/config.toml                         mcp_servers  TOML
//	gemini       P/.gemini/settings.json  ~/.gemini/settings.json                      mcpServers   JSONC
//	windsurf     (none)                   ~/.codeium/windsurf/mcp_config.json          mcpServers   JSON
//	opencode     P/opencode.json[c]       ~/.config/opencode/opencode.json[c]          mcp          JSONC
//
// The user-scope file moves as the client moves it: $CLAUDE_CONFIG_DIR/.claude.json,
// $CODEX_HOME/config.toml, $GEMINI_CLI_HOME/.gemini/settings.json, $XDG_CONFIG_HOME/opencode/opencode.json[c]
// when the variable is set (Client.EnvVar; the same roots as history discovery).
//
// See the docstrings of the client constants ([ClientClaudeCode] and the
// others) for the entry shape each client expects and where it is
// documented.
package integrations

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Scope selects which of a client's configuration files is edited.
type Scope string

const (
	// ScopeProject is the configuration file inside the project directory,
	// usually committed and shared with the team. The empty Scope means
	// ScopeProject.
	ScopeProject Scope = "project"
	// ScopeUser is the per-user configuration file under the home directory.
	ScopeUser Scope = "user"
)

// Actions reported in [Result.Action].
const (
	// ActionAdded: Install created the entry (and the file, if missing).
	ActionAdded = "added"
	// ActionUpdated: Install replaced a different entry of the same name
	// (only with force).
	ActionUpdated = "updated"
	// ActionUnchanged: Install found the identical entry; nothing written.
	ActionUnchanged = "unchanged"
	// ActionRemoved: Remove deleted the entry.
	ActionRemoved = "removed"
	// ActionAbsent: there is no entry of that name (or no file). For Remove
	// this is success; for Status it is the "not installed" state.
	ActionAbsent = "absent"
	// ActionInstalled: Status found a ctx MCP entry (see [IsCtxServer]).
	ActionInstalled = "installed"
	// ActionConflict: an entry of that name exists but is not the one ctx
	// would write (Install) or is not a ctx MCP entry (Remove, Status). The
	// file was not modified.
	ActionConflict = "conflict"
	// ActionInvalid: the file could not be parsed or has an unexpected
	// shape. The file was not modified.
	ActionInvalid = "invalid"
)

// Client names.
const (
	// ClientClaudeCode is Claude Code. Project scope: P/.mcp.json; user
	// scope: ~/.claude.json, a large state file whose other keys are kept.
	// Both hold a top-level "mcpServers" object:
	//
	//	{"mcpServers": {"ctx": {"type": "stdio", "command": "/abs/ctx", "args": ["mcp", "serve"], "env": {...}}}}
	//
	// Strict JSON. Documented at https://docs.anthropic.com/en/docs/claude-code/mcp
	// ("MCP installation scopes"). Claude Code's third, "local" scope (the
	// per-project "projects"/<path>/"mcpServers" objects inside
	// ~/.claude.json) is not edited.
	ClientClaudeCode = "claude-code"
	// ClientCursor is Cursor. P/.cursor/mcp.json or ~/.cursor/mcp.json:
	//
	//	{"mcpServers": {"ctx": {"command": "/abs/ctx", "args": ["mcp", "serve"], "env": {...}}}}
	//
	// Treated as strict JSON. Documented at https://docs.cursor.com/context/model-context-protocol.
	ClientCursor = "cursor"
	// ClientVSCode is VS Code (GitHub Copilot agent mode). P/.vscode/mcp.json,
	// or mcp.json in the VS Code user directory (~/.config/Code/User on
	// Linux, ~/Library/Application Support/Code/User on macOS,
	// ~/AppData/Roaming/Code/User on Windows). The key is "servers":
	//
	//	{"servers": {"ctx": {"type": "stdio", "command": "/abs/ctx", "args": ["mcp", "serve"], "env": {...}}}}
	//
	// JSONC: comments and trailing commas are allowed and kept. Documented at
	// https://code.visualstudio.com/docs/copilot/customization/mcp-servers.
	ClientVSCode = "vscode"
	// ClientCodex is the OpenAI Codex CLI. ~/.codex/config.toml (user), or
	// P/.codex/config.toml (project; Codex reads it only once the project is
	// marked trusted). One table per server:
	//
	//	[mcp_servers.ctx]
	//	command = "/abs/ctx"
	//	args = ["mcp", "serve"]
	//	env = { KEY = "value" }
	//
	// TOML; comments and the layout of the rest of the file are kept. The
	// entry may also be defined with dotted keys or sub-tables, which are
	// recognised and removed; an entry written inline inside
	// `mcp_servers = {...}` cannot be edited in place and is reported as a
	// conflict. Documented at https://developers.openai.com/codex/mcp and
	// https://github.com/openai/codex/blob/main/docs/config.md.
	ClientCodex = "codex"
	// ClientGemini is the Gemini CLI. P/.gemini/settings.json or
	// ~/.gemini/settings.json:
	//
	//	{"mcpServers": {"ctx": {"command": "/abs/ctx", "args": ["mcp", "serve"], "env": {...}}}}
	//
	// JSONC (the CLI strips comments). Documented at
	// https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md.
	ClientGemini = "gemini"
	// ClientWindsurf is Windsurf (Cascade). User scope only:
	// ~/.codeium/windsurf/mcp_config.json:
	//
	//	{"mcpServers": {"ctx": {"command": "/abs/ctx", "args": ["mcp", "serve"], "env": {...}}}}
	//
	// Strict JSON. Documented at https://docs.windsurf.com/windsurf/cascade/mcp.
	// Project scope is rejected with [ErrUnsupportedScope].
	ClientWindsurf = "windsurf"
	// ClientOpenCode is OpenCode. P/opencode.json (project) or
	// ~/.config/opencode/opencode.json (user); an existing opencode.jsonc is
	// edited instead when there is no opencode.json. The key is "mcp" and the
	// command is one array:
	//
	//	{"mcp": {"ctx": {"type": "local", "command": ["/abs/ctx", "mcp", "serve"], "enabled": true, "environment": {...}}}}
	//
	// JSONC. Documented at https://opencode.ai/docs/mcp-servers.
	ClientOpenCode = "opencode"
)

var (
	// ErrConflict is wrapped by errors about an entry of the same name that
	// ctx did not write (or that differs from the one being installed).
	ErrConflict = errors.New("conflicting MCP server entry")
	// ErrInvalid is wrapped by errors about a config file that cannot be
	// parsed or edited safely. Such files are never modified.
	ErrInvalid = errors.New("invalid config file")
	// ErrUnsupportedScope is returned when a client has no config file for
	// the requested scope (Windsurf has no project-scoped file).
	ErrUnsupportedScope = errors.New("scope not supported by client")
	// ErrUnknownClient is returned for a client name not in [Clients].
	ErrUnknownClient = errors.New("unknown client")
)

// Client describes one supported coding-agent client.
type Client struct {
	// Name is the identifier used on the command line, e.g. "claude-code".
	Name string
	// Scopes lists the scopes the client has a config file for.
	Scopes []Scope
	// Key is the top-level key holding the server table ("mcpServers",
	// "servers", "mcp" or "mcp_servers").
	Key string
	// Format is "json", "jsonc" or "toml".
	Format string
	// Docs is where the client documents the file format.
	Docs string
	// EnvVar is the environment variable that moves the client's user-scope file out of the home
	// directory ("" when none): install, remove and status follow it, as the client does and as history
	// discovery does (history.DefaultRoots).
	EnvVar string

	// path returns the config file for a scope; env reads the environment (EnvVar).
	path func(projectDir, homeDir string, scope Scope, env func(string) string) string
	// entry renders the client-specific entry for a server.
	entry func(srv Server) object
	// command extracts command and args from a decoded entry.
	command func(entry map[string]any) (string, []string, bool)
}

// Server is the MCP server entry to register.
type Server struct {
	// Name is the entry's key in the client's server table; default "ctx".
	Name string
	// Command is the executable: an absolute path of ctx, or "ctx" to rely
	// on PATH; default "ctx".
	Command string
	// Args are the command's arguments; default ["mcp", "serve", "--agent", <client name>], so that
	// the client's writes are recorded with its name (the Ctx-Agent trailer).
	Args []string
	// Env holds extra environment variables; omitted from the entry when
	// empty.
	Env map[string]string
}

// Result is the outcome for one client.
type Result struct {
	// Client is the client name.
	Client string `json:"client"`
	// Path is the config file that was examined.
	Path string `json:"path"`
	// Action is one of the Action* constants.
	Action string `json:"action"`
	// Message is a short human-readable explanation.
	Message string `json:"message,omitempty"`
}

// DefaultServerName is the entry name used when [Server.Name] is empty.
const DefaultServerName = "ctx"

var clients = []*Client{
	{
		Name: ClientClaudeCode, Scopes: []Scope{ScopeProject, ScopeUser}, Key: "mcpServers", Format: "json",
		Docs: "https://docs.anthropic.com/en/docs/claude-code/mcp", EnvVar: "CLAUDE_CONFIG_DIR",
		path: func(p, h string, s Scope, env func(string) string) string {
			if s == ScopeUser {
				if d := env("CLAUDE_CONFIG_DIR"); d != "" {
					return filepath.Join(d, ".claude.json") // Claude Code keeps .claude.json there then
				}
				return filepath.Join(h, ".claude.json")
			}
			return filepath.Join(p, ".mcp.json")
		},
		entry:   stdioEntry(true),
		command: commandArgs,
	},
	{
		Name: ClientCursor, Scopes: []Scope{ScopeProject, ScopeUser}, Key: "mcpServers", Format: "json",
		Docs: "https://docs.cursor.com/context/model-context-protocol",
		path: func(p, h string, s Scope, _ func(string) string) string {
			return filepath.Join(scopeDir(p, h, s), ".cursor", "mcp.json")
		},
		entry:   stdioEntry(false),
		command: commandArgs,
	},
	{
		Name: ClientVSCode, Scopes: []Scope{ScopeProject, ScopeUser}, Key: "servers", Format: "jsonc",
		Docs: "https://code.visualstudio.com/docs/copilot/customization/mcp-servers",
		path: func(p, h string, s Scope, _ func(string) string) string {
			if s == ScopeUser {
				return filepath.Join(vscodeUserDir(h), "mcp.json")
			}
			return filepath.Join(p, ".vscode", "mcp.json")
		},
		entry:   stdioEntry(true),
		command: commandArgs,
	},
	{
		Name: ClientCodex, Scopes: []Scope{ScopeProject, ScopeUser}, Key: "mcp_servers", Format: "toml",
		Docs: "https://developers.openai.com/codex/mcp", EnvVar: "CODEX_HOME",
		path: func(p, h string, s Scope, env func(string) string) string {
			if d := env("CODEX_HOME"); d != "" && s == ScopeUser {
				return filepath.Join(d, "config.toml")
			}
			return filepath.Join(scopeDir(p, h, s), ".codex", "config.toml")
		},
		entry:   stdioEntry(false),
		command: commandArgs,
	},
	{
		Name: ClientGemini, Scopes: []Scope{ScopeProject, ScopeUser}, Key: "mcpServers", Format: "jsonc",
		Docs: "https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md", EnvVar: "GEMINI_CLI_HOME",
		path: func(p, h string, s Scope, env func(string) string) string {
			if d := env("GEMINI_CLI_HOME"); d != "" && s == ScopeUser {
				return filepath.Join(d, ".gemini", "settings.json")
			}
			return filepath.Join(scopeDir(p, h, s), ".gemini", "settings.json")
		},
		entry:   stdioEntry(false),
		command: commandArgs,
	},
	{
		Name: ClientWindsurf, Scopes: []Scope{ScopeUser}, Key: "mcpServers", Format: "json",
		Docs: "https://docs.windsurf.com/windsurf/cascade/mcp",
		path: func(_, h string, _ Scope, _ func(string) string) string {
			return filepath.Join(h, ".codeium", "windsurf", "mcp_config.json")
		},
		entry:   stdioEntry(false),
		command: commandArgs,
	},
	{
		Name: ClientOpenCode, Scopes: []Scope{ScopeProject, ScopeUser}, Key: "mcp", Format: "jsonc",
		Docs: "https://opencode.ai/docs/mcp-servers", EnvVar: "XDG_CONFIG_HOME",
		path: func(p, h string, s Scope, env func(string) string) string {
			dir := p
			if s == ScopeUser {
				dir = filepath.Join(h, ".config", "opencode")
				if x := env("XDG_CONFIG_HOME"); x != "" {
					dir = filepath.Join(x, "opencode")
				}
			}
			json, jsonc := filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc")
			if !exists(json) && exists(jsonc) {
				return jsonc
			}
			return json
		},
		entry:   opencodeEntry,
		command: opencodeCommand,
	},
}

// Clients returns the names of the supported clients, in a stable order.
func Clients() []string {
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = c.Name
	}
	return names
}

// Table returns a copy of every supported client's description (name, scopes, key, format, docs), in
// the order of [Clients]: the one table `ctx docs show mcp-integrations` prints with [ConfigPath] and
// [Snippet].
func Table() []Client {
	out := make([]Client, len(clients))
	for i, c := range clients {
		out[i] = *c
		out[i].Scopes = slices.Clone(c.Scopes)
	}
	return out
}

// ConfigPath returns the config file a client uses for a scope by default: with its Client.EnvVar unset
// (Install, Remove and Status follow that variable when it is set).
func ConfigPath(client, projectDir, homeDir string, scope Scope) (string, error) {
	return ConfigPathEnv(client, projectDir, homeDir, scope, noEnv)
}

// ConfigPathEnv is ConfigPath in the environment env (os.Getenv for the user's): the file the client
// reads when its Client.EnvVar is set there ($CODEX_HOME/config.toml, ...).
func ConfigPathEnv(client, projectDir, homeDir string, scope Scope, env func(string) string) (string, error) {
	c, err := lookup(client)
	if err != nil {
		return "", err
	}
	scope, err = normScope(scope)
	if err != nil {
		return "", err
	}
	if !slices.Contains(c.Scopes, scope) {
		return "", fmt.Errorf("integrations: %s has no %s-scoped MCP config: %w", c.Name, scope, ErrUnsupportedScope)
	}
	return c.path(projectDir, homeDir, scope, env), nil
}

// Snippet returns the content Install writes into a missing config file for
// the client: a complete, minimal file suitable for manual copying.
func Snippet(client string, srv Server) (string, error) {
	c, err := lookup(client)
	if err != nil {
		return "", err
	}
	srv = srv.withDefaultsFor(c.Name)
	if c.Format == "toml" {
		return tomlSection(c.Key, srv.Name, c.entry(srv)), nil
	}
	return string(jsonNewFile(c.Key, srv.Name, c.entry(srv))), nil
}

// IsCtxServer reports whether a command line is ctx's MCP server: the
// executable's base name is "ctx" (or "ctx.exe") and the arguments start
// with "mcp", "serve". Remove and Status use it to tell ctx's own entry from
// a foreign entry of the same name.
func IsCtxServer(command string, args []string) bool {
	base := filepath.Base(strings.ReplaceAll(command, `\`, "/"))
	base = strings.TrimSuffix(strings.ToLower(base), ".exe")
	return base == "ctx" && len(args) >= 2 && args[0] == "mcp" && args[1] == "serve"
}

// Install registers srv in each client's config file for scope. See the
// package documentation for the rules. clients must name at least one
// client; all names and the scope are validated before any file is touched.
func Install(ctx context.Context, projectDir, homeDir string, clients []string, scope Scope, srv Server, force bool) ([]Result, error) {
	sel, scope, err := selectClients(clients, scope, false)
	if err != nil {
		return nil, err
	}
	return run(ctx, sel, func(c *Client) (Result, error) {
		return install(c, c.path(projectDir, homeDir, scope, getenv), homeDir, scope, srv.withDefaultsFor(c.Name), force)
	})
}

// Remove deletes the entry called name (default "ctx") from each client's
// config file for scope. An empty clients list means every client that has
// a file for scope. See the package documentation for the rules.
func Remove(ctx context.Context, projectDir, homeDir string, clients []string, scope Scope, name string, force bool) ([]Result, error) {
	sel, scope, err := selectClients(clients, scope, true)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = DefaultServerName
	}
	return run(ctx, sel, func(c *Client) (Result, error) {
		return remove(c, c.path(projectDir, homeDir, scope, getenv), homeDir, name, force)
	})
}

// Status reports, for each client's config file for scope, whether the entry
// called name (default "ctx") is absent, installed (a ctx MCP entry, see
// [IsCtxServer]), a conflict (some other server of that name) or whether the
// file is invalid. An empty clients list means every client that has a file
// for scope. Conflicts and invalid files are states, not errors; the error
// is non-nil only for bad arguments and I/O failures.
func Status(ctx context.Context, projectDir, homeDir string, clients []string, scope Scope, name string) ([]Result, error) {
	sel, scope, err := selectClients(clients, scope, true)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = DefaultServerName
	}
	return run(ctx, sel, func(c *Client) (Result, error) {
		r, err := status(c, c.path(projectDir, homeDir, scope, getenv), name)
		if errors.Is(err, ErrInvalid) {
			err = nil
		}
		return r, err
	})
}

func run(ctx context.Context, sel []*Client, f func(*Client) (Result, error)) ([]Result, error) {
	var results []Result
	var errs []error
	for _, c := range sel {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("integrations: %w", err))
			break
		}
		r, err := f(c)
		r.Client = c.Name
		results = append(results, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("integrations: %s: %w", c.Name, err))
		}
	}
	return results, errors.Join(errs...)
}

// withDefaultsFor is withDefaults for one client: default arguments name the client as the agent
// (`mcp serve --agent <client>`), so that the client's writes are recorded as its own (Ctx-Agent).
func (s Server) withDefaultsFor(client string) Server {
	if len(s.Args) == 0 {
		s.Args = []string{"mcp", "serve", "--agent", client}
	}
	return s.withDefaults()
}

func (s Server) withDefaults() Server {
	if s.Name == "" {
		s.Name = DefaultServerName
	}
	if s.Command == "" {
		s.Command = "ctx"
	}
	if len(s.Args) == 0 {
		s.Args = []string{"mcp", "serve"}
	}
	return s
}

func lookup(name string) (*Client, error) {
	for _, c := range clients {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("integrations: %q (supported: %s): %w", name, strings.Join(Clients(), ", "), ErrUnknownClient)
}

func normScope(s Scope) (Scope, error) {
	switch s {
	case "", ScopeProject:
		return ScopeProject, nil
	case ScopeUser:
		return ScopeUser, nil
	}
	return "", fmt.Errorf("integrations: unknown scope %q (want %q or %q)", s, ScopeProject, ScopeUser)
}

// selectClients validates names and scope. With allIfEmpty, an empty list
// selects every client supporting the scope.
func selectClients(names []string, scope Scope, allIfEmpty bool) ([]*Client, Scope, error) {
	scope, err := normScope(scope)
	if err != nil {
		return nil, "", err
	}
	if len(names) == 0 {
		if !allIfEmpty {
			return nil, "", errors.New("integrations: no client selected")
		}
		var sel []*Client
		for _, c := range clients {
			if slices.Contains(c.Scopes, scope) {
				sel = append(sel, c)
			}
		}
		return sel, scope, nil
	}
	var sel []*Client
	for _, n := range names {
		c, err := lookup(n)
		if err != nil {
			return nil, "", err
		}
		if !slices.Contains(c.Scopes, scope) {
			return nil, "", fmt.Errorf("integrations: %s has no %s-scoped MCP config: %w", c.Name, scope, ErrUnsupportedScope)
		}
		if !slices.Contains(sel, c) {
			sel = append(sel, c)
		}
	}
	return sel, scope, nil
}

// getenv reads the variables that move user-scope files (Client.EnvVar); tests replace it.
var getenv = os.Getenv

// noEnv is an environment without those variables: ConfigPath gives the default files.
func noEnv(string) string { return "" }

func scopeDir(projectDir, homeDir string, s Scope) string {
	if s == ScopeUser {
		return homeDir
	}
	return projectDir
}

func vscodeUserDir(home string) string {
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Code", "User")
	case "windows":
		return filepath.Join(home, "AppData", "Roaming", "Code", "User")
	}
	return filepath.Join(home, ".config", "Code", "User")
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// stdioEntry renders {"type":"stdio"?, "command", "args", "env"?}.
func stdioEntry(withType bool) func(Server) object {
	return func(s Server) object {
		var o object
		if withType {
			o = append(o, field{"type", "stdio"})
		}
		o = append(o, field{"command", s.Command}, field{"args", s.Args})
		if len(s.Env) > 0 {
			o = append(o, field{"env", s.Env})
		}
		return o
	}
}

// opencodeEntry renders OpenCode's {"type":"local","command":[...],"enabled":true,"environment"?}.
func opencodeEntry(s Server) object {
	o := object{
		{"type", "local"},
		{"command", append([]string{s.Command}, s.Args...)},
		{"enabled", true},
	}
	if len(s.Env) > 0 {
		o = append(o, field{"environment", s.Env})
	}
	return o
}

func commandArgs(e map[string]any) (string, []string, bool) {
	cmd, ok := e["command"].(string)
	if !ok {
		return "", nil, false
	}
	args, ok := stringSlice(e["args"])
	if !ok && e["args"] != nil {
		return "", nil, false
	}
	return cmd, args, true
}

func opencodeCommand(e map[string]any) (string, []string, bool) {
	argv, ok := stringSlice(e["command"])
	if !ok || len(argv) == 0 {
		return "", nil, false
	}
	return argv[0], argv[1:], true
}

func stringSlice(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// isCtxEntry applies IsCtxServer to a decoded entry.
func (c *Client) isCtxEntry(entry any) bool {
	m, ok := entry.(map[string]any)
	if !ok {
		return false
	}
	cmd, args, ok := c.command(m)
	return ok && IsCtxServer(cmd, args)
}

// defaultPerm is the mode of a newly created config file: private under the
// home directory (user scope files may hold credentials), world-readable in
// a project.
func defaultPerm(scope Scope) fs.FileMode {
	if scope == ScopeUser {
		return 0o600
	}
	return 0o644
}
