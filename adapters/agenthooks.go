package adapters

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/adapters/internal/wtfs"
	"github.com/tailscale/hujson"
)

// Agent lifecycle hooks (docs/adapters.md "Agent hooks"): in a client's settings file, a SessionStart
// hook that prints the brief public context, so an agent starts with it even without MCP, and a
// SessionEnd hook that imports the finished session into the local agent-history index
// (docs/history.md). Installing merges one entry per event into the file and keeps every other byte and
// every hook of the user's; installing again changes nothing; removing gives the file back byte for byte
// while it is still what Install wrote (from a receipt in the Record), else removes only ctx's entries.

// BriefCommand is the shell command the SessionStart hook runs: it prints the brief public context
// (`ctx adapters brief`) and never fails the agent's start, even where ctx is not installed.
const BriefCommand = "command -v ctx >/dev/null 2>&1 && ctx adapters brief || true"

// GeminiBriefCommand is the command of Gemini CLI's SessionStart hook: Gemini reads a hook's standard
// output as JSON only, so it prints {"hookSpecificOutput":{"additionalContext": <brief>}}
// (`ctx adapters brief --format gemini`), or {} where ctx is not installed.
const GeminiBriefCommand = "command -v ctx >/dev/null 2>&1 && ctx adapters brief --format gemini || echo '{}'"

// EndCommand is the shell command of Claude Code's SessionEnd hook: it imports the session that ended
// (named by the transcript_path of the hook's JSON on standard input) into the local agent-history index,
// prints nothing, and never fails the agent's exit, even where ctx is not installed.
const EndCommand = "command -v ctx >/dev/null 2>&1 && ctx history import --provider claude-code --hook-input --quiet || true"

// GeminiEndCommand is the command of Gemini CLI's SessionEnd hook: the same import, and {} on standard
// output, the only output Gemini reads from a hook.
const GeminiEndCommand = "command -v ctx >/dev/null 2>&1 && ctx history import --provider gemini-cli --hook-input --quiet >/dev/null; echo '{}'"

// Hook events ctx installs a hook for, named as both Claude Code and Gemini CLI name them.
const (
	EventSessionStart = "SessionStart"
	EventSessionEnd   = "SessionEnd"
)

// hookSpec is one hook ctx installs: the event, the command, and the matcher that selects the event's
// sources or reasons ("" runs on every one).
type hookSpec struct {
	event, command, matcher string
}

// hookClient is how one client declares its session hooks.
type hookClient struct {
	files map[HookScope]string // settings file per scope
	def   HookScope            // the scope "" means
	hooks []hookSpec           // in the order Install adds them
}

// hookClients are the clients whose session hooks are documented: Claude Code
// (https://code.claude.com/docs/en/hooks) and Gemini CLI (https://geminicli.com/docs/hooks/reference).
// Claude Code's SessionStart matcher is a regex over startup, resume, clear and compact (a new session,
// and after /clear and a compaction, when the context was dropped); its SessionEnd hook runs for every
// reason (clear, logout, prompt_input_exit, other, ...), as a /clear ends the session too. Gemini CLI
// matches lifecycle events by exact string, so its hooks have no matcher.
var hookClients = map[string]hookClient{
	"claude-code": {files: map[HookScope]string{HookLocal: ".claude/settings.local.json", HookProject: ".claude/settings.json"},
		def: HookLocal, hooks: []hookSpec{{EventSessionStart, BriefCommand, "startup|clear|compact"}, {EventSessionEnd, EndCommand, ""}}},
	"gemini": {files: map[HookScope]string{HookProject: ".gemini/settings.json"}, def: HookProject,
		hooks: []hookSpec{{EventSessionStart, GeminiBriefCommand, ""}, {EventSessionEnd, GeminiEndCommand, ""}}},
}

// HookScope is which of a client's settings files gets the hook.
type HookScope string

// Hook scopes of Claude Code (https://code.claude.com/docs/en/hooks, "Configuration").
const (
	HookLocal   HookScope = "local"   // .claude/settings.local.json: this clone only (Claude Code keeps it out of git)
	HookProject HookScope = "project" // .claude/settings.json: shared with the team through git
)

