package history

import (
	"bytes"
	"context"
	"fmt"
	json "github.com/segmentio/encoding/json"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ctx-dev/ctx/history/internal/lines"
	"github.com/ctx-dev/ctx/history/internal/textproc"
)

// Limits of one import (docs/history.md "Limits").
const (
	// MaxTextBytes bounds the text kept for one event; longer bodies are cut at a rune boundary and the
	// event says so in its text ("[… N bytes omitted]").
	MaxTextBytes = 1 << 20
	// maxPendingCalls bounds the call-id → tool map kept between incremental reads.
	maxPendingCalls = 4096
)

// maxLineBytes is the longest JSONL record read (bytes); a longer line is skipped and counted as bad.
// Claude and Codex lines reach megabytes. A variable so that tests can lower it.
var maxLineBytes = 64 << 20

// parseState is what an append-only parser needs to resume at an offset. It is kept in the index.
type parseState struct {
	// File names the source among the session's files, machine-independently (sourceName): it prefixes
	// the line keys (docs/history.md "Identity"). Set before each parse, not kept.
	File         string `json:"-"`
	NativeID     string `json:"native_id,omitempty"`
	ParentNative string `json:"parent_native,omitempty"`
	Subagent     bool   `json:"subagent,omitempty"`
	// SideSeen: a record stating isSidechain was read (Claude): the first decides Subagent.
	SideSeen bool `json:"side_seen,omitempty"`
	// RecordSession is the first session id named inside the records (Claude's sessionId), which for a
	// legacy sibling subagent file agent-<id>.jsonl is its parent's.
	RecordSession string                 `json:"record_session,omitempty"`
	Line          int64                  `json:"line"` // lines consumed
	Seq           int64                  `json:"seq"`  // last event sequence number
	Calls         map[string]pendingCall `json:"calls,omitempty"`
	// Cells are the exec cells (Codex) still running a `git commit`: a later `wait` on one prints its
	// receipt.
	Cells map[string]bool `json:"cells,omitempty"`
	Meta  sessionMeta     `json:"meta"`
}

type pendingCall struct {
	Name   string `json:"n"`
	Commit bool   `json:"c,omitempty"` // the call runs git commit
	Server string `json:"s,omitempty"` // the MCP server the provider says the call went to (markMCP)
}

// sessionMeta is the session metadata a parser learns from records.
type sessionMeta struct {
	CWD, RepoURL, Branch, Commit, Model, CLIVersion, Title string
	StartedAt, EndedAt                                     time.Time
}

// parseResult is what one parse of a source produced.
type parseResult struct {
	Events    []Event
	Unknown   map[string]int // record types the parser does not know, counted and skipped
	Skipped   int            // known records that carry nothing to index (token counts, snapshots, ...)
	BadLines  int            // lines that are not JSON objects, too long, or too deep
	Errors    []string       // the first few bad-line diagnostics
	Offset    int64          // end of the consumed bytes (append-only formats)
	Truncated bool           // the source was read only up to a limit (a .jsonl.zst's decompressed size)
}

// builder accumulates events while a parser walks records.
type builder struct {
	st  *parseState
	res *parseResult
	// line is the current 1-based line (or record) number, used for fallback keys.
	line int64
}

func newBuilder(st *parseState) *builder {
	if st.Calls == nil {
		st.Calls = map[string]pendingCall{}
	}
	return &builder{st: st, res: &parseResult{Unknown: map[string]int{}}}
}

func (b *builder) unknown(kind string) {
	if len(b.res.Unknown) < 256 || b.res.Unknown[kind] > 0 {
		b.res.Unknown[kind]++
	} else {
		b.res.Unknown["(other)"]++
	}
}

func (b *builder) bad(format string, args ...any) {
	b.res.BadLines++
	if len(b.res.Errors) < 8 {
		b.res.Errors = append(b.res.Errors, fmt.Sprintf("line %d: ", b.line)+fmt.Sprintf(format, args...))
	}
}

