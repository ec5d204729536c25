package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ctx-dev/ctx/merge"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/gofrs/flock"
)

// RecordFile is the checkout record inside the checked-out tree: which commit of each scope it mirrors
// and the blob of every file it wrote, so that hand edits can be told apart from ctx's own writes.
const RecordFile = ".ctx-checkout.json"

// Record is the content of RecordFile.
type Record struct {
	Commits map[Scope]string       `json:"commits"`
	Files   map[string]RecordEntry `json:"files"`
}

// RecordEntry is one file of the checkout record.
type RecordEntry struct {
	Scope Scope  `json:"scope"`
	Blob  string `json:"blob"`
}

// CheckoutRoot is the path of the checked-out tree, "" in a bare repository.
func (s *Store) CheckoutRoot() string {
	if s.Repo.Bare() {
		return ""
	}
	return filepath.Join(s.Repo.WorkTree(), CheckoutDir)
}

// ReadRecord reads the checkout record; nil when the tree was never checked out.
func (s *Store) ReadRecord() (*Record, error) {
	root := s.CheckoutRoot()
	if root == "" {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(root, RecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkout record: %w", err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("checkout record %s: %w", filepath.Join(root, RecordFile), err)
	}
	if rec.Files == nil {
		rec.Files = map[string]RecordEntry{}
	}
	return &rec, nil
}

// Refreshed reports what Refresh did.
type Refreshed struct {
	Written, Removed []string // paths updated from the refs
	Kept             []string // paths edited by hand that were not overwritten (ctx status lists them)
}

func blobHash(b []byte) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, b) }

// Refresh makes the checked-out tree mirror the tips of the context refs (design §2): only paths whose
// blob changed since the recorded commits are written (atomically, by rename) or removed; a file edited
// by hand since the last refresh is never overwritten, it is reported in Kept. A bare repository has no
// checked-out tree (nothing to do). Concurrent refreshes of one worktree are serialised by a lock in the
// worktree's git dir.
func (s *Store) Refresh(ctx context.Context) (*Refreshed, error) { return s.refresh(ctx, nil) }

// refresh is Refresh; the paths in force are rewritten from the refs even when edited by hand (after
// ctx commit recorded them).
func (s *Store) refresh(ctx context.Context, force map[string]bool) (*Refreshed, error) {
	root := s.CheckoutRoot()
	out := &Refreshed{}
	if root == "" {
		return out, nil
	}
	if ok, err := s.Initialized(ctx); err != nil || !ok {
		return out, err
	}
	if err := os.MkdirAll(filepath.Join(s.Repo.GitDir(), "ctx"), 0o777); err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	fl := flock.New(filepath.Join(s.Repo.GitDir(), "ctx", "checkout.lock"))
	if err := fl.Lock(); err != nil {
		return nil, fmt.Errorf("refresh: lock: %w", err)
	}
	defer fl.Unlock()

	rec, err := s.ReadRecord()
	if err != nil {
		return nil, err
	}
	if rec == nil {
		rec = &Record{Commits: map[Scope]string{}, Files: map[string]RecordEntry{}}
	}
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, err
	}
	trees := map[Scope]plumbing.Hash{}
	changed := map[string]bool{}
	for _, sc := range Scopes {
		if trees[sc], err = s.Repo.TreeOf(ctx, tips[sc]); err != nil {
			return nil, err
		}
		oldTree := plumbing.ZeroHash
		if c := rec.Commits[sc]; c != "" {
			if oldTree, err = s.Repo.TreeOf(ctx, plumbing.NewHash(c)); err != nil {
				oldTree = plumbing.ZeroHash
			}
		}
		var paths []string
		if len(rec.Files) == 0 || oldTree.IsZero() && rec.Commits[sc] != "" {
			err = s.Repo.Walk(ctx, trees[sc], func(p string, _ plumbing.Hash) error { paths = append(paths, p); return nil })
		} else {
			paths, err = s.Repo.DiffTrees(ctx, oldTree, trees[sc])
		}
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			changed[p] = true
		}
	}
	// A file deleted by hand from .context/ is a hand edit (ctx status lists it, ctx commit records it),
	// not something to restore; only a missing .context/ (no record) is checked out whole again.
	for p := range force {
		changed[p] = true
	}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		var newScope Scope
		var newBlob plumbing.Hash
		for _, sc := range Scopes {
			h, err := s.Repo.PathHash(ctx, trees[sc], p)
			if err != nil {
				return nil, err
			}
			if !h.IsZero() {
				newScope, newBlob = sc, h
				break
			}
		}
		disk := filepath.Join(root, filepath.FromSlash(p))
		cur, derr := os.ReadFile(disk)
		onDisk := derr == nil
		old, had := rec.Files[p]
		switch {
		case onDisk && !newBlob.IsZero() && blobHash(cur) == newBlob:
			// already what the ref has
		case onDisk && !force[p] && (!had || blobHash(cur).String() != old.Blob):
			out.Kept = append(out.Kept, p)
			continue
		case newBlob.IsZero():
			if onDisk {
				if err := os.Remove(disk); err != nil {
					return nil, fmt.Errorf("refresh: %w", err)
				}
				removeEmptyDirs(root, filepath.Dir(disk))
				out.Removed = append(out.Removed, p)
			}
		default:
			data, err := s.Repo.ReadBlob(ctx, newBlob)
			if err != nil {
				return nil, err
			}
			if err := writeFileAtomic(disk, data, 0o644); err != nil {
				return nil, fmt.Errorf("refresh %s: %w", p, err)
			}
			out.Written = append(out.Written, p)
		}
		if newBlob.IsZero() {
			delete(rec.Files, p)
		} else {
			rec.Files[p] = RecordEntry{Scope: newScope, Blob: newBlob.String()}
		}
	}
	for _, sc := range Scopes {
		rec.Commits[sc] = ""
		if !tips[sc].IsZero() {
			rec.Commits[sc] = tips[sc].String()
		}
	}
	b, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(root, RecordFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("refresh: write record: %w", err)
	}
	return out, nil
}

