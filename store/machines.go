package store

import (
	"context"
	crand "crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
)

// One ref per machine (docs/sync.md "One ref per machine"): every machine pushes its context branch to
// refs/ctx/machines/<machine id> on the remote, a ref only it writes, so its push never races another
// machine's; a pull fetches every machine's ref with the shared branch and merges the tips it does not
// have yet.

// MachineRefPrefix is the folder of the machine refs on a remote: refs/ctx/machines/<machine id>.
const MachineRefPrefix = "refs/ctx/machines/"

// MaxMachineRefs bounds the machine refs a pull takes from one remote: a remote with more is refused
// (nothing is merged, no ref moves), since no team has that many machines and each ref costs a check
// and maybe a merge. docs/sync.md "Pruning" says how to remove the refs of machines gone.
const MaxMachineRefs = 1000

// machineIDFile holds this repository's machine id, in <git common dir>/ctx/: local, never pushed.
const machineIDFile = "machine-id"

// ValidMachineID checks a machine id, the last component of refs/ctx/machines/<id>: 1 to 64 characters
// of [A-Za-z0-9._-], not starting with "-" or "." (git would read an option, or refuse the ref), without
// "..", not ending in ".lock" (git-check-ref-format(1)). Ids of fetched machine refs are checked with it
// before they name a local ref.
func ValidMachineID(id string) error {
	switch {
	case id == "":
		return errors.New("empty machine id")
	case len(id) > 64:
		return fmt.Errorf("machine id %.20q…: longer than 64 characters", id)
	case id[0] == '-' || id[0] == '.':
		return fmt.Errorf("machine id %q: starts with %q", id, id[:1])
	case strings.Contains(id, ".."):
		return fmt.Errorf("machine id %q: contains \"..\"", id)
	case strings.HasSuffix(id, ".lock"):
		return fmt.Errorf("machine id %q: ends with \".lock\"", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("machine id %q: %q is not one of [A-Za-z0-9._-]", id, c)
		}
	}
	return nil
}

// MachineID returns this repository's machine id, made on first use and kept in <git common
// dir>/ctx/machine-id (never pushed; every worktree of the repository shares it): the host name cut to
// [A-Za-z0-9._-] and 40 characters, a "-" and 8 random hex digits, so that two clones on one host differ.
// Two processes making it at once agree: the file is created once (a hard link, which never replaces) and
// read back. A file edited into an invalid id is an error naming it.
func (s *Store) MachineID() (string, error) {
	path := filepath.Join(s.repo.CtxDir(), machineIDFile)
	read := func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		id := strings.TrimSpace(string(b))
		if err := ValidMachineID(id); err != nil {
			return "", fmt.Errorf("%s: %w (remove the file and ctx makes a new id)", path, err)
		}
		return id, nil
	}
	if id, err := read(); !errors.Is(err, fs.ErrNotExist) {
		return id, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return "", fmt.Errorf("machine id: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+machineIDFile+".tmp")
	if err != nil {
		return "", fmt.Errorf("machine id: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(newMachineID(s.Actor.Machine) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = os.Link(f.Name(), path); errors.Is(err, fs.ErrExist) {
			err = nil // another process made it first: its id is the one
		}
	}
	if err != nil {
		return "", fmt.Errorf("machine id: %w", err)
	}
	return read()
}

// newMachineID makes a machine id from the machine's name (host name) and 8 random hex digits.
func newMachineID(host string) string {
	var b strings.Builder
	for _, c := range host {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' {
			b.WriteRune(c)
		}
	}
	name := strings.TrimLeft(strings.ReplaceAll(b.String(), "..", "."), ".-")
	name = strings.TrimRight(name[:min(len(name), 40)], ".")
	if name == "" {
		name = "machine"
	}
	var rnd [4]byte
	_, _ = crand.Read(rnd[:])
	return name + "-" + hex.EncodeToString(rnd[:])
}

// MachineRef is this machine's ref on the remote, refs/ctx/machines/<MachineID>.
func (s *Store) MachineRef() (string, error) {
	id, err := s.MachineID()
	if err != nil {
		return "", err
	}
	return MachineRefPrefix + id, nil
}

