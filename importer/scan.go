package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Kind is what an Item becomes on the context branch (docs/format.md "Files").
type Kind string

// The kinds of Item, one per directory of the context branch.
const (
	KindDecision   Kind = "decision"   // decisions/<NNNN>-<slug>.md
	KindSkill      Kind = "skill"      // skills/<name>/SKILL.md
	KindKnowledge  Kind = "knowledge"  // knowledge/<key>.md
	KindConvention Kind = "convention" // conventions/<key>.md
)

// Item is one context entry to create from one file.
type Item struct {
	Kind Kind `json:"kind"`
	// Key is the knowledge or convention key, or the skill name; it passes ValidKey and is unique within
	// the plan (across kinds). "" for decisions, which the store numbers.
	Key string `json:"key,omitempty"`
	// Source is the path of the file it came from: the path given to Scan joined with the file's path
	// below it (so os.ReadFile(Source) reads it again).
	Source string `json:"source"`
	// Content is the file, byte for byte: the body to store (for skills the whole SKILL.md). It is left
	// out of JSON (a dry-run listing); the bytes are those of Source.
	Content []byte `json:"-"`

	// Number is the decision's own ADR number (0001-x.md, adr-009-x.md, "# ADR 009: x", "# 1. x"), 0 when
	// it has none. Decisions only.
	Number int `json:"number,omitempty"`
	// Title of the decision: front-matter title, first "# " heading, or made from the file name.
	Title string `json:"title,omitempty"`
	// Status is "proposed", "accepted", "deprecated", "superseded", or "" when unknown (NormalizeStatus).
	Status string `json:"status,omitempty"`
	// StatusText is the status as written when it is not simply Status ("draft", "Implemented",
	// "superseded by [x](x.md)", "完成", "Rejected"); docs/format.md's status_text.
	StatusText string `json:"status_text,omitempty"`
	// Date is the decision's date as written (front matter, "Date:"/"日期:" line), or the log4brains
	// file-name date 20200924 -> 2020-09-24; "" when there is none.
	Date string `json:"date,omitempty"`

	// Description is the skill's front-matter description. Skills only.
	Description string `json:"description,omitempty"`

	// Warnings says what was guessed for this item: invalid front matter, a title made from the file
	// name, a key changed from the file name or renamed on collision, a status word mapped or unknown.
	Warnings []string `json:"warnings,omitempty"`
}

// Plan is the result of Scan: the items to import, in the order their files were found, and warnings
// that belong to no item, one a line of the form "<path>: <what happened>" (files skipped and why).
type Plan struct {
	Items    []Item   `json:"items"`
	Warnings []string `json:"warnings"`
}

// Scan walks paths (files or folders; folders recursively in sorted order, skipping .git) and classifies
// every file it finds. It reads files but writes nothing. A path that does not exist is an error;
// anything that cannot be classified is skipped with a plan warning, never an error.
//
// Rules, first match wins (see doc.go for the reasoning):
//
//  1. a folder holding SKILL.md is a skill: its SKILL.md becomes a KindSkill item named after the
//     front-matter name when valid, else after the folder; its other files are skipped with a warning;
//  2. AGENTS.md, CLAUDE.md, GEMINI.md, .cursorrules, .github/copilot-instructions.md and *.mdc under
//     .cursor/rules/ are knowledge, keyed by their path relative to the scanned folder
//     ("apps/webapp/CLAUDE.md" -> "apps-webapp-claude");
//  3. CONTRIBUTING.md, CONVENTIONS.md, CODE_STYLE.md, STYLEGUIDE.md / STYLE_GUIDE.md / "style guide.md"
//     (and alike) are conventions, keyed by folder and file ("restic/CONTRIBUTING.md" ->
//     "restic-contributing");
//  4. markdown files in an ADR folder are decisions: a folder named adr, adrs, decisions (or alike) at any
//     depth, or a folder where at least half of the markdown files are named like ADRs (NNNN-x.md,
//     adr-NNN-x.md, YYYYMMDD-x.md); README, index and template files there are skipped with a warning;
//  5. any other markdown file under a conventions-like folder (conventions, guidelines, styleguide,
//     google-styleguide, code-style, ...) is a convention;
//  6. everything else is skipped with a plan warning.
//
// File names using the corpus convention of "__" for a path separator (apps__webapp__CLAUDE.md,
// .cursor__rules__repo.mdc) are read as the path they stand for. Keys are unique within the plan: on a
// collision the later item gets "-2", "-3", ... and a warning.
func Scan(ctx context.Context, paths ...string) (Plan, error) {
	if len(paths) == 0 {
		return Plan{}, errors.New("importer: scan: no paths given")
	}
	s := &scanner{keys: map[string]string{}, seen: map[string]string{}}
	for _, p := range paths {
		if err := s.scanPath(ctx, p); err != nil {
			return Plan{}, err
		}
	}
	return s.plan, nil
}