func removeEmptyDirs(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root) {
		if err := os.Remove(dir); err != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// HandEdit is a file of the checked-out tree that differs from what ctx last wrote there.
type HandEdit struct {
	Path   string `json:"path"`
	Change string `json:"change"` // "modified", "added", "deleted"
	Scope  Scope  `json:"scope"`
}

// HandEdits lists the files of the checked-out tree edited by hand since the last refresh, sorted by path.
// None when the tree was never checked out.
func (s *Store) HandEdits(ctx context.Context) ([]HandEdit, error) {
	root := s.CheckoutRoot()
	rec, err := s.ReadRecord()
	if err != nil || rec == nil {
		return nil, err
	}
	var out []HandEdit
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if de.IsDir() || rel == RecordFile || strings.Contains(filepath.Base(p), ".tmp") && strings.HasPrefix(filepath.Base(p), ".") {
			return nil
		}
		seen[rel] = true
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, ok := rec.Files[rel]
		switch {
		case !ok:
			out = append(out, HandEdit{Path: rel, Change: "added", Scope: scopeFromContent(data)})
		case blobHash(data).String() != f.Blob:
			out = append(out, HandEdit{Path: rel, Change: "modified", Scope: f.Scope})
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("scan %s: %w", root, err)
	}
	for p, f := range rec.Files {
		if !seen[p] {
			out = append(out, HandEdit{Path: p, Change: "deleted", Scope: f.Scope})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// scopeFromContent reads the scope of a file added by hand from its front matter (`scope: private`);
// public otherwise.
func scopeFromContent(b []byte) Scope {
	fm, _, ok := SplitFrontMatter(b)
	if !ok {
		return Public
	}
	m, err := ParseMeta(fm)
	if err != nil {
		return Public
	}
	sc, err := ParseScope(m.String("scope"))
	if err != nil {
		return Public
	}
	return sc
}

// CommitHandEdits records the hand edits of the checked-out tree as one commit per scope touched (ctx
// commit). msg replaces the default summary. Nothing to record is no commit and no error.
//
// Every edited file is validated first (ValidateFile): one that would break readers on every clone is
// refused, with all the problems listed, and nothing is committed. When the context ref has moved since
// the file was checked out (a write of another process or worktree, or a pull), the hand edit is merged
// three-way with the merge layer (base: the version checked out, ours: the file on disk, theirs: the
// ref's version): a newer write is never silently reverted, and an overlapping change becomes a conflict
// record. The checked-out tree then mirrors what was committed.
func (s *Store) CommitHandEdits(ctx context.Context, msg string) (*Committed, []HandEdit, error) {
	edits, err := s.HandEdits(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(edits) == 0 {
		return &Committed{}, nil, nil
	}
	rec, err := s.ReadRecord()
	if err != nil {
		return nil, nil, err
	}
	root := s.CheckoutRoot()
	disk := map[string][]byte{}
	var problems []string
	for _, e := range edits {
		if e.Change == "deleted" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.Path)))
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", e.Path, err)
		}
		if err := ValidateFile(e.Path, data); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		disk[e.Path] = data
	}
	if len(problems) > 0 {
		return nil, edits, invalidf("nothing committed: fix or remove these files of %s first:\n  %s", CheckoutDir, strings.Join(problems, "\n  "))
	}
	// One commit per scope, each naming only the paths of its own scope: the public commit must not list
	// a private path (docs/security.md).
	byScope := map[Scope][]string{}
	force := map[string]bool{}
	for _, e := range edits {
		byScope[e.Scope] = append(byScope[e.Scope], e.Path)
		force[e.Path] = true
	}
	op := Op{Name: "commit", Scoped: map[Scope]Op{}}
	for sc, paths := range byScope {
		summary := msg
		if summary == "" {
			summary = fmt.Sprintf("record %d hand edit(s) of %s", len(paths), CheckoutDir)
		}
		op.Scoped[sc] = Op{Name: "commit", Key: strings.Join(paths, ","), Summary: summary}
	}
	op.Summary = msg
	if op.Summary == "" {
		op.Summary = "record hand edits of " + CheckoutDir
	}
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		ed := Edits{}
		decisionEdits := map[Scope][]HandEdit{}
		for _, e := range edits {
			if strings.HasPrefix(e.Path, "decisions/") {
				// Decisions merge as a folder (renumbering follows a decision by uid, numbers stay unique).
				decisionEdits[e.Scope] = append(decisionEdits[e.Scope], e)
				continue
			}
			cur, err := v.ReadIn(ctx, e.Scope, e.Path)
			curExists := err == nil
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			fb, err := s.recordedFiles(ctx, rec, e.Scope, e.Path, false)
			if err != nil {
				return nil, err
			}
			ft := merge.Files{}
			if curExists {
				ft[e.Path] = cur
			}
			s.mergeHandEdits(fb, ft, []HandEdit{e}, disk, e.Scope, ed)
		}
		for sc, des := range decisionEdits {
			fb, err := s.recordedFiles(ctx, rec, sc, "decisions/", true)
			if err != nil {
				return nil, err
			}
			ft := merge.Files{}
			names, err := v.r.List(ctx, sc, "decisions")
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				if n.Dir {
					continue
				}
				b, err := v.ReadIn(ctx, sc, "decisions/"+n.Name)
				if err != nil {
					return nil, err
				}
				ft["decisions/"+n.Name] = b
			}
			s.mergeHandEdits(fb, ft, des, disk, sc, ed)
		}
		return ed, nil
	})
	if err != nil {
		return c, edits, err
	}
	// What was committed replaces the hand-edited files (their content is in the commit or in a conflict
	// record), so that .context/ mirrors the branch again.
	if _, err := s.refresh(ctx, force); err != nil {
		return c, edits, fmt.Errorf("committed, but refreshing %s failed: %w", CheckoutDir, err)
	}
	return c, edits, err
}