// MachinesTrackingPrefix is the local folder where a pull keeps the machine refs it fetched from remote
// (as refs/remotes/ keeps branches; never pushed, never under refs/heads): refs/ctx/remotes/<remote>/
// machines/ for a configured remote, refs/ctx/fetched/<first 12 hex of the SHA-1 of the URL>/machines/ for
// a URL.
func (s *Store) MachinesTrackingPrefix(remote string) string {
	if s.repo.ConfiguredRemote(remote) {
		return "refs/ctx/remotes/" + remote + "/machines/"
	}
	sum := sha1.Sum([]byte(remote))
	return "refs/ctx/fetched/" + hex.EncodeToString(sum[:])[:12] + "/machines/"
}

// MachinesFetchRefspec says, as a git refspec, where a pull keeps the remote's machine refs: every one
// into MachinesTrackingPrefix (ctx fetches only those that moved, by way of quarantine refs: fetchAll).
func (s *Store) MachinesFetchRefspec(remote string) string {
	return "+" + MachineRefPrefix + "*:" + s.MachinesTrackingPrefix(remote) + "*"
}

// remoteTip is one tip a pull takes from the remote: the shared branch or one machine's ref.
type remoteTip struct {
	Ref string        // the remote's ref: refs/heads/ctx, refs/ctx/machines/<id>
	Tip gitstore.Hash // its commit, checked (CheckIncoming)
}

// fetchedTips is what fetchAll brought: the shared branch's tip and the machine refs', checked.
type fetchedTips struct {
	Shared   gitstore.Hash // ZeroHash: the remote has no shared context branch
	Machines []remoteTip   // sorted by machine id; the remote's refs/ctx/machines/* with a valid id
	Warnings []string      // machine refs left out (an invalid id)
	// SharedPruned: the remote has no shared branch, and the remote-tracking ref that named it was removed.
	SharedPruned bool
}

