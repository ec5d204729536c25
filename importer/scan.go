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

	"github.com/ctx-dev/ctx/store"
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
	// Path is the file's path as it may be recorded on the context branch, never machine-local: relative
	// to Options.Root when the file is inside it, else relative to the folder that holds the scanned path
	// ("adr/0001-x.md" for a scanned folder adr; the base name for a scanned file). Decisions record it as
	// their source.
	Path string `json:"path"`
	// Content is the file, byte for byte: the body to store (for skills the whole SKILL.md). A CLAUDE.md
	// gets the files its "@path" lines import appended (see Scan). It is left out of JSON (a dry-run
	// listing); the bytes are those of Source.
	Content []byte `json:"-"`
	// Secret says why the file looks like it holds a secret (SecretName of its name, or of its link's
	// target); "" when it does not. ctx import refuses such items without --allow-secret.
	Secret string `json:"secret,omitempty"`

	// Number is the decision's own ADR number (0001-x.md, adr-009-x.md, "# ADR 009: x", "# 1. x"), 0 when
	// it has none. Decisions only.
	Number int `json:"number,omitempty"`
	// Title of the decision: front-matter title, first "# " heading, or made from the file name.
	Title string `json:"title,omitempty"`
	// Status is "proposed", "accepted", "deprecated", "superseded", "rejected", or "" when unknown
	// (NormalizeStatus).
	Status string `json:"status,omitempty"`
	// StatusText is the status as written when it is not simply Status ("draft", "Implemented",
	// "superseded by [x](x.md)", "完成", "on hold"); docs/format.md's status_text.
	StatusText string `json:"status_text,omitempty"`
	// SupersededBy and Supersedes are the ADRs the status names ("Superseded by ADR-0019", "Supersedes
	// [2. x](0002-x.md)"): the number, and the linked file's path (relative like Path) when it links one.
	SupersededBy *store.DecisionRef  `json:"superseded_by,omitempty"`
	Supersedes   []store.DecisionRef `json:"supersedes,omitempty"`
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

// Options say what Scan knows of the repository it imports into.
type Options struct {
	// Root is the repository's work tree. A file inside it is classified and keyed by its path relative
	// to Root, whatever path was given (`ctx import .`, `ctx import .cursor/rules` and `ctx import
	// .cursor/rules/x.mdc` give the same key) and whatever the clone's folder is named. A symbolic link
	// inside Root may point anywhere inside Root except .git/ and .context/; "" means no repository.
	Root string
	// GitFiles, when not nil, are the files of Root that git does not ignore (tracked, or untracked and
	// not ignored: `git ls-files --cached --others --exclude-standard`), slash-separated and relative to
	// Root. Any other file inside Root is skipped, and a folder holding none is not walked.
	GitFiles []string
	// Skip, when set, is asked about every file read (its Item.Source, its Item.Path and its content): a
	// non-empty answer is why the file is not imported; it is skipped with that plan warning before it
	// takes a key, so that another file keeps its own (ctx's own exports: adapters.SkipOwn).
	Skip func(source, path string, content []byte) string
}

// Scan is ScanWith without Options: no repository, paths relative to each scanned folder.
func Scan(ctx context.Context, paths ...string) (Plan, error) {
	return ScanWith(ctx, Options{}, paths...)
}

