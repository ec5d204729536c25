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

// Agent lifecycle hooks (docs/adapters.md "Agent hooks"): a SessionStart hook in a client's settings
// file that prints the brief public context, so an agent starts with it even without MCP. Installing
// merges one entry into the file and keeps every other byte and every hook of the user's; installing
// again changes nothing; removing gives the file back byte for byte while it is still what Install
// wrote (from a receipt in the Record), else removes only ctx's entry.

// BriefCommand is the shell command the SessionStart hook runs: it prints the brief public context
// (`ctx adapters brief`) and never fails the agent's start, even where ctx is not installed.
const BriefCommand = "command -v ctx >/dev/null 2>&1 && ctx adapters brief || true"

// GeminiBriefCommand is the command of Gemini CLI's SessionStart hook: Gemini reads a hook's standard
// output as JSON only, so it prints {"hookSpecificOutput":{"additionalContext": <brief>}}
// (`ctx adapters brief --format gemini`), or {} where ctx is not installed.
const GeminiBriefCommand = "command -v ctx >/dev/null 2>&1 && ctx adapters brief --format gemini || echo '{}'"

// hookClient is how one client declares its session hooks.
type hookClient struct {
	files   map[HookScope]string // settings file per scope
	def     HookScope            // the scope "" means
	command string
	// matcher selects the SessionStart sources ("" runs on every one): Claude Code's is a regex over
	// startup, resume, clear and compact (a new session, and after /clear and a compaction, when the
	// context was dropped); Gemini CLI matches lifecycle events by exact string, so it has none.
	matcher string
}

// hookClients are the clients whose session hooks are documented: Claude Code
// (https://code.claude.com/docs/en/hooks) and Gemini CLI (https://geminicli.com/docs/hooks/reference).
var hookClients = map[string]hookClient{
	"claude-code": {files: map[HookScope]string{HookLocal: ".claude/settings.local.json", HookProject: ".claude/settings.json"},
		def: HookLocal, command: BriefCommand, matcher: "startup|clear|compact"},
	"gemini": {files: map[HookScope]string{HookProject: ".gemini/settings.json"}, def: HookProject, command: GeminiBriefCommand},
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
	HookInstalled HookAction = "installed" // HookStatus: ctx's entry is there
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

// settingsShape is what ctx reads of a settings file to edit it.
type settingsShape struct {
	hasHooks, hasStart bool
	ours               [][2]int // (entry index, hook index) of ctx's hooks in SessionStart
	entries            []json.RawMessage
}

func readShape(src []byte, command string) (*settingsShape, *hujson.Value, error) {
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
	raw, ok = hooks["SessionStart"]
	if !ok {
		return sh, &v, nil
	}
	sh.hasStart = true
	if err := json.Unmarshal(raw, &sh.entries); err != nil {
		return nil, nil, fmt.Errorf(`"hooks.SessionStart" is not an array: %w`, ErrHookSettings)
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

func (hc hookClient) entry() map[string]any {
	e := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": hc.command}}}
	if hc.matcher != "" {
		e["matcher"] = hc.matcher
	}
	return e
}

// InstallHooks adds ctx's SessionStart hook to client's settings file in opts.Root (creating it when
// missing), keeping every other byte of the file, and records a receipt so that RemoveHooks can restore
// it. It returns the file's path and HookAdded or HookUnchanged. Errors: an unsupported client or scope (ErrBadArgument),
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
		out = append(marshalIndent(map[string]any{"hooks": map[string]any{"SessionStart": []any{hc.entry()}}}, "", "  ", "\n"), '\n')
	} else {
		sh, v, err := readShape(src, hc.command)
		if err != nil {
			return p, "", fmt.Errorf("agent hooks: %s: %w", p, err)
		}
		if len(sh.ours) > 0 {
			return p, HookUnchanged, nil
		}
		if out, err = addHookEntry(v, sh, src, hc); err != nil {
			return p, "", fmt.Errorf("agent hooks: %s: %v: %w", p, err, ErrHookSettings)
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

// RemoveHooks removes ctx's SessionStart hook from client's settings file: while the file is byte for
// byte what InstallHooks wrote, it gets back exactly the bytes it had before (or is deleted when Install
// created it); otherwise only ctx's hooks go (an entry left with no hook goes too) and the rest stays.
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
	sh, v, err := readShape(src, hc.command)
	if err != nil {
		return p, "", fmt.Errorf("agent hooks: %s: %w", p, err)
	}
	if len(sh.ours) == 0 {
		return p, HookAbsent, nil
	}
	var ops []any
	for k := len(sh.ours) - 1; k >= 0; k-- {
		i, j := sh.ours[k][0], sh.ours[k][1]
		var entry struct {
			Hooks []json.RawMessage `json:"hooks"`
		}
		_ = json.Unmarshal(sh.entries[i], &entry)
		if len(entry.Hooks) == 1 {
			ops = append(ops, map[string]any{"op": "remove", "path": fmt.Sprintf("/hooks/SessionStart/%d", i)})
		} else {
			ops = append(ops, map[string]any{"op": "remove", "path": fmt.Sprintf("/hooks/SessionStart/%d/hooks/%d", i, j)})
		}
	}
	patch, _ := json.Marshal(ops)
	if err := v.Patch(patch); err != nil {
		return p, "", fmt.Errorf("agent hooks: %s: %v: %w", p, err, ErrHookSettings)
	}
	if err := w.WriteFile(p, v.Pack()); err != nil {
		return p, "", fmt.Errorf("agent hooks: write %s: %w", p, err)
	}
	delete(rec.Hooks, p)
	return p, HookRemoved, rec.save(opts)
}

// HookStatus reports whether ctx's SessionStart hook is in client's settings file: HookInstalled or
// HookAbsent.
func HookStatus(opts Options, client string, scope HookScope) (string, HookAction, error) {
	p, hc, err := hookSettingsPath(client, scope)
	if err != nil {
		return "", "", err
	}
	w, err := wtfs.Open(opts.Root)
	if err != nil {
		return p, "", err
	}
	defer w.Close()
	src, err := w.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(bytes.TrimSpace(src)) == 0 {
		return p, HookAbsent, nil
	}
	if err != nil {
		return p, "", err
	}
	sh, _, err := readShape(src, hc.command)
	if err != nil {
		return p, "", fmt.Errorf("agent hooks: %s: %w", p, err)
	}
	if len(sh.ours) > 0 {
		return p, HookInstalled, nil
	}
	return p, HookAbsent, nil
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

// addHookEntry adds ctx's SessionStart entry to the settings tree v (shape sh, source src) where it
// belongs, laid out like its siblings (their line breaks and indentation; one line in a one-line file),
// and returns the packed file. Nothing outside the new entry changes.
func addHookEntry(v *hujson.Value, sh *settingsShape, src []byte, hc hookClient) ([]byte, error) {
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
		path, val = "/hooks", map[string]any{"SessionStart": []any{hc.entry()}}
	case !sh.hasStart:
		path, val = "/hooks/SessionStart", []any{hc.entry()}
	default:
		path, val = "/hooks/SessionStart/-", hc.entry()
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
		if !sh.hasStart {
			m := &obj.Members[len(obj.Members)-1]
			node, lead = &m.Value, &m.Name.BeforeExtra
			if len(obj.Members) > 1 {
				sibling = obj.Members[len(obj.Members)-2].Name.BeforeExtra
				m.Value.BeforeExtra = append(hujson.Extra{}, obj.Members[len(obj.Members)-2].Value.BeforeExtra...)
			}
		} else {
			start := memberValue(obj, "SessionStart")
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