// HookAction is what InstallHooks or RemoveHooks did.
type HookAction string

// Hook actions.
const (
	HookAdded     HookAction = "added"
	HookUnchanged HookAction = "unchanged"
	HookRemoved   HookAction = "removed"   // the entry went; the rest of the file stays
	HookRestored  HookAction = "restored"  // the file is byte for byte what it was before Install (or gone, when Install created it)
	HookAbsent    HookAction = "absent"    // nothing of ctx's there
	HookInstalled HookAction = "installed" // HookStatus: ctx's hook is there for every event
	HookPartial   HookAction = "partial"   // HookStatus: ctx's hook is there for some events only (an older install)
)

// ErrHookSettings is wrapped by the error for a settings file ctx cannot edit safely (not JSON, not an
// object, hooks of an unexpected shape): it is never modified.
var ErrHookSettings = errors.New("settings file ctx cannot edit safely; left as it is")

// HookReceipt is what a settings file held before InstallHooks first changed it.
type HookReceipt struct {
	Existed bool   `json:"existed"`
	Before  []byte `json:"before,omitempty"`
	After   string `json:"after"` // sha256 of what Install wrote
}

// hookSettingsPath is the settings file of client for scope, and the client.
func hookSettingsPath(client string, scope HookScope) (string, hookClient, error) {
	hc, ok := hookClients[client]
	if !ok {
		return "", hc, badArgument("agent hooks: client %q has no documented session hooks ctx supports (claude-code and gemini do)", client)
	}
	if scope == "" {
		scope = hc.def
	}
	p, ok := hc.files[scope]
	if !ok {
		var known []string
		for sc := range hc.files {
			known = append(known, string(sc))
		}
		sort.Strings(known)
		return "", hc, badArgument("agent hooks: unknown scope %q for %s: use %s", scope, client, strings.Join(known, " or "))
	}
	return p, hc, nil
}

// settingsShape is what ctx reads of a settings file to edit one event's hooks.
type settingsShape struct {
	hasHooks, hasEvent bool
	ours               [][2]int // (entry index, hook index) of ctx's hooks in hooks.<event>
	entries            []json.RawMessage
}

// readShape parses a settings file and finds ctx's hooks (those running command) in hooks.<event>.
func readShape(src []byte, event, command string) (*settingsShape, *hujson.Value, error) {
	v, err := hujson.Parse(src)
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %w", err, ErrHookSettings)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, nil, fmt.Errorf("top level is not an object: %w", ErrHookSettings)
	}
	std, err := hujson.Standardize(bytes.Clone(src))
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %w", err, ErrHookSettings)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(std, &top); err != nil {
		return nil, nil, fmt.Errorf("%v: %w", err, ErrHookSettings)
	}
	sh := &settingsShape{}
	raw, ok := top["hooks"]
	if !ok {
		return sh, &v, nil
	}
	sh.hasHooks = true
	var hooks map[string]json.RawMessage
	if err := json.Unmarshal(raw, &hooks); err != nil {
		return nil, nil, fmt.Errorf(`"hooks" is not an object: %w`, ErrHookSettings)
	}
	raw, ok = hooks[event]
	if !ok {
		return sh, &v, nil
	}
	sh.hasEvent = true
	if err := json.Unmarshal(raw, &sh.entries); err != nil {
		return nil, nil, fmt.Errorf(`"hooks.%s" is not an array: %w`, event, ErrHookSettings)
	}
	for i, e := range sh.entries {
		var entry struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(e, &entry) != nil {
			continue // not ctx's; left as it is
		}
		for j, h := range entry.Hooks {
			if h.Command == command {
				sh.ours = append(sh.ours, [2]int{i, j})
			}
		}
	}
	return sh, &v, nil
}

func (hs hookSpec) entry() map[string]any {
	e := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": hs.command}}}
	if hs.matcher != "" {
		e["matcher"] = hs.matcher
	}
	return e
}