// ScanWith walks paths (files or folders; folders recursively in sorted order) and classifies every file
// it finds. It reads files but writes nothing. A path that does not exist is an error; anything that
// cannot be classified is skipped with a plan warning, never an error.
//
// Never read: .git and .context folders (ctx's own checked-out view) at any depth, files that start with
// ExportMarker (ctx's own export), files git ignores (Options.GitFiles), and symbolic links that lead out
// of the imported tree (Root when the link is inside it, else the scanned folder) or into .git/ or
// .context/ (each skipped with a warning). A file named like a secret (SecretName, of the link or of its
// target) is an item with Secret set.
//
// Rules, first match wins (see doc.go for the reasoning):
//
//  1. a folder holding SKILL.md is a skill: its SKILL.md becomes a KindSkill item named after the
//     front-matter name when valid, else after the folder; its other files are skipped with a warning;
//  2. agent instruction files are knowledge, keyed by their path (relative to Root, else to the scanned
//     folder): AGENTS.md, CLAUDE.md, GEMINI.md, .cursorrules, .windsurfrules, .clinerules,
//     .github/copilot-instructions.md, .github/instructions/*.instructions.md, *.mdc under .cursor/rules/,
//     and the markdown files of .claude/commands/ and .claude/agents/ ("apps/webapp/CLAUDE.md" ->
//     "apps-webapp-claude", ".cursor/rules/go.mdc" -> "cursor-rules-go");
//  3. CONTRIBUTING.md, CONVENTIONS.md, CODE_STYLE.md, STYLEGUIDE.md / STYLE_GUIDE.md / "style guide.md"
//     (and alike) are conventions, keyed by folder and file ("restic/CONTRIBUTING.md" ->
//     "restic-contributing"; at the root of Root: "contributing");
//  4. markdown files in an ADR folder are decisions: a folder named adr, adrs, decisions (or alike) at any
//     depth, or a folder where at least half of the markdown files are named like ADRs (NNNN-x.md,
//     adr-NNN-x.md, YYYYMMDD-x.md); README, index and template files there are skipped with a warning;
//  5. any other markdown file under a conventions-like folder (conventions, guidelines, styleguide,
//     google-styleguide, code-style, ...) is a convention;
//  6. everything else is skipped with a plan warning.
//
// A CLAUDE.md's "@path" imports (Claude Code's syntax) are followed: each file it names inside the
// imported tree is appended to the entry after a "<!-- ctx: @path -->" line (recursively, five levels at
// most, each file once); one outside the tree, missing, ignored by git or named like a secret is not,
// and a warning names the line.
//
// File names using the corpus convention of "__" for a path separator (apps__webapp__CLAUDE.md,
// .cursor__rules__repo.mdc) are read as the path they stand for. Keys are unique within the plan: on a
// collision the later item gets "-2", "-3", ... and a warning.
func ScanWith(ctx context.Context, opts Options, paths ...string) (Plan, error) {
	if len(paths) == 0 {
		return Plan{}, errors.New("importer: scan: no paths given")
	}
	s := &scanner{opts: opts, keys: map[string]string{}, seen: map[string]string{}}
	if opts.Root != "" {
		s.root = realPath(opts.Root)
	}
	if opts.GitFiles != nil {
		s.gitFiles, s.gitDirs = map[string]bool{}, map[string]bool{".": true}
		for _, f := range opts.GitFiles {
			f = path.Clean(filepath.ToSlash(f))
			s.gitFiles[f] = true
			for d := path.Dir(f); d != "." && !s.gitDirs[d]; d = path.Dir(d) {
				s.gitDirs[d] = true
			}
		}
	}
	for _, p := range paths {
		if err := s.scanPath(ctx, p); err != nil {
			return Plan{}, err
		}
	}
	return s.plan, nil
}

// scanner holds the state of one Scan.
type scanner struct {
	opts     Options
	root     string // Options.Root with symbolic links resolved; "" without one
	gitFiles map[string]bool
	gitDirs  map[string]bool // folders (relative to root) that hold a file of gitFiles
	plan     Plan
	keys     map[string]string // key -> source that holds it
	seen     map[string]string // absolute file path -> source it was scanned as
}

// file is one file found below a scanned path.
type file struct {
	src     string // path as the caller sees it (Item.Source)
	rel     string // slash-separated path relative to the scanned folder
	logical string // the path classification and keys use ("__" in the file name read as "/"): relative to the root when inside it, else rel
	stored  string // Item.Path
	symlink bool
}

// root is one scanned path: its files and what is known about its folders.
type root struct {
	name    string // base name of the scanned folder (for a file: of its folder)
	inRoot  bool   // the scanned path is inside Options.Root: logical paths are relative to it
	single  bool   // the path given was a file
	tree    string // the imported tree with links resolved: Options.Root when inside it, else the scanned folder
	files   []file
	skills  map[string]bool // rel folders that hold SKILL.md
	adrs    map[string]bool // rel folders whose markdown files are mostly named like ADRs
	ignored int             // files inside Root that git ignores, skipped
}