// recordedFiles returns the files of scope sc as they were checked out (the blobs of the checkout record):
// the one file at p, or with dir every file whose path starts with p.
func (s *Store) recordedFiles(ctx context.Context, rec *Record, sc Scope, p string, dir bool) (merge.Files, error) {
	out := merge.Files{}
	for path, f := range rec.Files {
		if f.Scope != sc || (dir && !strings.HasPrefix(path, p)) || (!dir && path != p) {
			continue
		}
		b, err := s.Repo.ReadBlob(ctx, plumbing.NewHash(f.Blob))
		if err != nil {
			return nil, fmt.Errorf("read the checked-out version of %s: %w", path, err)
		}
		out[path] = b
	}
	return out, nil
}

// mergeHandEdits adds to ed the edits that record hand edits (their content in disk; deleted ones
// absent) over the ref's current files ft, given the files as checked out, fb. When the ref has not
// moved (ft == fb) the hand edits are taken as they are; otherwise base fb, ours (fb with the hand edits)
// and theirs ft are merged with the merge layer and the result replaces ft (conflict records included).
func (s *Store) mergeHandEdits(fb, ft merge.Files, es []HandEdit, disk map[string][]byte, sc Scope, ed Edits) {
	fo := merge.Files{}
	for p, b := range fb {
		fo[p] = b
	}
	for _, e := range es {
		if b, ok := disk[e.Path]; ok {
			fo[e.Path] = b
		} else {
			delete(fo, e.Path)
		}
	}
	moved := len(fb) != len(ft)
	for p, b := range fb {
		if c, ok := ft[p]; !ok || !bytes.Equal(b, c) {
			moved = true
		}
	}
	result := fo
	if moved {
		result = merge.Tree(fb, fo, ft).Files
	} else {
		// Unchanged ref: the files the hand edits did not touch are as they are on the ref.
		for p, b := range ft {
			if _, ok := result[p]; !ok {
				if touched(es, p) {
					continue
				}
				result[p] = b
			}
		}
	}
	for p, b := range result {
		if c, ok := ft[p]; !ok || !bytes.Equal(b, c) {
			ed.Put(sc, p, b)
		}
	}
	for p := range ft {
		if _, ok := result[p]; !ok {
			ed.Del(sc, p)
		}
	}
}

