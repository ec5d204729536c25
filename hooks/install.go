package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/internal/atomicfile"
)

// Install adds ctx's block to the post-checkout, post-merge and post-rewrite
// hooks (and pre-push when opt.PrePush, post-commit when opt.Blame) in Dir(workTree), creating the
// directory and missing files ("#!/bin/sh", mode 0755).
//
// When DetectManager finds husky, lefthook or pre-commit, Install writes
// nothing: it returns Status.Manager and Status.Snippet for the user to paste
// into the manager's config (docs/hooks.md). When the hooks directory is inside
// the work tree (Status.InWorkTree: core.hooksPath=.githooks), Install writes
// nothing there unless opt.InWorkTree: Status.Snippet then holds the lines to
// add (WorkTreeSnippet). Files that are symlinks or not shell
// scripts are left alone and reported in HookStatus.Skipped. A file that is
// not executable is edited but keeps its mode (git ignores it; see
// HookStatus.Executable and Status.Notes).
//
// Install twice gives the same bytes: an existing block is rewritten in place
// and a file that would not change is not written.
func Install(ctx context.Context, workTree string, opt Options) (Status, error) {
	st, err := begin(ctx, workTree)
	if err != nil {
		return st, err
	}
	if st.Manager != NoManager {
		st.Snippet = SnippetFor(st.Manager, opt)
		st.Notes = append(st.Notes, fmt.Sprintf("%s manages this repository's hooks: ctx wrote nothing; add the snippet to its config", st.Manager))
		return report(st), nil
	}
	if st.InWorkTree && !opt.InWorkTree {
		// The hooks folder is the user's files (docs/hooks.md "Where the hooks go"): what to add, not an edit.
		st = report(st)
		st.Snippet = WorkTreeSnippet(st, opt)
		return st, nil
	}
	if err := os.MkdirAll(st.Dir, 0o755); err != nil {
		return st, fmt.Errorf("install hooks: create %s: %w", st.Dir, err)
	}
	want := map[Hook]bool{PostCheckout: true, PostMerge: true, PostRewrite: true, PrePush: opt.PrePush, PostCommit: opt.Blame}
	for i := range st.Hooks {
		hs := &st.Hooks[i]
		if !want[hs.Name] {
			continue
		}
		if err := installOne(hs); err != nil {
			return report(st), fmt.Errorf("install %s hook: %w", hs.Name, err)
		}
	}
	if opt.Blame {
		// git copies the notes of refs/notes/ctx when amend and rebase rewrite a commit (docs/blame.md "Rewrites").
		if err := installNotesRewrite(ctx, workTree, &st); err != nil {
			return report(st), fmt.Errorf("install: %w", err)
		}
	}
	return report(st), nil
}

// Uninstall removes ctx's blocks from every hook ctx manages in
// Dir(workTree): a file ctx created that holds nothing else is deleted, a
// user's file gets back the bytes it had before Install. It removes ctx's
// blocks even when a hook manager is detected (ctx only ever removes its own
// lines), and then returns in Snippet what undoes the manager's install snippet
// (UninstallSnippetFor): for husky, commands that delete ctx's lines.
func Uninstall(ctx context.Context, workTree string) (Status, error) {
	st, err := begin(ctx, workTree)
	if err != nil {
		return st, err
	}
	if st.Manager != NoManager {
		st.Snippet = UninstallSnippetFor(st.Manager, Options{PrePush: true, Blame: true})
		st.Notes = append(st.Notes, fmt.Sprintf("%s manages this repository's hooks: remove the ctx lines you added to its config", st.Manager))
	}
	for i := range st.Hooks {
		if err := uninstallOne(&st.Hooks[i]); err != nil {
			return report(st), fmt.Errorf("uninstall %s hook: %w", st.Hooks[i].Name, err)
		}
	}
	if err := uninstallNotesRewrite(ctx, workTree); err != nil {
		return report(st), fmt.Errorf("uninstall: %w", err)
	}
	return report(st), nil
}

