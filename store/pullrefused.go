package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
)

// PullRefused is what the last pull of a remote that refused the remote's tip recorded
// (.git/ctx/pull-refused.json, local): the remote-tracking ref stayed where it was, so ahead/behind are
// counted against what was last accepted, not against the remote. A fetch of that remote that moves
// (or confirms) its tracking ref removes the record. `ctx status` shows it (docs/sync.md).
type PullRefused struct {
	Remote string `json:"remote"`
	Tip    string `json:"tip"`    // the remote's tip that was refused ("" when it was not read)
	Reason string `json:"reason"` // the pull's error, at most 512 bytes
	At     string `json:"at"`     // RFC 3339, UTC
}

const pullRefusedFile = "pull-refused.json"

func (s *Store) pullRefusedPath() string {
	return filepath.Join(s.repo.CommonDir(), "ctx", pullRefusedFile)
}

// recordPullRefused records that a pull of remote refused tip (zero: unknown) for err. Best effort: a
// failure to record is a warning, the pull's own error stands.
func (s *Store) recordPullRefused(ctx context.Context, remote string, tip gitstore.Hash, err error) {
	reason := err.Error()
	if len(reason) > 512 {
		reason = reason[:512] + "..."
	}
	r := PullRefused{Remote: remote, Reason: reason, At: time.Now().UTC().Format(time.RFC3339)}
	if !tip.IsZero() {
		r.Tip = tip.String()
	}
	b, jerr := json.Marshal(r)
	if jerr == nil {
		jerr = writeFileAtomic(s.pullRefusedPath(), append(b, '\n'), 0o600)
	}
	if jerr != nil {
		warn(ctx, fmt.Sprintf("could not record the refused pull: %v", jerr))
	}
}

// clearPullRefused removes the record of a refused pull of remote (after a fetch of it was accepted).
func (s *Store) clearPullRefused(remote string) {
	if r, _ := s.LastPullRefused(); r != nil && r.Remote == remote {
		_ = os.Remove(s.pullRefusedPath())
	}
}

// LastPullRefused returns the record of the last refused pull, nil when there is none (or it does not
// parse: it is informative only).
func (s *Store) LastPullRefused() (*PullRefused, error) {
	b, err := os.ReadFile(s.pullRefusedPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", pullRefusedFile, err)
	}
	var r PullRefused
	if json.Unmarshal(b, &r) != nil || r.Remote == "" {
		return nil, nil
	}
	return &r, nil
}
