package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
)

// Problem is an entry of a context commit's tree that ctx does not read and never checks out
// (docs/security.md, "Trust boundaries: fetched trees"). Unsafe ones could write outside .context/ or
// into a git directory if they were checked out (a name "..", ".git" or an alias of it, a "/" in a name,
// a symbolic link): a pull refuses them, always. The others are entries ctx cannot read (a gitlink, a
// file where the layout has a folder, a path outside the layout): a pull refuses them too; found on a
// local ref (a plain `git fetch origin ctx:ctx`) they are skipped by every reader and listed by
// `ctx status` and `ctx doctor`.
type Problem struct {
	Commit string `json:"commit"`
	Scope  Scope  `json:"scope,omitempty"`
	Path   string `json:"path"`   // the entry's names joined by "/" (quoted in messages: a name may hold "/")
	Entry  string `json:"entry"`  // what the entry is: file, folder, symbolic link, gitlink (submodule)...
	Reason string `json:"reason"` // why ctx does not read it
	Unsafe bool   `json:"unsafe"`
	// Record is set for a JSON record ctx reads that is malformed (RecordProblem): a pull refuses it, ctx
	// doctor lists it; it is repaired by writing the record again, not removed (docs/format.md "Records").
	Record bool `json:"record,omitempty"`
	// Size is the size in bytes of a file over MaxFileBytes (read from its object's header); 0 for the
	// other problems.
	Size int64 `json:"size,omitempty"`

	names []string // the entry's raw names (RemoveProblems)
}

func (p Problem) String() string {
	c := p.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if p.Path == "" {
		return fmt.Sprintf("commit %s: %s", c, p.Reason)
	}
	return fmt.Sprintf("commit %s: %q (%s): %s", c, p.Path, p.Entry, p.Reason)
}

// itemProblem says why ctx does not read the tree entry it, or "" when it is a file of the layout (or a
// folder whose names are safe).
func itemProblem(it gitstore.Item) (reason string, unsafe bool) {
	if err := gitstore.CheckItem(it); err != nil {
		return strings.TrimSuffix(err.Error(), ": "+gitstore.ErrBadName.Error()), true
	}
	switch {
	case it.Mode == gitstore.ModeSymlink:
		return "a symbolic link: ctx never checks out links (one could point out of " + CheckoutDir + "/)", true
	case it.Mode == gitstore.ModeDir:
		return "", false // an empty folder: nothing to read or write
	case it.Mode == gitstore.ModeSubmodule:
		return "a gitlink (submodule) where the store keeps files: ctx cannot read it", false
	case !it.IsFile():
		return "not a regular file: ctx cannot read it", false
	}
	if err := LayoutPath(it.Path()); err != nil {
		msg := strings.TrimPrefix(err.Error(), it.Path()+": ")
		return msg + " (" + placeHint(it.Names) + ")", false
	}
	return "", false
}

// placeHint names the layout rule a path outside the layout breaks, for the two cases a teammate's git
// produces most: a file where a folder should be, and a folder where a file should be.
func placeHint(names []string) string {
	folders := map[string]bool{"knowledge": true, "conventions": true, "decisions": true, "history": true,
		"skills": true, "activity": true, ConflictsDir: true, TranscriptsDir: true}
	switch {
	case len(names) == 1 && folders[names[0]]:
		return "a file where the store has the folder " + names[0] + "/"
	case len(names) > 1 && (names[0] == ManifestPath || names[0] == StatePath):
		return "a folder where the store has the file " + names[0]
	case len(names) > 2 && names[0] == "history":
		return "history/ holds <id>.json files and YYYY/MM/ folders of them"
	case len(names) > 2 && (names[0] == "knowledge" || names[0] == "conventions" || names[0] == "decisions" ||
		names[0] == ConflictsDir):
		return names[0] + "/ holds files only"
	case len(names) > 1 && folders[names[0]]:
		// A folder ctx knows, with a name its rules refuse (knowledge/Readme.md, an NFD key): not a newer
		// ctx's folder, so no upgrade hint (unknownFolders).
		return "a name the rules of " + names[0] + "/ refuse: docs/format.md \"Keys and names\""
	}
	return "outside the layout of docs/format.md"
}

