package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"
	"time"
)

// StatePath is the ActiveState's path on the branch (docs/format.md).
const StatePath = "state.json"

// ActiveState is the ActiveState record (docs/format.md "Records"; context://state), stored as state.json:
//
//	{"current_task": "...", "blockers": ["..."], "progress": {"auth": "50%"},
//	 "last_agent": "claude-code", "last_machine": "laptop", "updated_at": "2025-05-10T14:30:00Z"}
//
// Blockers and Progress are never null in JSON ([] and {} when empty). Scope is where state.json lives
// (not written to the file).
type ActiveState struct {
	CurrentTask string            `json:"current_task"`
	Blockers    []string          `json:"blockers"`
	Progress    map[string]string `json:"progress"`
	LastAgent   string            `json:"last_agent"`
	LastMachine string            `json:"last_machine"`
	UpdatedAt   string            `json:"updated_at"`
	Scope       Scope             `json:"-"`
}

func (st *ActiveState) normalize() {
	if st.Blockers == nil {
		st.Blockers = []string{}
	}
	if st.Progress == nil {
		st.Progress = map[string]string{}
	}
}

// sameContent reports whether two states have the same task, blockers and progress.
func (st ActiveState) sameContent(o ActiveState) bool {
	st.normalize()
	o.normalize()
	return st.CurrentTask == o.CurrentTask && reflect.DeepEqual(st.Blockers, o.Blockers) && reflect.DeepEqual(st.Progress, o.Progress)
}

// readState reads state.json from the first scope holding it; a missing file is the empty state in the
// public scope (ok false). A state.json that does not decode is a *malformedRecordError, returned with the
// empty state of its scope (ok true, raw nil): a write replaces it (writeOverMalformed).
func readState(ctx context.Context, v *View) (st ActiveState, raw []byte, ok bool, err error) {
	b, sc, err := v.Read(ctx, StatePath)
	if errors.Is(err, fs.ErrNotExist) {
		st = ActiveState{Scope: Public}
		st.normalize()
		return st, nil, false, nil
	}
	if err != nil {
		return st, nil, false, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		st = ActiveState{Scope: sc}
		st.normalize()
		return st, nil, true, &malformedRecordError{path: StatePath, scope: sc, err: err, repair: "ctx state set or ctx state clear"}
	}
	st.Scope = sc
	st.normalize()
	return st, b, true, nil
}

// malformedRecordError is a JSON record that does not decode (a hand edit with plain git, a teammate's
// tool): its path, scope, the decoder's error and the commands that write it again.
type malformedRecordError struct {
	path   string
	scope  Scope
	err    error
	repair string
}

func (e *malformedRecordError) Error() string {
	return fmt.Sprintf("%s (%s scope) is malformed: %v; %s writes it again (docs/format.md \"Records\")",
		e.path, e.scope, e.err, e.repair)
}

func (e *malformedRecordError) Unwrap() error { return e.err }

// writeOverMalformed drops a reader's *malformedRecordError: the write replaces the record (in its
// scope) with nothing kept of it. Other errors are returned.
func writeOverMalformed(err error) error {
	var me *malformedRecordError
	if errors.As(err, &me) {
		return nil
	}
	return err
}

// GetState returns the ActiveState (docs/format.md "Records", context://state). A store without state.json
// returns the empty state (empty task, [] blockers, {} progress), not an error.
func (v *View) GetState(ctx context.Context) (ActiveState, error) {
	st, _, _, err := readState(ctx, v)
	return st, err
}

// StatePatch is the input of UpdateState: a nil field is left alone; a non-nil one replaces the stored
// value (an empty list or map clears it). Progress is replaced as a whole, not merged key by key.
type StatePatch struct {
	CurrentTask *string
	Blockers    *[]string
	Progress    *map[string]string
}

// UpdateState changes only the fields the patch gives (issue: "an omitted field is left alone; an empty
// list clears"), records last_agent and last_machine from s.Actor and updated_at, and writes state.json in
// the scope that holds it (public when new), one commit. When the patch changes nothing (and either there
// is no state.json yet or the same agent and machine wrote last), nothing is written (no commit). Blockers must not be blank and progress
// keys must not be empty.
func (s *Store) UpdateState(ctx context.Context, p StatePatch) (ActiveState, *Committed, error) {
	if err := validFields("state", p); err != nil {
		return ActiveState{}, nil, err
	}
	if p.Blockers != nil {
		for i, b := range *p.Blockers {
			if strings.TrimSpace(b) == "" {
				return ActiveState{}, nil, invalidf("update state: blockers[%d] is empty", i)
			}
		}
	}
	if p.Progress != nil {
		for k := range *p.Progress {
			if strings.TrimSpace(k) == "" {
				return ActiveState{}, nil, invalidf("update state: a progress key is empty")
			}
		}
	}
	var out ActiveState
	op := Op{Name: "state.update", Summary: "update state"}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		old, raw, _, err := readState(ctx, v)
		malformed := err != nil
		if err := writeOverMalformed(err); err != nil {
			return nil, err
		}
		st := old
		if p.CurrentTask != nil {
			st.CurrentTask = *p.CurrentTask
		}
		if p.Blockers != nil {
			st.Blockers = append([]string{}, *p.Blockers...)
		}
		if p.Progress != nil {
			st.Progress = map[string]string{}
			for k, val := range *p.Progress {
				st.Progress[k] = val
			}
		}
		out = old
		if !malformed && st.sameContent(old) && (raw == nil || old.LastAgent == s.Actor.Agent && old.LastMachine == s.Actor.Machine) {
			return nil, nil
		}
		st.LastAgent, st.LastMachine, st.UpdatedAt = s.Actor.Agent, s.Actor.Machine, now()
		out = st
		b, err := marshalKeeping(raw, st)
		if err != nil {
			return nil, err
		}
		ed := Edits{}
		ed.Put(st.Scope, StatePath, b)
		return ed, nil
	})
	if err != nil {
		return ActiveState{}, nil, wrapErr("update state", err)
	}
	return out, c, nil
}

