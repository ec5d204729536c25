package history

import (
	json "github.com/segmentio/encoding/json"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/history/internal/textproc"
)

// Codex CLI rollout JSONL: {timestamp, type, payload} (docs/history.md "Codex CLI").

type codexRec struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type codexMeta struct {
	codexMetaFields
	CWD string `json:"cwd"`
}

type codexMetaFields struct {
	ID         string          `json:"id"`
	Timestamp  string          `json:"timestamp"`
	CLIVersion string          `json:"cli_version"`
	Source     json.RawMessage `json:"source"`
	Git        *struct {
		Commit string `json:"commit_hash"`
		Branch string `json:"branch"`
		URL    string `json:"repository_url"`
	} `json:"git"`
}

type codexItem struct {
	codexItemFields
	CWD string `json:"cwd"`
}

type codexItemFields struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Message   string          `json:"message"`
	Action    json.RawMessage `json:"action"`
	Status    json.RawMessage `json:"status"`
	Model     string          `json:"model"`
}

// codexEventSkip: event_msg types that duplicate response items or carry nothing to index.
var codexEventSkip = map[string]bool{
	"user_message": true, "agent_message": true, "agent_reasoning": true, "token_count": true,
	"exec_command_end": true, "patch_apply_end": true, "web_search_end": true, "mcp_tool_call_end": true,
	"item_completed": true, "view_image_tool_call": true, "image_generation_end": true,
	"dynamic_tool_call_request": true, "dynamic_tool_call_response": true, "thread_settings_applied": true,
	"guardian_assessment": true, "sub_agent_activity": true, "collab_agent_interaction_end": true,
	"collab_agent_spawn_end": true, "collab_close_end": true, "collab_waiting_end": true,
	"entered_review_mode": true, "exited_review_mode": true, "undo_completed": true,
}

// codexEventNotice: event_msg types kept as notices.
var codexEventNotice = map[string]bool{
	"task_started": true, "task_complete": true, "turn_aborted": true, "context_compacted": true,
	"error": true, "thread_name_updated": true, "thread_goal_updated": true,
}

var codexItemSkip = map[string]bool{
	"ghost_snapshot": true, "image_generation_call": true, "tool_search_call": true, "tool_search_output": true,
}

// codexLine is a rollout record decoded in one pass: its payload holds the fields of every record type
// parseCodexLine reads. A line that does not decode so (a field of a type the record's own type never
// reads, say) is decoded again as codexRec, each payload as its type needs it, as it always was.
type codexLine struct {
	Timestamp string        `json:"timestamp"`
	Type      string        `json:"type"`
	Payload   *codexPayload `json:"payload"`
}

type codexPayload struct {
	codexItemFields
	codexMetaFields
	CWD        string `json:"cwd"`
	Invocation *struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	} `json:"invocation"`
	LastAgentMessage string `json:"last_agent_message"`
}

// codexFields gives parseCodexRecord a record's payload as the record's type reads it.
type codexFields interface {
	meta() (codexMeta, error)
	item() (codexItem, error)
	server() (server, tool string, ok bool) // mcp_tool_call_end's invocation.server and .tool
	last() string                           // last_agent_message
}

// decodedPayload is a payload decoded in one pass (codexLine).
type decodedPayload struct{ p *codexPayload }

func (d decodedPayload) meta() (codexMeta, error) {
	return codexMeta{d.p.codexMetaFields, d.p.CWD}, nil
}

func (d decodedPayload) item() (codexItem, error) {
	return codexItem{d.p.codexItemFields, d.p.CWD}, nil
}

func (d decodedPayload) server() (server, tool string, ok bool) {
	if d.p.Invocation == nil {
		return "", "", true
	}
	return d.p.Invocation.Server, d.p.Invocation.Tool, true
}

func (d decodedPayload) last() string { return d.p.LastAgentMessage }

// rawPayload decodes a payload for each use, as the record's type needs it.
type rawPayload json.RawMessage

func (r rawPayload) meta() (codexMeta, error) {
	var p codexMeta
	err := decodeRec(r, &p)
	return p, err
}

func (r rawPayload) item() (codexItem, error) {
	var p codexItem
	err := decodeRec(r, &p)
	return p, err
}

func (r rawPayload) server() (server, tool string, ok bool) {
	var m struct {
		Invocation struct {
			Server string `json:"server"`
			Tool   string `json:"tool"`
		} `json:"invocation"`
	}
	if unmarshal(r, &m) != nil {
		return "", "", false
	}
	return m.Invocation.Server, m.Invocation.Tool, true
}

func (r rawPayload) last() string {
	var extra struct {
		Last string `json:"last_agent_message"`
	}
	if unmarshal(r, &extra) != nil {
		return ""
	}
	return extra.Last
}

func parseCodexLine(b *builder, data []byte) error {
	var l codexLine
	if decodeRec(data, &l) == nil && l.Payload != nil {
		return parseCodexRecord(b, l.Timestamp, l.Type, decodedPayload{l.Payload})
	}
	var r codexRec
	if err := decodeRec(data, &r); err != nil {
		return err
	}
	return parseCodexRecord(b, r.Timestamp, r.Type, rawPayload(r.Payload))
}