// emit appends an event; key is the native key (empty: "L<line>"), block the index of the block within
// the record.
func (b *builder) emit(key string, block int, e Event) {
	if key == "" {
		key = "L" + strconv.FormatInt(b.line, 10)
		if b.st.File != "" {
			key = b.st.File + ":" + key // two files of one session have the same line numbers
		}
	}
	e.NativeKey = key + "#" + strconv.Itoa(block)
	e.Text = clip(textproc.Clean(e.Text))
	if e.Tool != nil {
		e.Tool.Input = clip(textproc.Clean(e.Tool.Input))
		e.Tool.Output = clip(textproc.Clean(e.Tool.Output))
		if e.Tool.CallID != "" && e.Type == ToolCall && len(b.st.Calls) < maxPendingCalls {
			commit := hasFact(e.Facts, "command", textproc.IsGitCommit)
			if cell := waitedCell(e.Tool); cell != "" && b.st.Cells[cell] {
				commit = true // waiting on a cell that runs git commit: its output carries the receipt
				delete(b.st.Cells, cell)
			}
			pc := pendingCall{Name: e.Tool.Name, Commit: commit}
			if e.Tool.Protocol == "mcp" {
				pc.Server = e.Tool.Server // the call's name says MCP (Claude's mcp__<server>__<tool>): so does its output
			}
			b.st.Calls[e.Tool.CallID] = pc
		}
		if e.Type == ToolOutput && e.Tool.CallID != "" {
			if pc, ok := b.st.Calls[e.Tool.CallID]; ok {
				if e.Tool.Name == "" {
					e.Tool.Name = pc.Name
				}
				if pc.Server != "" && e.Tool.Protocol == "" {
					e.Tool.Protocol, e.Tool.Server = "mcp", pc.Server
				}
				if pc.Commit && !e.Tool.IsError {
					oids := textproc.CommitReceipts(e.Tool.Output)
					for _, oid := range oids {
						e.Facts = append(e.Facts, Fact{Kind: "commit", Value: oid})
					}
					if cell := textproc.RunningCell(e.Tool.Output); len(oids) == 0 && cell != "" && len(b.st.Cells) < maxPendingCalls {
						if b.st.Cells == nil {
							b.st.Cells = map[string]bool{}
						}
						b.st.Cells[cell] = true
					}
				}
				delete(b.st.Calls, e.Tool.CallID)
			}
			if e.Tool.ExitCode == nil {
				if n, ok := textproc.ExitCode(e.Tool.Output); ok {
					e.Tool.ExitCode = &n
				}
			}
		}
	}
	if !e.At.IsZero() {
		m := &b.st.Meta
		if m.StartedAt.IsZero() || e.At.Before(m.StartedAt) {
			m.StartedAt = e.At
		}
		if e.At.After(m.EndedAt) {
			m.EndedAt = e.At
		}
	}
	b.st.Seq++
	e.Seq = b.st.Seq
	b.res.Events = append(b.res.Events, e)
}

// markMCPWindow bounds how far back markMCP looks for the call among this parse's events.
const markMCPWindow = 512

// markMCP records that the tool call callID went to the MCP server named server, as a provider states it
// after the call (Codex's mcp_tool_call_end): the call (and its output) among the last events of this
// parse are marked protocol "mcp", and so is the output still to come; those without a tool name take
// tool, the name the provider gives with the server. A call imported by an earlier incremental read keeps
// its row. Empty or control-character server names mark nothing; such a tool name names nothing.
func (b *builder) markMCP(callID, server, tool string) {
	server = strings.TrimSpace(server)
	if callID == "" || !cleanName(server) {
		return
	}
	if tool = strings.TrimSpace(tool); !cleanName(tool) {
		tool = ""
	}
	evs := b.res.Events
	for i := len(evs) - 1; i >= 0 && i >= len(evs)-markMCPWindow; i-- {
		if t := evs[i].Tool; t != nil && t.CallID == callID && t.Protocol == "" {
			t.Protocol, t.Server = "mcp", server
			if t.Name == "" {
				t.Name = tool
			}
		}
	}
	if pc, ok := b.st.Calls[callID]; ok {
		pc.Server = server
		if pc.Name == "" {
			pc.Name = tool
		}
		b.st.Calls[callID] = pc
	}
}

// cleanName reports whether s is a usable server or tool name: not empty, at most 256 bytes, no control
// characters.
func cleanName(s string) bool {
	return s != "" && len(s) <= 256 && strings.IndexFunc(s, unicode.IsControl) < 0
}

// waitedCell is the cell id of a `wait` tool call (Codex's exec cells: {"cell_id": "..."}), "" otherwise.
func waitedCell(t *Tool) string {
	if t.Name != "wait" || !strings.HasPrefix(t.Input, "{") {
		return ""
	}
	var in struct {
		CellID string `json:"cell_id"`
	}
	if unmarshal([]byte(t.Input), &in) != nil {
		return ""
	}
	return in.CellID
}

func hasFact(fs []Fact, kind string, pred func(string) bool) bool {
	for _, f := range fs {
		if f.Kind == kind && pred(f.Value) {
			return true
		}
	}
	return false
}

// clipNote is the note that ends a cut text: the number of bytes omitted.
const clipNote = "\n[… %d bytes omitted]"