// InstallHooks adds ctx's hooks (SessionStart and SessionEnd) to client's settings file in opts.Root
// (creating it when missing), keeping every other byte of the file, and records a receipt so that
// RemoveHooks can restore it. An event that already holds ctx's hook is left as it is. It returns the
// file's path and HookAdded or HookUnchanged. Errors: an unsupported client or scope (ErrBadArgument),
// ErrHookSettings for a file it must not edit, I/O.
func InstallHooks(opts Options, client string, scope HookScope) (string, HookAction, error) {
	p, hc, err := hookSettingsPath(client, scope)
	if err != nil {
		return "", "", err
	}
	unlock, err := lockRecord(context.Background(), opts)
	if err != nil {
		return p, "", err
	}
	defer unlock()
	w, err := wtfs.Open(opts.Root)
	if err != nil {
		return p, "", err
	}
	defer w.Close()
	src, err := w.ReadFile(p)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return p, "", fmt.Errorf("agent hooks: read %s: %w", p, err)
	}
	var out []byte
	if !existed || len(bytes.TrimSpace(src)) == 0 {
		events := map[string]any{}
		for _, hs := range hc.hooks {
			events[hs.event] = []any{hs.entry()}
		}
		out = append(marshalIndent(map[string]any{"hooks": events}, "", "  ", "\n"), '\n')
	} else {
		out = src
		for _, hs := range hc.hooks {
			sh, v, err := readShape(out, hs.event, hs.command)
			if err != nil {
				return p, "", fmt.Errorf("agent hooks: %s: %w", p, err)
			}
			if len(sh.ours) > 0 {
				continue
			}
			if out, err = addHookEntry(v, sh, out, hs); err != nil {
				return p, "", fmt.Errorf("agent hooks: %s: %v: %w", p, err, ErrHookSettings)
			}
		}
		if bytes.Equal(out, src) {
			return p, HookUnchanged, nil
		}
	}
	rec, err := ReadRecord(opts)
	if err != nil {
		return p, "", err
	}
	if rec.Hooks == nil {
		rec.Hooks = map[string]HookReceipt{}
	}
	r, ok := rec.Hooks[p]
	if !ok || !existed || r.After != sum(src) {
		r = HookReceipt{Existed: existed}
		if existed {
			r.Before = src
		}
	}
	r.After = sum(out)
	rec.Hooks[p] = r
	// The receipt first: a run killed after it leaves a file RemoveHooks still knows.
	if err := rec.save(opts); err != nil {
		return p, "", err
	}
	if err := w.WriteFile(p, out); err != nil {
		return p, "", fmt.Errorf("agent hooks: write %s: %w", p, err)
	}
	return p, HookAdded, nil
}

