package adapters

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/adapters/internal/block"
	"github.com/ctx-dev/ctx/adapters/internal/wtfs"
	"github.com/ctx-dev/ctx/importer"
)

// ImportPlan scans the places of clients (Lookup names; none: every client) that exist in opts.Root —
// their instruction files, Cursor rules and skills folders — with the importer (gitFiles as in
// importer.Options: nil reads every file), then drops what ctx wrote itself (Clean). The plan is for
// importer.Batch and store.ApplyReport, as `ctx import` uses them. Errors: an unknown client (ErrBadArgument), a scan
// error, and Clean's.
func ImportPlan(ctx context.Context, opts Options, gitFiles []string, clients ...string) (importer.Plan, error) {
	cs, err := Lookup(clients...)
	if err != nil {
		return importer.Plan{}, err
	}
	w, err := wtfs.Open(opts.Root)
	if err != nil {
		return importer.Plan{}, err
	}
	defer w.Close()
	seen := map[string]bool{}
	var paths []string
	for _, cl := range cs {
		for _, p := range []string{cl.Instructions, cl.Rules, cl.Skills} {
			if p == "" || seen[p] || !w.Exists(p) {
				continue
			}
			seen[p] = true
			paths = append(paths, filepath.Join(opts.Root, filepath.FromSlash(p)))
		}
	}
	if len(paths) == 0 {
		return importer.Plan{}, nil
	}
	skip, err := SkipOwn(opts)
	if err != nil {
		return importer.Plan{}, err
	}
	plan, err := importer.ScanWith(ctx, importer.Options{Root: opts.Root, GitFiles: gitFiles, Skip: skip}, paths...)
	if err != nil {
		return importer.Plan{}, fmt.Errorf("adapters: import: %w", err)
	}
	return Clean(opts, plan)
}

// SkipOwn is an importer.Options.Skip that skips the files ctx's exports wrote whole (the skills' SKILL.md
// and Cursor rules the Record lists with a checksum, files marked GeneratedMarker) while the import scans,
// before they take a key: the user's own skill of the same name keeps its name, and an import after an
// export changes nothing (docs/adapters.md "Import"). Errors: ReadRecord's.
func SkipOwn(opts Options) (func(source, path string, content []byte) string, error) {
	rec, err := ReadRecord(opts)
	if err != nil {
		return nil, err
	}
	return func(source, p string, content []byte) string {
		if r, ours := rec.Files[relOf(opts, source, p)]; ours && r.SHA256 != "" || isGenerated(content) {
			return ownExportWarning
		}
		return ""
	}, nil
}

// ownExportWarning is the plan warning of a file ctx's exports wrote, after its source.
const ownExportWarning = "written by `ctx adapters export`; not imported"

// relOf is an item's path relative to opts.Root (slash-separated) from its source, else its Item.Path.
func relOf(opts Options, source, p string) string {
	rel := filepath.ToSlash(p)
	if abs, err := filepath.Abs(source); err == nil {
		if r, err := filepath.Rel(opts.Root, abs); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
	}
	return rel
}

// Clean removes from an import plan what ctx's own exports wrote, so that an import after an export
// changes nothing (docs/adapters.md "Import"): the managed block is cut out of every instruction file
// (CLAUDE.md, AGENTS.md, GEMINI.md, copilot-instructions.md, with the files a CLAUDE.md imports; one left
// with nothing but white space is dropped), and Cursor rules marked GeneratedMarker and
// files the Record says ctx wrote (its skills' SKILL.md) are dropped, each with a plan warning. A broken
// or hand-edited block is an error naming the file: ctx does not guess which part of it is the user's.
// `ctx import` can run its plans through Clean too.
func Clean(opts Options, plan importer.Plan) (importer.Plan, error) {
	rec, err := ReadRecord(opts)
	if err != nil {
		return importer.Plan{}, err
	}
	out := importer.Plan{Warnings: plan.Warnings}
	for _, it := range plan.Items {
		// Item.Path is relative to the root for a file inside it, however the path was given.
		rel := relOf(opts, it.Source, it.Path)
		// Files of the record with a checksum are ctx's skills and rules (an instruction file is
		// recorded without one: only its block is ctx's).
		if r, ours := rec.Files[rel]; ours && r.SHA256 != "" || isGenerated(it.Content) {
			out.Warnings = append(out.Warnings, it.Source+": "+ownExportWarning)
			continue
		}
		if !instructionFile(it.Path) {
			out.Items = append(out.Items, it)
			continue
		}
		cut, had, err := block.RemoveAll(it.Content)
		if err != nil {
			return importer.Plan{}, fmt.Errorf("adapters: import %s: %w", it.Source, err)
		}
		if had {
			if len(bytes.TrimSpace(bytes.TrimPrefix(cut, []byte("\ufeff")))) == 0 {
				out.Warnings = append(out.Warnings, it.Source+": holds only ctx's managed block; not imported")
				continue
			}
			it.Content = cut
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// instructionFile reports whether an item's path (relative to the root) is named like a client's
// instruction file, the only files that get a managed block. Other files may quote the markers (a
// page about ctx) and are imported as they are.
func instructionFile(p string) bool {
	base := path.Base(filepath.ToSlash(p))
	for _, cl := range Clients {
		if cl.Instructions != "" && path.Base(cl.Instructions) == base {
			return true
		}
	}
	return false
}