// clip bounds s to MaxTextBytes, the note included (docs/history.md "Limits": at most 1 MiB): the text
// is cut at a rune boundary where the note still fits. The note's room is reckoned with len(s), which has
// at least as many digits as the count of omitted bytes.
func clip(s string) string {
	if len(s) <= MaxTextBytes {
		return s
	}
	cut := MaxTextBytes - len(fmt.Sprintf(clipNote, len(s)))
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf(clipNote, len(s)-cut)
}

// lineParser handles one JSONL record. It returns an error only for records it cannot decode; the caller
// counts those as bad lines and goes on.
type lineParser func(b *builder, rec []byte) error

// parseJSONL reads complete lines of r from byte offset start and hands each to p. A last line without a
// newline is consumed only when it is a complete JSON value; otherwise it is left for the next read
// (the writer may be in the middle of it).
func parseJSONL(ctx context.Context, r io.Reader, start int64, st *parseState, p lineParser) (*parseResult, error) {
	b := newBuilder(st)
	lr := lines.New(r, start, maxLineBytes)
	defer lr.Close()
	b.res.Offset = start
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read line %d: %w", st.Line+1, err)
		}
		if !l.Complete && (l.TooLong || !validJSON(l.Data)) {
			break // a partial last line: read it next time
		}
		st.Line++
		b.line = st.Line
		b.res.Offset = l.End
		if l.TooLong {
			b.bad("longer than %d bytes, skipped", maxLineBytes)
			continue
		}
		data := l.Data
		if l.Start == 0 {
			data = trimBOM(data)
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			continue
		}
		if data[0] != '{' {
			b.bad("not a JSON object")
			continue
		}
		if tooDeep(data) {
			b.bad("%v", errTooDeep)
			continue
		}
		if err := p(b, data); err != nil {
			b.bad("%v", err)
		}
	}
	return b.res, nil
}

// utf8BOM is the byte-order mark some editors (Windows Notepad, PowerShell's Out-File) put at the start of
// a UTF-8 file. It is not content: RFC 8259 §8.1 lets a JSON parser ignore it, and encoding/json does not.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// trimBOM returns data without a leading UTF-8 byte-order mark: the first line of a JSONL source or a
// whole JSON document (docs/history.md "Providers and discovery").
func trimBOM(data []byte) []byte {
	return bytes.TrimPrefix(data, utf8BOM)
}