// scanner holds the state of one Scan.
type scanner struct {
	plan Plan
	keys map[string]string // key -> source that holds it
	seen map[string]string // absolute file path -> source it was scanned as
}

// file is one file found below a scanned path.
type file struct {
	src     string // path as the caller sees it (Item.Source)
	rel     string // slash-separated path relative to the scanned folder
	logical string // rel with "__" in the file name read as "/"
	symlink bool
}

// root is one scanned path: its files and what is known about its folders.
type root struct {
	name   string // base name of the scanned folder (for a file: of its folder)
	single bool   // the path given was a file
	files  []file
	skills map[string]bool // rel folders that hold SKILL.md
	adrs   map[string]bool // rel folders whose markdown files are mostly named like ADRs
}

func (s *scanner) warn(src, format string, args ...any) {
	s.plan.Warnings = append(s.plan.Warnings, src+": "+fmt.Sprintf(format, args...))
}

// scanPath collects the files of one path and classifies them.
func (s *scanner) scanPath(ctx context.Context, arg string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("importer: scan %s: %w", arg, err)
	}
	info, err := os.Stat(arg)
	if err != nil {
		return fmt.Errorf("importer: scan %s: %w", arg, err)
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return fmt.Errorf("importer: scan %s: %w", arg, err)
	}
	r := &root{skills: map[string]bool{}, adrs: map[string]bool{}}
	if !info.IsDir() {
		r.single = true
		r.name = filepath.Base(filepath.Dir(abs))
		base := filepath.Base(abs)
		r.files = []file{{src: arg, rel: base, logical: expandFlat(base)}}
	} else {
		r.name = filepath.Base(abs)
		err := filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				if p == arg {
					return err
				}
				s.warn(p, "cannot read: %v; skipped", err)
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.Name() == ".git" && p != arg {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(arg, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			r.files = append(r.files, file{
				src:     p,
				rel:     rel,
				logical: joinRel(path.Dir(rel), expandFlat(path.Base(rel))),
				symlink: d.Type()&fs.ModeSymlink != 0,
			})
			return nil
		})
		if err != nil {
			return fmt.Errorf("importer: scan %s: %w", arg, err)
		}
	}
	r.index()
	for _, f := range r.files {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("importer: scan %s: %w", arg, err)
		}
		if err := s.classify(r, f); err != nil {
			return err
		}
	}
	return nil
}

// index finds the skill folders and the folders named like ADR folders by their files.
func (r *root) index() {
	total, named := map[string]int{}, map[string]int{}
	for _, f := range r.files {
		dir, base := path.Dir(f.rel), path.Base(f.rel)
		if base == SkillFile {
			r.skills[dir] = true
		}
		if !isMarkdown(base) || isADRIndex(base) {
			continue
		}
		total[dir]++
		if adrName(base) {
			named[dir]++
		}
	}
	for dir, n := range named {
		if n > 0 && 2*n >= total[dir] {
			r.adrs[dir] = true
		}
	}
}