// RemoveHooks removes ctx's hooks (every event's) from client's settings file: while the file is byte
// for byte what InstallHooks wrote, it gets back exactly the bytes it had before (or is deleted when
// Install created it); otherwise only ctx's hooks go (an entry left with no hook goes too) and the rest
// stays.
func RemoveHooks(opts Options, client string, scope HookScope) (string, HookAction, error) {
	p, hc, err := hookSettingsPath(client, scope)
	if err != nil {
		return "", "", err
	}
	unlock, err := lockRecord(context.Background(), opts)
	if err != nil {
		return p, "", err
	}
	defer unlock()
	w, err := wtfs.Open(opts.Root)
	if err != nil {
		return p, "", err
	}
	defer w.Close()
	src, err := w.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return p, HookAbsent, nil
	}
	if err != nil {
		return p, "", fmt.Errorf("agent hooks: read %s: %w", p, err)
	}
	rec, err := ReadRecord(opts)
	if err != nil {
		return p, "", err
	}
	if r, ok := rec.Hooks[p]; ok && r.After == sum(src) {
		if r.Existed {
			err = w.WriteFile(p, r.Before)
		} else {
			err = w.Remove(p, path.Dir(p)) // the file only; its folder stays
		}
		if err != nil {
			return p, "", fmt.Errorf("agent hooks: restore %s: %w", p, err)
		}
		delete(rec.Hooks, p)
		return p, HookRestored, rec.save(opts)
	}
	out, removed := src, false
	for _, hs := range hc.hooks {
		sh, v, err := readShape(out, hs.event, hs.command)
		if err != nil {
			return p, "", fmt.Errorf("agent hooks: %s: %w", p, err)
		}
		if len(sh.ours) == 0 {
			continue
		}
		var ops []any
		for k := len(sh.ours) - 1; k >= 0; k-- {
			i, j := sh.ours[k][0], sh.ours[k][1]
			var entry struct {
				Hooks []json.RawMessage `json:"hooks"`
			}
			_ = json.Unmarshal(sh.entries[i], &entry)
			if len(entry.Hooks) == 1 {
				ops = append(ops, map[string]any{"op": "remove", "path": fmt.Sprintf("/hooks/%s/%d", hs.event, i)})
			} else {
				ops = append(ops, map[string]any{"op": "remove", "path": fmt.Sprintf("/hooks/%s/%d/hooks/%d", hs.event, i, j)})
			}
		}
		patch, _ := json.Marshal(ops)
		if err := v.Patch(patch); err != nil {
			return p, "", fmt.Errorf("agent hooks: %s: %v: %w", p, err, ErrHookSettings)
		}
		out, removed = v.Pack(), true
	}
	if !removed {
		return p, HookAbsent, nil
	}
	if err := w.WriteFile(p, out); err != nil {
		return p, "", fmt.Errorf("agent hooks: write %s: %w", p, err)
	}
	delete(rec.Hooks, p)
	return p, HookRemoved, rec.save(opts)
}

// HookEventState is whether ctx's hook for one event is in a settings file.
type HookEventState struct {
	Event     string `json:"event"`
	Installed bool   `json:"installed"`
}

// HookStatus reports whether ctx's hooks are in client's settings file: HookInstalled (every event's),
// HookPartial (some events' only, as after an install by an older ctx) or HookAbsent; and per event.
// Errors: an unsupported client or scope (ErrBadArgument), ErrHookSettings, I/O.
func HookStatus(opts Options, client string, scope HookScope) (string, HookAction, error) {
	p, act, _, err := HookEvents(opts, client, scope)
	return p, act, err
}

// HookEvents is HookStatus with the state of each event's hook, in the order Install adds them.
func HookEvents(opts Options, client string, scope HookScope) (string, HookAction, []HookEventState, error) {
	p, hc, err := hookSettingsPath(client, scope)
	if err != nil {
		return "", "", nil, err
	}
	w, err := wtfs.Open(opts.Root)
	if err != nil {
		return p, "", nil, err
	}
	defer w.Close()
	src, err := w.ReadFile(p)
	var states []HookEventState
	for _, hs := range hc.hooks {
		states = append(states, HookEventState{Event: hs.event})
	}
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(bytes.TrimSpace(src)) == 0 {
		return p, HookAbsent, states, nil
	}
	if err != nil {
		return p, "", nil, err
	}
	n := 0
	for i, hs := range hc.hooks {
		sh, _, err := readShape(src, hs.event, hs.command)
		if err != nil {
			return p, "", nil, fmt.Errorf("agent hooks: %s: %w", p, err)
		}
		if len(sh.ours) > 0 {
			states[i].Installed = true
			n++
		}
	}
	switch n {
	case 0:
		return p, HookAbsent, states, nil
	case len(hc.hooks):
		return p, HookInstalled, states, nil
	}
	return p, HookPartial, states, nil
}

// marshalIndent renders v as JSON without HTML escaping, indented with prefix and unit, lines ending in
// nl; unit "" renders it on one line.
func marshalIndent(v any, prefix, unit, nl string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(prefix, unit)
	}
	_ = enc.Encode(v)
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if nl != "\n" {
		out = bytes.ReplaceAll(out, []byte("\n"), []byte(nl))
	}
	return out
}