// decodeRec decodes one JSON record of a line as json.Unmarshal does (the same errors for trailing
// bytes), except that json.RawMessage fields point into data instead of holding copies: data (the line
// reader's buffer) outlives the record's parse, and nothing keeps a RawMessage beyond it. data is a line
// that parseJSONL handed to a lineParser, or a value within one: parseJSONL checked the line's depth
// (tooDeep), and a value within it nests no deeper, so it is not checked again.
func decodeRec(data []byte, v any) error {
	rest, err := json.Parse(data, v, json.DontCopyRawMessage)
	if err == nil && len(rest) != 0 {
		return fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return err
}

// parseTime reads an RFC 3339 timestamp; a malformed one is zero (unknown), never guessed.
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// msTime converts Unix milliseconds; zero or negative is unknown.
func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// rawText renders a JSON value for the search body: strings as is, anything else as compact JSON.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		if s, err := unquote(raw); err == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if !tooDeep(raw) && json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// contentText joins the text of a content value that is a string or a list of blocks with "text".
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		s, _ := unquote(raw)
		return s
	case '[':
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if unmarshal(raw, &blocks) != nil {
			return rawText(raw)
		}
		var parts []string
		for _, bl := range blocks {
			if bl.Text != "" {
				parts = append(parts, bl.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return rawText(raw)
}

// toolFiles derives file touches from a tool's name and input object, for the tools agents share
// (Read/Write/Edit and their snake_case cousins).
func toolFiles(name string, input map[string]any) []FileRef {
	path := firstString(input, "file_path", "filePath", "path", "notebook_path", "absolute_path")
	if path == "" {
		return nil
	}
	switch strings.ToLower(name) {
	case "read", "read_file", "view", "readfile", "read_many_files":
		return []FileRef{{Path: path, Op: FileRead}}
	case "write", "write_file", "create", "create_file", "writefile":
		return []FileRef{{Path: path, Op: FileCreate}}
	case "edit", "multiedit", "replace", "edit_file", "notebookedit", "str_replace", "str_replace_editor", "apply_diff":
		return []FileRef{{Path: path, Op: FileModify}}
	case "delete", "delete_file", "rm":
		return []FileRef{{Path: path, Op: FileDelete}}
	}
	return nil
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// commandOf returns the shell command line in a tool input, if any.
func commandOf(input map[string]any) string {
	if s := firstString(input, "command", "cmd"); s != "" {
		return s
	}
	for _, k := range []string{"command", "cmd", "argv"} {
		if arr, ok := input[k].([]any); ok {
			var parts []string
			for _, a := range arr {
				if s, ok := a.(string); ok {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, " ")
		}
	}
	return ""
}

// toolCallEvent builds a tool_call event from a name, a call id and a raw JSON input.
func toolCallEvent(at time.Time, role, name, callID string, input json.RawMessage) Event {
	e := Event{At: at, Type: ToolCall, Role: role, Tool: &Tool{Name: name, CallID: callID, Input: rawText(input)}}
	var m map[string]any
	if len(input) > 0 && input[0] == '{' {
		m = toolArgs(input)
	}
	return finishToolCall(e, m)
}

// toolArgKeys are the members of a tool input that finishToolCall reads (toolFiles, commandOf, the
// working directory, an apply_patch input), decoded without the rest of the input (file contents,
// edits) that a map of everything would hold.
type toolArgKeys struct {
	FilePath     json.RawMessage `json:"file_path"`
	FilePath2    json.RawMessage `json:"filePath"`
	Path         json.RawMessage `json:"path"`
	NotebookPath json.RawMessage `json:"notebook_path"`
	AbsolutePath json.RawMessage `json:"absolute_path"`
	Command      json.RawMessage `json:"command"`
	Cmd          json.RawMessage `json:"cmd"`
	Argv         json.RawMessage `json:"argv"`
	Workdir      json.RawMessage `json:"workdir"`
	CWD          json.RawMessage `json:"cwd"`
	Input        json.RawMessage `json:"input"`
}

// toolArgs decodes a tool input object into the map finishToolCall reads: the members of toolArgKeys
// (keys matched exactly, as a map's are) that are strings or arrays, each as json.Unmarshal into a
// map[string]any would give it. Nil when input does not decode.
func toolArgs(input json.RawMessage) map[string]any {
	if tooDeep(input) {
		return nil
	}
	var k toolArgKeys
	rest, err := json.Parse(input, &k, json.DontMatchCaseInsensitiveStructFields|json.DontCopyRawMessage)
	if err != nil || len(rest) != 0 {
		var m map[string]any
		if unmarshal(input, &m) != nil {
			return nil
		}
		return m
	}
	m := make(map[string]any, 4)
	for _, f := range [...]struct {
		key string
		raw json.RawMessage
	}{
		{"file_path", k.FilePath}, {"filePath", k.FilePath2}, {"path", k.Path}, {"notebook_path", k.NotebookPath},
		{"absolute_path", k.AbsolutePath}, {"command", k.Command}, {"cmd", k.Cmd}, {"argv", k.Argv},
		{"workdir", k.Workdir}, {"cwd", k.CWD}, {"input", k.Input},
	} {
		if len(f.raw) == 0 || (f.raw[0] != '"' && f.raw[0] != '[') {
			continue // absent, or of a type finishToolCall never reads
		}
		var v any
		if unmarshal(f.raw, &v) == nil {
			m[f.key] = v
		}
	}
	return m
}

func finishToolCall(e Event, m map[string]any) Event {
	name := e.Tool.Name
	if server, ok := mcpServer(name); ok {
		e.Tool.Protocol, e.Tool.Server = "mcp", server
	}
	e.Files = append(e.Files, toolFiles(name, m)...)
	cmd := commandOf(m)
	if cmd != "" {
		e.Facts = append(e.Facts, Fact{Kind: "command", Value: cmd})
	}
	if wd := firstString(m, "workdir", "cwd"); wd != "" {
		e.Facts = append(e.Facts, Fact{Kind: "workdir", Value: wd})
	}
	if s, ok := m["input"].(string); ok && strings.Contains(s, "*** Begin Patch") {
		e.Files = append(e.Files, patchRefs(s)...)
	}
	var body strings.Builder
	body.WriteString(name)
	if cmd != "" {
		body.WriteString(" ")
		body.WriteString(cmd)
	} else if e.Tool.Input != "" {
		body.WriteString(" ")
		body.WriteString(e.Tool.Input)
	}
	e.Text = body.String()
	return e
}

func patchRefs(patch string) []FileRef {
	var out []FileRef
	for _, f := range textproc.PatchFiles(patch) {
		out = append(out, FileRef{Path: f.Path, Op: FileOp(f.Op), OldPath: f.OldPath})
	}
	return out
}

// mcpServer recognises an MCP tool call by Claude Code's naming, "mcp__<server>__<tool>", and returns the
// server. Other providers' MCP names ("server__tool") cannot be told from ordinary tool names, so only
// the explicit prefix qualifies.
func mcpServer(name string) (string, bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", false
	}
	server, tool, ok := strings.Cut(rest, "__")
	return server, ok && server != "" && tool != ""
}