// fetchAll brings the remote's context branch and all its machine refs. First it lists them (git
// ls-remote: no object transferred), and refuses more than MaxMachineRefs machine refs before fetching
// anything; a machine ref whose id ValidMachineID refuses is left out with a warning and never reaches a
// refspec or a local ref. Then one fetch brings only the tips that moved since the last pull (none: no
// fetch), each into a quarantine ref of its own under refs/ctx/incoming/<random>/ (removed afterwards),
// and every fetched tip is checked as fetch checks the branch (docs/security.md "Trust boundaries: fetched
// trees") before any local ref moves to it. Then the remote-tracking ref of the branch and the machine
// refs' local copies (MachinesTrackingPrefix) move to the checked tips, and local copies of machine refs the
// remote no longer has are removed.
func (s *Store) fetchAll(ctx context.Context, remote string, origin gitstore.RemoteOrigin) (*fetchedTips, error) {
	tctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	opt := gitstore.TransferOptions{Progress: progress(ctx), Origin: origin}
	// The notes ref is listed in the same call: PullNotes, which follows a pull, then fetches only when
	// the remote's notes moved since they were last fetched (notesSeen).
	adv, err := s.repo.LsRemote(tctx, remote, []string{s.BranchRef(), MachineRefPrefix + "*", NotesRef}, opt)
	if err != nil {
		return nil, err
	}
	s.notes.saw(remote, adv[NotesRef])
	out := &fetchedTips{}
	advertised := map[string]gitstore.Hash{} // valid machine id -> tip
	n := 0
	for name, tip := range adv {
		id, ok := strings.CutPrefix(name, MachineRefPrefix)
		if !ok {
			continue
		}
		if n++; n > MaxMachineRefs {
			return nil, fmt.Errorf("refusing %s's machine refs: it has more than %d under %s (nothing was fetched or changed); "+
				"remove the refs of machines gone with `git push %s --delete %s<id>` (docs/sync.md \"Pruning\")",
				remote, MaxMachineRefs, MachineRefPrefix, remote, MachineRefPrefix)
		}
		if err := ValidMachineID(id); err != nil {
			out.Warnings = append(out.Warnings, warn(ctx, fmt.Sprintf("ignored %s's ref %q: %v (to remove it: git ls-remote %s 'refs/ctx/machines/*' "+
				"lists the refs; git push %s --delete REF deletes one)", remote, name, err, remote, remote)))
			continue
		}
		advertised[id] = tip
	}
	sort.Strings(out.Warnings)
	tracking := s.TrackingRef(remote)
	prevShared, err := s.repo.Resolve(ctx, tracking)
	if err != nil {
		return nil, err
	}
	if _, ok := adv[s.BranchRef()]; !ok && prevShared.IsZero() && len(advertised) > 0 {
		// Never seen the remote's branch: a fresh clone of a team whose branch has another name?
		if err := s.checkOtherBranch(ctx, remote, adv, opt); err != nil {
			return nil, err
		}
	}
	prefix := s.MachinesTrackingPrefix(remote)
	local, err := s.repo.RefsUnder(prefix, 0)
	if err != nil {
		return nil, err
	}
	// What moved since the last pull (or is not in this repository): fetched into quarantine refs.
	q, release := s.newQuarantine(ctx)
	defer release()
	have := func(h gitstore.Hash) bool { _, err := s.repo.Commit(ctx, h); return err == nil }
	var specs []string
	sharedAdv, hasShared := adv[s.BranchRef()]
	if hasShared && (sharedAdv != prevShared || !have(sharedAdv)) {
		specs = append(specs, "?+"+s.BranchRef()+":"+q+"shared")
	}
	ids := make([]string, 0, len(advertised))
	for id, tip := range advertised {
		ids = append(ids, id)
		if tip != local[prefix+id] || !have(tip) {
			specs = append(specs, "?+"+MachineRefPrefix+id+":"+q+"machines/"+id)
		}
	}
	sort.Strings(ids)
	fetched := map[string]gitstore.Hash{}
	skipped := map[string]bool{} // machine ids left out: git's fsck refused their objects
	if len(specs) > 0 {
		_, err := s.repo.FetchRefs(tctx, remote, specs, opt)
		defer s.dropQuarantine(context.WithoutCancel(ctx), q)
		what := remote + "'s " + s.cfg.Branch + " branch"
		// A machine ref whose objects git's fsck refuses fails the whole fetch: it is found, left out with a
		// warning, and the others fetched again (at most maxFsckProbes such refs).
		for tries := 0; errors.Is(err, gitstore.ErrFsck) && tries < maxFsckProbes; tries++ {
			culprit, ferr := s.fsckCulprit(tctx, remote, specs, q, opt)
			if culprit == "" {
				break
			}
			out.Warnings = append(out.Warnings, machineSkipped(ctx, remote, culprit, &RejectedError{What: remote + "'s machine ref " + culprit, Fsck: fsckReason(ferr)}))
			skipped[culprit] = true
			specs = slices.DeleteFunc(specs, func(sp string) bool { return strings.HasSuffix(sp, ":"+q+"machines/"+culprit) })
			if len(specs) == 0 {
				err = nil
				break
			}
			_, err = s.repo.FetchRefs(tctx, remote, specs, opt)
		}
		if errors.Is(err, gitstore.ErrFsck) {
			err = s.diagnoseFsck(tctx, remote, what, err, opt)
			s.recordPullRefused(ctx, remote, sharedAdv, err)
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		if fetched, err = s.repo.RefsUnder(q, 0); err != nil {
			return nil, err
		}
	}
	ours, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return nil, err
	}
	// Tips already checked in this pull: a later tip's check walks only the commits none of them has.
	known := []gitstore.Hash{}
	theirs, ok := fetched[q+"shared"]
	if !ok && hasShared && sharedAdv == prevShared {
		// Unchanged since the tracking ref moved there; checked again all the same, as plain git (git fetch
		// origin) may have moved the tracking ref without ctx's checks.
		theirs, ok = sharedAdv, true
	}
	if !hasShared && !prevShared.IsZero() {
		// The remote's shared branch is gone (deleted there): its remote-tracking ref goes too, as git fetch
		// --prune does, so that ctx status does not count against a branch the remote no longer has.
		if err := s.repo.UpdateRef(ctx, tracking, prevShared, gitstore.ZeroHash, "ctx fetch "+remote+": pruned"); err != nil && !errors.Is(err, gitstore.ErrStaleRef) {
			return nil, err
		}
		out.SharedPruned = true
	}
	if ok {
		if err := s.CheckIncoming(ctx, remote+"'s "+s.cfg.Branch+" branch", theirs, ours, []gitstore.Hash{prevShared}); err != nil {
			s.recordPullRefused(ctx, remote, theirs, err) // ctx status says so (pullrefused.go)
			return nil, err
		}
		if err := s.moveTracking(ctx, remote, tracking, prevShared, theirs); err != nil {
			return nil, err
		}
		s.clearPullRefused(remote)
		out.Shared = theirs
		known = append(known, theirs)
	}
	for _, id := range ids {
		if skipped[id] {
			continue
		}
		tip := advertised[id]
		if len(specs) > 0 {
			if h, ok := fetched[q+"machines/"+id]; ok {
				tip = h
			} else if tip != local[prefix+id] {
				continue // gone from the remote between the listing and the fetch
			}
		}
		if _, err := s.repo.Commit(ctx, tip); err != nil {
			// A ref to a blob or a tree (or to an object the fetch did not bring): no machine's branch.
			out.Warnings = append(out.Warnings, warn(ctx, fmt.Sprintf("ignored %s's machine ref %s: its tip %s is not a commit "+
				"(to remove it: git push %s --delete %s%s)", remote, id, tip.String()[:12], remote, MachineRefPrefix, id)))
			continue
		}
		out.Machines = append(out.Machines, remoteTip{Ref: MachineRefPrefix + id, Tip: tip})
	}
	// A tip that ours or the checked shared branch already holds brings no commit to check (nor to merge).
	tips := make([]gitstore.Hash, len(out.Machines))
	for i, m := range out.Machines {
		tips[i] = m.Tip
	}
	checked, err := s.repo.Contained(ctx, tips, []gitstore.Hash{ours, out.Shared})
	if err != nil {
		return nil, err
	}
	checked[ours], checked[out.Shared] = true, true
	var ups []gitstore.RefUpdate
	kept := out.Machines[:0]
	for _, m := range out.Machines {
		id := strings.TrimPrefix(m.Ref, MachineRefPrefix)
		prev := local[prefix+id]
		if !checked[m.Tip] && m.Tip != prev {
			if err := s.CheckIncoming(ctx, remote+"'s machine ref "+id, m.Tip, ours, append(known, prev)); err != nil {
				var rej *RejectedError
				if !errors.As(err, &rej) {
					return nil, err
				}
				// One machine's ref that ctx refuses is left out, as one to a blob is: the shared branch and
				// every other machine are pulled (docs/sync.md "A machine ref ctx refuses"). Its local copy
				// stays where it was.
				out.Warnings = append(out.Warnings, machineSkipped(ctx, remote, id, err))
				continue
			}
			known = append(known, m.Tip)
		}
		checked[m.Tip] = true
		kept = append(kept, m)
		if m.Tip != prev {
			ups = append(ups, gitstore.RefUpdate{Name: prefix + id, Old: prev, New: m.Tip, Msg: "ctx fetch " + remote, NoSync: true})
		}
	}
	out.Machines = kept
	// The remote no longer has these machine refs (pruned): their local copies go too, as git fetch --prune
	// does for branches.
	for name, h := range local {
		if _, ok := advertised[strings.TrimPrefix(name, prefix)]; !ok {
			ups = append(ups, gitstore.RefUpdate{Name: name, Old: h, New: gitstore.ZeroHash, Msg: "ctx fetch " + remote + ": pruned", NoSync: true})
		}
	}
	// The local copies are where a pull found each machine, for ctx machines list and to know what moved at
	// the next pull: hints, written without fsync (a copy a crash left behind makes the next pull fetch and
	// check that tip again); another pull moving them at the same moment is no failure of this one.
	if err := s.repo.UpdateRefs(ctx, ups); err != nil && !errors.Is(err, gitstore.ErrStaleRef) {
		return nil, err
	}
	return out, nil
}