func parseCodexRecord(b *builder, timestamp, typ string, f codexFields) error {
	at := parseTime(timestamp)
	m := &b.st.Meta
	switch typ {
	case "session_meta":
		p, err := f.meta()
		if err != nil {
			return err
		}
		if b.st.NativeID != "" {
			b.res.Skipped++ // a later meta (resumed or forked thread): the first one names the session
			return nil
		}
		b.st.NativeID = p.ID
		m.CWD, m.CLIVersion = p.CWD, p.CLIVersion
		if t := parseTime(p.Timestamp); !t.IsZero() {
			m.StartedAt = t
		}
		if p.Git != nil {
			m.Commit, m.Branch, m.RepoURL = p.Git.Commit, p.Git.Branch, p.Git.URL
		}
		var src struct {
			Subagent struct {
				ThreadSpawn struct {
					Parent string `json:"parent_thread_id"`
				} `json:"thread_spawn"`
			} `json:"subagent"`
		}
		if len(p.Source) > 0 && p.Source[0] == '{' && unmarshal(p.Source, &src) == nil {
			if parent := src.Subagent.ThreadSpawn.Parent; parent != "" {
				b.st.ParentNative, b.st.Subagent = parent, true
			}
		}
		return nil
	case "turn_context":
		p, err := f.item()
		if err != nil {
			return err
		}
		if p.Model != "" {
			m.Model = p.Model
		}
		if p.CWD != "" && m.CWD == "" {
			m.CWD = p.CWD
		}
		b.res.Skipped++
		return nil
	case "compacted":
		p, err := f.item()
		if err != nil {
			return err
		}
		if strings.TrimSpace(p.Message) == "" {
			b.res.Skipped++
			return nil
		}
		b.emit("", 0, Event{At: at, Type: Summary, Text: p.Message})
		return nil
	case "event_msg":
		p, err := f.item()
		if err != nil {
			return err
		}
		switch {
		case p.Type == "mcp_tool_call_end":
			// Codex states here that the call call_id went to an MCP server (docs/history.md "Events").
			if server, tool, ok := f.server(); ok {
				b.markMCP(p.CallID, server, tool)
			}
			b.res.Skipped++
		case codexEventSkip[p.Type]:
			b.res.Skipped++
		case codexEventNotice[p.Type]:
			text := p.Type
			if p.Message != "" {
				text += ": " + p.Message
			}
			if last := f.last(); last != "" {
				text += ": " + last
			}
			b.emit("", 0, Event{At: at, Type: Notice, Text: text})
		default:
			b.unknown("codex:event_msg:" + p.Type)
		}
		return nil
	case "response_item":
		p, err := f.item()
		if err != nil {
			return err
		}
		return codexItemEvent(b, at, p)
	}
	b.unknown("codex:" + typ)
	return nil
}

func codexItemEvent(b *builder, at time.Time, p codexItem) error {
	switch p.Type {
	case "message":
		text := contentText(p.Content)
		typ := Message
		if p.Role == "user" && injectedContext(text) {
			typ = Notice
		}
		b.emit("", 0, Event{At: at, Type: typ, Role: p.Role, Text: text})
	case "agent_message":
		text := contentText(p.Content)
		if text == "" {
			text = p.Message
		}
		b.emit("", 0, Event{At: at, Type: Message, Role: "assistant", Text: text})
	case "reasoning":
		var sum []struct {
			Text string `json:"text"`
		}
		_ = unmarshal(p.Summary, &sum)
		var parts []string
		for _, s := range sum {
			if s.Text != "" {
				parts = append(parts, s.Text)
			}
		}
		if len(parts) == 0 {
			b.res.Skipped++ // encrypted content only
			return nil
		}
		b.emit("", 0, Event{At: at, Type: Reasoning, Role: "assistant", Text: strings.Join(parts, "\n")})
	case "function_call":
		args := p.Arguments
		if len(args) > 0 && args[0] == '"' { // arguments are a JSON string holding JSON
			var s string
			if unmarshal(args, &s) == nil {
				if tooDeep([]byte(s)) {
					return errTooDeep // a bad line (docs/history.md "Bad lines")
				}
				if validJSON([]byte(s)) {
					args = json.RawMessage(s)
				}
			}
		}
		b.emit("", 0, toolCallEvent(at, "assistant", p.Name, p.CallID, args))
	case "custom_tool_call":
		input := rawText(p.Input)
		e := Event{At: at, Type: ToolCall, Role: "assistant", Tool: &Tool{Name: p.Name, CallID: p.CallID, Input: input}}
		e = finishToolCall(e, map[string]any{"input": input})
		if textproc.IsGitCommit(input) {
			e.Facts = append(e.Facts, Fact{Kind: "command", Value: input})
		}
		b.emit("", 0, e)
	case "local_shell_call":
		b.emit("", 0, toolCallEvent(at, "assistant", "local_shell", p.CallID, p.Action))
	case "web_search_call":
		b.emit("", 0, toolCallEvent(at, "assistant", "web_search", p.CallID, p.Action))
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		out := codexOutput(p.Output)
		b.emit("", 0, Event{At: at, Type: ToolOutput, Role: "tool", Text: out, Tool: &Tool{CallID: p.CallID, Output: out}})
	default:
		if codexItemSkip[p.Type] {
			b.res.Skipped++
			return nil
		}
		b.unknown("codex:response_item:" + p.Type)
	}
	return nil
}

// codexOutput reads a function output: a string, a JSON string holding {"output": ...}, or content items.
func codexOutput(raw json.RawMessage) string {
	s := rawText(raw)
	if strings.HasPrefix(s, "{") {
		var o struct {
			Output string `json:"output"`
		}
		if unmarshal([]byte(s), &o) == nil && o.Output != "" {
			return o.Output
		}
	}
	if len(raw) > 0 && raw[0] == '[' {
		return contentText(raw)
	}
	return s
}

// injectedContext reports user-role text that the CLI injected (environment context, AGENTS.md), not
// what the user typed.
func injectedContext(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasPrefix(t, "<environment_context>") || strings.HasPrefix(t, "<user_instructions>") ||
		strings.HasPrefix(t, "# AGENTS.md") || strings.HasPrefix(t, "<permissions instructions>")
}
