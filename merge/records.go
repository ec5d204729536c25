package merge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"path"
)

// Conflict records changed on both sides (docs/merge.md "One conflict recorded twice").
//
// Two machines that merge the same two versions of a file write a record of the same id (conflictID: the
// path, field, base and the two versions), but they may name its writers differently (kept_by, lost_by: each
// machine traces them in its own history, and an older ctx named the merging machine). A record is a
// record, not an entry: merged field by field, those names would conflict and make a conflict record whose
// path is a conflict record, which every pull refuses. So two versions of one record are merged as their
// own kind, never into a Conflict:
//
//   - both describe the same conflict (id, path, field, base, kept, lost): one record is kept, the one
//     naming more writers, else the byte-wise larger;
//   - they describe different conflicts under one file name (a record written by hand): the byte-wise
//     larger one (one that parses before one that does not) keeps the path, the other is kept under the
//     id of its own content (conflictID), so nothing is lost; one that does not parse is dropped, with a
//     note.
//
// Nothing looks at which side is ours.

// isRecordPath reports whether p is a conflict record, conflicts/<name>.json.
func isRecordPath(p string) bool {
	ok, _ := path.Match("conflicts/*.json", p)
	return ok
}

// sameConflict reports whether two parsed records describe the same conflict (their writers apart).
func sameConflict(x, y Conflict) bool {
	return x.ID == y.ID && x.Path == y.Path && x.Field == y.Field && (x.Base == nil) == (y.Base == nil) &&
		bytes.Equal(x.Base, y.Base) && bytes.Equal(x.Kept, y.Kept) && x.LostDeleted == y.LostDeleted &&
		bytes.Equal(x.Lost, y.Lost)
}

// namedSides counts the writers a record names.
func namedSides(c Conflict) int {
	n := 0
	if !c.KeptBy.IsZero() {
		n++
	}
	if !c.LostBy.IsZero() {
		n++
	}
	return n
}

// mergeRecordFile merges two different versions o and t of the conflict record at p (both sides changed it).
// out is the record kept at p; extra, when not nil, is another record to keep at extraPath (a different
// conflict that had the same file name).
func mergeRecordFile(p string, o, t []byte) (out []byte, extraPath string, extra []byte, notes []Note) {
	co, eo := ParseRecord(o)
	ct, et := ParseRecord(t)
	if eo == nil && et == nil && sameConflict(co, ct) {
		no, nt := namedSides(co), namedSides(ct)
		keep := o
		if nt > no || nt == no && bytes.Compare(t, o) > 0 {
			keep = t
		}
		return keep, "", nil, []Note{{Path: p, Kind: "conflict-record",
			Message: "the same conflict recorded on both sides (its writers named differently): one record kept"}}
	}
	// Different conflicts under one name, or a record that does not read.
	win, lose, lc, lerr := o, t, ct, et
	switch {
	case eo != nil && et == nil:
		win, lose, lc, lerr = t, o, co, eo
	case (eo == nil) == (et == nil) && bytes.Compare(t, o) > 0:
		win, lose, lc, lerr = t, o, co, eo
	}
	if lerr != nil {
		return win, "", nil, []Note{{Path: p, Kind: "conflict-record",
			Message: "two different records at this path: the one that does not read as a conflict record was dropped (" + lerr.Error() + ")"}}
	}
	id := conflictID(lc.Path, lc.Field, lc.Base, lc.Base != nil, lc.Kept, lc.Lost, lc.LostDeleted)
	if "conflicts/"+id+".json" == p {
		sum := sha256.Sum256(lose)
		id = hex.EncodeToString(sum[:])[:16]
	}
	lc.ID = id
	return win, lc.RecordPath(), lc.Record(), []Note{{Path: p, Kind: "conflict-record",
		Message: "two different conflicts recorded at this path: the other one is kept as " + lc.RecordPath()}}
}
