package store

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
)

// HandDeletionsError is the refusal of a pull (and so of ctx sync) to record files deleted by hand from
// the checked-out tree on its own: a deletion recorded and pushed deletes the entries for the whole team,
// and `rm -rf .context/knowledge` is an easy slip (a .context/ missing as a whole is a
// CheckoutMissingError, which ctx restore checks out again). Paths are the deleted files (slash paths under .context/), sorted.
// Nothing was fetched or committed. `ctx commit` records the deletions; Restore brings the files back
// (docs/architecture.md "Hand edits").
//
// Blocked is set when every deleted file is under a folder of .context/ that is a symbolic link or a file
// (its path relative to .context/; Link: a link): the files are not deleted but out of reach, ctx commit
// refuses the link, and the way back is to remove it and ctx restore (as the refresh's
// CheckoutBlockedError says).
type HandDeletionsError struct {
	Paths   []string
	Blocked string
	Link    bool
}

func (e *HandDeletionsError) Error() string {
	const show = 5
	if e.Blocked != "" {
		what := "is not a folder"
		if e.Link {
			what = "is a symbolic link, which ctx never reads through"
		}
		dir := CheckoutDir + "/" + e.Blocked
		return fmt.Sprintf("%s %s: %d %s of the context branch under it read as deleted (%s); a pull does not record "+
			"deletions on its own, and ctx commit refuses the link: remove it (rm %s) and run ctx restore",
			dir, what, len(e.Paths), pluralWord(len(e.Paths), "file", "files"), NamedFew(e.Paths, show), dir)
	}
	list := e.Paths
	more := ""
	if len(list) > show {
		list, more = list[:show], fmt.Sprintf(" and %d more", len(e.Paths)-show)
	}
	files := "file"
	if len(e.Paths) != 1 {
		files = "files"
	}
	return fmt.Sprintf("%d %s of %s/ deleted by hand (%s%s): a pull does not record deletions on its own; "+
		"record them with `ctx commit` (the entries are then deleted for everyone at the next push) or bring "+
		"the files back with `ctx restore`", len(e.Paths), files, CheckoutDir, strings.Join(list, ", "), more)
}

// Restored is what Restore did: the files written back from the context refs, and the files added by
// hand that it left alone (Restore never deletes a file the branch does not have).
type Restored struct {
	Written []HandEdit `json:"written"` // modified or deleted by hand, now the refs' version again
	Left    []string   `json:"left"`    // added by hand: not ctx's to delete
	// Blocked are the paths that could not be written because something that is not a regular file
	// stands there (a symbolic link, a folder): ctx never writes through or over those.
	Blocked []string `json:"blocked"`
	// Recreated says that .context/ was missing as a whole (CheckoutMissingError) and was checked out
	// again: CheckedOut files written.
	Recreated  bool `json:"recreated,omitempty"`
	CheckedOut int  `json:"checked_out,omitempty"`
}

// Restore discards hand edits of the checked-out tree, as `git restore` does for a work tree: each file
// modified or deleted by hand is written again from the tip of its context ref (atomically, as a refresh
// writes). With paths, only the hand edits at those slash paths under .context/ or inside those folders
// are restored; a path that matches no hand edit is an error wrapping ErrInvalid and nothing is written.
// Files added by hand are listed in Left, never removed. A .context/ that was checked out here and is
// missing as a whole is checked out again (Recreated), whatever paths name. A .context/ that is not ctx's
// to use (a symbolic link, tracked files) is a *CheckoutDirError, and nothing is written.
func (s *Store) Restore(ctx context.Context, paths []string) (*Restored, error) {
	exists, err := s.checkCheckoutDir(ctx)
	if err != nil {
		return nil, err
	}
	edits, err := s.HandEdits(ctx)
	if errors.Is(err, ErrCheckoutMissing) || (err == nil && !exists && s.CheckoutRoot() != "") {
		r, err := s.refreshWith(ctx, nil, true)
		if err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
		return &Restored{Written: []HandEdit{}, Left: []string{}, Blocked: append([]string{}, r.Kept...), Recreated: true, CheckedOut: len(r.Written)}, nil
	}
	if err != nil {
		return nil, err
	}
	picked := map[string]bool{} // with paths: the hand edits they name
	for _, p := range paths {
		c := path.Clean(strings.TrimPrefix(strings.TrimPrefix(p, CheckoutDir+"/"), "./"))
		if c == "." || c == CheckoutDir {
			c = ""
		}
		if strings.HasPrefix(c, "../") || c == ".." || path.IsAbs(c) {
			return nil, invalidf("restore %s: not a path under %s/", p, CheckoutDir)
		}
		hit := false
		for _, e := range edits {
			if c == "" || e.Path == c || strings.HasPrefix(e.Path, c+"/") {
				picked[e.Path], hit = true, true
			}
		}
		if !hit {
			return nil, invalidf("restore %s: no hand edit of %s/ there (ctx status lists them)", p, CheckoutDir)
		}
	}
	out := &Restored{Written: []HandEdit{}, Left: []string{}, Blocked: []string{}}
	force := map[string]bool{}
	for _, e := range edits {
		if len(paths) > 0 && !picked[e.Path] {
			continue
		}
		if e.Change == ChangeAdded {
			out.Left = append(out.Left, e.Path)
			continue
		}
		force[e.Path] = true
		out.Written = append(out.Written, e)
	}
	if len(force) == 0 {
		return out, nil
	}
	r, err := s.refresh(ctx, force)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	blocked := map[string]bool{}
	for _, p := range r.Kept {
		if force[p] {
			blocked[p] = true
			out.Blocked = append(out.Blocked, p)
		}
	}
	written := out.Written[:0]
	for _, e := range out.Written {
		if !blocked[e.Path] {
			written = append(written, e)
		}
	}
	out.Written = written
	restored := make([]string, 0, len(written))
	for _, e := range written {
		restored = append(restored, e.Path)
	}
	if err := s.forgetGitWritten(restored); err != nil {
		return out, fmt.Errorf("restore: the files are back, but forgetting that git wrote them failed: %w", err)
	}
	return out, nil
}
