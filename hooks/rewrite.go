package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/internal/atomicfile"
)

// BlameNotesRef is the notes ref of ctx's post-commit hook (docs/blame.md).
const BlameNotesRef = "refs/notes/ctx"

// rewriteMarker is the file, under <git common dir>/ctx/, that records that ctx added BlameNotesRef to
// notes.rewriteRef (so Uninstall removes only what Install added).
const rewriteMarker = "blame-notes-rewrite"

// NotesRewriteConfigured reports whether a value of notes.rewriteRef names BlameNotesRef, exactly or by a
// glob: git then copies its notes when `git commit --amend` and `git rebase` rewrite a commit
// (git-config(1) "notes.rewriteRef", "notes.rewrite.<command>").
func NotesRewriteConfigured(ctx context.Context, workTree string) bool {
	out, err := git(ctx, workTree, "config", "--get-all", "notes.rewriteRef")
	if err != nil {
		return false
	}
	for v := range strings.SplitSeq(out, "\n") {
		v = strings.TrimSpace(v)
		if ok, _ := path.Match(v, BlameNotesRef); v == BlameNotesRef || ok {
			return true
		}
	}
	return false
}

func markerPath(ctx context.Context, workTree string) (string, error) {
	c, err := git(ctx, workTree, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", err
	}
	common, err := absFrom(workTree, c)
	if err != nil {
		return "", err
	}
	return filepath.Join(common, "ctx", rewriteMarker), nil
}

// installNotesRewrite adds BlameNotesRef to the repository's notes.rewriteRef (`git config --local --add`)
// unless a value already names it, and records that it did. It notes when the user turned copying off
// for amend or rebase (notes.rewrite.<command> = false), which ctx leaves as it is.
func installNotesRewrite(ctx context.Context, workTree string, st *Status) error {
	for _, cmd := range []string{"amend", "rebase"} {
		if v, err := git(ctx, workTree, "config", "--type=bool", "--get", "notes.rewrite."+cmd); err == nil && v == "false" {
			st.Notes = append(st.Notes, fmt.Sprintf("notes.rewrite.%s is false: git does not copy ctx's notes when %s rewrites a commit", cmd, cmd))
		}
	}
	if NotesRewriteConfigured(ctx, workTree) {
		return nil
	}
	marker, err := markerPath(ctx, workTree)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		return fmt.Errorf("notes rewrite: %w", err)
	}
	// The marker first: a crash between the two leaves a marker without the value, which Uninstall
	// tolerates, never a value Uninstall would not remove.
	if err := atomicfile.Write(marker, []byte(BlameNotesRef+"\n"), 0o644); err != nil {
		return fmt.Errorf("notes rewrite: %w", err)
	}
	if _, err := git(ctx, workTree, "config", "--local", "--add", "notes.rewriteRef", BlameNotesRef); err != nil {
		return fmt.Errorf("notes rewrite: set notes.rewriteRef: %w", err)
	}
	return nil
}

// uninstallNotesRewrite removes the notes.rewriteRef value installNotesRewrite added (and only that one:
// `git config --unset --fixed-value`, which also drops a [notes] section left empty, so the config file
// gets back its bytes).
func uninstallNotesRewrite(ctx context.Context, workTree string) error {
	marker, err := markerPath(ctx, workTree)
	if err != nil {
		return err
	}
	if _, err := os.Stat(marker); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := git(ctx, workTree, "config", "--local", "--fixed-value", "--unset", "notes.rewriteRef", BlameNotesRef); err != nil &&
		NotesRewriteConfigured(ctx, workTree) {
		return fmt.Errorf("notes rewrite: unset notes.rewriteRef: %w", err)
	}
	if err := os.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("notes rewrite: %w", err)
	}
	return nil
}
