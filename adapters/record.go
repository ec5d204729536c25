package adapters

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Record is what ctx keeps, per work tree and on this machine only, about the adapters: which clients
// the user enabled and every file ctx wrote with the checksum of what it wrote, so that ctx never touches
// a file (or skill folder) it did not write and tells its own file, left as it was, from one the user
// edited (docs/adapters.md "The record"). It lives in Options.StateDir/adapters/, never in the work
// tree and never on the context branch.
type Record struct {
	Version int    `json:"version"`
	Root    string `json:"root"`
	// Enabled are the clients `ctx adapters enable` turned on; refresh exports only these.
	Enabled []string `json:"enabled,omitempty"`
	// TrackedOK lets a refresh change files git tracks (`--tracked ok`); without it a refresh leaves
	// them and status reports them.
	TrackedOK bool `json:"tracked_ok,omitempty"`
	// Files maps a slash path relative to the work tree to what ctx wrote there.
	Files map[string]FileRecord `json:"files"`
	// Hooks maps an agent settings file (slash path relative to the work tree) to what it held before
	// InstallHooks first changed it.
	Hooks map[string]HookReceipt `json:"hooks,omitempty"`
}

// FileRecord is one file ctx wrote.
type FileRecord struct {
	// SHA256 is the hex SHA-256 of the bytes ctx wrote (empty for an instruction file, whose block
	// carries its own checksum).
	SHA256 string `json:"sha256,omitempty"`
	// Prev is the checksum of the file before an Apply that was under way (recorded before it writes,
	// cleared after): a run killed in between leaves either version, and both count as ctx's.
	Prev string `json:"prev,omitempty"`
	// Created says ctx created the file: removing ctx's block from it deletes it when nothing else is
	// left.
	Created bool `json:"created,omitempty"`
}

const recordVersion = 1

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// recordPath is the record of the work tree root: <stateDir>/adapters/<first 16 hex of sha256(root)>.json.
func recordPath(stateDir, root string) string {
	s := sha256.Sum256([]byte(root))
	return filepath.Join(stateDir, "adapters", hex.EncodeToString(s[:8])+".json")
}

// ReadRecord returns the record of opts' work tree; an empty one when there is none yet. A record that
// cannot be read is an error naming the file (delete it to start again: ctx then treats the files it
// wrote as the user's until they match what it would write).
func ReadRecord(opts Options) (*Record, error) {
	p := recordPath(opts.StateDir, opts.Root)
	r := &Record{Version: recordVersion, Root: opts.Root, Files: map[string]FileRecord{}}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("adapters: read the record %s: %w", p, err)
	}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("adapters: the record %s is not valid JSON (%v): delete it to start again", p, err)
	}
	if r.Root != opts.Root {
		return nil, fmt.Errorf("adapters: the record %s belongs to %s, not %s", p, r.Root, opts.Root)
	}
	if r.Files == nil {
		r.Files = map[string]FileRecord{}
	}
	return r, nil
}

// save writes the record atomically.
func (r *Record) save(opts Options) error {
	p := recordPath(opts.StateDir, opts.Root)
	slices.Sort(r.Enabled)
	r.Enabled = slices.Compact(r.Enabled)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("adapters: save the record: %w", err)
	}
	if err := writeAtomic(p, append(b, '\n')); err != nil {
		return fmt.Errorf("adapters: save the record: %w", err)
	}
	return nil
}

// writeAtomic writes a file outside the work tree (the record) atomically.
func writeAtomic(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// SetEnabled turns clients on or off for refresh in opts' work tree and saves the record.
func SetEnabled(opts Options, on bool, clients ...string) (*Record, error) {
	if _, err := Lookup(clients...); err != nil {
		return nil, err
	}
	unlock, err := lockRecord(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := ReadRecord(opts)
	if err != nil {
		return nil, err
	}
	for _, c := range clients {
		if on {
			r.Enabled = append(r.Enabled, c)
		} else {
			r.Enabled = slices.DeleteFunc(r.Enabled, func(s string) bool { return s == c })
		}
	}
	return r, r.save(opts)
}

// SetTrackedOK sets whether a refresh may change files git tracks (`--tracked ok`) and saves the record.
func SetTrackedOK(opts Options, ok bool) error {
	unlock, err := lockRecord(context.Background(), opts)
	if err != nil {
		return err
	}
	defer unlock()
	r, err := ReadRecord(opts)
	if err != nil {
		return err
	}
	r.TrackedOK = ok
	return r.save(opts)
}

// lockRecord takes the lock that serialises the adapters' writes in one work tree (exports, refreshes
// from hooks, agent hook installs): <StateDir>/adapters/<hash>.lock, waiting while ctx is not cancelled.
// It returns the unlock function.
func lockRecord(ctx context.Context, opts Options) (func(), error) {
	p := strings.TrimSuffix(recordPath(opts.StateDir, opts.Root), ".json") + ".lock"
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("adapters: lock: %w", err)
	}
	fl := flock.New(p)
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("adapters: lock %s: %w", p, errors.Join(err, ctx.Err()))
	}
	return func() { _ = fl.Unlock() }, nil
}