// moveTracking moves the remote-tracking ref from prev to theirs, forced as in git's "+" refspec; another
// process may move it at the same time (a concurrent fetch): retried on the value it found.
func (s *Store) moveTracking(ctx context.Context, remote, tracking string, prev, theirs gitstore.Hash) error {
	for attempt := 0; prev != theirs; attempt++ {
		err := s.repo.UpdateRef(ctx, tracking, prev, theirs, "ctx fetch "+remote)
		if err == nil || attempt >= 5 || !errors.Is(err, gitstore.ErrStaleRef) {
			return err
		}
		if prev, err = s.repo.Resolve(ctx, tracking); err != nil {
			return err
		}
	}
	return nil
}

// dropQuarantine removes the quarantine refs under q. Best effort: what is left is removed by the next
// fetch (clearIncoming).
func (s *Store) dropQuarantine(ctx context.Context, q string) {
	refs, err := s.repo.RefsUnder(q, 0)
	if err != nil || len(refs) == 0 {
		return
	}
	ups := make([]gitstore.RefUpdate, 0, len(refs))
	for name, h := range refs {
		ups = append(ups, gitstore.RefUpdate{Name: name, Old: h, New: gitstore.ZeroHash, Msg: "ctx: drop quarantine ref", NoSync: true})
	}
	_ = s.repo.UpdateRefs(ctx, ups)
	// The folders of the quarantine refs, deepest first, once empty (os.Remove leaves a folder that is not).
	var dirs []string
	_ = filepath.WalkDir(filepath.Join(s.repo.CommonDir(), filepath.FromSlash(q)), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i])
	}
}