// indentOf splits a node's leading white space "\n    " into its line ending and indentation; ok is
// false when it holds no line break (a one-line layout).
func indentOf(extra []byte) (nl, indent string, ok bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", "", false
	}
	nl = "\n"
	if i > 0 && extra[i-1] == '\r' {
		nl = "\r\n"
	}
	return nl, string(extra[i+1:]), true
}

// addHookEntry adds ctx's entry for hs.event to the settings tree v (shape sh of that event, source src)
// where it belongs, laid out like its siblings (their line breaks and indentation; one line in a one-line file),
// and returns the packed file. Nothing outside the new entry changes.
func addHookEntry(v *hujson.Value, sh *settingsShape, src []byte, hs hookSpec) ([]byte, error) {
	root := v.Value.(*hujson.Object)
	unit := "  "
	nl := "\n"
	if len(root.Members) > 0 {
		if n, ind, ok := indentOf(root.Members[0].Name.BeforeExtra); ok && ind != "" {
			nl, unit = n, ind
		}
	}
	// The node the entry goes into, and the value and path to add.
	var path string
	var val any
	switch {
	case !sh.hasHooks:
		path, val = "/hooks", map[string]any{hs.event: []any{hs.entry()}}
	case !sh.hasEvent:
		path, val = "/hooks/"+hs.event, []any{hs.entry()}
	default:
		path, val = "/hooks/"+hs.event+"/-", hs.entry()
	}
	patch, _ := json.Marshal([]any{map[string]any{"op": "add", "path": path, "value": val}})
	if err := v.Patch(patch); err != nil {
		return nil, err
	}
	// Find the new node and the leading white space of its previous sibling.
	var node *hujson.Value // the new value
	var lead *hujson.Extra // the new node's leading white space (its name's, for a member)
	var sibling []byte
	switch {
	case !sh.hasHooks:
		m := &root.Members[len(root.Members)-1]
		node, lead = &m.Value, &m.Name.BeforeExtra
		if len(root.Members) > 1 {
			sibling = root.Members[len(root.Members)-2].Name.BeforeExtra
			m.Value.BeforeExtra = append(hujson.Extra{}, root.Members[len(root.Members)-2].Value.BeforeExtra...)
		}
	default:
		hooks := memberValue(root, "hooks")
		if hooks == nil {
			return v.Pack(), nil
		}
		obj, ok := hooks.Value.(*hujson.Object)
		if !ok {
			return v.Pack(), nil
		}
		if !sh.hasEvent {
			m := &obj.Members[len(obj.Members)-1]
			node, lead = &m.Value, &m.Name.BeforeExtra
			if len(obj.Members) > 1 {
				sibling = obj.Members[len(obj.Members)-2].Name.BeforeExtra
				m.Value.BeforeExtra = append(hujson.Extra{}, obj.Members[len(obj.Members)-2].Value.BeforeExtra...)
			}
		} else {
			start := memberValue(obj, hs.event)
			arr, ok := start.Value.(*hujson.Array)
			if !ok || len(arr.Elements) == 0 {
				return v.Pack(), nil
			}
			node = &arr.Elements[len(arr.Elements)-1]
			lead = &node.BeforeExtra
			if len(arr.Elements) > 1 {
				sibling = arr.Elements[len(arr.Elements)-2].BeforeExtra
			}
		}
	}
	n, indent, multiline := indentOf(sibling)
	if sibling == nil { // the first member of an empty container: one level in from the file's unit
		multiline = bytes.Contains(src, []byte("\n"))
		n = nl
	}
	if !multiline {
		*lead = hujson.Extra(" ")
		nv, err := hujson.Parse(marshalIndent(val, "", "", nl))
		if err == nil {
			node.Value = nv.Value
		}
		return v.Pack(), nil
	}
	*lead = hujson.Extra(n + indent)
	nv, err := hujson.Parse(marshalIndent(val, indent, unit, n))
	if err != nil {
		return v.Pack(), nil
	}
	node.Value = nv.Value
	return v.Pack(), nil
}

// memberValue returns the value of obj's member name, nil when there is none.
func memberValue(obj *hujson.Object, name string) *hujson.Value {
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			return &obj.Members[i].Value
		}
	}
	return nil
}
