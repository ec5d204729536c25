package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/merge"
	"github.com/google/uuid"
)

// The layouts of the kinds that grow without bound (docs/format.md "Layout for growth").
const (
	// LayoutFlat is the layout of stores made before ctx sharded by date: history/<id>.json and one
	// skills/<name>/.usage.ndjson and .feedback.ndjson per skill. A manifest without "layout" has it.
	LayoutFlat = 1
	// LayoutSharded is history/YYYY/MM/<id>.json and skills/<name>/.usage/YYYY-MM.ndjson,
	// .feedback/YYYY-MM.ndjson. ctx init makes stores with it; ctx migrate moves a store to it.
	LayoutSharded = 2
)

// LayoutField is the manifest.json field that holds the store's layout (absent: LayoutFlat). It is not a
// field of Manifest: context://manifest serves the seed's Manifest shape, and readers keep unknown fields.
const LayoutField = "layout"

// Layout returns the layout the public manifest declares: LayoutSharded when its "layout" is 2 or more,
// else LayoutFlat (no manifest, no field, or a manifest that does not parse). Writers write new records
// in this layout; readers read both.
func (v *View) Layout(ctx context.Context) (int, error) {
	b, err := v.ReadIn(ctx, Public, ManifestPath)
	if errors.Is(err, fs.ErrNotExist) {
		return LayoutFlat, nil
	}
	if err != nil {
		return 0, err
	}
	var m struct {
		Layout int `json:"layout"`
	}
	if json.Unmarshal(b, &m) != nil || m.Layout < LayoutSharded {
		return LayoutFlat, nil
	}
	return LayoutSharded, nil
}

// newSessionID returns a UUID version 7 (RFC 9562) and its time as ctx writes "started": the id's
// first 48 bits are that instant in Unix milliseconds, so the month folder of the record
// (history/YYYY/MM/, month of started) is known from the id alone (sessionMonthOfID).
func newSessionID() (string, string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", "", fmt.Errorf("session id: %w", err)
	}
	t, _ := uuidV7Time(u.String())
	return u.String(), t.UTC().Truncate(time.Second).Format(time.RFC3339), nil
}

// uuidV7Time returns the instant a UUID version 7 carries (its first 48 bits, Unix milliseconds); false
// for any other string.
func uuidV7Time(id string) (time.Time, bool) {
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 || len(id) != 36 {
		return time.Time{}, false
	}
	var b [8]byte
	copy(b[2:], u[:6])
	return time.UnixMilli(int64(binary.BigEndian.Uint64(b[:]))).UTC(), true
}

// sessionCandidates lists where a session record may be, in the order a lookup tries them
// (docs/format.md "Layout for growth"): the month of a UUIDv7 id; this month and the previous one (a
// session is updated and ended soon after it started); the flat path. Only when none holds it does
// findSession look through the month folders, newest first.
func sessionCandidates(id string, at time.Time) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if t, ok := uuidV7Time(id); ok {
		add(merge.SessionPath(id, t.Format(time.RFC3339), true))
	}
	at = at.UTC()
	add(merge.SessionPath(id, at.Format(time.RFC3339), true))
	first := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	add(merge.SessionPath(id, first.AddDate(0, -1, 0).Format(time.RFC3339), true))
	add(merge.SessionPath(id, "", false))
	return out
}

// findSession returns the path, content and scope of session id's record; path "" when no scope holds
// it. The candidates of sessionCandidates come first (at most four path lookups); only an id without a
// date that started before last month costs a look into each month folder, newest first
// (BenchmarkSessionLookup measures both).
func findSession(ctx context.Context, v *View, id string) (string, []byte, Scope, error) {
	tried := map[string]bool{}
	try := func(p string) (string, []byte, Scope, error) {
		tried[p] = true
		b, sc, err := v.Read(ctx, p)
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, "", nil
		}
		if err != nil {
			return "", nil, "", err
		}
		return p, b, sc, nil
	}
	for _, p := range sessionCandidates(id, time.Now()) {
		if q, b, sc, err := try(p); q != "" || err != nil {
			return q, b, sc, err
		}
	}
	months, err := monthFolders(ctx, v)
	if err != nil {
		return "", nil, "", err
	}
	for i := len(months) - 1; i >= 0; i-- {
		p := "history/" + months[i] + "/" + id + ".json"
		if tried[p] {
			continue
		}
		if q, b, sc, err := try(p); q != "" || err != nil {
			return q, b, sc, err
		}
	}
	return "", nil, "", nil
}