// pullTips returns the tips of f a pull merges, in a fixed order (the shared branch, then the machine refs
// by id): every distinct tip that is neither ours nor reachable from ours or from another tip of f. So a
// tip that holds everything the others hold is a fast-forward, and no merge is made for a tip another
// one already contains.
func (s *Store) pullTips(ctx context.Context, f *fetchedTips, ours gitstore.Hash) ([]remoteTip, error) {
	var all []remoteTip
	seen := map[gitstore.Hash]bool{ours: true, gitstore.ZeroHash: true}
	if !f.Shared.IsZero() {
		all = append(all, remoteTip{Ref: s.BranchRef(), Tip: f.Shared})
		seen[f.Shared] = true
	}
	for _, m := range f.Machines {
		if !seen[m.Tip] {
			seen[m.Tip] = true
			all = append(all, m)
		}
	}
	hs := make([]gitstore.Hash, len(all))
	for i, t := range all {
		hs[i] = t.Tip
	}
	contained, err := s.repo.Contained(ctx, hs, append(hs, ours))
	if err != nil {
		return nil, err
	}
	var out []remoteTip
	for _, t := range all {
		if !contained[t.Tip] {
			out = append(out, t)
		}
	}
	return out, nil
}

// Machine is one machine ref of a remote as this repository's last pull saw it (its local copy under
// MachinesTrackingPrefix), or this machine's own id.
type Machine struct {
	ID     string    `json:"id"`
	Ref    string    `json:"ref"`    // on the remote: refs/ctx/machines/<id>
	Tip    string    `json:"tip"`    // "" for this machine before its first push
	Date   time.Time `json:"date"`   // committer time of the tip
	Self   bool      `json:"self"`   // this machine
	Merged bool      `json:"merged"` // the local context branch holds the tip
}

