package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/merge"
)

// HistoryDir holds one SessionSummary per session (docs/format.md "Layout for growth":
// history/YYYY/MM/<session-id>.json, or history/<session-id>.json in a store of LayoutFlat).
const HistoryDir = "history"

// SessionSummary is the SessionSummary record (docs/format.md "Records"; context://history), stored as
// history/YYYY/MM/<id>.json (month of started; history/<id>.json in a store of LayoutFlat):
//
//	{"id": "a1b2...", "agent": "claude-code", "user": "", "machine": "", "started": "2025-05-10T14:00:00Z",
//	 "ended": null, "summary": "...", "knowledge_added": ["tech-stack"], "decisions_added": ["3"],
//	 "skills_used": ["run-tests"]}
//
// Ended is null until the session is ended; the list fields are never null ([] when empty).
type SessionSummary struct {
	ID             string   `json:"id"`
	Agent          string   `json:"agent"`
	User           string   `json:"user"`
	Machine        string   `json:"machine"`
	Started        string   `json:"started"`
	Ended          *string  `json:"ended"`
	Summary        string   `json:"summary"`
	KnowledgeAdded []string `json:"knowledge_added"`
	DecisionsAdded []string `json:"decisions_added"`
	SkillsUsed     []string `json:"skills_used"`
	Scope          Scope    `json:"-"`
}

func (ss *SessionSummary) normalize() {
	if ss.KnowledgeAdded == nil {
		ss.KnowledgeAdded = []string{}
	}
	if ss.DecisionsAdded == nil {
		ss.DecisionsAdded = []string{}
	}
	if ss.SkillsUsed == nil {
		ss.SkillsUsed = []string{}
	}
}

func sessionMissing(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Session '%s' not found", id)}
}

// SessionUpdate is the input of StartSession and AppendSession. ID "" makes a new random UUID. Agent ""
// is s.Actor.Agent. Summary, when not empty, replaces the summary. The list fields are appended to the
// session's lists, skipping values already there (and empty strings).
type SessionUpdate struct {
	ID             string
	Agent          string
	Summary        string
	KnowledgeAdded []string
	DecisionsAdded []string
	SkillsUsed     []string
}

// readSession reads a session from the first scope holding it, with the names of its private companion
// merged into its lists (see sessionNames); raw is the record's own file, nil when absent.
func readSession(ctx context.Context, v *View, id string) (SessionSummary, []byte, error) {
	r, err := readSessionParts(ctx, v, id)
	return r.merged(), r.raw, err
}

// PrivateNamesDir holds, on the private ref, the companion of each public session record that names
// private or ephemeral entries: history/.private/<session-id>.json (docs/format.md, "Sessions").
const PrivateNamesDir = HistoryDir + "/.private"

func privateNamesPath(id string) string { return PrivateNamesDir + "/" + id + ".json" }

// sessionNames is a session record's private companion: the names of private and ephemeral entries that
// the session's lists hold, kept on the private ref because a public record must not show anything about a
// private entry, its name included (docs/security.md). Readers merge it into the record's lists.
type sessionNames struct {
	ID             string   `json:"id"`
	KnowledgeAdded []string `json:"knowledge_added"`
	DecisionsAdded []string `json:"decisions_added"`
	SkillsUsed     []string `json:"skills_used"`
}

func (n sessionNames) empty() bool {
	return len(n.KnowledgeAdded)+len(n.DecisionsAdded)+len(n.SkillsUsed) == 0
}

// sessionParts is a session record as stored: the record itself and its private companion.
type sessionParts struct {
	ss      SessionSummary // the record, its lists as stored in it
	raw     []byte         // the record's file; nil when absent
	path    string         // where the record is (either layout); "" when absent
	priv    sessionNames   // the companion
	privRaw []byte         // the companion's file; nil when absent
}