// treeProblems returns the problems of the entries of tree that tree against does not hold identically
// (against ZeroHash: every entry), for commit, sorted by path.
func (s *Store) treeProblems(ctx context.Context, commit gitstore.Hash, sc Scope, tree, against gitstore.Hash) ([]Problem, error) {
	return treeProblemsIn(ctx, s.repo, commit, sc, tree, against)
}

func treeProblemsIn(ctx context.Context, repo *gitstore.Repo, commit gitstore.Hash, sc Scope, tree, against gitstore.Hash) ([]Problem, error) {
	return checkTree(ctx, repo, commit, sc, tree, against, 0)
}

// treeChecks are the checks of checkTree beyond the entries' names, modes and places.
type treeChecks uint8

const (
	// checkSizes checks the files against MaxFileBytes (oversized), from their objects' headers.
	checkSizes treeChecks = 1 << iota
	// checkRecords reads the JSON records ctx reads (RecordProblem) and reports the malformed ones
	// (Problem.Record): a pull and a push refuse them, ctx doctor lists them.
	checkRecords
	// checkPulse also checks the team pulse fields of the activity records (activityPulseProblem) with
	// checkRecords: ctx doctor lists the violations; a pull takes them (a newer ctx may know more values).
	checkPulse
)

// checkTree is treeProblemsIn, with the checks of checks for the files it adds.
func checkTree(ctx context.Context, repo *gitstore.Repo, commit gitstore.Hash, sc Scope, tree, against gitstore.Hash, checks treeChecks) ([]Problem, error) {
	sizes := checks&checkSizes != 0
	added, _, err := repo.DiffItems(ctx, against, tree)
	if err != nil {
		return nil, fmt.Errorf("check the tree of %s: %w", commit, err)
	}
	var out []Problem
	var files []gitstore.Item
	for _, it := range added {
		if reason, unsafe := itemProblem(it); reason != "" {
			out = append(out, Problem{Commit: commit.String(), Scope: sc, Path: it.Path(), Entry: it.Kind(), Reason: reason, Unsafe: unsafe, names: it.Names})
		} else if it.IsFile() && len(it.Names) == 2 && it.Names[0] == ConflictsDir {
			// A conflict record is read: one whose path is not a file of the store (a teammate's
			// conflicts/x.json naming ../.git/hooks/post-merge) could never be resolved.
			b, err := repo.ReadBlob(ctx, it.Hash)
			if err != nil {
				return nil, fmt.Errorf("check %s of %s: %w", it.Path(), commit, err)
			}
			if reason := conflictRecordProblem(it.Names[1], b); reason != "" {
				out = append(out, Problem{Commit: commit.String(), Scope: sc, Path: it.Path(), Entry: it.Kind(), Reason: reason, names: it.Names})
			} else if sizes {
				files = append(files, it)
			}
		} else if it.IsFile() {
			if checks&checkRecords != 0 && isRecordPath(it.Path()) {
				p, err := recordItemProblem(ctx, repo, commit, sc, it, checks&checkPulse != 0)
				if err != nil {
					return nil, err
				}
				if p != nil {
					out = append(out, *p)
				}
			}
			if sizes {
				files = append(files, it)
			}
		}
	}
	if len(files) > 0 {
		big, err := oversized(ctx, repo, commit, sc, files)
		if err != nil {
			return nil, err
		}
		out = append(out, big...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// recordItemProblem reads the record it of commit's tree and returns its Problem when it is malformed
// (RecordProblem; with pulse, also an activity record whose team pulse fields break their rules:
// activityPulseProblem); nil when it reads, or is over maxFileBytes (reported by the size check, never
// read).
func recordItemProblem(ctx context.Context, repo *gitstore.Repo, commit gitstore.Hash, sc Scope, it gitstore.Item, pulse bool) (*Problem, error) {
	b, size, err := repo.ReadBlobPrefix(ctx, it.Hash, maxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("check %s of %s: %w", it.Path(), commit, err)
	}
	if size > maxFileBytes {
		return nil, nil
	}
	reason := RecordProblem(it.Path(), b)
	if reason == "" && pulse && recordKindOf(it.Path()) == activityRecord {
		reason = activityPulseProblem(b)
	}
	if reason == "" {
		return nil, nil
	}
	return &Problem{Commit: commit.String(), Scope: sc, Path: it.Path(), Entry: it.Kind(), Record: true, names: it.Names,
		Reason: "a malformed record: " + reason + " (docs/format.md \"Records\")"}, nil
}

// MaxEntryBytes is the most content ctx takes as one entry, skill, decision body or conflict resolution
// from a command's file or standard input: 32 MiB (docs/limits.md "What the CLI reads").
const MaxEntryBytes = 32 << 20

// MaxFileBytes is the largest file of the store ctx writes, merges or takes from a remote: MaxEntryBytes
// and 256 KiB of room for what ctx adds to such content (front matter, a record's quoting), so that nothing
// a ctx write made is ever refused by a teammate's pull. A fetched tip that adds a larger file is refused
// before any merge (CheckIncoming, from the objects' sizes: the file is never read), ctx commit refuses
// such a hand edit from its size, a write or a merge that would make one fails with nothing written, and
// ctx doctor lists one already on a ref (docs/limits.md "Files of the store").
const MaxFileBytes = MaxEntryBytes + 256<<10

// maxFileBytes is the limit the checks use: MaxFileBytes, lowered by tests (SetMaxFileBytes) so that they
// need no 33 MiB files.
var maxFileBytes int64 = MaxFileBytes

// oversized returns a Problem for each of files (items of commit's tree) whose blob is over MaxFileBytes,
// from the objects' headers only (gitstore.Repo.ObjectSizes): the content is never read.
func oversized(ctx context.Context, repo *gitstore.Repo, commit gitstore.Hash, sc Scope, files []gitstore.Item) ([]Problem, error) {
	hs := make([]gitstore.Hash, len(files))
	for i, it := range files {
		hs[i] = it.Hash
	}
	sizes, err := repo.ObjectSizes(ctx, hs)
	if err != nil {
		return nil, fmt.Errorf("check the sizes of the files of %s: %w", commit, err)
	}
	var out []Problem
	for _, it := range files {
		if n := sizes[it.Hash]; n > maxFileBytes {
			out = append(out, Problem{Commit: commit.String(), Scope: sc, Path: it.Path(), Entry: it.Kind(), Size: n, names: it.Names,
				Reason: fmt.Sprintf("%s, over the limit of one file of the store (%s, docs/limits.md \"Files of the store\")", sizeOf(n), sizeOf(maxFileBytes))})
		}
	}
	return out, nil
}

// sizeOf writes n bytes for a person: "157286400 bytes (150.0 MiB)".
func sizeOf(n int64) string {
	return fmt.Sprintf("%d bytes (%.1f MiB)", n, float64(n)/(1<<20))
}

// TreeProblems lists the entries of the context refs' tips that ctx does not read (Problem), every scope,
// sorted by scope then path. None on a healthy store. ctx status and ctx doctor list them.
func (s *Store) TreeProblems(ctx context.Context) ([]Problem, error) {
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, err
	}
	var out []Problem
	for _, sc := range Scopes {
		if tips[sc].IsZero() {
			continue
		}
		tree, err := s.repo.TreeOf(ctx, tips[sc])
		if err != nil {
			return nil, err
		}
		ps, err := s.treeProblems(ctx, tips[sc], sc, tree, gitstore.ZeroHash)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// RejectedError is a commit that ctx refuses to bring into the local context branch (a pull, a merge):
// its tree, or a commit of its history, holds entries ctx does not read. No ref moved. A machine ref's
// tip that ctx refuses is not an error of the pull: the ref is left out with a warning naming it and the
// command that deletes it (machineSkipped; docs/sync.md "Hostile machine refs").
type RejectedError struct {
	What     string // e.g. "origin's ctx branch"
	Commit   gitstore.Hash
	Problems []Problem
	More     bool   // more problems than listed
	Fsck     string // git fsck's own words, when git refused the objects already
	// NotStore: the commit's tree has no manifest.json either: it is a branch of someone's code that
	// happens to have the context branch's name, not a context store to repair.
	NotStore bool
	// Manifest: one of Problems is the tip's manifest.json, which does not read (manifestProblem).
	Manifest bool
	// Commits: Problems are commits over gitstore.MaxCommitBytes (oversizedCommits), not entries.
	Commits bool
	// Bounds: the problem is the tip's tree as a whole, over MaxTipFiles or MaxTipAddedBytes (tipBounds).
	Bounds bool
	// InHistory (with Bounds): the tree over MaxTipFiles is an older commit's, which a fix on top of the
	// branch leaves in its history: the repair is a reset to the commit before it.
	InHistory bool
}

// ErrRejected is wrapped by RejectedError.
var ErrRejected = errors.New("refused a commit with entries ctx does not check out")

func (e *RejectedError) Unwrap() error { return ErrRejected }

func (e *RejectedError) Error() string {
	var b strings.Builder
	unsafe := false
	for _, p := range e.Problems {
		unsafe = unsafe || p.Unsafe
	}
	what := "entries ctx cannot read"
	big := len(e.Problems) > 0
	for _, p := range e.Problems {
		big = big && p.Size > 0
	}
	switch {
	case e.Commits:
		what = "commits over the size limit"
		big = false
	case e.Bounds:
		what = "more than a tip may check out"
		big = false
	case unsafe:
		what = "unsafe entries"
	case e.NotStore:
		what = "no " + ManifestPath + " (it is not a context store)"
	case len(e.Problems) == 0:
		what = "objects git's fsck refuses"
	case big:
		what = "files over the size limit"
	case allRecords(e.Problems):
		what = "malformed records"
	}
	if e.Commit.IsZero() {
		fmt.Fprintf(&b, "refusing %s: it holds %s (nothing was changed: no ref moved, nothing written):", e.What, what)
	} else {
		fmt.Fprintf(&b, "refusing commit %s of %s: it holds %s (nothing was changed: no ref moved, nothing written):", e.Commit, e.What, what)
	}
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s", p)
	}
	if e.More {
		b.WriteString("\n  (more not listed)")
	}
	if e.Fsck != "" {
		fmt.Fprintf(&b, "\n  git fsck: %s", e.Fsck)
	}
	if e.Commits {
		b.WriteString("\nThe branch must be repaired where it was written: whoever pushed it resets the branch to the commit before " +
			"the large one and pushes that (git push --force-with-lease); until then no pull takes it (docs/limits.md \"Commit messages and notes\")")
		return b.String()
	}
	if e.Bounds && e.InHistory {
		b.WriteString("\nThe branch must be repaired where it was written: whoever pushed it resets the branch to the commit before " +
			"the one named and pushes that (git push --force-with-lease), since a fix on top leaves that commit in the history; " +
			"until then no pull takes it (docs/limits.md \"Files of a fetched tip\")")
		return b.String()
	}
	if e.Bounds {
		b.WriteString("\nThe branch must be repaired where it was written: whoever pushed it removes the files that do not belong " +
			"in the context store (git rm -r and git commit on the branch) and pushes the fix; until then no pull takes it " +
			"(docs/limits.md \"Files of a fetched tip\")")
		return b.String()
	}
	if e.NotStore {
		fmt.Fprintf(&b, "\nIt has no %s: it is not a context store but a branch of code that has the context branch's name. "+
			"Leave it alone; keep the team's context under another name (ctx init --branch NAME)", ManifestPath)
		return b.String()
	}
	if e.Manifest {
		fmt.Fprintf(&b, "\nThe branch must be repaired where it was written: there, ctx doctor --fix puts back the last %s "+
			"that reads, and ctx push publishes it", ManifestPath)
		if len(e.Problems) == 1 {
			return b.String()
		}
		b.WriteString("; remove the other entries with git (git rm, git commit) and push the fix; see docs/security.md")
		return b.String()
	}
	if big {
		b.WriteString("\nThe branch must be repaired where it was written: whoever pushed it shrinks or removes these files " +
			"(ctx knowledge set KEY -f SMALLER, ctx knowledge rm KEY, or git rm and git commit on the branch) and pushes the fix; " +
			"a pull checks the tip only, so the large blob may stay in the history (docs/limits.md \"Files of the store\")")
		return b.String()
	}
	if dirs := unknownFolders(e.Problems); dirs != "" {
		fmt.Fprintf(&b, "\nIf a teammate's newer ctx wrote %s (a folder this ctx does not know), upgrade ctx to the team's version "+
			"(ctx --version) and run this again; only if no ctx wrote it, remove these entries with git (git rm, git commit) "+
			"and push the fix; see docs/format.md \"Layout for growth\"", dirs)
		return b.String()
	}
	if allRecords(e.Problems) {
		b.WriteString("\nThe branch must be repaired where it was written: there, write each record again (" + recordRepair + ") and push the fix")
		return b.String()
	}
	b.WriteString("\nThe branch must be repaired where it was written: remove these entries with git (git rm, git commit) " +
		"and push the fix; see docs/security.md")
	return b.String()
}

// unknownFolders names the top-level folders ("transcripts/, notes/") of problems that are all files
// inside a folder the layout does not have, safe, of an allowed size: what a newer ctx's new kind looks
// like to an older one. "" when any problem is something else.
func unknownFolders(ps []Problem) string {
	var dirs []string
	for _, p := range ps {
		if p.Unsafe || p.Size > 0 || len(p.names) < 2 || p.Reason == "" || !strings.HasSuffix(p.Reason, "(outside the layout of docs/format.md)") {
			return ""
		}
		if d := p.names[0] + "/"; !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return strings.Join(dirs, ", ")
}

// recordRepair says how a malformed record is written again (docs/format.md "Records").
const recordRepair = "ctx state set replaces state.json; any record can be fixed in .context/ and recorded with ctx commit, " +
	"or with git on the branch; ctx doctor lists them"

// allRecords reports whether every problem of ps is a malformed record (and there is one).
func allRecords(ps []Problem) bool {
	for _, p := range ps {
		if !p.Record {
			return false
		}
	}
	return len(ps) > 0
}

// oversizedCommits returns a Problem for each commit of theirs' history not reachable from known whose
// object (headers and message) is over gitstore.MaxCommitBytes, from the objects' headers (one git
// cat-file --batch-check): such a commit is never inflated.
func (s *Store) oversizedCommits(ctx context.Context, theirs gitstore.Hash, known []gitstore.Hash) ([]Problem, error) {
	commits, err := s.repo.NewCommits(ctx, theirs, known)
	if err != nil || len(commits) == 0 {
		return nil, err
	}
	sizes, err := s.repo.ObjectSizes(ctx, commits)
	if err != nil {
		return nil, err
	}
	var out []Problem
	for _, h := range commits {
		if n := sizes[h]; n > gitstore.MaxCommitBytes {
			out = append(out, Problem{Commit: h.String(), Entry: "commit", Size: n,
				Reason: fmt.Sprintf("the commit object (headers and message) is %s, over the limit of one commit (%s, docs/limits.md \"Commit messages and notes\")",
					sizeOf(n), sizeOf(gitstore.MaxCommitBytes))})
		}
	}
	return out, nil
}

// maxListedProblems bounds the problems a RejectedError lists.
const maxListedProblems = 20

// CheckIncoming checks a commit before it may move a local ref (pull, merge): every entry that a commit of
// its history adds that is not reachable from known must pass gitstore.CheckItem (git fsck's names and
// modes), and every entry of its tree that ours (the local tip) does not hold identically must be a file of
// the store layout that ctx can read (Problem). A *RejectedError names the commit, the paths and why.
func (s *Store) CheckIncoming(ctx context.Context, what string, theirs, ours gitstore.Hash, known []gitstore.Hash) error {
	if theirs.IsZero() {
		return nil
	}
	rej := &RejectedError{What: what, Commit: theirs}
	seen := map[string]bool{}
	add := func(p Problem) {
		k := p.Commit + "\x00" + p.Path
		if seen[k] {
			return
		}
		seen[k] = true
		if len(rej.Problems) >= maxListedProblems {
			rej.More = true
			return
		}
		rej.Problems = append(rej.Problems, p)
	}
	if !ours.IsZero() {
		known = append(known, ours)
	}
	// Commit objects over gitstore.MaxCommitBytes (a 60 MB message): refused before anything reads them
	// (docs/limits.md "Commit messages and notes: 1 MiB"); the sizes come from the objects' headers. Every
	// commit the local branch does not hold is checked, also those of a remote-tracking ref that plain git
	// moved (git clone, git fetch): nothing else vouches for them.
	if big, err := s.oversizedCommits(ctx, theirs, []gitstore.Hash{ours}); err != nil {
		return fmt.Errorf("check %s: %w", what, err)
	} else if len(big) > 0 {
		for _, p := range big {
			add(p)
		}
		rej.Commits = true
		return rej
	}
	tree, err := s.repo.TreeOf(ctx, theirs)
	if err != nil {
		return err
	}
	ourTree, err := s.repo.TreeOf(ctx, ours)
	if err != nil {
		return err
	}
	// The tree as a whole first: bounded before its entries are listed one by one, by the history's check
	// (CheckHistory) as by the tip's.
	if p, err := tipBounds(ctx, s.repo, theirs, tree, ourTree); err != nil {
		return fmt.Errorf("check %s: %w", what, err)
	} else if p != nil {
		rej.Problems, rej.Bounds = []Problem{*p}, true
		return rej
	}
	// Each commit's diff is bounded as the tip is (maxTipFiles): an older commit of a few trees naming one
	// subtree twice at each level, under a clean tip, is refused without its millions of paths walked.
	hist, err := s.repo.CheckHistory(ctx, theirs, known, maxListedProblems+1, maxTipFiles)
	var many *gitstore.TooManyEntriesError
	if errors.As(err, &many) {
		rej.Problems, rej.Bounds = []Problem{{Commit: many.Commit.String(), Entry: "tree", Reason: fmt.Sprintf(
			"its tree, or its first parent's, differs from the other by more than %d files and folders, the most a tip of the context branch may hold (store.MaxTipFiles)",
			many.Max)}}, true
		rej.InHistory = true
		return rej
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", what, err)
	}
	// The tip's own problems first, then those of older commits.
	tps, err := checkTree(ctx, s.repo, theirs, "", tree, ourTree, checkSizes|checkRecords)
	if err != nil {
		return err
	}
	for _, p := range tps {
		add(p)
	}
	// A tip without a manifest that shares no history with the local store is a branch of code under the
	// context branch's name, not a store whose manifest was deleted: ctx doctor --fix there cannot help.
	if unrelated, err := s.unrelatedNonStore(ctx, theirs, tree, ours); err != nil {
		return fmt.Errorf("check %s: %w", what, err)
	} else if unrelated {
		add(Problem{Commit: theirs.String(), Path: ManifestPath, Entry: "file",
			Reason: "absent, and the commit shares no history with this machine's context branch: not a context store"})
	} else if reason, err := s.manifestProblem(ctx, tree, ourTree); err != nil {
		return fmt.Errorf("check %s: %w", what, err)
	} else if reason != "" {
		add(Problem{Commit: theirs.String(), Path: ManifestPath, Entry: "file", Reason: "the manifest cannot be read: " + reason})
		rej.Manifest = true
	}
	for _, np := range hist {
		reason, _ := itemProblem(np.Item)
		add(Problem{Commit: np.Commit.String(), Path: np.Item.Path(), Entry: np.Item.Kind(), Reason: reason, Unsafe: true})
	}
	if len(rej.Problems) == 0 {
		return nil
	}
	if h, err := s.repo.PathHash(ctx, tree, ManifestPath); err == nil && h.IsZero() && !rej.Manifest {
		rej.NotStore = true
	}
	return rej
}

// MaxTipFiles is the most files and folders a fetched tip's tree may hold, every folder's entries counted
// together: a pull checks out each file into .context/, and a tip of 100,000 six-byte files made of one
// blob (a pack of a few MB) wrote 414 MB there on every clone; folders count so that a few trees naming
// one subtree under many paths cannot make every walk of the tip take minutes (docs/limits.md "Files of a
// fetched tip"). Twice the 50,000 entries of the benchmarks' large store.
const MaxTipFiles = 100_000

// MaxTipAddedBytes is the most bytes the files of a fetched tip that the local tip does not hold
// identically may hold together (each path counted, so one blob under many names counts each time), from
// the objects' headers: what one pull writes into .context/ (docs/limits.md "Files of a fetched tip").
const MaxTipAddedBytes = 2 << 30

// maxTipFiles and maxTipAddedBytes are the limits the checks use, lowered by tests (SetTipBounds).
var (
	maxTipFiles            = MaxTipFiles
	maxTipAddedBytes int64 = MaxTipAddedBytes
)

// tipBounds returns the Problem of a fetched tip (commit, its tree tree) that holds more than maxTipFiles
// files and folders together, or whose files that ourTree does not hold identically hold more than
// maxTipAddedBytes together; nil when it holds neither. The count takes folders too, so that a tree of a
// few objects naming one subtree twice at each of 22 levels (0 files, 4 million paths) is refused as
// quickly as 100,000 files; it stops at the bound (gitstore.Repo.CountEntries). The sizes come from the
// objects' headers.
func tipBounds(ctx context.Context, repo *gitstore.Repo, commit, tree, ourTree gitstore.Hash) (*Problem, error) {
	n, err := repo.CountEntries(ctx, tree, maxTipFiles)
	if err != nil {
		return nil, err
	}
	if n > maxTipFiles {
		return &Problem{Commit: commit.String(), Entry: "tree", Reason: fmt.Sprintf(
			"its tree holds more than %d files and folders, the most a tip of the context branch may hold (store.MaxTipFiles)", maxTipFiles)}, nil
	}
	added, _, err := repo.DiffItems(ctx, ourTree, tree)
	if err != nil {
		return nil, err
	}
	var hs []gitstore.Hash
	for _, it := range added {
		if it.IsFile() {
			hs = append(hs, it.Hash)
		}
	}
	sizes, err := repo.ObjectSizes(ctx, hs)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, h := range hs {
		total += sizes[h]
	}
	if total > maxTipAddedBytes {
		return &Problem{Commit: commit.String(), Entry: "tree", Reason: fmt.Sprintf(
			"the files it adds or changes hold %s together, over the most one pull checks out (%s, store.MaxTipAddedBytes)",
			sizeOf(total), sizeOf(maxTipAddedBytes))}, nil
	}
	return nil, nil
}

// unrelatedNonStore reports whether commit theirs (its tree tree) is no context store beside the local
// branch's tip ours: its tree has no manifest.json and the two share no history (a branch of code that has
// the context branch's name; docs/sync.md "A remote branch that is not a context store"). False when ours
// is ZeroHash.
func (s *Store) unrelatedNonStore(ctx context.Context, theirs, tree, ours gitstore.Hash) (bool, error) {
	if ours.IsZero() {
		return false, nil
	}
	if h, err := s.repo.PathHash(ctx, tree, ManifestPath); err != nil || !h.IsZero() {
		return false, err
	}
	base, err := s.repo.MergeBase(ctx, theirs, ours)
	return base.IsZero(), err
}
