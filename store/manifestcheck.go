package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/ctx-dev/ctx/gitstore"
)

// The manifest of a tip ctx did not write: checked before a pull brings it in (CheckIncoming), reported
// by ctx doctor and put back by ctx doctor --fix (docs/security.md "Entry kinds and places: the store layout").
// Every read of the store's project, team and adapters goes through manifest.json, so one that does not
// parse breaks ctx export, ctx team, the MCP resources context://manifest and context://summary,
// get_project_context and the onboarding prompt for the whole team; and a merge cannot merge it field by
// field, so the broken side could win.

// maxManifestBytes bounds the manifest.json ctx reads to check it (1 MiB): a manifest ctx writes is a few
// KiB even with hundreds of members.
const maxManifestBytes = 1 << 20

// parseManifest parses the bytes of manifest.json as ReadManifest reads them: a JSON object whose known
// fields have their types, and whose adapters keys are client names in adapterName's form (docs/format.md
// "Records"). The error says what is wrong, without the path.
func parseManifest(b []byte) (Manifest, error) {
	var m Manifest
	// One parse: into the struct, which refuses anything but an object except null (let through as no
	// field at all).
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		if err := json.Unmarshal(b, &m); err != nil {
			return m, fmt.Errorf("not a JSON object: %w", err)
		}
		return m, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(b, &m); err != nil {
		if _, syntax := errors.AsType[*json.SyntaxError](err); syntax {
			return m, fmt.Errorf("not a JSON object: %w", err)
		}
		return m, fmt.Errorf("not a manifest: %w", err)
	}
	if m.Adapters == nil {
		m.Adapters = map[string]Adapter{}
	}
	// The keys of adapters are client names in adapterName's form, the rule SetAdapters writes by: a
	// fetched manifest's "../../x\u0000y" or "<script>" would otherwise be served by context://manifest
	// as a client of the project.
	for _, k := range slices.Sorted(maps.Keys(m.Adapters)) {
		if !adapterName.Get().MatchString(k) {
			if len(k) > 64 {
				k = k[:64] + "..." // quoted below: no control character reaches a message
			}
			return m, fmt.Errorf("adapters key %q is not a client name (lowercase letters, digits and single underscores, as claude_code)", k)
		}
	}
	if m.Team.Members == nil {
		m.Team.Members = []Member{}
	}
	return m, nil
}

// manifestProblem checks the manifest.json of tree (of commit) unless against holds the same blob: ""
// when it is absent (a tree without one is not a store: checked elsewhere), unchanged or valid, else why
// ctx cannot read it. It reads at most maxManifestBytes.
func (s *Store) manifestProblem(ctx context.Context, tree, against gitstore.Hash) (string, error) {
	h, err := s.repo.PathHash(ctx, tree, ManifestPath)
	if err != nil {
		return "", err
	}
	if h.IsZero() {
		if against.IsZero() {
			return "", nil // not a store: checked elsewhere (RejectedError.NotStore, checkContextTree)
		}
		if old, err := s.repo.PathHash(ctx, against, ManifestPath); err != nil || old.IsZero() {
			return "", err
		}
		return "deleted, and a context store needs it (every command of a teammate who pulls it would stop)", nil
	}
	if !against.IsZero() {
		if old, err := s.repo.PathHash(ctx, against, ManifestPath); err != nil {
			return "", err
		} else if old == h {
			return "", nil
		}
	}
	b, size, err := s.repo.ReadBlobPrefix(ctx, h, maxManifestBytes)
	if err != nil {
		return "", err
	}
	if size > maxManifestBytes {
		return fmt.Sprintf("%d bytes, over the %d bytes ctx reads of a manifest", size, maxManifestBytes), nil
	}
	if _, err := parseManifest(b); err != nil {
		return err.Error(), nil
	}
	return "", nil
}

// manifestRepairKey marks the context of RepairManifest's write: the branch's tip may have no manifest
// (deleted with plain git), which every other write refuses as "not a context store".
type manifestRepairKey struct{}

// repairingManifest reports whether ctx is RepairManifest's.
func repairingManifest(ctx context.Context) bool {
	v, _ := ctx.Value(manifestRepairKey{}).(bool)
	return v
}

// ManifestProblem is a manifest.json on the context branch's tip that ctx cannot read (Diagnosis).
type ManifestProblem struct {
	Commit string `json:"commit"` // the tip
	Reason string `json:"reason"`
	// LastGood is the newest commit on the branch's first-parent line whose manifest.json ctx reads, ""
	// when none was found within maxSafeSearch commits: ctx doctor --fix puts its manifest back.
	LastGood string `json:"last_good,omitempty"`
}

// checkManifest is the ManifestProblem of the context branch's tip, nil when its manifest reads.
func (s *Store) checkManifest(ctx context.Context) (*ManifestProblem, gitstore.Hash, error) {
	tip, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil || tip.IsZero() {
		return nil, gitstore.ZeroHash, err
	}
	tree, err := s.repo.TreeOf(ctx, tip)
	if err != nil {
		return nil, gitstore.ZeroHash, err
	}
	reason, err := s.manifestProblem(ctx, tree, gitstore.ZeroHash)
	if err != nil {
		return nil, gitstore.ZeroHash, err
	}
	if reason == "" {
		if h, err := s.repo.PathHash(ctx, tree, ManifestPath); err != nil || !h.IsZero() {
			return nil, gitstore.ZeroHash, err
		}
		reason = "deleted" // a store only if an earlier commit holds one (LastGood); else not a store at all
	}
	p := &ManifestProblem{Commit: tip.String(), Reason: reason}
	h := tip
	for i := 0; i < maxSafeSearch; i++ {
		c, err := s.repo.Commit(ctx, h)
		if err != nil {
			return nil, gitstore.ZeroHash, err
		}
		if i > 0 {
			if r, err := s.manifestProblem(ctx, c.TreeHash, gitstore.ZeroHash); err != nil {
				return nil, gitstore.ZeroHash, err
			} else if r == "" {
				if mh, err := s.repo.PathHash(ctx, c.TreeHash, ManifestPath); err != nil {
					return nil, gitstore.ZeroHash, err
				} else if !mh.IsZero() {
					p.LastGood = h.String()
					return p, mh, nil
				}
			}
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return p, gitstore.ZeroHash, nil
}

// RepairManifest puts back, in one commit, the manifest.json of the newest commit whose manifest ctx
// reads (ManifestProblem.LastGood) when the tip's does not read; nil when there was nothing to repair.
// An error when there is no such commit: the manifest must then be written by hand (docs/format.md).
func (s *Store) RepairManifest(ctx context.Context) (*Committed, *ManifestProblem, error) {
	p, blob, err := s.checkManifest(ctx)
	if err != nil || p == nil {
		return nil, nil, err
	}
	if blob.IsZero() {
		return nil, p, invalidf("%s of %s cannot be read (%s) and no earlier commit holds one that can: write it by hand", ManifestPath, s.cfg.Branch, p.Reason)
	}
	good, err := s.repo.ReadBlob(ctx, blob)
	if err != nil {
		return nil, p, err
	}
	op := Op{Name: "doctor.fix", Summary: fmt.Sprintf("put back %s of %.12s (the tip's cannot be read)", ManifestPath, p.LastGood)}
	c, err := s.Write(context.WithValue(ctx, manifestRepairKey{}, true), op, func(v *View) (Edits, error) {
		e := Edits{}
		e.Put(Public, ManifestPath, good)
		return e, nil
	})
	return c, p, err
}