// monthFolders lists the YYYY/MM folders of history/ of every scope, oldest first. Folders that are not a
// year of four digits and a month 01..12 (a hand-made "misc/", a name git's fsck refuses) are not read
// (ctx doctor lists what they hold).
func monthFolders(ctx context.Context, v *View) ([]string, error) {
	years, err := v.List(ctx, HistoryDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, y := range years {
		if !y.Dir || !merge.IsYear(y.Name) {
			continue
		}
		months, err := v.List(ctx, HistoryDir+"/"+y.Name)
		if err != nil {
			return nil, err
		}
		for _, m := range months {
			if m.Dir && merge.IsMonth(m.Name) {
				out = append(out, y.Name+"/"+m.Name)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// sessionFiles lists the session records of every scope as id → path: history/<id>.json and
// history/YYYY/MM/<id>.json; an id at both is listed at its sharded path.
func sessionFiles(ctx context.Context, v *View) (map[string]string, error) {
	out := map[string]string{}
	add := func(dir string, sharded bool) error {
		names, err := v.List(ctx, dir)
		if err != nil {
			return err
		}
		for _, n := range names {
			id, ok := strings.CutSuffix(n.Name, ".json")
			if n.Dir || !ok || ValidKey(id) != nil {
				continue
			}
			if _, have := out[id]; have && !sharded {
				continue
			}
			out[id] = dir + "/" + n.Name
		}
		return nil
	}
	months, err := monthFolders(ctx, v)
	if err != nil {
		return nil, err
	}
	for _, m := range months {
		if err := add(HistoryDir+"/"+m, true); err != nil {
			return nil, err
		}
	}
	if err := add(HistoryDir, false); err != nil {
		return nil, err
	}
	return out, nil
}

// skillLogPaths lists the files of one skill log in scope sc: the flat skills/<name>/.<log>.ndjson and
// the month files skills/<name>/.<log>/YYYY-MM.ndjson (other names in that folder are not read).
func skillLogPaths(ctx context.Context, v *View, sc Scope, name, log string) ([]string, error) {
	dir := skillDir(name) + "/." + log
	es, err := v.r.List(ctx, sc, dir)
	if err != nil {
		return nil, err
	}
	out := []string{skillDir(name) + "/." + log + ".ndjson"}
	for _, e := range es {
		if !e.Dir && merge.IsLogMonthFile(e.Name) {
			out = append(out, dir+"/"+e.Name)
		}
	}
	return out, nil
}

// skillLogPath is where a new line of a skill log goes: the month file of its timestamp in a sharded
// store, else the flat log.
func skillLogPath(layout int, name, log, timestamp string) string {
	if layout >= LayoutSharded {
		if m, ok := merge.Month(timestamp); ok {
			return merge.LogMonthPath(skillDir(name), log, m)
		}
	}
	return skillDir(name) + "/." + log + ".ndjson"
}

// MigrateReport says what Migrate moved.
type MigrateReport struct {
	Sessions  int      // session records moved to history/YYYY/MM/
	Logs      int      // flat skill logs split into month files
	Kept      []string // files left where they were, with why (a session whose started does not parse)
	Committed *Committed
}

// Migrate moves the store to LayoutSharded in one write (one commit on each ref that holds old-layout
// files; docs/format.md "Layout for growth"): every history/<id>.json to history/YYYY/MM/<id>.json (month
// of its started), every flat skill log split into month files (merge.SplitLog; lines whose timestamp
// does not parse stay in the flat file), and "layout": 2 in manifest.json. A session whose started does
// not parse stays flat (listed in Kept). Nothing to do: no commit. Teammates who have not migrated keep
// working: the merge treats both layouts as one (docs/merge.md).
func (s *Store) Migrate(ctx context.Context) (MigrateReport, error) {
	var rep MigrateReport
	op := Op{Name: "migrate", Summary: fmt.Sprintf("migrate the store to layout %d (history/YYYY/MM/, skill logs by month)", LayoutSharded)}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		rep = MigrateReport{}
		ed := Edits{}
		for _, sc := range Scopes {
			if err := migrateScope(ctx, v, sc, ed, &rep); err != nil {
				return nil, err
			}
		}
		raw, err := v.ReadIn(ctx, Public, ManifestPath)
		if err != nil {
			return nil, fmt.Errorf("read manifest: %w", err)
		}
		obj, err := parseObject(raw)
		if err != nil {
			return nil, fmt.Errorf("manifest.json: %w", err)
		}
		want := json.RawMessage(fmt.Sprint(LayoutSharded))
		if old, ok := obj.get(LayoutField); !ok || string(old) != string(want) {
			if err := obj.set(LayoutField, LayoutSharded); err != nil {
				return nil, err
			}
			b, err := MarshalRecord(obj)
			if err != nil {
				return nil, err
			}
			ed.Put(Public, ManifestPath, b)
		}
		return ed, nil
	})
	rep.Committed = c
	return rep, wrapErr("migrate", err)
}

func migrateScope(ctx context.Context, v *View, sc Scope, ed Edits, rep *MigrateReport) error {
	names, err := v.r.List(ctx, sc, HistoryDir)
	if err != nil {
		return err
	}
	for _, n := range names {
		id, ok := strings.CutSuffix(n.Name, ".json")
		if n.Dir || !ok || ValidKey(id) != nil {
			continue
		}
		from := HistoryDir + "/" + n.Name
		b, err := v.ReadIn(ctx, sc, from)
		if err != nil {
			return err
		}
		var rec struct {
			Started string `json:"started"`
		}
		_ = json.Unmarshal(b, &rec)
		to := merge.SessionPath(id, rec.Started, true)
		if to == from {
			rep.Kept = append(rep.Kept, from+": its started does not parse as a time")
			continue
		}
		if _, err := v.ReadIn(ctx, sc, to); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			ed.Put(sc, to, b)
		}
		ed.Del(sc, from)
		rep.Sessions++
	}
	skills, err := v.r.List(ctx, sc, "skills")
	if err != nil {
		return err
	}
	for _, sk := range skills {
		if !sk.Dir || ValidKey(sk.Name) != nil {
			continue
		}
		for _, log := range []string{"usage", "feedback"} {
			flat := skillDir(sk.Name) + "/." + log + ".ndjson"
			b, err := v.ReadIn(ctx, sc, flat)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			months, residue := merge.SplitLog(b)
			for m, lines := range months {
				p := merge.LogMonthPath(skillDir(sk.Name), log, m)
				old, err := v.ReadIn(ctx, sc, p)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				if old != nil {
					lines = merge.JoinLogs(old, lines)
				}
				ed.Put(sc, p, lines)
			}
			if residue != nil {
				if len(months) == 0 {
					rep.Kept = append(rep.Kept, flat+": no line has a timestamp that parses")
					continue
				}
				ed.Put(sc, flat, residue)
				rep.Kept = append(rep.Kept, flat+": lines whose timestamp does not parse")
			} else {
				ed.Del(sc, flat)
			}
			rep.Logs++
		}
	}
	return nil
}