// classify turns one file into an item or a plan warning.
func (s *scanner) classify(r *root, f file) error {
	abs, err := filepath.Abs(f.src)
	if err != nil {
		return fmt.Errorf("importer: scan %s: %w", f.src, err)
	}
	if prev, dup := s.seen[abs]; dup {
		s.warn(f.src, "already scanned as %s; skipped", prev)
		return nil
	}
	s.seen[abs] = f.src

	// 1. Skills: the nearest folder (the file's own or an ancestor) holding SKILL.md.
	for dir := path.Dir(f.rel); ; dir = path.Dir(dir) {
		if r.skills[dir] {
			if path.Dir(f.rel) == dir && path.Base(f.rel) == SkillFile {
				return s.addSkill(r, f, dir)
			}
			s.warn(f.src, "part of the skill folder %q; only its SKILL.md is imported", s.folderLabel(r, dir))
			return nil
		}
		if dir == "." || dir == "/" {
			break
		}
	}

	base := path.Base(f.logical)
	dirs := r.dirs(f)
	switch {
	case isKnowledge(f.logical):
		return s.addKeyed(f, KindKnowledge, f.logical, "path")
	case isConventionName(base):
		return s.addConvention(f, dirs, base)
	case isMarkdown(base) && (hasADRFolder(dirs) || r.adrs[path.Dir(f.rel)] || (r.single && adrName(base))):
		if isADRIndex(base) {
			s.warn(f.src, "index or template of an ADR folder, not a decision; skipped")
			return nil
		}
		return s.addDecision(f)
	case isMarkdown(base) && hasConventionFolder(dirs):
		return s.addConvention(f, dirs, base)
	}
	s.warn(f.src, "not a decision, skill, knowledge or convention file; skipped")
	return nil
}

// dirs lists the folders a file is in, outermost first, starting with the scanned folder's own name,
// as read from its logical path ("__" in the file name counts as a separator).
func (r *root) dirs(f file) []string {
	out := []string{r.name}
	if d := path.Dir(f.logical); d != "." {
		out = append(out, strings.Split(d, "/")...)
	}
	return out
}

// folderLabel names a folder of a root for messages.
func (s *scanner) folderLabel(r *root, dir string) string {
	if dir == "." {
		return r.name
	}
	return dir
}

// read reads a file for an item; symlinks are followed (with a warning) when they point to a file. A file
// that cannot be read is skipped with a plan warning (ok false), not an error: only a missing path given
// to Scan is.
func (s *scanner) read(f file) ([]byte, []string, bool, error) {
	var warnings []string
	if f.symlink {
		target, err := os.Readlink(f.src)
		if err != nil {
			s.warn(f.src, "cannot read the symbolic link: %v; skipped", err)
			return nil, nil, false, nil
		}
		info, err := os.Stat(f.src)
		if err != nil || !info.Mode().IsRegular() {
			s.warn(f.src, "a symbolic link to %q, which is not a readable file; skipped", target)
			return nil, nil, false, nil
		}
		warnings = append(warnings, fmt.Sprintf("a symbolic link to %q; stored the content of its target", target))
	}
	content, err := os.ReadFile(f.src)
	if err != nil {
		s.warn(f.src, "cannot read: %v; skipped", err)
		return nil, nil, false, nil
	}
	// A git symlink checked out without symlink support is a file holding the target's name.
	if t := bytes.TrimSpace(content); len(t) > 0 && len(t) < 256 && bytes.IndexAny(t, " \t\n") < 0 {
		sibling := filepath.Join(filepath.Dir(f.src), string(t))
		if info, err := os.Stat(sibling); err == nil && info.Mode().IsRegular() && sibling != filepath.Clean(f.src) {
			warnings = append(warnings, fmt.Sprintf("the content is only %q, the name of a file next to it: probably a git symlink checked out as a file; imported as it is", t))
		}
	}
	return content, warnings, true, nil
}