// merged is the record with the companion's names appended to its lists.
func (p sessionParts) merged() SessionSummary {
	ss := p.ss
	ss.KnowledgeAdded = appendNew(append([]string{}, ss.KnowledgeAdded...), p.priv.KnowledgeAdded)
	ss.DecisionsAdded = appendNew(append([]string{}, ss.DecisionsAdded...), p.priv.DecisionsAdded)
	ss.SkillsUsed = appendNew(append([]string{}, ss.SkillsUsed...), p.priv.SkillsUsed)
	return ss
}

func readSessionParts(ctx context.Context, v *View, id string) (sessionParts, error) {
	p, b, sc, err := findSession(ctx, v, id)
	if err != nil || p == "" {
		return sessionParts{}, err
	}
	return sessionPartsOf(ctx, v, id, p, b, sc)
}

// readSessionAt reads the session record at path p (of either layout) with its companion.
func readSessionAt(ctx context.Context, v *View, id, p string) (sessionParts, error) {
	b, sc, err := v.Read(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return sessionParts{}, nil
	}
	if err != nil {
		return sessionParts{}, err
	}
	return sessionPartsOf(ctx, v, id, p, b, sc)
}

func sessionPartsOf(ctx context.Context, v *View, id, path string, b []byte, sc Scope) (sessionParts, error) {
	var p sessionParts
	if err := json.Unmarshal(b, &p.ss); err != nil {
		return p, fmt.Errorf("%s: %w", path, err)
	}
	if p.ss.ID == "" {
		p.ss.ID = id
	}
	p.ss.Scope, p.raw, p.path = sc, b, path
	p.ss.normalize()
	if pb, err := v.ReadIn(ctx, Private, privateNamesPath(id)); err == nil {
		if json.Unmarshal(pb, &p.priv) == nil {
			p.privRaw = pb
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return p, err
	}
	return p, nil
}

// splitPrivateNames returns the names of ss's lists that name an entry held only by the private or
// ephemeral scope (they go to the companion), and ss with those names removed.
func (s *Store) splitPrivateNames(ctx context.Context, v *View, ss SessionSummary) (SessionSummary, sessionNames, error) {
	priv := sessionNames{ID: ss.ID}
	var decisions []Decision
	split := func(list []string, private func(string) (bool, error)) (pub, hidden []string, err error) {
		pub, hidden = []string{}, []string{}
		for _, name := range list {
			p, err := private(name)
			if err != nil {
				return nil, nil, err
			}
			if p {
				hidden = append(hidden, name)
			} else {
				pub = append(pub, name)
			}
		}
		return pub, hidden, nil
	}
	onlyPrivate := func(paths ...string) (bool, error) {
		found := false
		for _, p := range paths {
			for _, sc := range Scopes {
				_, err := v.ReadIn(ctx, sc, p)
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return false, err
				}
				if sc == Public {
					return false, nil
				}
				found = true
			}
		}
		return found, nil
	}
	var err error
	if ss.KnowledgeAdded, priv.KnowledgeAdded, err = split(ss.KnowledgeAdded, func(k string) (bool, error) {
		if ValidKey(k) != nil {
			return false, nil
		}
		return onlyPrivate(KnowledgeKind.path(k), ConventionKind.path(k))
	}); err != nil {
		return ss, priv, err
	}
	if ss.SkillsUsed, priv.SkillsUsed, err = split(ss.SkillsUsed, func(k string) (bool, error) {
		if ValidKey(k) != nil {
			return false, nil
		}
		return onlyPrivate(skillPath(k))
	}); err != nil {
		return ss, priv, err
	}
	if ss.DecisionsAdded, priv.DecisionsAdded, err = split(ss.DecisionsAdded, func(ref string) (bool, error) {
		if decisions == nil {
			if decisions, err = v.ListDecisions(ctx); err != nil {
				return false, err
			}
		}
		found := false
		for _, d := range decisions {
			if strconv.Itoa(d.ID) == strings.TrimSpace(ref) || d.Title == ref {
				if d.Scope == Public {
					return false, nil
				}
				found = true
			}
		}
		return found, nil
	}); err != nil {
		return ss, priv, err
	}
	return ss, priv, nil
}