// Machines lists the machine refs of remote ("": RemoteName) known from the last pull and push, sorted by
// id, with this machine's own always among them. It reads local refs only (no transfer).
func (s *Store) Machines(ctx context.Context, remote string) ([]Machine, error) {
	if remote == "" {
		remote = s.RemoteName(ctx)
	}
	self, err := s.MachineID()
	if err != nil {
		return nil, err
	}
	prefix := s.MachinesTrackingPrefix(remote)
	refs, err := s.repo.RefsUnder(prefix, 0)
	if err != nil {
		return nil, err
	}
	ours, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return nil, err
	}
	var tips []gitstore.Hash
	for _, h := range refs {
		tips = append(tips, h)
	}
	merged, err := s.repo.Contained(ctx, tips, []gitstore.Hash{ours})
	if err != nil {
		return nil, err
	}
	out := []Machine{}
	for name, h := range refs {
		id := strings.TrimPrefix(name, prefix)
		if ValidMachineID(id) != nil {
			continue
		}
		m := Machine{ID: id, Ref: MachineRefPrefix + id, Tip: h.String(), Self: id == self, Merged: merged[h] || h == ours}
		if c, err := s.repo.Commit(ctx, h); err == nil {
			m.Date = c.Committer.When
		}
		out = append(out, m)
	}
	if _, ok := refs[prefix+self]; !ok {
		out = append(out, Machine{ID: self, Ref: MachineRefPrefix + self, Self: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ForgetMachine deletes machine id's ref on remote ("": RemoteName) and its local copy (docs/sync.md
// "Pruning"). Refused: an invalid id (ErrInvalid), this machine's own id (its next push would make it
// again), an id the last pull did not see (*NotFoundError), and a machine whose tip the local context
// branch does not hold (pull first: its writes would be on no ref of the remote but its own). The remote
// ref is deleted only while it still names the tip seen (git push --force-with-lease): a machine that
// pushed since keeps its ref: a *TransferError wrapping gitstore.ErrNonFastForward whose Reason says in
// plain words what happened, whether the remote's shared branch holds the machine's new writes, and what
// to run (git's own word for it, "stale info", tells a user nothing).
// A ref that is already gone from the remote (another clone forgot it) is not an error: its local copy is
// deleted and gone is true.
func (s *Store) ForgetMachine(ctx context.Context, remote, id string, origin RemoteOrigin) (gone bool, err error) {
	err = s.forgetMachine(ctx, remote, id, origin)
	if errors.Is(err, errMachineGone) {
		return true, nil
	}
	return false, err
}

// errMachineGone is forgetMachine's way to say the remote ref was gone already (its local copy deleted).
var errMachineGone = errors.New("machine ref already gone from the remote")

func (s *Store) forgetMachine(ctx context.Context, remote, id string, origin RemoteOrigin) error {
	if err := ValidMachineID(id); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if remote == "" {
		remote = s.RemoteName(ctx)
	}
	if remote == "" {
		return errors.New("no remote: add one with `git remote add origin <url>` or pass --remote")
	}
	if err := s.CheckRemote(remote, origin); err != nil {
		return err
	}
	self, err := s.MachineID()
	if err != nil {
		return err
	}
	if id == self {
		return fmt.Errorf("%w: %s is this machine (its next push would make its ref again)", ErrInvalid, id)
	}
	local := s.MachinesTrackingPrefix(remote) + id
	tip, err := s.repo.Resolve(ctx, local)
	if err != nil {
		return err
	}
	if tip.IsZero() {
		return &NotFoundError{Msg: fmt.Sprintf("no machine %s on %s as of the last pull (ctx pull, then ctx machines list)", id, remote)}
	}
	ours, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return err
	}
	if news, err := s.repo.NewCommits(ctx, tip, []gitstore.Hash{ours}); err != nil {
		return err
	} else if len(news) > 0 {
		// Whether the remote's shared branch (as the last pull saw it) holds them decides what is at stake.
		if shared, err := s.repo.Resolve(ctx, s.TrackingRef(remote)); err == nil && !shared.IsZero() && s.holds(ctx, shared, tip) {
			return fmt.Errorf("machine %s has %s your context branch does not hold yet; the remote's shared branch %s holds them, "+
				"but ctx forgets a machine only once this clone has merged its tip: ctx pull, then forget it again", id, commitCount(len(news)), s.BranchRef())
		}
		return fmt.Errorf("machine %s has %s that neither your context branch nor the remote's shared branch (as of your last pull) holds: "+
			"deleting its ref would leave them on no ref of the remote; ctx pull first (it merges them), then forget it again", id, commitCount(len(news)))
	}
	tctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	opt := gitstore.TransferOptions{Progress: progress(ctx), Origin: origin}
	if err := s.repo.DeleteRemoteRef(tctx, remote, MachineRefPrefix+id, tip, opt); err != nil {
		if !errors.Is(err, gitstore.ErrNonFastForward) {
			return err
		}
		return s.forgetRefused(ctx, remote, id, local, tip, opt, err)
	}
	return s.repo.UpdateRef(ctx, local, tip, gitstore.ZeroHash, "ctx machines forget")
}

// forgetRefused explains a delete the remote refused because its ref no longer names tip (git's "stale
// info"): it asks the remote what the ref and the shared branch name now (one ls-remote). Gone: the local copy is deleted too
// (errMachineGone). Moved: a *TransferError saying so in plain words, with the commands to run. When the
// remote cannot be asked, the refusal is returned with the same advice.
func (s *Store) forgetRefused(ctx context.Context, remote, id, local string, tip gitstore.Hash, opt gitstore.TransferOptions, refused error) error {
	ref := MachineRefPrefix + id
	advice := "run `ctx pull`, then `ctx machines list`; forget it again only if that machine is really gone"
	tctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	shared := s.BranchRef()
	refs, err := s.repo.LsRemote(tctx, remote, []string{ref, shared}, opt)
	if err != nil {
		return &TransferError{Op: "push", Remote: remote, Err: gitstore.ErrNonFastForward, Reason: fmt.Sprintf(
			"%s was not deleted: the remote's ref no longer names %s, the tip your last pull saw (%v); %s", ref, tip.String()[:12], refused, advice)}
	}
	now, ok := refs[ref]
	if !ok {
		if err := s.repo.UpdateRef(ctx, local, tip, gitstore.ZeroHash, "ctx machines forget: gone from the remote"); err != nil {
			return err
		}
		return errMachineGone
	}
	// Where the machine's new writes are decides what the refusal protects: the remote's shared branch may
	// hold them already (the machine's push moved it too), and this clone may not have their objects.
	var where string
	switch sharedNow, ok := refs[shared]; {
	case ok && (sharedNow == now || s.holds(ctx, sharedNow, now)):
		where = fmt.Sprintf("the remote's shared branch %s holds its new writes too, but this clone has not merged them, and ctx forgets "+
			"a machine only at a tip this clone holds", shared)
	case ok && s.known(ctx, sharedNow, now):
		where = fmt.Sprintf("the remote's shared branch %s does not hold its new writes, so deleting the ref could lose them", shared)
	default:
		where = fmt.Sprintf("whether the remote's shared branch %s holds its new writes is not known before a pull (this clone has not fetched them)", shared)
	}
	return &TransferError{Op: "push", Remote: remote, Err: gitstore.ErrNonFastForward, Reason: fmt.Sprintf(
		"%s was not deleted: machine %s pushed since your last pull (the remote's ref is now %s, your last pull saw %s); "+
			"%s; %s", ref, id, now.String()[:12], tip.String()[:12], where, advice)}
}

// holds reports whether commit from contains commit tip (equal included); false when either is not in
// the object database or the walk fails.
func (s *Store) holds(ctx context.Context, from, tip gitstore.Hash) bool {
	if from == tip {
		return true
	}
	if !s.known(ctx, from, tip) {
		return false
	}
	in, err := s.repo.Contained(ctx, []gitstore.Hash{tip}, []gitstore.Hash{from})
	return err == nil && in[tip]
}

// known reports whether every commit of hs is in the object database.
func (s *Store) known(ctx context.Context, hs ...gitstore.Hash) bool {
	for _, h := range hs {
		if _, err := s.repo.Commit(ctx, h); err != nil {
			return false
		}
	}
	return true
}

// machineSkipped is the warning of a pull that left out machine id's ref on remote because ctx refuses its
// tip (err, a *RejectedError): what is wrong and how to delete the ref.
func machineSkipped(ctx context.Context, remote, id string, err error) string {
	reason, big := err.Error(), false
	var rej *RejectedError
	if errors.As(err, &rej) {
		var ps []string
		big = len(rej.Problems) > 0
		for _, p := range rej.Problems {
			ps = append(ps, p.String())
			big = big && p.Size > 0
		}
		if rej.Fsck != "" {
			ps = append(ps, "git fsck: "+rej.Fsck)
		}
		reason = strings.Join(ps, "; ")
	}
	fix := ""
	if big {
		fix = "; its machine must shrink or remove these files first (ctx knowledge set KEY -f SMALLER, ctx knowledge rm KEY), " +
			"or its next push brings them back (docs/limits.md \"Files of the store\")"
	}
	return warn(ctx, fmt.Sprintf("ignored %s's machine ref %s%s: ctx refuses its tip (%s); the shared branch and the other machines were pulled. "+
		"To remove it: git push %s --delete %s%s (if it is yours, your next ctx push writes it again from your branch; docs/sync.md \"Pruning\")%s",
		remote, MachineRefPrefix, id, reason, remote, MachineRefPrefix, id, fix))
}

// maxFsckProbes bounds the refs fsckCulprit fetches one by one.
const maxFsckProbes = 64

// fsckCulprit finds, after a fetch of several refs that git's fsck refused, the machine whose ref sent
// the refused objects: it fetches each machine spec alone (up to maxFsckProbes) and returns the id of the
// first that git refuses again, with git's error. "" when none does (the shared branch, or more refs than
// it probes): the caller diagnoses the shared branch as before.
func (s *Store) fsckCulprit(ctx context.Context, remote string, specs []string, q string, opt gitstore.TransferOptions) (string, error) {
	var machines []string
	for _, sp := range specs {
		if strings.Contains(sp, ":"+q+"machines/") {
			machines = append(machines, sp)
		}
	}
	if len(machines) == 0 || len(machines) > maxFsckProbes {
		return "", nil
	}
	for _, sp := range machines {
		if _, err := s.repo.FetchRefs(ctx, remote, []string{sp}, opt); errors.Is(err, gitstore.ErrFsck) {
			_, id, _ := strings.Cut(sp, ":"+q+"machines/")
			return id, err
		}
	}
	return "", nil
}

// fsckReason is git's own words from a refused fetch.
func fsckReason(err error) string {
	var te *gitstore.TransferError
	if errors.As(err, &te) {
		return te.Reason
	}
	return err.Error()
}

// commitCount is "1 commit" or "n commits".
func commitCount(n int) string {
	if n == 1 {
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", n)
}

// checkOtherBranch refuses to take (or publish) this clone's context branch on remote when the remote
// has no such branch but has machine refs whose tip is the tip of another of its branches: that branch is
// the team's context branch under another name (`ctx init --branch NAME` in the clone that made it), and
// a fresh clone, which does not know the name, would otherwise adopt the machine refs into its own branch
// and publish a second shared branch beside it. machines: the remote's machine refs (full name → tip), as
// listed. One ls-remote of refs/heads/*; nil when no other branch matches (the branch was deleted there).
// Errors: ErrInvalid naming the branch and the command to run (docs/sync.md "Pushing and pulling").
func (s *Store) checkOtherBranch(ctx context.Context, remote string, machines map[string]gitstore.Hash, opt gitstore.TransferOptions) error {
	tips := map[gitstore.Hash]string{}
	for name, tip := range machines {
		if strings.HasPrefix(name, MachineRefPrefix) {
			tips[tip] = name
		}
	}
	if len(tips) == 0 {
		return nil
	}
	tctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	heads, err := s.repo.LsRemote(tctx, remote, []string{"refs/heads/*"}, opt)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(heads))
	for name, tip := range heads {
		if _, ok := tips[tip]; ok && name != s.BranchRef() {
			names = append(names, strings.TrimPrefix(name, "refs/heads/"))
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return invalidf("%s has no context branch %s, but its branch %s is where its machine refs are (%s): the team's context branch "+
		"is %s; run `ctx init --branch %s` in this clone, then `ctx pull` (nothing was fetched or published)",
		remote, s.cfg.Branch, names[0], tips[heads["refs/heads/"+names[0]]], names[0], names[0])
}