// claim reserves key for src, renaming it deterministically on a collision.
func (s *scanner) claim(key, src string) (string, []string) {
	prev, taken := s.keys[key]
	if !taken {
		s.keys[key] = src
		return key, nil
	}
	for n := 2; ; n++ {
		suffix := "-" + strconv.Itoa(n)
		stem := key
		if len(stem)+len(suffix) > MaxKeyBytes {
			stem, _ = DeriveKey(cutBytes(stem, MaxKeyBytes-len(suffix)))
		}
		cand := stem + suffix
		if _, used := s.keys[cand]; !used {
			s.keys[cand] = src
			return cand, []string{fmt.Sprintf("key %q is already used by %s; using %q", key, prev, cand)}
		}
	}
}

// addKeyed adds a knowledge or convention item keyed by name (a relative path or "folder-file").
func (s *scanner) addKeyed(f file, kind Kind, name, what string) error {
	content, warnings, ok, err := s.read(f)
	if err != nil || !ok {
		return err
	}
	key, reasons := deriveKey(name)
	if len(reasons) > 0 {
		warnings = append(warnings, fmt.Sprintf("key %q derived from the %s %q (%s)", key, what, name, strings.Join(reasons, ", ")))
	}
	key, more := s.claim(key, f.src)
	s.plan.Items = append(s.plan.Items, Item{
		Kind: kind, Key: key, Source: f.src, Content: content, Warnings: append(warnings, more...),
	})
	return nil
}

// genericFolders are folder names that say nothing about whose conventions a file holds; a convention
// key uses the nearest folder not in this list.
var genericFolders = map[string]bool{
	".github": true, ".gitlab": true, "docs": true, "doc": true, "conventions": true, "convention": true,
	"guidelines": true, "styleguide": true, "styleguides": true, "style-guide": true, "style_guide": true,
}

// addConvention adds a convention keyed by its nearest meaningful folder and its file name.
func (s *scanner) addConvention(f file, dirs []string, base string) error {
	name := base
	for i := len(dirs) - 1; i >= 0; i-- {
		if d := dirs[i]; d != "" && d != "." && d != "/" && !genericFolders[strings.ToLower(d)] {
			name = d + "-" + base
			break
		}
	}
	return s.addKeyed(f, KindConvention, name, "folder and file name")
}

// addDecision adds an ADR.
func (s *scanner) addDecision(f file) error {
	content, warnings, ok, err := s.read(f)
	if err != nil || !ok {
		return err
	}
	info := parseADR(path.Base(f.rel), content)
	s.plan.Items = append(s.plan.Items, Item{
		Kind: KindDecision, Source: f.src, Content: content,
		Number: info.Number, Title: info.Title, Status: info.Status, StatusText: info.StatusText, Date: info.Date,
		Warnings: append(warnings, info.Warnings...),
	})
	return nil
}

// addSkill adds the SKILL.md of the skill folder dir.
func (s *scanner) addSkill(r *root, f file, dir string) error {
	content, warnings, ok, err := s.read(f)
	if err != nil || !ok {
		return err
	}
	info := parseSkill(content)
	warnings = append(warnings, info.Warnings...)
	folder := r.name
	if dir != "." {
		folder = path.Base(dir)
	}
	var key string
	if info.Name != "" && ValidKey(info.Name) == nil {
		key = info.Name
		if info.Name != folder {
			warnings = append(warnings, fmt.Sprintf("front-matter name %q differs from the folder name %q; used the front-matter name", info.Name, folder))
		}
	} else {
		var reasons []string
		key, reasons = deriveKey(folder)
		if info.Name != "" {
			warnings = append(warnings, fmt.Sprintf("front-matter name %q is not a valid skill name (%v); named after the folder", info.Name, ValidKey(info.Name)))
		}
		if len(reasons) > 0 {
			warnings = append(warnings, fmt.Sprintf("name %q derived from the folder name %q (%s)", key, folder, strings.Join(reasons, ", ")))
		}
	}
	key, more := s.claim(key, f.src)
	s.plan.Items = append(s.plan.Items, Item{
		Kind: KindSkill, Key: key, Source: f.src, Content: content, Description: info.Description,
		Warnings: append(warnings, more...),
	})
	return nil
}