func touched(es []HandEdit, p string) bool {
	for _, e := range es {
		if e.Path == p {
			return true
		}
	}
	return false
}

// checkPath refuses paths of the checked-out tree that could not be store paths: every segment must be a
// plain name (no "..", no NUL).
func checkPath(p string) error {
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsRune(seg, 0) {
			return fmt.Errorf("%s: not a valid path in the store", p)
		}
	}
	if bytes.ContainsAny([]byte(p), "\\") {
		return fmt.Errorf("%s: backslash in path", p)
	}
	return nil
}

// CheckoutView returns a view of the checked-out tree (the MCP server's reads, design §7), refreshing it
// first when a context ref moved since it was written (a write or pull of another process). A bare
// repository reads from the refs. ErrNotInitialized when there is no context branch.
func (s *Store) CheckoutView(ctx context.Context) (*View, error) {
	tips, err := s.Tips(ctx)
	if err != nil {
		return nil, err
	}
	if tips[Public].IsZero() {
		return nil, ErrNotInitialized
	}
	root := s.CheckoutRoot()
	if root == "" {
		return s.RefView(ctx)
	}
	want := map[Scope]string{}
	for _, sc := range Scopes {
		if !tips[sc].IsZero() {
			want[sc] = tips[sc].String()
		}
	}
	// Every MCP read comes here: while neither the refs nor the record file changed, the scopes of the
	// last read serve again instead of parsing the record (one line per file of the store) each time.
	fi, statErr := os.Stat(filepath.Join(root, RecordFile))
	if scopes := s.recCache.get(fi, statErr, want); scopes != nil {
		return NewView(&DirReader{Root: root, Scopes: scopes}), nil
	}
	rec, err := s.ReadRecord()
	if err != nil {
		return nil, err
	}
	if rec == nil || !sameCommits(rec.Commits, want) {
		if _, err := s.Refresh(ctx); err != nil {
			return nil, err
		}
		if rec, err = s.ReadRecord(); err != nil {
			return nil, err
		}
	}
	if rec == nil {
		return s.RefView(ctx)
	}
	scopes := make(map[string]Scope, len(rec.Files))
	for p, f := range rec.Files {
		scopes[p] = f.Scope
	}
	fi, statErr = os.Stat(filepath.Join(root, RecordFile))
	s.recCache.put(fi, statErr, rec.Commits, scopes)
	return NewView(&DirReader{Root: root, Scopes: scopes}), nil
}

// sameCommits reports whether a checkout record mirrors the tips want (scope -> commit; absent = no ref).
func sameCommits(rec map[Scope]string, want map[Scope]string) bool {
	for _, sc := range Scopes {
		if rec[sc] != want[sc] {
			return false
		}
	}
	return true
}

// recordCache remembers the scopes of the checkout record as last read, with the record file's
// modification time and size and the commits it mirrors.
type recordCache struct {
	mu      sync.Mutex
	mod     time.Time
	size    int64
	commits map[Scope]string
	scopes  map[string]Scope
}

// get returns the cached scopes when the record file is the one read last and mirrors want; nil otherwise.
func (c *recordCache) get(fi os.FileInfo, statErr error, want map[Scope]string) map[string]Scope {
	if statErr != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scopes == nil || !fi.ModTime().Equal(c.mod) || fi.Size() != c.size || !sameCommits(c.commits, want) {
		return nil
	}
	return c.scopes
}

func (c *recordCache) put(fi os.FileInfo, statErr error, commits map[Scope]string, scopes map[string]Scope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if statErr != nil {
		c.scopes = nil
		return
	}
	c.mod, c.size, c.commits, c.scopes = fi.ModTime(), fi.Size(), commits, scopes
}
