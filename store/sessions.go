package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"sort"
	"strings"

	"github.com/google/uuid"
)

// HistoryDir holds one SessionSummary per session (docs/format.md: history/<session-id>.json).
const HistoryDir = "history"

// SessionSummary is seed 000's SessionSummary (context://history), stored as history/<id>.json:
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

func sessionPath(id string) string { return HistoryDir + "/" + id + ".json" }

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

// readSession reads a session from the first scope holding it; raw is nil when absent.
func readSession(ctx context.Context, v *View, id string) (SessionSummary, []byte, error) {
	var ss SessionSummary
	b, sc, err := v.Read(ctx, sessionPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return ss, nil, nil
	}
	if err != nil {
		return ss, nil, err
	}
	if err := json.Unmarshal(b, &ss); err != nil {
		return ss, nil, fmt.Errorf("%s: %w", sessionPath(id), err)
	}
	if ss.ID == "" {
		ss.ID = id
	}
	ss.Scope = sc
	ss.normalize()
	return ss, b, nil
}

// GetSession reads one session; *NotFoundError "Session 'x' not found" when absent.
func (s *Store) GetSession(ctx context.Context, v *View, id string) (SessionSummary, error) {
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

// ListSessions lists the sessions of every scope ordered by started (seed 000: "ordered by start time"),
// then id. Files that are not valid JSON are skipped.
func (s *Store) ListSessions(ctx context.Context, v *View) ([]SessionSummary, error) {
	names, err := v.List(ctx, HistoryDir)
	if err != nil {
		return nil, err
	}
	out := []SessionSummary{}
	for _, n := range names {
		id, ok := strings.CutSuffix(n.Name, ".json")
		if n.Dir || !ok {
			continue
		}
		b, err := v.ReadIn(ctx, n.Scope, HistoryDir+"/"+n.Name)
		if err != nil {
			return nil, err
		}
		var ss SessionSummary
		if json.Unmarshal(b, &ss) != nil {
			continue
		}
		if ss.ID == "" {
			ss.ID = id
		}
		ss.Scope = n.Scope
		ss.normalize()
		out = append(out, ss)
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
	if in.ID == "" {
		in.ID = uuid.NewString()
	}
	if err := normKey(&in.ID); err != nil {
		return SessionSummary{}, nil, fmt.Errorf("session id: %w", err)
	}
	author, err := s.Repo.Identity(ctx)
	if err != nil {
		return SessionSummary{}, nil, err
	}
	var out SessionSummary
	op := Op{Name: "session.append", Key: in.ID, Summary: "update session " + in.ID}
	if mustBeNew {
		op = Op{Name: "session.start", Key: in.ID, Summary: "start session " + in.ID}
	}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		old, raw, err := readSession(ctx, v, in.ID)
		if err != nil {
			return nil, err
		}
		if raw != nil && mustBeNew {
			return nil, fmt.Errorf("session %q already exists", in.ID)
		}
		ss := old
		if raw == nil {
			ss = SessionSummary{ID: in.ID, Agent: s.Actor.Agent, User: author.Name, Machine: s.Actor.Machine, Started: now(), Scope: Public}
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
		b, err := marshalKeeping(raw, ss)
		if err != nil {
			return nil, err
		}
		ed := Edits{}
		ed.Put(ss.Scope, sessionPath(ss.ID), b)
		return ed, nil
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
	var out SessionSummary
	op := Op{Name: "session.end", Key: id, Summary: "end session " + id}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		old, raw, err := readSession(ctx, v, id)
		if err != nil {
			return nil, err
		}
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
		b, err := marshalKeeping(raw, ss)
		if err != nil {
			return nil, err
		}
		ed := Edits{}
		ed.Put(ss.Scope, sessionPath(id), b)
		return ed, nil
	})
	if err != nil {
		return SessionSummary{}, nil, wrapErr("end session "+id, err)
	}
	return out, c, nil
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
