// Package history discovers the transcripts that coding agents keep on this machine (Claude Code, Codex
// CLI, Gemini CLI, OpenCode, Cursor agent transcripts, Copilot CLI), normalises them into sessions and
// events, and keeps a local, incremental, searchable index of them. The model, the providers' layouts,
// the identity rules and the ranking are described in docs/history.md.
//
// Nothing here writes to a provider's files or to the context branch: the index lives in a directory the
// caller chooses (normally <git common dir>/ctx/history, see DefaultDir).
package history

import (
	"bytes"
	"encoding/json"
	"time"
)

// Provider names a coding agent whose local history ctx can read.
type Provider string

// The providers ctx reads. The string values are stable: they appear in ids, the index and JSON output.
const (
	ClaudeCode Provider = "claude-code"
	Codex      Provider = "codex"
	GeminiCLI  Provider = "gemini-cli"
	OpenCode   Provider = "opencode"
	Cursor     Provider = "cursor"
	CopilotCLI Provider = "copilot-cli"
)

// Providers lists every provider in a fixed order.
var Providers = []Provider{ClaudeCode, Codex, GeminiCLI, OpenCode, Cursor, CopilotCLI}

// ParseProvider returns the provider named s, or false.
func ParseProvider(s string) (Provider, bool) {
	for _, p := range Providers {
		if string(p) == s {
			return p, true
		}
	}
	return "", false
}

// EventType classifies an event. The set is open; these are the types the parsers produce.
type EventType string

// Event types (docs/history.md "Events").
const (
	Message    EventType = "message"     // user, assistant, system or developer text
	Summary    EventType = "summary"     // a compaction or session summary
	Reasoning  EventType = "reasoning"   // a readable reasoning summary (never encrypted content)
	ToolCall   EventType = "tool_call"   // a tool invocation, shell commands included
	ToolOutput EventType = "tool_output" // the result of a tool invocation
	Notice     EventType = "notice"      // lifecycle, errors, aborted turns, injected context
)

// Session is one conversation of one provider, as normalised by ctx.
type Session struct {
	ID           string    `json:"ctx_session_id"`              // derived from provider + native id (docs/history.md "Identity")
	Provider     Provider  `json:"provider"`                    // which agent wrote it
	NativeID     string    `json:"native_session_id"`           // the provider's own session id
	ParentID     string    `json:"parent_session_id,omitempty"` // ctx id of the parent session, only from an explicit provider field
	RootID       string    `json:"root_session_id,omitempty"`   // ctx id of the top of the parent chain; empty for a root
	Scope        string    `json:"agent_scope,omitempty"`       // "primary" or "subagent"
	CWD          string    `json:"cwd,omitempty"`               // working directory as recorded (machine-local)
	RepoURL      string    `json:"repo_url,omitempty"`          // when the provider records it
	Branch       string    `json:"branch,omitempty"`
	Commit       string    `json:"commit,omitempty"` // HEAD at session start, when recorded
	Model        string    `json:"model,omitempty"`
	CLIVersion   string    `json:"cli_version,omitempty"`
	Title        string    `json:"title,omitempty"`
	StartedAt    time.Time `json:"started_at,omitzero"` // zero when unknown
	EndedAt      time.Time `json:"ended_at,omitzero"`   // time of the last timed event; zero when unknown
	SourceFormat string    `json:"source_format"`       // e.g. "claude_jsonl" (docs/history.md "Sources")
	SourcePath   string    `json:"source_path"`         // the file it was imported from on this machine
	EventCount   int       `json:"event_count"`
}

// MarshalJSON encodes s with the fields and key order of its tags, its started_at and ended_at as the
// read tools give an event's at: RFC 3339 in UTC with milliseconds ("2006-01-02T15:04:05.000Z"), absent
// when zero (docs/history.md "Sessions").
func (s Session) MarshalJSON() ([]byte, error) {
	at := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(sharedTime)
	}
	// HTML characters are left as they are: the caller's encoder escapes them or not (its SetEscapeHTML).
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		ID           string   `json:"ctx_session_id"`
		Provider     Provider `json:"provider"`
		NativeID     string   `json:"native_session_id"`
		ParentID     string   `json:"parent_session_id,omitempty"`
		RootID       string   `json:"root_session_id,omitempty"`
		Scope        string   `json:"agent_scope,omitempty"`
		CWD          string   `json:"cwd,omitempty"`
		RepoURL      string   `json:"repo_url,omitempty"`
		Branch       string   `json:"branch,omitempty"`
		Commit       string   `json:"commit,omitempty"`
		Model        string   `json:"model,omitempty"`
		CLIVersion   string   `json:"cli_version,omitempty"`
		Title        string   `json:"title,omitempty"`
		StartedAt    string   `json:"started_at,omitempty"`
		EndedAt      string   `json:"ended_at,omitempty"`
		SourceFormat string   `json:"source_format"`
		SourcePath   string   `json:"source_path"`
		EventCount   int      `json:"event_count"`
	}{s.ID, s.Provider, s.NativeID, s.ParentID, s.RootID, s.Scope, s.CWD, s.RepoURL, s.Branch, s.Commit, s.Model,
		s.CLIVersion, s.Title, at(s.StartedAt), at(s.EndedAt), s.SourceFormat, s.SourcePath, s.EventCount})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// Event is one normalised record of a session.
type Event struct {
	ID        string    `json:"ctx_event_id"`   // derived from the session id + the native key
	SessionID string    `json:"ctx_session_id"` // the session's ctx id
	Seq       int64     `json:"seq"`            // provider order within the session, from 1
	NativeKey string    `json:"native_key"`     // the provider's record id (or "L<line>") plus "#<block>" for split records
	At        time.Time `json:"at,omitzero"`    // zero when the provider recorded no time (never invented)
	Type      EventType `json:"type"`
	Role      string    `json:"role,omitempty"` // user, assistant, system, developer, tool
	Text      string    `json:"text"`           // the searchable body (valid UTF-8)
	Tool      *Tool     `json:"tool,omitempty"`
	Files     []FileRef `json:"files,omitempty"`
	Facts     []Fact    `json:"facts,omitempty"`
}

// Tool is the tool activity of a tool_call or tool_output event.
type Tool struct {
	Name     string `json:"name,omitempty"`      // provider tool name, e.g. "Bash", "exec_command", "apply_patch"
	CallID   string `json:"call_id,omitempty"`   // pairs a call with its output
	Input    string `json:"input,omitempty"`     // the arguments as JSON or text (calls)
	Output   string `json:"output,omitempty"`    // the result text (outputs)
	ExitCode *int   `json:"exit_code,omitempty"` // when the provider or the output states one
	IsError  bool   `json:"is_error,omitempty"`
	// Protocol is "mcp" when the provider records the call as an MCP tool call; Server names the server.
	Protocol string `json:"protocol,omitempty"`
	Server   string `json:"server,omitempty"`
}

// FileOp is what an event did to a file.
type FileOp string

// File operations.
const (
	FileRead   FileOp = "read"
	FileCreate FileOp = "create"
	FileModify FileOp = "modify"
	FileDelete FileOp = "delete"
	FileRename FileOp = "rename"
)

// FileRef is a file an event touched, with the path as the provider recorded it.
type FileRef struct {
	Path    string `json:"path"`
	Op      FileOp `json:"op"`
	OldPath string `json:"old_path,omitempty"` // for renames
}

// Fact is a literal value found in an event, e.g. a commit id printed by `git commit`.
type Fact struct {
	Kind  string `json:"kind"` // "commit", "command", "branch", "url", "workdir"
	Value string `json:"value"`
}
