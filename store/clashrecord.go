package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/atomicfile"
)

// Clashes as status reports them (docs/security.md "Look-alike keys"): computing them lists the keyed
// folders and reads every decision (9 ms at 1,500 entries, bench/README.md), which ctx status does not pay.
// A clash only reaches the branch from elsewhere (each write and ctx commit refuse one), so the check runs
// after a pull that moved the branch and in ctx doctor (Clashes), which records its result here; Status
// reports the record.

// clashRecordFile holds the clashes found by the last check, in <git common dir>/ctx/: local, never pushed.
const clashRecordFile = "clashes.json"

// maxClashRecord bounds the record read back: a bigger file is ignored (it is ctx's own, but a file of the
// git dir is still checked before use).
const maxClashRecord = 4 << 20

// clashRecord is the content of clashRecordFile: the clashes of the refs at tips (scope -> 40 hex).
type clashRecord struct {
	Tips    map[Scope]string `json:"tips"`
	Clashes []Clash          `json:"clashes"`
}

func (s *Store) clashRecordPath() string { return filepath.Join(s.repo.CtxDir(), clashRecordFile) }

// recordClashes writes the record of a check made at tips. A failure is a warning: the record is a cache.
func (s *Store) recordClashes(ctx context.Context, tips map[Scope]gitstore.Hash, cs []Clash) {
	if cs == nil {
		cs = []Clash{}
	}
	b, err := json.Marshal(clashRecord{Tips: tipStrings(tips), Clashes: cs})
	if err == nil {
		if err = os.MkdirAll(s.repo.CtxDir(), 0o777); err == nil {
			// Atomic, not synced (docs/security.md "Look-alike keys"): a power loss may leave the record old,
			// empty or missing, as a failed write leaves it (a warning); the pull's own warning was printed
			// already, and `ctx doctor` or the next pull that moves the branch records it again.
			err = atomicfile.WriteNoSync(s.clashRecordPath(), append(b, '\n'), 0o644)
		}
	}
	if err != nil {
		warn(ctx, fmt.Sprintf("recording the clashes for ctx status: %v", err))
	}
}

// RecordedClashes returns the clashes that the last check (a pull that moved the branch, ctx doctor)
// found and that still hold, and the public tip the check was made at ("" when no check was recorded:
// ctx doctor makes one). It reads one small file and lstats the clashes' paths, never a tree:
//
//   - when the refs' tips are still those of the check, its clashes as they were;
//   - when they moved since (a write of this machine, which refuses new clashes but may remove one of the
//     clashing entries), the clashes all of whose paths are still in the checked-out tree root (the view
//     Status has just refreshed); root "" keeps them all.
//
// A record that is missing, unreadable, too big or not valid JSON is no record. Paths of the record are
// checked as any path of the branch before they are joined to root.
func (s *Store) RecordedClashes(tips map[Scope]gitstore.Hash, root string) ([]Clash, string) {
	f, err := os.Open(s.clashRecordPath())
	if err != nil {
		return []Clash{}, ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxClashRecord+1))
	var rec clashRecord
	if err != nil || len(b) > maxClashRecord || json.Unmarshal(b, &rec) != nil || len(rec.Tips[Public]) != 40 {
		return []Clash{}, ""
	}
	same := len(rec.Tips) == len(tipStrings(tips))
	for sc, h := range tipStrings(tips) {
		same = same && rec.Tips[sc] == h
	}
	out := []Clash{}
	for _, c := range rec.Clashes {
		if len(c.Paths) < 2 {
			continue
		}
		keep := true
		for _, p := range c.Paths {
			rel := strings.TrimSuffix(p.Path, "/")
			if !fs.ValidPath(rel) || !strings.Contains(rel, "/") {
				keep = false
				break
			}
			if same || root == "" {
				continue
			}
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); errors.Is(err, fs.ErrNotExist) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out, rec.Tips[Public]
}
