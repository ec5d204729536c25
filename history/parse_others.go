package history

import (
	json "github.com/segmentio/encoding/json"
	"strings"
)

// Gemini CLI (docs/history.md "Gemini CLI"): one JSON document per session (older) or a chat-recording
// JSONL with a header line, message lines and {"$set": {...}} patch lines.

type geminiHeader struct {
	SessionID   string `json:"sessionId"`
	ProjectHash string `json:"projectHash"`
	StartTime   string `json:"startTime"`
	LastUpdated string `json:"lastUpdated"`
	Kind        string `json:"kind"`
}

type geminiMsg struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Model     string          `json:"model"`
	Thoughts  []struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
	} `json:"thoughts"`
	ToolCalls []struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Args      json.RawMessage `json:"args"`
		Status    string          `json:"status"`
		Timestamp string          `json:"timestamp"`
		Result    []struct {
			FunctionResponse struct {
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"result"`
		ResultDisplay json.RawMessage `json:"resultDisplay"`
	} `json:"toolCalls"`
}

func parseGeminiLine(b *builder, data []byte) error {
	var probe struct {
		Set       json.RawMessage `json:"$set"`
		SessionID string          `json:"sessionId"`
		Type      string          `json:"type"`
		ID        string          `json:"id"`
	}
	if err := unmarshal(data, &probe); err != nil {
		return err
	}
	switch {
	case len(probe.Set) > 0:
		b.res.Skipped++
		return nil
	case probe.SessionID != "" && probe.Type == "":
		var h geminiHeader
		if err := unmarshal(data, &h); err != nil {
			return err
		}
		if b.st.NativeID == "" {
			b.st.NativeID = h.SessionID
		}
		if t := parseTime(h.StartTime); !t.IsZero() && b.st.Meta.StartedAt.IsZero() {
			b.st.Meta.StartedAt = t
		}
		if h.Kind == "subagent" {
			b.st.Subagent = true
		}
		return nil
	}
	var m geminiMsg
	if err := unmarshal(data, &m); err != nil {
		return err
	}
	geminiMessage(b, m)
	return nil
}

func geminiMessage(b *builder, m geminiMsg) {
	at := parseTime(m.Timestamp)
	if m.Model != "" {
		b.st.Meta.Model = m.Model
	}
	text := contentText(m.Content)
	blk := 0
	switch m.Type {
	case "user":
		b.emit(m.ID, blk, Event{At: at, Type: Message, Role: "user", Text: text})
	case "gemini", "model", "assistant":
		if strings.TrimSpace(text) != "" {
			b.emit(m.ID, blk, Event{At: at, Type: Message, Role: "assistant", Text: text})
		}
	case "info", "error", "warning":
		b.emit(m.ID, blk, Event{At: at, Type: Notice, Role: "system", Text: m.Type + ": " + text})
		return
	default:
		b.unknown("gemini:" + m.Type)
		return
	}
	blk++
	for _, t := range m.Thoughts {
		s := strings.TrimSpace(strings.TrimSpace(t.Subject + "\n" + t.Description))
		if s != "" {
			b.emit(m.ID, blk, Event{At: at, Type: Reasoning, Role: "assistant", Text: s})
		}
		blk++
	}
	for _, tc := range m.ToolCalls {
		tat := parseTime(tc.Timestamp)
		if tat.IsZero() {
			tat = at
		}
		b.emit(m.ID, blk, toolCallEvent(tat, "assistant", tc.Name, tc.ID, tc.Args))
		blk++
		var parts []string
		for _, r := range tc.Result {
			var resp struct {
				Output string `json:"output"`
				Error  string `json:"error"`
			}
			if unmarshal(r.FunctionResponse.Response, &resp) == nil && (resp.Output != "" || resp.Error != "") {
				parts = append(parts, strings.TrimSpace(resp.Output+"\n"+resp.Error))
			} else if s := rawText(r.FunctionResponse.Response); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) == 0 {
			if s := rawText(tc.ResultDisplay); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 || tc.Status != "" {
			out := strings.Join(parts, "\n")
			b.emit(m.ID, blk, Event{At: tat, Type: ToolOutput, Role: "tool", Text: out,
				Tool: &Tool{Name: tc.Name, CallID: tc.ID, Output: out, IsError: tc.Status == "error" || tc.Status == "cancelled"}})
		}
		blk++
	}
}

// parseGeminiJSON reads a whole legacy session document.
func parseGeminiJSON(b *builder, data []byte) error {
	var doc struct {
		geminiHeader
		Messages []json.RawMessage `json:"messages"`
	}
	if err := unmarshal(data, &doc); err != nil {
		return err
	}
	b.st.NativeID = doc.SessionID
	b.st.Meta.StartedAt = parseTime(doc.StartTime)
	for i, raw := range doc.Messages {
		b.line = int64(i + 1)
		var m geminiMsg
		if err := unmarshal(raw, &m); err != nil {
			b.bad("message %d: %v", i, err)
			continue
		}
		geminiMessage(b, m)
	}
	return nil
}

// Cursor agent transcripts (docs/history.md "Cursor"): {role, message:{content:[...]}}, no ids, usually no
// timestamps. Native keys are line ordinals.

func parseCursorLine(b *builder, data []byte) error {
	var r struct {
		Role      string `json:"role"`
		Event     string `json:"event"`
		Timestamp string `json:"timestamp"`
		Message   struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if err := unmarshal(data, &r); err != nil {
		return err
	}
	at := parseTime(r.Timestamp)
	role := r.Role
	if role == "" {
		role = r.Message.Role
	}
	if role == "" {
		if r.Event != "" {
			b.emit("", 0, Event{At: at, Type: Notice, Text: strings.TrimSpace(r.Event + ": " + contentText(r.Message.Content))})
			return nil
		}
		b.unknown("cursor:no-role")
		return nil
	}
	raw := r.Message.Content
	if len(raw) > 0 && raw[0] == '"' {
		b.emit("", 0, Event{At: at, Type: Message, Role: role, Text: cursorQuery(contentText(raw))})
		return nil
	}
	var blocks []claudeBlock
	if err := unmarshal(raw, &blocks); err != nil {
		return err
	}
	for i, bl := range blocks {
		switch bl.Type {
		case "text":
			b.emit("", i, Event{At: at, Type: Message, Role: role, Text: cursorQuery(bl.Text)})
		case "tool_use":
			b.emit("", i, toolCallEvent(at, role, bl.Name, bl.ID, bl.Input))
		case "tool_result":
			out := contentText(bl.Content)
			b.emit("", i, Event{At: at, Type: ToolOutput, Role: "tool", Text: out, Tool: &Tool{CallID: bl.ToolUseID, Output: out, IsError: bl.IsError}})
		case "thinking", "reasoning":
			if t := bl.Thinking + bl.Text; strings.TrimSpace(t) != "" {
				b.emit("", i, Event{At: at, Type: Reasoning, Role: role, Text: t})
			}
		default:
			b.unknown("cursor:block:" + bl.Type)
		}
	}
	return nil
}

func cursorQuery(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "<user_query>") && strings.HasSuffix(t, "</user_query>") {
		return strings.TrimSpace(t[len("<user_query>") : len(t)-len("</user_query>")])
	}
	return s
}

// Copilot CLI session events (docs/history.md "Copilot CLI"): {type, data, id, timestamp, parentId}.

func parseCopilotLine(b *builder, data []byte) error {
	var r struct {
		Type      string          `json:"type"`
		Data      json.RawMessage `json:"data"`
		ID        string          `json:"id"`
		Timestamp string          `json:"timestamp"`
	}
	if err := unmarshal(data, &r); err != nil {
		return err
	}
	at := parseTime(r.Timestamp)
	switch r.Type {
	case "session.start":
		var d struct {
			SessionID string `json:"sessionId"`
			Version   string `json:"copilotVersion"`
			StartTime string `json:"startTime"`
			Context   struct {
				CWD, Branch, HeadCommit, Repository string
			} `json:"context"`
		}
		if err := unmarshal(r.Data, &d); err != nil {
			return err
		}
		if b.st.NativeID == "" {
			b.st.NativeID = d.SessionID
		}
		m := &b.st.Meta
		m.CWD, m.Branch, m.Commit, m.RepoURL, m.CLIVersion = d.Context.CWD, d.Context.Branch, d.Context.HeadCommit, d.Context.Repository, d.Version
		if t := parseTime(d.StartTime); !t.IsZero() {
			m.StartedAt = t
		}
		b.res.Skipped++
	case "user.message":
		var d struct {
			Content string `json:"content"`
		}
		if err := unmarshal(r.Data, &d); err != nil {
			return err
		}
		b.emit(r.ID, 0, Event{At: at, Type: Message, Role: "user", Text: d.Content})
	case "assistant.message":
		var d struct {
			Content      string `json:"content"`
			ToolRequests []struct {
				ToolCallID string          `json:"toolCallId"`
				Name       string          `json:"name"`
				Arguments  json.RawMessage `json:"arguments"`
			} `json:"toolRequests"`
		}
		if err := unmarshal(r.Data, &d); err != nil {
			return err
		}
		if strings.TrimSpace(d.Content) != "" {
			b.emit(r.ID, 0, Event{At: at, Type: Message, Role: "assistant", Text: d.Content})
		}
		for i, tr := range d.ToolRequests {
			b.emit(r.ID, i+1, toolCallEvent(at, "assistant", tr.Name, tr.ToolCallID, tr.Arguments))
		}
	case "tool.execution_complete":
		var d struct {
			ToolCallID string          `json:"toolCallId"`
			Success    *bool           `json:"success"`
			Result     json.RawMessage `json:"result"`
			Error      json.RawMessage `json:"error"`
		}
		if err := unmarshal(r.Data, &d); err != nil {
			return err
		}
		var res struct {
			Content string `json:"content"`
		}
		out := rawText(d.Result)
		if unmarshal(d.Result, &res) == nil && res.Content != "" {
			out = res.Content
		}
		if e := rawText(d.Error); e != "" {
			out = strings.TrimSpace(out + "\n" + e)
		}
		b.emit(r.ID, 0, Event{At: at, Type: ToolOutput, Role: "tool", Text: out,
			Tool: &Tool{CallID: d.ToolCallID, Output: out, IsError: d.Success != nil && !*d.Success}})
	case "session.error", "session.info", "session.warning", "abort":
		b.emit(r.ID, 0, Event{At: at, Type: Notice, Text: r.Type + ": " + rawText(r.Data)})
	case "tool.execution_start", "assistant.turn_start", "assistant.turn_end", "session.model_change",
		"session.truncation", "assistant.usage", "session.usage_info", "hook.start", "hook.end":
		b.res.Skipped++
	default:
		b.unknown("copilot:" + r.Type)
	}
	return nil
}
