package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// Shared sessions (docs/format.md "Shared sessions", docs/blame.md "Sharing"): `ctx history share` commits
// a redacted record of one agent session to transcripts/YYYY/MM/<ctx session id>.ndjson on the context
// branch, public scope. The record is an .ndjson log: one JSON object a line with "id" and "timestamp",
// the first line the session header; the merge's log rule (union by id, ordered by timestamp then id,
// docs/merge.md) makes two machines' shares of one session the union of their events. The store knows
// the path and the log; the lines' contents are the history package's (history.SharedHeader,
// history.SharedEvent).

// TranscriptsDir is the folder of shared session records.
const TranscriptsDir = "transcripts"

// transcriptIDRe is a ctx session id (a lower-case UUID, docs/history.md "Identity").
var transcriptIDRe = lazyre.New(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// transcriptPathRe is transcripts/YYYY/MM/<id>.ndjson; 0000/00 holds sessions with no recorded time.
var transcriptPathRe = lazyre.New(`^transcripts/(\d{4})/(\d{2})/([0-9a-f-]{36})\.ndjson$`)

// TranscriptPath is the path of session id's record, sharded by the session's start (UTC); a zero start
// is transcripts/0000/00/. The error wraps ErrInvalid for an id that is not a ctx session id.
func TranscriptPath(id string, start time.Time) (string, error) {
	if !transcriptIDRe.Get().MatchString(id) {
		return "", invalidf("shared session: %q is not a ctx session id (a lower-case UUID)", id)
	}
	y, m := 0, 0
	if !start.IsZero() {
		u := start.UTC()
		y, m = u.Year(), int(u.Month())
	}
	if y < 0 || y > 9999 {
		y, m = 0, 0
	}
	return fmt.Sprintf("%s/%04d/%02d/%s.ndjson", TranscriptsDir, y, m, id), nil
}

// transcriptLayout checks a path under transcripts/ (LayoutPath).
func transcriptLayout(p string) error {
	m := transcriptPathRe.Get().FindStringSubmatch(p)
	if m == nil || !transcriptIDRe.Get().MatchString(m[3]) || (m[2] > "12") || ((m[1] == "0000") != (m[2] == "00")) {
		return invalidf("%s: shared sessions are transcripts/YYYY/MM/<ctx session id>.ndjson", p)
	}
	return nil
}

// TranscriptLine is one line of a shared record: its JSON (one object, no newline) with the "id" and
// "timestamp" it is keyed and ordered by.
type TranscriptLine struct {
	ID        string
	Timestamp string // RFC 3339; "" when unknown
	JSON      []byte
}

// EncodeTranscriptLine marshals rec (a struct with "id" and "timestamp" fields) as one line, without
// HTML escaping.
func EncodeTranscriptLine(id, timestamp string, rec any) (TranscriptLine, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return TranscriptLine{}, fmt.Errorf("shared session: encode line %s: %w", id, err)
	}
	return TranscriptLine{ID: id, Timestamp: timestamp, JSON: bytes.TrimSuffix(buf.Bytes(), []byte("\n"))}, nil
}

// TranscriptIDs returns the ids of the lines of the record at p on the public ref (nil when it does not
// exist).
func (v *View) TranscriptIDs(ctx context.Context, p string) (map[string]bool, error) {
	b, err := v.ReadIn(ctx, Public, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, l := range splitKeepNL(b) {
		var k logKey
		if json.Unmarshal(l, &k) == nil && k.ID != "" {
			ids[k.ID] = true
		}
	}
	return ids, nil
}

// ShareResult is what ShareTranscript wrote.
type ShareResult struct {
	Path     string `json:"path"`
	Added    int    `json:"added"`    // lines added (the header counts when the record is new)
	Existing int    `json:"existing"` // lines the record held already, kept byte for byte
	Commit   string `json:"commit,omitempty"`
}

// ShareTranscript adds to the record at p (TranscriptPath) the lines whose id it does not hold yet, in one
// commit on the public ref (Ctx-Op transcript.share, Ctx-Key the session id): the log is append-only by
// id, existing lines are never rewritten, and lines are ordered by timestamp then id. Nothing new: no
// commit. Every line must be one JSON object with a non-empty id (ErrInvalid otherwise); the public-write
// secret check applies (a *SecretError refuses the whole write).
func (s *Store) ShareTranscript(ctx context.Context, p, sessionID string, lines []TranscriptLine) (ShareResult, *Committed, error) {
	res := ShareResult{Path: p}
	if err := transcriptLayout(p); err != nil {
		return res, nil, err
	}
	for _, l := range lines {
		var k logKey
		if l.ID == "" || bytes.ContainsAny(l.JSON, "\n\r") || json.Unmarshal(l.JSON, &k) != nil || k.ID != l.ID {
			return res, nil, invalidf("shared session %s: line %q is not one JSON object with its id", sessionID, l.ID)
		}
	}
	op := Op{Name: "transcript.share", Key: sessionID, Summary: "share session " + sessionID}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		old, err := v.ReadIn(ctx, Public, p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		type entry struct {
			key logKey
			raw []byte
		}
		var all []entry
		have := map[string]bool{}
		for _, l := range splitKeepNL(old) {
			var k logKey
			_ = json.Unmarshal(l, &k)
			have[k.ID] = true
			all = append(all, entry{k, bytes.TrimSuffix(l, []byte("\n"))})
		}
		res.Existing, res.Added = len(all), 0
		for _, l := range lines {
			if have[l.ID] {
				continue
			}
			have[l.ID] = true
			all = append(all, entry{logKey{ID: l.ID, Timestamp: l.Timestamp}, l.JSON})
			res.Added++
		}
		if res.Added == 0 {
			return Edits{}, nil
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].key.less(all[j].key) })
		var buf bytes.Buffer
		for _, e := range all {
			buf.Write(e.raw)
			buf.WriteByte('\n')
		}
		ed := Edits{}
		ed.Put(Public, p, buf.Bytes())
		return ed, nil
	})
	if err != nil {
		return res, nil, wrapErr("share session "+sessionID, err)
	}
	if h, ok := c.Commits[Public]; ok {
		res.Commit = h.String()
	}
	return res, c, nil
}

// SharedTranscript is a shared session record on the public ref.
type SharedTranscript struct {
	Path      string
	SessionID string
	Blob      string // the blob's object id: unchanged blob, unchanged record
}

// SharedTranscripts lists the records under transcripts/ on the public ref (paths outside the layout
// are skipped), ordered by path.
func (v *View) SharedTranscripts(ctx context.Context) ([]SharedTranscript, error) {
	rr, ok := v.r.(*RefReader)
	if !ok {
		return nil, fmt.Errorf("shared sessions: listed from the refs only")
	}
	var out []SharedTranscript
	years, err := rr.List(ctx, Public, TranscriptsDir)
	if err != nil {
		return nil, err
	}
	for _, y := range years {
		if !y.Dir {
			continue
		}
		months, err := rr.List(ctx, Public, TranscriptsDir+"/"+y.Name)
		if err != nil {
			return nil, err
		}
		for _, m := range months {
			if !m.Dir {
				continue
			}
			dir := TranscriptsDir + "/" + y.Name + "/" + m.Name
			files, err := rr.List(ctx, Public, dir)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				p := dir + "/" + f.Name
				if f.Dir || transcriptLayout(p) != nil {
					continue
				}
				out = append(out, SharedTranscript{Path: p, SessionID: f.Name[:len(f.Name)-len(".ndjson")], Blob: f.Hash.String()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
