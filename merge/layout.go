package merge

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The date-sharded layout of the kinds that grow without bound (docs/format.md "Layout for growth"):
//
//	history/<id>.json                      flat (layout 1)  ==  history/YYYY/MM/<id>.json (layout 2, month of "started")
//	skills/<n>/.usage.ndjson               flat (layout 1)  ==  skills/<n>/.usage/YYYY-MM.ndjson (month of each line's "timestamp")
//	skills/<n>/.feedback.ndjson            flat (layout 1)  ==  skills/<n>/.feedback/YYYY-MM.ndjson
//
// Both layouts hold the same entries, so a teammate who has not migrated merges with one who has: before
// the path-by-path merge, Tree moves each session to one path on every side (canonicalize) and splits a
// flat log into month files when any side holds month files (docs/merge.md "Two layouts, one entry").

var (
	// monthFolder matches the YYYY/MM folders of history/: a year of four digits, a month 01 to 12.
	yearName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{4}$`) })
	monthName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(0[1-9]|1[0-2])$`) })
	// logMonthFile matches a month file of a sharded skill log.
	logMonthFile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])\.ndjson$`) })
)

// IsYear reports whether name is a year folder of history/ ("2026").
func IsYear(name string) bool { return yearName().MatchString(name) }

// IsMonth reports whether name is a month folder of history/YYYY/ ("01" to "12").
func IsMonth(name string) bool { return monthName().MatchString(name) }

// IsLogMonthFile reports whether name is a month file of a sharded skill log ("2026-11.ndjson").
func IsLogMonthFile(name string) bool { return logMonthFile().MatchString(name) }

// Month returns the UTC month of a timestamp as "YYYY/MM", false when it does not parse (RFC 3339 with or
// without fraction, or a plain date; the same rule as the conflict winner's) or its year is not 1..9999.
func Month(ts string) (string, bool) {
	t, ok := parseTime(ts)
	if !ok {
		return "", false
	}
	t = t.UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return "", false
	}
	return t.Format("2006/01"), true
}

// SessionPath returns where a session record lives: history/YYYY/MM/<id>.json with the month of started
// when sharded is set and started parses, else history/<id>.json.
func SessionPath(id, started string, sharded bool) string {
	if sharded {
		if m, ok := Month(started); ok {
			return "history/" + m + "/" + id + ".json"
		}
	}
	return "history/" + id + ".json"
}

// SessionID returns the session id of a session record path of either layout, false for any other path
// (history/.private/ included).
func SessionID(p string) (string, bool) {
	parts := strings.Split(p, "/")
	if parts[0] != "history" {
		return "", false
	}
	var name string
	switch {
	case len(parts) == 2:
		name = parts[1]
	case len(parts) == 4 && IsYear(parts[1]) && IsMonth(parts[2]):
		name = parts[3]
	default:
		return "", false
	}
	id, ok := strings.CutSuffix(name, ".json")
	if !ok || id == "" || strings.HasPrefix(id, ".") {
		return "", false
	}
	return id, true
}

// logFlat returns the skill folder and log name ("usage", "feedback") of a flat skill log path.
func logFlat(p string) (dir, log string, ok bool) {
	parts := strings.Split(p, "/")
	if len(parts) != 3 || parts[0] != "skills" {
		return "", "", false
	}
	switch parts[2] {
	case ".usage.ndjson":
		return "skills/" + parts[1], "usage", true
	case ".feedback.ndjson":
		return "skills/" + parts[1], "feedback", true
	}
	return "", "", false
}

// logSharded returns the skill folder and log name of a month file of a sharded skill log.
func logSharded(p string) (dir, log string, ok bool) {
	parts := strings.Split(p, "/")
	if len(parts) != 4 || parts[0] != "skills" || !IsLogMonthFile(parts[3]) {
		return "", "", false
	}
	switch parts[2] {
	case ".usage":
		return "skills/" + parts[1], "usage", true
	case ".feedback":
		return "skills/" + parts[1], "feedback", true
	}
	return "", "", false
}

// LogMonthPath returns the month file of a skill log: skills/<name>/.<log>/YYYY-MM.ndjson, month "YYYY/MM".
func LogMonthPath(skillDir, log, month string) string {
	return skillDir + "/." + log + "/" + strings.Replace(month, "/", "-", 1) + ".ndjson"
}

// SplitLog splits a flat .ndjson log into month files by each line's timestamp (month "YYYY/MM" → lines)
// and the lines whose timestamp does not parse (residue, nil when none). Each month's lines are ordered
// by timestamp, then id, then bytes (the order of docs/format.md "Logs"), end in "\n", and a record id
// seen twice is kept once (the first line). Migration and merge both split with this function, so the
// same log gives the same bytes everywhere.
func SplitLog(b []byte) (months map[string][]byte, residue []byte) {
	months = map[string][]byte{}
	groups := map[string][]ndLine{}
	var rest []ndLine
	for _, l := range logLines(b) {
		m := ""
		if l.obj != nil {
			var s string
			if v, ok := l.obj.vals["timestamp"]; ok && json.Unmarshal(v, &s) == nil {
				m, _ = Month(s)
			}
		}
		if m == "" {
			rest = append(rest, l)
			continue
		}
		groups[m] = append(groups[m], l)
	}
	for m, ls := range groups {
		months[m] = joinLines(ls)
	}
	if len(rest) > 0 {
		residue = joinLines(rest)
	}
	return months, residue
}

// JoinLogs returns the union of .ndjson logs as one log: a record id seen twice is kept once (the first
// one, in argument order), lines ordered as SplitLog orders them.
func JoinLogs(logs ...[]byte) []byte {
	var all []byte
	for _, b := range logs {
		all = append(all, b...)
		if len(all) > 0 && all[len(all)-1] != '\n' {
			all = append(all, '\n')
		}
	}
	return joinLines(logLines(all))
}

// logLines parses the lines of a log, dropping blank lines and repeats of a record id.
func logLines(b []byte) []ndLine {
	var out []ndLine
	seen := map[string]bool{}
	for _, raw := range strings.Split(string(b), "\n") {
		l, key, ok := parseNDLine(raw)
		if !ok {
			continue
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, l)
	}
	return out
}

func joinLines(ls []ndLine) []byte {
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].sortKey() < ls[j].sortKey() })
	var buf bytes.Buffer
	for _, l := range ls {
		buf.WriteString(l.raw)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// canonicalize brings the three sides to one layout per entry before the merge, the same way whichever
// side is ours:
//   - a session that one side holds only at history/<id>.json and another only at
//     history/YYYY/MM/<id>.json is moved on every side to its sharded path (the smallest one, when sides
//     disagree on the month);
//   - a skill log that one side holds only flat (.usage.ndjson) and another only as month files
//     (.usage/YYYY-MM.ndjson) is split into month files (SplitLog) on every side that holds it flat;
//     lines whose timestamp does not parse stay in the flat file.
//
// A side holding an entry in both layouts at once (written by hand) is left as it is, and so is every
// entry all sides hold in the same layout: merging a side with itself or with an unchanged base still
// returns that side.
func canonicalize(base, ours, theirs Files) (Files, Files, Files) {
	sides := []Files{base, ours, theirs}
	const flatBit, shardBit = 1, 2
	// Sessions: id -> the sharded paths it has on any side, and what each side holds.
	sessions := map[string][]string{}
	sessionSides := map[string]*[3]int{}
	// Logs: "dir\x00log" -> what each side holds.
	logSides := map[string]*[3]int{}
	mark := func(m map[string]*[3]int, k string, i, bit int) {
		if m[k] == nil {
			m[k] = &[3]int{}
		}
		m[k][i] |= bit
	}
	for i, f := range sides {
		for p := range f {
			if id, ok := SessionID(p); ok {
				if p == "history/"+id+".json" {
					mark(sessionSides, id, i, flatBit)
				} else {
					mark(sessionSides, id, i, shardBit)
					sessions[id] = append(sessions[id], p)
				}
			}
			if d, l, ok := logSharded(p); ok {
				mark(logSides, d+"\x00"+l, i, shardBit)
			}
			if d, l, ok := logFlat(p); ok {
				mark(logSides, d+"\x00"+l, i, flatBit)
			}
		}
	}
	// disagree: some side holds the entry only flat and another only sharded, and no side holds both.
	disagree := func(h *[3]int) bool {
		onlyFlat, onlyShard := false, false
		for _, x := range h {
			switch x {
			case flatBit | shardBit:
				return false
			case flatBit:
				onlyFlat = true
			case shardBit:
				onlyShard = true
			}
		}
		return onlyFlat && onlyShard
	}
	copied := [3]bool{}
	edit := func(i int) Files {
		if !copied[i] {
			c := make(Files, len(sides[i]))
			for k, v := range sides[i] {
				c[k] = v
			}
			sides[i], copied[i] = c, true
		}
		return sides[i]
	}
	ids := make([]string, 0, len(sessionSides))
	for id, h := range sessionSides {
		if disagree(h) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		sharded := sessions[id]
		sort.Strings(sharded)
		canon, flatPath := sharded[0], "history/"+id+".json"
		for i, f := range sides {
			for _, p := range append([]string{flatPath}, sharded...) {
				if b, ok := f[p]; ok && p != canon {
					e := edit(i)
					delete(e, p)
					e[canon] = b
				}
			}
		}
	}
	keys := make([]string, 0, len(logSides))
	for k, h := range logSides {
		if disagree(h) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		dir, log, _ := strings.Cut(k, "\x00")
		flatPath := dir + "/." + log + ".ndjson"
		for i, f := range sides {
			b, ok := f[flatPath]
			if !ok {
				continue
			}
			months, residue := SplitLog(b)
			if len(months) == 0 {
				continue // nothing to split: the file stays as it is
			}
			e := edit(i)
			for m, lines := range months {
				e[LogMonthPath(dir, log, m)] = lines
			}
			if residue != nil {
				e[flatPath] = residue
			} else {
				delete(e, flatPath)
			}
		}
	}
	return sides[0], sides[1], sides[2]
}