// expandFlat reads the corpus convention of "__" for "/" in a flattened file name
// ("apps__webapp__CLAUDE.md" -> "apps/webapp/CLAUDE.md"). Empty parts are dropped.
func expandFlat(base string) string {
	if !strings.Contains(base, "__") {
		return base
	}
	var parts []string
	for _, p := range strings.Split(base, "__") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return base
	}
	return strings.Join(parts, "/")
}

// joinRel joins a relative folder ("." for none) and a name.
func joinRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

// isMarkdown reports whether a file name has a markdown extension.
func isMarkdown(base string) bool {
	ext := strings.ToLower(path.Ext(base))
	return ext == ".md" || ext == ".markdown"
}

// knowledgeNames are the agent instruction files imported as knowledge (lower-cased).
var knowledgeNames = map[string]bool{"agents.md": true, "claude.md": true, "gemini.md": true, ".cursorrules": true}

// isKnowledge reports whether a logical relative path is an agent instruction file.
func isKnowledge(logical string) bool {
	base := strings.ToLower(path.Base(logical))
	if knowledgeNames[base] {
		return true
	}
	slashed := "/" + logical
	if strings.HasSuffix(slashed, "/.github/copilot-instructions.md") {
		return true
	}
	return strings.ToLower(path.Ext(base)) == ".mdc" && strings.Contains("/"+path.Dir(logical)+"/", "/.cursor/rules/")
}

// conventionStems are the file names (lower-cased, without ' ', '-', '_' and extension) of convention
// files.
var conventionStems = map[string]bool{
	"contributing": true, "conventions": true, "codestyle": true, "codingstyle": true, "styleguide": true,
	"codingconventions": true, "codeconventions": true, "codingstandards": true,
}

// squash lower-cases s and removes ' ', '-', '_' and '.', for loose name comparisons.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '.':
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// isConventionName reports whether a markdown file name is a conventions file by itself.
func isConventionName(base string) bool {
	return isMarkdown(base) && conventionStems[squash(stripDocExt(base))]
}

// hasConventionFolder reports whether one of dirs is a conventions-like folder: conventions, guidelines,
// standards of coding, or any name ending in "styleguide(s)" or "codestyle".
func hasConventionFolder(dirs []string) bool {
	for _, d := range dirs {
		q := squash(d)
		switch {
		case q == "conventions" || q == "convention" || q == "guidelines" || q == "codingstandards" ||
			q == "codingconventions" || q == "codestyle":
			return true
		case strings.HasSuffix(q, "styleguide") || strings.HasSuffix(q, "styleguides"):
			return true
		}
	}
	return false
}

// adrFolderNames are folder names (lower-cased) whose markdown files are all ADRs.
var adrFolderNames = map[string]bool{
	"adr": true, "adrs": true, "decisions": true, "decision-records": true, "decision_records": true,
	"architecture-decisions": true, "architecture_decisions": true, "architecture-decision-records": true,
	"decision-log": true,
}

// hasADRFolder reports whether one of dirs is named like an ADR folder.
func hasADRFolder(dirs []string) bool {
	for _, d := range dirs {
		if adrFolderNames[strings.ToLower(d)] {
			return true
		}
	}
	return false
}

// adrName reports whether a file name is named like an ADR: NNNN-x.md, adr-NNN-x.md, YYYYMMDD-x.md.
func adrName(base string) bool {
	if !isMarkdown(base) {
		return false
	}
	stem := stripDocExt(base)
	return dateName.MatchString(stem) || numberName.MatchString(stem)
}

// isADRIndex reports whether a markdown file of an ADR folder is its index or template, not a decision.
func isADRIndex(base string) bool {
	q := strings.ToLower(stripDocExt(base))
	return q == "readme" || q == "index" || q == "toc" || strings.Contains(q, "template")
}

// cutBytes cuts s to at most n bytes on a character boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