// GetSession reads one session; *NotFoundError "Session 'x' not found" when absent.
func (v *View) GetSession(ctx context.Context, id string) (SessionSummary, error) {
	if err := normKey(&id); err != nil {
		return SessionSummary{}, fmt.Errorf("session id: %w", err)
	}
	ss, raw, err := readSession(ctx, v, id)
	if err != nil {
		return SessionSummary{}, err
	}
	if raw == nil {
		return SessionSummary{}, sessionMissing(id)
	}
	return ss, nil
}

// ListSessions lists the sessions of every scope ordered by started (docs/format.md "Records"),
// then id. Files that are not valid JSON are skipped.
func (v *View) ListSessions(ctx context.Context) ([]SessionSummary, error) {
	files, err := sessionFiles(ctx, v)
	if err != nil {
		return nil, err
	}
	out := []SessionSummary{}
	for id, path := range files {
		p, err := readSessionAt(ctx, v, id, path)
		if err != nil {
			var se *json.SyntaxError
			var te *json.UnmarshalTypeError
			if errors.As(err, &se) || errors.As(err, &te) {
				continue
			}
			return nil, err
		}
		if p.raw == nil {
			continue
		}
		out = append(out, p.merged())
	}
	sort.SliceStable(out, func(i, j int) bool {
		if c := compareTimes(out[i].Started, out[j].Started); c != 0 {
			return c < 0
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// StartSession records a new session (one commit): started now, user = the git identity's name, machine
// = s.Actor.Machine. It is an error when a session with that id exists (use AppendSession to update).
func (s *Store) StartSession(ctx context.Context, in SessionUpdate) (SessionSummary, *Committed, error) {
	return s.writeSession(ctx, in, true)
}

// AppendSession starts the session when it does not exist, else updates it: Summary replaces the summary
// when given; knowledge_added, decisions_added and skills_used get the new values appended without
// duplicates. One commit; none when nothing changes.
func (s *Store) AppendSession(ctx context.Context, in SessionUpdate) (SessionSummary, *Committed, error) {
	return s.writeSession(ctx, in, false)
}

func (s *Store) writeSession(ctx context.Context, in SessionUpdate, mustBeNew bool) (SessionSummary, *Committed, error) {
	started := ""
	if in.ID == "" {
		var err error
		if in.ID, started, err = newSessionID(); err != nil {
			return SessionSummary{}, nil, err
		}
	}
	if err := normKey(&in.ID); err != nil {
		return SessionSummary{}, nil, fmt.Errorf("session id: %w", err)
	}
	if err := validFields("session", in); err != nil {
		return SessionSummary{}, nil, err
	}
	author, err := s.repo.Identity(ctx)
	if err != nil {
		return SessionSummary{}, nil, err
	}
	var out SessionSummary
	op := Op{Name: "session.append", Key: in.ID, Summary: "update session " + in.ID}
	if mustBeNew {
		op = Op{Name: "session.start", Key: in.ID, Summary: "start session " + in.ID}
	}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		parts, err := readSessionParts(ctx, v, in.ID)
		if err != nil {
			return nil, err
		}
		old, raw := parts.merged(), parts.raw
		if raw != nil && mustBeNew {
			return nil, fmt.Errorf("session %q already exists", in.ID)
		}
		ss := old
		if raw == nil {
			if started == "" {
				started = now()
			}
			ss = SessionSummary{ID: in.ID, Agent: s.Actor.Agent, User: author.Name, Machine: s.Actor.Machine, Started: started, Scope: Public}
			ss.normalize()
		}
		ss.KnowledgeAdded = append([]string{}, ss.KnowledgeAdded...)
		ss.DecisionsAdded = append([]string{}, ss.DecisionsAdded...)
		ss.SkillsUsed = append([]string{}, ss.SkillsUsed...)
		if in.Agent != "" && (raw == nil || ss.Agent == "") {
			ss.Agent = in.Agent
		}
		if in.Summary != "" {
			ss.Summary = in.Summary
		}
		ss.KnowledgeAdded = appendNew(ss.KnowledgeAdded, in.KnowledgeAdded)
		ss.DecisionsAdded = appendNew(ss.DecisionsAdded, in.DecisionsAdded)
		ss.SkillsUsed = appendNew(ss.SkillsUsed, in.SkillsUsed)
		out = ss
		if raw != nil && reflect.DeepEqual(ss, old) {
			return nil, nil
		}
		return s.sessionEdits(ctx, v, parts, ss)
	})
	if err != nil {
		return SessionSummary{}, nil, wrapErr("session "+in.ID, err)
	}
	return out, c, nil
}

// EndSession sets a session's ended time (now) and, when summary is not empty, its summary; one commit.
// A session already ended keeps its first ended time. *NotFoundError when the session does not exist.
func (s *Store) EndSession(ctx context.Context, id, summary string) (SessionSummary, *Committed, error) {
	if err := normKey(&id); err != nil {
		return SessionSummary{}, nil, fmt.Errorf("session id: %w", err)
	}
	if err := ValidText("session summary", summary); err != nil {
		return SessionSummary{}, nil, err
	}
	var out SessionSummary
	op := Op{Name: "session.end", Key: id, Summary: "end session " + id}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		parts, err := readSessionParts(ctx, v, id)
		if err != nil {
			return nil, err
		}
		old, raw := parts.merged(), parts.raw
		if raw == nil {
			return nil, sessionMissing(id)
		}
		ss := old
		if ss.Ended == nil {
			t := now()
			ss.Ended = &t
		}
		if summary != "" {
			ss.Summary = summary
		}
		out = ss
		if reflect.DeepEqual(ss, old) {
			return nil, nil
		}
		return s.sessionEdits(ctx, v, parts, ss)
	})
	if err != nil {
		return SessionSummary{}, nil, wrapErr("end session "+id, err)
	}
	return out, c, nil
}

