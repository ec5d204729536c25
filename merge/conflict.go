package merge

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Conflict rules, docs/merge.md "both sides changed one field, or overlapping
// lines" and docs/format.md "Conflicts".

// stampKeys are the fields compared, in this order, to pick the winner of a
// conflict: the later value wins. They are read from the front matter of a
// markdown file or the top level of a JSON record (or ndjson line).
var stampKeys = []string{"updated_at", "date", "timestamp"}

// metaKeys describe the write rather than the content (who wrote last, and
// when). When both sides changed a file, these keys are taken together from
// the winner (later updated_at...), present or absent, without a conflict
// record: two edits of the same entry always differ there, nothing of the
// content is lost, and the merged file names one coherent last writer. A
// conflict's lost version keeps the losing side's own metadata, so that
// resolving in its favour does not credit its text to the winner's author.
var metaKeys = map[string]bool{
	"updated_at":   true,
	"author":       true,
	"agent":        true,
	"last_agent":   true,
	"last_machine": true,
	"last_seen":    true,
}

// parseTime accepts RFC 3339 (with or without fraction) and plain dates.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// pickWinner decides which of two different versions wins a conflict. The
// rule never looks at which side is ours: the first stamp key both versions
// carry with two different times decides (later wins); otherwise the
// byte-wise larger content wins. rule describes what was applied; it is
// written in the conflict record.
func pickWinner(a, b []byte, sa, sb map[string]string) (aWins bool, rule string) {
	rule = "larger content wins"
	named := false
	for _, k := range stampKeys {
		va, oka := sa[k]
		vb, okb := sb[k]
		if !oka || !okb {
			continue
		}
		ta, ea := parseTime(va)
		tb, eb := parseTime(vb)
		if !ea || !eb {
			continue
		}
		if !named {
			rule = "later " + k + " wins; ties by larger content"
			named = true
		}
		if !ta.Equal(tb) {
			return ta.After(tb), "later " + k + " wins; ties by larger content"
		}
	}
	return bytes.Compare(a, b) > 0, rule
}

// conflictID is the first 16 hex digits of the sha256 of path, field, base
// and the two versions in byte order, each length-prefixed (8 bytes, big
// endian; a missing base is written as length 2^64-1 with no bytes). No
// clock time and no side goes into it. A lost version that is the deletion
// of the file (lostDeleted) is written after the kept one as length
// 2^64-2 with no bytes.
func conflictID(path, field string, base []byte, baseOK bool, v1, v2 []byte, lostDeleted bool) string {
	if !lostDeleted && bytes.Compare(v1, v2) > 0 {
		v1, v2 = v2, v1
	}
	h := sha256.New()
	var n [8]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	put([]byte(path))
	put([]byte(field))
	if baseOK {
		put(base)
	} else {
		binary.BigEndian.PutUint64(n[:], ^uint64(0))
		h.Write(n[:])
	}
	put(v1)
	if lostDeleted {
		binary.BigEndian.PutUint64(n[:], ^uint64(1))
		h.Write(n[:])
	} else {
		put(v2)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// newConflict builds the conflict of one path. fields lists the conflicting
// fields (see Conflict.Field).
func newConflict(path string, fields []string, base []byte, baseOK bool, kept, lost []byte, rule string) Conflict {
	field := strings.Join(fields, ",")
	c := Conflict{
		ID:    conflictID(path, field, base, baseOK, kept, lost, false),
		Path:  path,
		Field: field,
		Kept:  kept,
		Lost:  lost,
		Rule:  rule,
	}
	if baseOK {
		c.Base = base
		if c.Base == nil {
			c.Base = []byte{}
		}
	}
	return c
}

// conflictRecord is the on-branch form of a conflict (docs/format.md).
type conflictRecord struct {
	ID    string  `json:"id"`
	Path  string  `json:"path"`
	Field string  `json:"field"`
	Base  *string `json:"base"`
	Kept  string  `json:"kept"`
	// Lost is null when the lost version is the deletion of the file.
	Lost *string `json:"lost"`
	Rule string  `json:"rule"`
	// KeptBy and LostBy name the writers of the two versions when known.
	KeptBy *Side `json:"kept_by,omitempty"`
	LostBy *Side `json:"lost_by,omitempty"`
	// Encoding is "base64" when base, kept or lost is not valid UTF-8 (a
	// JSON string cannot hold such bytes); absent otherwise.
	Encoding string `json:"encoding,omitempty"`
}

// RecordPath is the path of a conflict's record: conflicts/<id>.json.
func (c Conflict) RecordPath() string { return "conflicts/" + c.ID + ".json" }

// Record is the conflicts/<id>.json content of c (docs/format.md
// "Conflicts"): two-space indented, final newline. Contents that are not
// valid UTF-8 are written base64 with "encoding": "base64". "lost" is null
// when the lost version is the file's deletion; "kept_by" and "lost_by"
// are written when known.
func (c Conflict) Record() []byte {
	enc := func(b []byte) string { return string(b) }
	r := conflictRecord{ID: c.ID, Path: c.Path, Field: c.Field, Rule: c.Rule}
	if !utf8.Valid(c.Base) || !utf8.Valid(c.Kept) || !utf8.Valid(c.Lost) {
		enc = base64.StdEncoding.EncodeToString
		r.Encoding = "base64"
	}
	if c.Base != nil {
		s := enc(c.Base)
		r.Base = &s
	}
	r.Kept = enc(c.Kept)
	if !c.LostDeleted {
		s := enc(c.Lost)
		r.Lost = &s
	}
	if !c.KeptBy.IsZero() {
		k := c.KeptBy
		r.KeptBy = &k
	}
	if !c.LostBy.IsZero() {
		l := c.LostBy
		r.LostBy = &l
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	_ = e.Encode(r) // cannot fail: strings only
	return buf.Bytes()
}

// ParseRecord decodes a conflicts/<id>.json file written by Conflict.Record (the inverse: base64 contents
// when "encoding" is "base64"). Base is nil when the path did not exist in the merge base; LostDeleted is
// set when "lost" is null. Errors name the record and the field that could not be read.
func ParseRecord(b []byte) (Conflict, error) {
	var r conflictRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return Conflict{}, fmt.Errorf("conflict record: %w", err)
	}
	dec := func(s string) ([]byte, error) { return []byte(s), nil }
	switch r.Encoding {
	case "":
	case "base64":
		dec = base64.StdEncoding.DecodeString
	default:
		return Conflict{}, fmt.Errorf("conflict record %s: unknown encoding %q", r.ID, r.Encoding)
	}
	if r.ID == "" || r.Path == "" {
		return Conflict{}, fmt.Errorf("conflict record without id or path")
	}
	c := Conflict{ID: r.ID, Path: r.Path, Field: r.Field, Rule: r.Rule}
	var err error
	if r.Base != nil {
		if c.Base, err = dec(*r.Base); err != nil {
			return Conflict{}, fmt.Errorf("conflict record %s: base: %w", r.ID, err)
		}
		if c.Base == nil {
			c.Base = []byte{}
		}
	}
	if c.Kept, err = dec(r.Kept); err != nil {
		return Conflict{}, fmt.Errorf("conflict record %s: kept: %w", r.ID, err)
	}
	if r.Lost == nil {
		c.LostDeleted = true
	} else if c.Lost, err = dec(*r.Lost); err != nil {
		return Conflict{}, fmt.Errorf("conflict record %s: lost: %w", r.ID, err)
	}
	if r.KeptBy != nil {
		c.KeptBy = *r.KeptBy
	}
	if r.LostBy != nil {
		c.LostBy = *r.LostBy
	}
	return c, nil
}