func (s *scanner) warn(src, format string, args ...any) {
	s.plan.Warnings = append(s.plan.Warnings, src+": "+fmt.Sprintf(format, args...))
}

// underCheckout reports whether a slash path has a .git or .context element.
func underCheckout(rel string) bool {
	for _, e := range strings.Split(rel, "/") {
		if e == ".git" || e == ".context" {
			return true
		}
	}
	return false
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
	// The folder the path is in or is, with links resolved, and the path of the scanned folder relative
	// to the root ("" outside it).
	dirReal := realPath(abs)
	base := filepath.Base(abs)
	if !info.IsDir() {
		dirReal = realPath(filepath.Dir(abs))
	}
	prefix := ""
	if within(s.root, dirReal) {
		r.inRoot = true
		rel, _ := filepath.Rel(s.root, dirReal)
		prefix = filepath.ToSlash(rel)
		r.tree = s.root
	} else {
		r.tree = dirReal
	}
	storedBase := filepath.Base(dirReal) // outside the root, paths are recorded from the scanned folder's name
	toLogical := func(rel string) string {
		if r.inRoot {
			return joinRel(prefix, rel)
		}
		return rel
	}
	toStored := func(rel string) string {
		if r.inRoot {
			return joinRel(prefix, rel)
		}
		if info.IsDir() && storedBase != "/" && storedBase != "." {
			return storedBase + "/" + rel
		}
		return rel
	}
	if r.inRoot && underCheckout(toLogical(".")) {
		s.warn(arg, "part of .git or of ctx's own checked-out view .context/; not imported")
		return nil
	}
	if !info.IsDir() {
		r.single = true
		r.name = filepath.Base(dirReal)
		f := file{src: arg, rel: base, symlink: isSymlink(abs)}
		f.logical = toLogical(joinRel(path.Dir(f.rel), expandFlat(base)))
		f.stored = toStored(base)
		if r.inRoot && s.gitFiles != nil && !s.gitFiles[joinRel(prefix, base)] {
			s.warn(arg, "ignored by git (or outside what git sees); not imported")
			return nil
		}
		r.files = []file{f}
	} else {
		r.name = filepath.Base(dirReal)
		if r.inRoot && s.gitDirs != nil && !s.gitDirs[prefix] {
			s.warn(arg, "ignored by git (or holds no file git sees); not imported")
			return nil
		}
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
			rel, err := filepath.Rel(arg, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if p != arg && (d.Name() == ".git" || d.Name() == ".context") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p != arg && r.inRoot && s.gitDirs != nil && !s.gitDirs[joinRel(prefix, rel)] {
					return fs.SkipDir // git ignores everything in it
				}
				return nil
			}
			if r.inRoot && s.gitFiles != nil && !s.gitFiles[joinRel(prefix, rel)] {
				r.ignored++
				return nil
			}
			r.files = append(r.files, file{
				src:     p,
				rel:     rel,
				logical: toLogical(joinRel(path.Dir(rel), expandFlat(path.Base(rel)))),
				stored:  toStored(rel),
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

// isSymlink reports whether p itself is a symbolic link.
func isSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
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
		return s.addKeyed(r, f, KindKnowledge, f.logical, "path")
	case isConventionName(base):
		return s.addConvention(r, f, dirs, base)
	case isMarkdown(base) && (hasADRFolder(dirs) || r.adrs[path.Dir(f.rel)] || (r.single && adrName(base))):
		if isADRIndex(base) {
			s.warn(f.src, "index or template of an ADR folder, not a decision; skipped")
			return nil
		}
		return s.addDecision(r, f)
	case isMarkdown(base) && hasConventionFolder(dirs):
		return s.addConvention(r, f, dirs, base)
	}
	s.warn(f.src, "not a decision, skill, knowledge or convention file; skipped")
	return nil
}

// dirs lists the folders a file is in, outermost first, as read from its logical path ("__" in the file
// name counts as a separator). Outside the root the scanned folder's own name comes first; inside it
// the path from the root is the whole story (the clone's folder name never counts).
func (r *root) dirs(f file) []string {
	var out []string
	if !r.inRoot {
		out = append(out, r.name)
	}
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

// readResult is a file read for an item.
type readResult struct {
	content  []byte
	warnings []string
	secret   string
	ok       bool // false: skipped (with a plan warning)
}

// read reads a file for an item. A symbolic link is followed only to a regular file inside the imported
// tree (r.tree), never into .git/ or .context/, and not to a file git ignores; any other link is skipped
// with a plan warning. A file that cannot be read, or that ctx export wrote, is skipped with a plan
// warning too, not an error: only a missing path given to Scan is.
func (s *scanner) read(r *root, f file) readResult {
	var res readResult
	res.secret = SecretName(f.src)
	if f.symlink {
		target, err := os.Readlink(f.src)
		if err != nil {
			s.warn(f.src, "cannot read the symbolic link: %v; skipped", err)
			return res
		}
		abs, err := filepath.Abs(f.src)
		if err != nil {
			return res
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			s.warn(f.src, "a symbolic link to %q, which is not a readable file; skipped", target)
			return res
		}
		info, err := os.Stat(real)
		if err != nil || !info.Mode().IsRegular() {
			s.warn(f.src, "a symbolic link to %q, which is not a readable file; skipped", target)
			return res
		}
		if !within(r.tree, real) {
			s.warn(f.src, "a symbolic link to %q, outside the imported tree; not followed, skipped", target)
			return res
		}
		if rel, _ := filepath.Rel(r.tree, real); underCheckout(filepath.ToSlash(rel)) {
			s.warn(f.src, "a symbolic link into .git/ or .context/; not followed, skipped")
			return res
		}
		if rel, _ := filepath.Rel(s.root, real); r.inRoot && s.gitFiles != nil && !s.gitFiles[filepath.ToSlash(rel)] {
			s.warn(f.src, "a symbolic link to %q, a file git ignores; not followed, skipped", target)
			return res
		}
		if why := SecretName(real); why != "" && res.secret == "" {
			res.secret = "a link to a file " + why
		}
		res.warnings = append(res.warnings, fmt.Sprintf("a symbolic link to %q; stored the content of its target", target))
	}
	content, err := os.ReadFile(f.src)
	if err != nil {
		s.warn(f.src, "cannot read: %v; skipped", err)
		return res
	}
	if isExport(content) {
		s.warn(f.src, "written by ctx export (it starts with %q); not imported", ExportMarker)
		return res
	}
	if s.opts.Skip != nil {
		if why := s.opts.Skip(f.src, f.stored, content); why != "" {
			s.warn(f.src, "%s", why)
			return res
		}
	}
	// A git symlink checked out without symlink support is a file holding the target's name.
	if t := bytes.TrimSpace(content); len(t) > 0 && len(t) < 256 && !bytes.ContainsAny(t, " \t\n") {
		sibling := filepath.Join(filepath.Dir(f.src), string(t))
		if info, err := os.Stat(sibling); err == nil && info.Mode().IsRegular() && sibling != filepath.Clean(f.src) {
			res.warnings = append(res.warnings, fmt.Sprintf("the content is only %q, the name of a file next to it: probably a git symlink checked out as a file; imported as it is", t))
		}
	}
	res.content, res.ok = content, true
	return res
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
func (s *scanner) addKeyed(r *root, f file, kind Kind, name, what string) error {
	res := s.read(r, f)
	if !res.ok {
		return nil
	}
	warnings := res.warnings
	content := res.content
	if kind == KindKnowledge && strings.EqualFold(path.Base(f.logical), "claude.md") {
		var more []string
		content, more = s.followImports(r, f, content)
		warnings = append(warnings, more...)
	}
	key, reasons := deriveKey(name)
	if len(reasons) > 0 {
		warnings = append(warnings, fmt.Sprintf("key %q derived from the %s %q (%s)", key, what, name, strings.Join(reasons, ", ")))
	}
	key, more := s.claim(key, f.src)
	s.plan.Items = append(s.plan.Items, Item{
		Kind: kind, Key: key, Source: f.src, Path: f.stored, Content: content, Secret: res.secret, Warnings: append(warnings, more...),
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
func (s *scanner) addConvention(r *root, f file, dirs []string, base string) error {
	name := base
	for i := len(dirs) - 1; i >= 0; i-- {
		if d := dirs[i]; d != "" && d != "." && d != "/" && !genericFolders[strings.ToLower(d)] {
			name = d + "-" + base
			break
		}
	}
	return s.addKeyed(r, f, KindConvention, name, "folder and file name")
}

// addDecision adds an ADR.
func (s *scanner) addDecision(r *root, f file) error {
	res := s.read(r, f)
	if !res.ok {
		return nil
	}
	info := parseADR(path.Base(f.rel), res.content)
	s.plan.Items = append(s.plan.Items, Item{
		Kind: KindDecision, Source: f.src, Path: f.stored, Content: res.content, Secret: res.secret,
		Number: info.Number, Title: info.Title, Status: info.Status, StatusText: info.StatusText, Date: info.Date,
		Warnings: append(res.warnings, info.Warnings...),
	})
	it := &s.plan.Items[len(s.plan.Items)-1]
	if r := decisionRef(f.stored, info.SupersededBy); r != (store.DecisionRef{}) {
		it.SupersededBy = &r
	}
	for _, ref := range info.Supersedes {
		it.Supersedes = append(it.Supersedes, decisionRef(f.stored, ref))
	}
	return nil
}

// decisionRef turns a reference read in the ADR stored at from into a store.DecisionRef: a link target becomes a
// path relative like Item.Path (without its #anchor); one that leaves the tree is dropped.
func decisionRef(from string, r adrRef) store.DecisionRef {
	out := store.DecisionRef{Number: r.Number}
	if t, _, _ := strings.Cut(r.Target, "#"); t != "" && !path.IsAbs(t) {
		if p := path.Clean(path.Join(path.Dir(from), t)); p != ".." && !strings.HasPrefix(p, "../") {
			out.Source = p
		}
	}
	return out
}

// addSkill adds the SKILL.md of the skill folder dir.
func (s *scanner) addSkill(r *root, f file, dir string) error {
	res := s.read(r, f)
	if !res.ok {
		return nil
	}
	info := parseSkill(res.content)
	warnings := append(res.warnings, info.Warnings...)
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
	if _, err := store.ValidSkillName(key); errors.Is(err, store.ErrReservedName) {
		warnings = append(warnings, fmt.Sprintf("%v; named %q instead", err, key+"-skill"))
		key += "-skill"
	}
	key, more := s.claim(key, f.src)
	s.plan.Items = append(s.plan.Items, Item{
		Kind: KindSkill, Key: key, Source: f.src, Path: f.stored, Content: res.content, Secret: res.secret,
		Description: info.Description, Warnings: append(warnings, more...),
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

// knowledgeNames are the agent instruction files imported as knowledge (lower-cased base names).
var knowledgeNames = map[string]bool{"agents.md": true, "claude.md": true, "gemini.md": true, ".cursorrules": true,
	".windsurfrules": true, ".clinerules": true}

// isKnowledge reports whether a logical relative path is an agent instruction file: see knowledgeNames,
// .github/copilot-instructions.md and .github/instructions/*.instructions.md (GitHub Copilot), *.mdc and
// *.md under .cursor/rules/ (Cursor), markdown files under .claude/commands/ and .claude/agents/ (Claude
// Code's commands and subagents) and under .clinerules/ (Cline).
func isKnowledge(logical string) bool {
	base := strings.ToLower(path.Base(logical))
	if knowledgeNames[base] {
		return true
	}
	dir := "/" + path.Dir(logical) + "/"
	slashed := "/" + logical
	ext := strings.ToLower(path.Ext(base))
	switch {
	case strings.HasSuffix(slashed, "/.github/copilot-instructions.md"):
		return true
	case strings.HasSuffix(dir, "/.github/instructions/") && strings.HasSuffix(base, ".instructions.md"):
		return true
	case strings.Contains(dir, "/.cursor/rules/") && (ext == ".mdc" || ext == ".md"):
		return true
	case (strings.Contains(dir, "/.claude/commands/") || strings.Contains(dir, "/.claude/agents/") ||
		strings.Contains(dir, "/.clinerules/")) && isMarkdown(base):
		return true
	}
	return false
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
	return dateName.Get().MatchString(stem) || numberName.Get().MatchString(stem)
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