// sessionEdits writes session record ss (lists merged with the companion's) over parts: a public record
// gets the names of public entries, and the names of entries held only by the private or ephemeral scope
// go to its private companion (written, updated or deleted as needed); a private or ephemeral record keeps
// them all.
func (s *Store) sessionEdits(ctx context.Context, v *View, parts sessionParts, ss SessionSummary) (Edits, error) {
	ed := Edits{}
	layout, err := v.Layout(ctx)
	if err != nil {
		return nil, err
	}
	// A store of LayoutFlat keeps each record where it is (new ones flat, so that teammates' older ctx
	// reads them); a sharded store writes history/YYYY/MM/<id>.json and moves a flat record there.
	path := parts.path
	if path == "" || layout >= LayoutSharded {
		path = merge.SessionPath(ss.ID, ss.Started, layout >= LayoutSharded)
	}
	moved := parts.path != "" && parts.path != path
	if moved {
		ed.Del(ss.Scope, parts.path)
	}
	rec, priv := ss, sessionNames{ID: ss.ID}
	if ss.Scope == Public {
		var err error
		if rec, priv, err = s.splitPrivateNames(ctx, v, ss); err != nil {
			return nil, err
		}
	}
	b, err := marshalKeeping(parts.raw, rec)
	if err != nil {
		return nil, err
	}
	if moved || !bytes.Equal(b, parts.raw) {
		ed.Put(ss.Scope, path, b)
	}
	switch {
	case priv.empty() && parts.privRaw != nil:
		ed.Del(Private, privateNamesPath(ss.ID))
	case !priv.empty():
		pb, err := marshalKeeping(parts.privRaw, priv)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(pb, parts.privRaw) {
			ed.Put(Private, privateNamesPath(ss.ID), pb)
		}
	}
	return ed, nil
}

// appendNew appends the values of add not yet in list (nor empty), keeping order.
func appendNew(list, add []string) []string {
	seen := map[string]bool{}
	for _, x := range list {
		seen[x] = true
	}
	for _, x := range add {
		if x == "" || seen[x] {
			continue
		}
		seen[x] = true
		list = append(list, x)
	}
	return list
}