// Report returns the state of ctx's hooks in workTree without writing
// anything. When a manager is detected, or the hooks directory is inside the
// work tree (Status.InWorkTree), Snippet holds the text to add: for the hooks
// Install would add with opt (pre-push when opt.PrePush, the user's
// sync.push-with-git; post-commit when opt.Blame), so that `ctx hooks status`
// prints every line the user must add (docs/hooks.md "Where the hooks go").
func Report(ctx context.Context, workTree string, opt Options) (Status, error) {
	st, err := begin(ctx, workTree)
	if err != nil {
		return st, err
	}
	if st.Manager != NoManager {
		st.Snippet = SnippetFor(st.Manager, opt)
	}
	st = report(st)
	if st.Manager == NoManager && st.InWorkTree {
		st.Snippet = WorkTreeSnippet(st, opt)
	}
	return st, nil
}

// begin resolves the hooks directory and manager and lists the four hooks.
func begin(ctx context.Context, workTree string) (Status, error) {
	dir, err := Dir(ctx, workTree)
	if err != nil {
		return Status{}, err
	}
	st := Status{Dir: dir, Manager: DetectManager(ctx, workTree, dir)}
	for _, h := range AllHooks {
		st.Hooks = append(st.Hooks, HookStatus{Name: h, Path: filepath.Join(dir, string(h))})
	}
	top, gitDir, common, ok := repoDirs(ctx, workTree)
	if !ok {
		return st, nil
	}
	real := resolved(dir)
	switch {
	case within(real, gitDir) || within(real, common):
	case within(real, top):
		// core.hooksPath names a folder among the user's files (.githooks, which teams commit): ctx's
		// writes there would be edits of tracked files and new files in `git status`, and a later
		// checkout of a commit that changes a hook would fail on them (docs/hooks.md "Where the hooks go").
		st.InWorkTree = true
	default:
		st.Notes = append(st.Notes, fmt.Sprintf("hooks directory %s (core.hooksPath) is outside this repository: ctx's blocks there run for every repository that uses it", dir))
	}
	return st, nil
}

// repoDirs returns workTree's top, git dir and common git dir, absolute and with symbolic links
// resolved (one git process); ok is false when git cannot say (no work tree).
func repoDirs(ctx context.Context, workTree string) (top, gitDir, common string, ok bool) {
	out, err := git(ctx, workTree, "rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir")
	if err != nil {
		return "", "", "", false
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 3 || lines[0] == "" {
		return "", "", "", false
	}
	var abs [3]string
	for i, l := range lines {
		p, err := absFrom(workTree, l)
		if err != nil {
			return "", "", "", false
		}
		abs[i] = resolved(p)
	}
	return abs[0], abs[1], abs[2], true
}

// resolved is p with its symbolic links resolved, as far as p exists (a hooks directory not made yet is
// resolved through its parent); p itself when nothing of it can be.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(r, filepath.Base(p))
	}
	return p
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// report fills the read-only fields of every hook and adds notes.
func report(st Status) Status {
	for i := range st.Hooks {
		hs := &st.Hooks[i]
		hs.Exists, hs.Installed, hs.UserContent, hs.Executable, hs.Outdated = false, false, false, false, false
		fi, err := os.Lstat(hs.Path)
		if err != nil {
			continue
		}
		hs.Exists = true
		if fi.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Stat(hs.Path); err == nil {
				fi = t
			}
		}
		hs.Executable = fi.Mode().IsRegular() && fi.Mode().Perm()&0o100 != 0
		b, err := os.ReadFile(hs.Path)
		if err != nil {
			continue
		}
		lines := splitLines(b)
		spans, err := findBlocks(lines)
		hs.Installed = err == nil && len(spans) > 0
		hs.UserContent = userContent(b)
		if hs.Installed && blockEdited(lines[spans[0].begin:spans[0].end+1]) {
			st.Notes = append(st.Notes, fmt.Sprintf("ctx's block in %s was edited by hand: ctx hooks install and uninstall leave it as it is", hs.Name))
		} else if hs.Installed {
			updated, err := AddBlock(b, hs.Name)
			hs.Outdated = err == nil && !bytes.Equal(updated, b)
		}
		if hs.Installed && !hs.Executable {
			st.Notes = append(st.Notes, fmt.Sprintf("%s is not executable: git does not run it (ctx leaves file modes to you: chmod +x %s)", hs.Path, hs.Path))
		}
	}
	var old []string
	for _, hs := range st.Hooks {
		if hs.Outdated {
			old = append(old, string(hs.Name))
		}
	}
	if len(old) > 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("ctx's block in %s was written by another version of ctx: run ctx hooks install to update it", strings.Join(old, ", ")))
	}
	return st
}

