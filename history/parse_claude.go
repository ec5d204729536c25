package history

import (
	json "github.com/segmentio/encoding/json"
	"strings"
)

// Claude Code project JSONL (docs/history.md "Claude Code").

type claudeRec struct {
	Type        string          `json:"type"`
	Subtype     string          `json:"subtype"`
	UUID        string          `json:"uuid"`
	SessionID   string          `json:"sessionId"`
	Timestamp   string          `json:"timestamp"`
	CWD         string          `json:"cwd"`
	GitBranch   string          `json:"gitBranch"`
	Version     string          `json:"version"`
	IsSidechain *bool           `json:"isSidechain"` // nil: not stated
	IsMeta      bool            `json:"isMeta"`
	Message     *claudeMsg      `json:"message"`
	Summary     string          `json:"summary"`
	Content     json.RawMessage `json:"content"`
	CustomTitle string          `json:"customTitle"`
	AITitle     string          `json:"aiTitle"`
	ToolResult  json.RawMessage `json:"toolUseResult"`
}

type claudeMsg struct {
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// claudeSkip lists record types that are known and carry nothing ctx indexes.
var claudeSkip = map[string]bool{
	"file-history-snapshot": true, "progress": true, "queue-operation": true, "permission-mode": true,
	"mode": true, "last-prompt": true, "attachment": true, "worktree-state": true, "agent-name": true,
	"pr-link": true, "frame-link": true, "relocated": true, "bridge-session": true,
}

func parseClaudeLine(b *builder, data []byte) error {
	var r claudeRec
	if err := decodeRec(data, &r); err != nil {
		return err
	}
	m := &b.st.Meta
	if r.CWD != "" && m.CWD == "" {
		m.CWD = r.CWD
	}
	if r.GitBranch != "" && m.Branch == "" {
		m.Branch = r.GitBranch
	}
	if r.Version != "" {
		m.CLIVersion = r.Version
	}
	if r.SessionID != "" && b.st.RecordSession == "" {
		b.st.RecordSession = r.SessionID
	}
	// A file whose first record that states isSidechain says true is a subagent's (the older sibling
	// layout); a primary session's file also holds its subagents' sidechain records inline later on:
	// those are events of it, and it stays primary (docs/history.md "Sessions").
	if r.IsSidechain != nil && !b.st.SideSeen {
		b.st.SideSeen = true
		if *r.IsSidechain {
			b.st.Subagent = true
		}
	}
	at := parseTime(r.Timestamp)
	switch r.Type {
	case "user", "assistant":
		if r.Message == nil {
			b.unknown("claude:" + r.Type + ":no-message")
			return nil
		}
		if r.Message.Model != "" && !strings.HasPrefix(r.Message.Model, "<") {
			m.Model = r.Message.Model
		}
		role := r.Message.Role
		if role == "" {
			role = r.Type
		}
		raw := r.Message.Content
		if len(raw) > 0 && raw[0] == '"' {
			s, err := unquote(raw)
			if err != nil {
				return err
			}
			typ := Message
			if r.IsMeta {
				typ = Notice
			}
			b.emit(r.UUID, 0, Event{At: at, Type: typ, Role: role, Text: s})
			return nil
		}
		var blocks []claudeBlock
		if err := decodeRec(raw, &blocks); err != nil {
			return err
		}
		for i, bl := range blocks {
			switch bl.Type {
			case "text":
				typ := Message
				if r.IsMeta {
					typ = Notice
				}
				b.emit(r.UUID, i, Event{At: at, Type: typ, Role: role, Text: bl.Text})
			case "thinking":
				if strings.TrimSpace(bl.Thinking) != "" {
					b.emit(r.UUID, i, Event{At: at, Type: Reasoning, Role: role, Text: bl.Thinking})
				} else {
					b.res.Skipped++
				}
			case "redacted_thinking", "image", "document":
				b.res.Skipped++ // encrypted or binary: never indexed
			case "tool_use":
				b.emit(r.UUID, i, toolCallEvent(at, role, bl.Name, bl.ID, bl.Input))
			case "tool_result":
				out := contentText(bl.Content)
				e := Event{At: at, Type: ToolOutput, Role: "tool", Text: out,
					Tool: &Tool{CallID: bl.ToolUseID, Output: out, IsError: bl.IsError}}
				e.Files = claudeResultFiles(r.ToolResult)
				b.emit(r.UUID, i, e)
			default:
				b.unknown("claude:block:" + bl.Type)
			}
		}
	case "summary":
		if r.Summary != "" {
			b.emit(r.UUID, 0, Event{Type: Summary, Text: r.Summary})
		}
	case "system":
		text := contentText(r.Content)
		if text == "" {
			text = r.Subtype
		}
		if text == "" {
			b.res.Skipped++
			return nil
		}
		b.emit(r.UUID, 0, Event{At: at, Type: Notice, Role: "system", Text: text})
	case "custom-title":
		if r.CustomTitle != "" {
			m.Title = r.CustomTitle
		}
		b.res.Skipped++
	case "ai-title":
		if r.AITitle != "" && m.Title == "" {
			m.Title = r.AITitle
		}
		b.res.Skipped++
	default:
		if claudeSkip[r.Type] {
			b.res.Skipped++
			return nil
		}
		b.unknown("claude:" + r.Type)
	}
	return nil
}

// claudeResultFiles reads the create/update distinction Claude records in a Write result.
func claudeResultFiles(raw json.RawMessage) []FileRef {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var r struct {
		Type     string `json:"type"`
		FilePath string `json:"filePath"`
	}
	if unmarshal(raw, &r) != nil || r.FilePath == "" {
		return nil
	}
	switch r.Type {
	case "create":
		return []FileRef{{Path: r.FilePath, Op: FileCreate}}
	case "update":
		return []FileRef{{Path: r.FilePath, Op: FileModify}}
	}
	return nil
}