// ClearState resets the ActiveState (empty task, blockers and progress; last_agent/last_machine/updated_at
// of this write) and empties the ephemeral ref refs/ctx/ephemeral (docs/format.md: "emptied by `ctx state
// clear`"): all its files are deleted in one commit on that ref. Nothing is written when the state is
// already empty and the ephemeral ref holds no files.
func (s *Store) ClearState(ctx context.Context) (*Committed, error) {
	op := Op{Name: "state.clear", Summary: "clear state"}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		ed := Edits{}
		files, err := filesUnder(ctx, v, Ephemeral, "")
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			ed.Del(Ephemeral, f)
		}
		old, raw, ok, err := readState(ctx, v)
		malformed := err != nil
		if err := writeOverMalformed(err); err != nil {
			return nil, err
		}
		if ok && old.Scope == Ephemeral {
			// state.json goes with the ephemeral ref; the cleared state is written where new state goes.
			malformed = false
			old, raw = ActiveState{Scope: Public}, nil
			if b, err := v.ReadIn(ctx, Private, StatePath); err == nil {
				old.Scope, raw = Private, b
			} else if b, err := v.ReadIn(ctx, Public, StatePath); err == nil {
				raw = b
			}
			ok = raw != nil
			if ok {
				_ = json.Unmarshal(raw, &old)
			}
		}
		empty := ActiveState{}
		if ok && (malformed || !old.sameContent(empty)) {
			st := ActiveState{LastAgent: s.Actor.Agent, LastMachine: s.Actor.Machine, UpdatedAt: now()}
			st.normalize()
			b, err := marshalKeeping(raw, st)
			if err != nil {
				return nil, err
			}
			ed.Put(old.Scope, StatePath, b)
		}
		return ed, nil
	})
	if err != nil {
		return nil, wrapErr("clear state", err)
	}
	return c, nil
}

// filesUnder lists the files (slash paths) under dir ("" = the root) in one scope, recursively, sorted.
func filesUnder(ctx context.Context, v *View, sc Scope, dir string) ([]string, error) {
	var out []string
	var walk func(d string) error
	walk = func(d string) error {
		es, err := v.r.List(ctx, sc, d)
		if err != nil {
			return err
		}
		for _, e := range es {
			p := e.Name
			if d != "" && d != "." {
				p = path.Join(d, e.Name)
			}
			if e.Dir {
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			out = append(out, p)
		}
		return nil
	}
	if dir == "" {
		dir = "."
	}
	if err := walk(dir); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// jsonField is one key of a JSON object, its value kept as raw JSON.
type jsonField struct {
	Key string
	Val json.RawMessage
}

// jsonObject is a JSON object with its keys in order. ctx uses it to rewrite a record while keeping the
// fields it does not know (docs/format.md: "Readers keep unknown fields").
type jsonObject []jsonField

// MarshalJSON renders the object with its keys in order.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		if len(f.Val) == 0 {
			b.WriteString("null")
		} else {
			b.Write(f.Val)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// parseObject reads a JSON object keeping its keys' order.
func parseObject(b []byte) (jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var o jsonObject
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		o = append(o, jsonField{Key: k, Val: raw})
	}
	return o, nil
}

func (o jsonObject) get(key string) (json.RawMessage, bool) {
	for _, f := range o {
		if f.Key == key {
			return f.Val, true
		}
	}
	return nil, false
}

// set replaces key's value in place, or appends it.
func (o *jsonObject) set(key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	for i, f := range *o {
		if f.Key == key {
			(*o)[i].Val = raw
			return nil
		}
	}
	*o = append(*o, jsonField{Key: key, Val: raw})
	return nil
}

// marshalKeeping renders rec (a struct) with MarshalRecord, followed by the keys of the old record (raw
// JSON, may be nil) that rec does not have, in their old order: unknown fields survive a rewrite.
func marshalKeeping(old []byte, rec any) ([]byte, error) {
	if len(old) == 0 {
		return MarshalRecord(rec)
	}
	oldObj, err := parseObject(old)
	if err != nil {
		return MarshalRecord(rec) // an unreadable old record has nothing to keep
	}
	nb, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	obj, err := parseObject(nb)
	if err != nil {
		return nil, err
	}
	for _, f := range oldObj {
		if _, ok := obj.get(f.Key); !ok {
			obj = append(obj, f)
		}
	}
	return MarshalRecord(obj)
}

// compareTimes orders two timestamps: by instant when both parse as RFC 3339, else as strings.
func compareTimes(a, b string) int {
	ta, ea := time.Parse(time.RFC3339Nano, a)
	tb, eb := time.Parse(time.RFC3339Nano, b)
	if ea == nil && eb == nil {
		return ta.Compare(tb)
	}
	return strings.Compare(a, b)
}

// wrapErr prefixes err with what failed, except a *NotFoundError or an invalid key, which are returned as
// they are so that callers (MCP) can show the not-found text exactly.
func wrapErr(what string, err error) error {
	var nf *NotFoundError
	if err == nil || errors.As(err, &nf) || errors.Is(err, ErrInvalidKey) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}