// installOne adds ctx's block to one hook file.
func installOne(hs *HookStatus) error {
	fi, err := os.Lstat(hs.Path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := atomicfile.Write(hs.Path, NewFile(hs.Name), 0o755); err != nil {
			return err
		}
		hs.Changed = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", hs.Path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		hs.Skipped = "symlink: ctx does not edit the file it points to; add `ctx hooks run " + string(hs.Name) + " \"$@\"` there yourself"
		return nil
	}
	if !fi.Mode().IsRegular() {
		hs.Skipped = "not a regular file"
		return nil
	}
	old, err := os.ReadFile(hs.Path)
	if err != nil {
		return fmt.Errorf("read %s: %w", hs.Path, err)
	}
	if why := notShell(old); why != "" {
		hs.Skipped = why + ": add `ctx hooks run " + string(hs.Name) + "` with the hook's arguments yourself"
		return nil
	}
	// A block edited by hand (its checksum line no longer matches) holds lines of the user's: replacing
	// it would delete them. It is left as it is, as uninstall leaves it (docs/hooks.md).
	{
		lines := splitLines(old)
		if spans, err := findBlocks(lines); err == nil {
			for _, sp := range spans {
				if blockEdited(lines[sp.begin : sp.end+1]) {
					hs.Skipped = fmt.Sprintf("ctx's block (lines %d-%d) was edited by hand: left in place so your lines are kept; move them out of the block (or delete the block) and run ctx hooks install again", sp.begin+1, sp.end+1)
					return nil
				}
			}
		}
	}
	updated, err := AddBlock(old, hs.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", hs.Path, err)
	}
	if bytes.Equal(updated, old) {
		return nil
	}
	if err := atomicfile.Write(hs.Path, updated, fi.Mode().Perm()); err != nil {
		return err
	}
	hs.Changed = true
	return nil
}

// uninstallOne removes ctx's blocks from one hook file.
func uninstallOne(hs *HookStatus) error {
	fi, err := os.Lstat(hs.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", hs.Path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil // symlinks and others: Install never edits them
	}
	old, err := os.ReadFile(hs.Path)
	if err != nil {
		return fmt.Errorf("read %s: %w", hs.Path, err)
	}
	lines := splitLines(old)
	spans, err := findBlocks(lines)
	if err != nil {
		return fmt.Errorf("%s: %w", hs.Path, err)
	}
	for _, s := range spans {
		if blockEdited(lines[s.begin : s.end+1]) {
			// Lines the user added (or changed) inside ctx's block are theirs: the file is left as it is.
			hs.Skipped = fmt.Sprintf("ctx's block (lines %d-%d) was edited by hand: left in place; remove it yourself, keeping your lines", s.begin+1, s.end+1)
			return nil
		}
	}
	updated, remove, err := RemoveBlocks(old)
	if err != nil {
		return fmt.Errorf("%s: %w", hs.Path, err)
	}
	if remove {
		if err := os.Remove(hs.Path); err != nil {
			return fmt.Errorf("remove %s: %w", hs.Path, err)
		}
		hs.Changed = true
		return nil
	}
	if bytes.Equal(updated, old) {
		return nil
	}
	if err := atomicfile.Write(hs.Path, updated, fi.Mode().Perm()); err != nil {
		return err
	}
	hs.Changed = true
	return nil
}
