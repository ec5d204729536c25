package history

import (
	"context"
	"fmt"
	json "github.com/segmentio/encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// OpenCode's legacy storage tree (docs/history.md "OpenCode"): storage/session/<project>/<ses>.json,
// storage/message/<ses>/<msg>.json, storage/part/<msg>/<part>.json. A session is re-read whole when any
// of its files changes.

const (
	maxOpenCodeMessages = 100_000 // per session
	maxOpenCodeParts    = 10_000  // per message
	maxJSONDocBytes     = 64 << 20
)

type ocSession struct {
	ID        string `json:"id"`
	Directory string `json:"directory"`
	ParentID  string `json:"parentID"`
	Title     string `json:"title"`
	Version   string `json:"version"`
	Time      struct {
		Created int64 `json:"created"`
		Updated int64 `json:"updated"`
	} `json:"time"`
}

type ocMessage struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	ModelID string `json:"modelID"`
	Model   struct {
		ModelID string `json:"modelID"`
	} `json:"model"`
	Time struct {
		Created int64 `json:"created"`
	} `json:"time"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

type ocPart struct {
	ID     string   `json:"id"`
	Type   string   `json:"type"`
	Text   string   `json:"text"`
	Tool   string   `json:"tool"`
	CallID string   `json:"callID"`
	Files  []string `json:"files"`
	State  struct {
		Status   string          `json:"status"`
		Input    json.RawMessage `json:"input"`
		Output   json.RawMessage `json:"output"`
		Error    string          `json:"error"`
		Metadata struct {
			Exit *int `json:"exit"`
		} `json:"metadata"`
		Time struct {
			Start int64 `json:"start"`
		} `json:"time"`
	} `json:"state"`
	Time struct {
		Start int64 `json:"start"`
	} `json:"time"`
}

// openCodeStorage returns the storage directory of a session file storage/session/<project>/<ses>.json.
func openCodeStorage(sessionFile string) string {
	return filepath.Dir(filepath.Dir(filepath.Dir(sessionFile)))
}

// openCodeFiles lists the files a session is read from (the session file first), for change detection.
func openCodeFiles(ctx context.Context, sessionFile string) ([]string, error) {
	var s ocSession
	if err := readJSONFile(sessionFile, &s); err != nil {
		return nil, err
	}
	if !safeName(s.ID) {
		return nil, fmt.Errorf("session id %q is not a plain file name", s.ID)
	}
	storage := openCodeStorage(sessionFile)
	files := []string{sessionFile}
	msgs, err := listJSON(filepath.Join(storage, "message", s.ID), maxOpenCodeMessages)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		files = append(files, m)
		id := strings.TrimSuffix(filepath.Base(m), ".json")
		var msg ocMessage // parts are filed under the message's id, which need not be its file name
		if readJSONFile(m, &msg) == nil && msg.ID != "" {
			id = msg.ID
		}
		if !safeName(id) {
			continue
		}
		parts, err := listJSON(filepath.Join(storage, "part", id), maxOpenCodeParts)
		if err != nil {
			return nil, err
		}
		files = append(files, parts...)
	}
	return files, nil
}

func parseOpenCode(ctx context.Context, sessionFile string, st *parseState) (*parseResult, error) {
	b := newBuilder(st)
	var s ocSession
	if err := readJSONFile(sessionFile, &s); err != nil {
		return nil, err
	}
	if !safeName(s.ID) {
		return nil, fmt.Errorf("session id %q is not a plain file name", s.ID)
	}
	storage := openCodeStorage(sessionFile)
	msgFiles, err := listJSON(filepath.Join(storage, "message", s.ID), maxOpenCodeMessages)
	if err != nil {
		return nil, err
	}
	var msgs []ocMessage
	for _, f := range msgFiles {
		var m ocMessage
		if err := readJSONFile(f, &m); err != nil {
			b.bad("%s: %v", filepath.Base(f), err)
			continue
		}
		if m.ID == "" {
			m.ID = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		msgs = append(msgs, m)
	}
	parts := func(m ocMessage) ([]ocPart, error) {
		if !safeName(m.ID) {
			return nil, fmt.Errorf("message id %q is not a plain file name", m.ID)
		}
		files, err := listJSON(filepath.Join(storage, "part", m.ID), maxOpenCodeParts)
		if err != nil {
			return nil, err
		}
		var out []ocPart
		for _, f := range files {
			var p ocPart
			if err := readJSONFile(f, &p); err != nil {
				b.bad("%s: %v", filepath.Base(f), err)
				continue
			}
			if p.ID == "" {
				p.ID = m.ID + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
			}
			out = append(out, p)
		}
		return out, nil
	}
	if err := openCodeAssemble(ctx, b, s, msgs, parts); err != nil {
		return nil, err
	}
	return b.res, nil
}

// openCodeAssemble turns a session, its messages and their parts (from the storage tree or the
// database) into events.
func openCodeAssemble(ctx context.Context, b *builder, s ocSession, msgs []ocMessage, partsOf func(ocMessage) ([]ocPart, error)) error {
	st := b.st
	st.NativeID = s.ID
	if s.ParentID != "" {
		st.ParentNative, st.Subagent = s.ParentID, true
	}
	st.Meta.CWD, st.Meta.Title, st.Meta.CLIVersion = s.Directory, s.Title, s.Version
	st.Meta.StartedAt = msTime(s.Time.Created)
	slices.SortStableFunc(msgs, func(a, c ocMessage) int {
		if a.Time.Created != c.Time.Created {
			if a.Time.Created < c.Time.Created {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, c.ID)
	})
	for _, m := range msgs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if m.Role == "assistant" {
			if model := firstNonEmpty(m.ModelID, m.Model.ModelID); model != "" {
				st.Meta.Model = model
			}
		}
		at := msTime(m.Time.Created)
		parts, err := partsOf(m)
		if err != nil {
			if ctx.Err() != nil {
				return err // the time bound or a cancel: the source fails, not a bad line
			}
			b.bad("%v", err)
			continue
		}
		for _, p := range parts {
			pat := msTime(p.Time.Start)
			if pat.IsZero() {
				pat = msTime(p.State.Time.Start)
			}
			if pat.IsZero() {
				pat = at
			}
			openCodePart(b, m, p, pat)
		}
		if m.Error != nil {
			b.emit(m.ID+"/error", 0, Event{At: at, Type: Notice, Role: "system", Text: strings.TrimSpace(m.Error.Name + ": " + m.Error.Data.Message)})
		}
	}
	return nil
}

func openCodePart(b *builder, m ocMessage, p ocPart, at time.Time) {
	switch p.Type {
	case "text":
		if strings.TrimSpace(p.Text) != "" {
			b.emit(p.ID, 0, Event{At: at, Type: Message, Role: m.Role, Text: p.Text})
		}
	case "reasoning":
		if strings.TrimSpace(p.Text) != "" {
			b.emit(p.ID, 0, Event{At: at, Type: Reasoning, Role: m.Role, Text: p.Text})
		}
	case "tool":
		callID := p.CallID
		if callID == "" {
			callID = p.ID
		}
		b.emit(p.ID, 0, toolCallEvent(at, "assistant", p.Tool, callID, p.State.Input))
		if p.State.Status == "completed" || p.State.Status == "error" {
			out := rawText(p.State.Output)
			var o struct {
				Content string `json:"content"`
			}
			if unmarshal(p.State.Output, &o) == nil && o.Content != "" {
				out = o.Content
			}
			if p.State.Error != "" {
				out = strings.TrimSpace(out + "\n" + p.State.Error)
			}
			b.emit(p.ID, 1, Event{At: at, Type: ToolOutput, Role: "tool", Text: out,
				Tool: &Tool{Name: p.Tool, CallID: callID, Output: out, ExitCode: p.State.Metadata.Exit, IsError: p.State.Status == "error"}})
		}
	case "patch":
		var files []FileRef
		for _, f := range p.Files {
			files = append(files, FileRef{Path: f, Op: FileModify})
		}
		b.emit(p.ID, 0, Event{At: at, Type: Notice, Role: "system", Text: "patch " + strings.Join(p.Files, " "), Files: files})
	case "step-start", "step-finish", "snapshot", "compaction", "file", "agent", "retry":
		b.res.Skipped++
	default:
		b.unknown("opencode:part:" + p.Type)
	}
}

// safeName reports whether an id read from a provider file can be used as one path element.
func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`+"\x00") && len(s) <= 255
}

// listJSON returns the regular *.json files directly in dir, sorted by name, at most max of them. A
// missing dir is empty; symlinks are never followed.
func listJSON(dir string, max int) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if len(out) >= max {
			return nil, fmt.Errorf("list %s: more than %d files", dir, max)
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out, nil // ReadDir sorts by name
}

// readJSONFile decodes one JSON document of at most maxJSONDocBytes, refusing symlinks.
func readJSONFile(path string, v any) error {
	data, err := readRegular(path, maxJSONDocBytes)
	if err != nil {
		return err
	}
	if err := unmarshal(trimBOM(data), v); err != nil {
		return fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return nil
}
