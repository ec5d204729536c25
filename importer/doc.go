// Package importer turns files that already exist in a repository — ADRs, Agent Skills folders, agent
// instruction files (AGENTS.md, CLAUDE.md, ...) and contribution guides — into a Plan of context entries
// for the context branch (docs/format.md). It only reads and walks the file system; writing
// the plan to git is the store's job.
//
// # Classification
//
// Scan applies these rules to each file, first match wins:
//
//   - Skill: a folder holding a file named exactly SKILL.md is a skill. Its SKILL.md is the item (Content
//     is the file byte for byte, docs/format.md "skills/<name>/SKILL.md"); the name is the front-matter
//     "name" when it passes ValidKey, else the folder name through DeriveKey (with a warning). Other files
//     of the folder (scripts, references) are skipped with a warning: the branch stores SKILL.md only.
//   - Knowledge: AGENTS.md, CLAUDE.md, GEMINI.md (any case), .cursorrules, .windsurfrules, .clinerules,
//     .github/copilot-instructions.md, .github/instructions/*.instructions.md, *.mdc (and *.md) files
//     under .cursor/rules/, and markdown files under .claude/commands/, .claude/agents/ and .clinerules/.
//     The key is DeriveKey of the file's path: relative to the repository root (Options.Root) when the
//     file is inside it, else relative to the scanned folder. So two CLAUDE.md in different folders get
//     different keys ("claude" and "apps-webapp-claude"), and inside a repository a file gets the same
//     key however it was named on the command line (".cursor/rules/go.mdc" -> "cursor-rules-go").
//     Outside a repository a single file gets its own name ("claude").
//   - Convention by name: CONTRIBUTING.md, CONVENTIONS.md, CODE_STYLE.md / CODESTYLE.md / CODING_STYLE.md,
//     STYLEGUIDE.md / STYLE_GUIDE.md / "style guide.md", CODING_CONVENTIONS.md, CODING_STANDARDS.md
//     (case, spaces, '-' and '_' ignored). The key is "<folder>-<file>": the nearest enclosing folder
//     whose name is not generic (.github, docs, conventions, guidelines, styleguide, ...), e.g.
//     backend/CONTRIBUTING.md -> "backend-contributing". Inside a repository only the path from its root
//     counts (the clone's folder name never does: CONTRIBUTING.md at the root is "contributing"); outside
//     one, the scanned folder's own name counts (restic/CONTRIBUTING.md -> "restic-contributing").
//   - Decision: a markdown file (.md, .markdown) in an ADR folder. A folder is an ADR folder when it or
//     any folder above it (up to and including the scanned folder) is named adr, adrs, decisions,
//     decision-records, architecture-decisions (and alike), or when at least half of its own markdown
//     files are named like ADRs: NNNN-x.md, adr-NNN-x.md, YYYYMMDD-x.md (log4brains). So a file with a
//     free-form name (log4brains' adr_with_a_WeIrd-filename.md) is a decision when its neighbours are. A
//     single file given to Scan is a decision when it is named like one or sits in such a folder.
//     README, index, toc and *template* files of an ADR folder are skipped with a warning.
//   - Convention by folder: any other markdown file below a conventions-like folder (conventions,
//     convention, guidelines, coding-standards, code-style, or a name ending in "styleguide(s)" such as
//     google-styleguide) is a convention, keyed like the named ones (google-styleguide/guide.md ->
//     "google-styleguide-guide"). Decision: such a folder exists to hold conventions, so every markdown
//     file in it is taken, README included; non-markdown files there are skipped.
//   - Everything else is skipped with a plan warning "<path>: ...". A path that does not exist is an
//     error.
//
// Files whose names use "__" for a path separator (the shared corpus flattens apps/webapp/CLAUDE.md to
// apps__webapp__CLAUDE.md) are classified and keyed as the path they stand for.
//
// # Decisions
//
// parseADR reads Number, Title, Status and Date (see Item). Status words are mapped by NormalizeStatus:
//
//	accepted   accepted approved adopted agreed decided implemented done completed
//	           通过 已通过 接受 已接受 采纳 已采纳 批准 已批准 完成 已完成
//	proposed   proposed proposal draft rfc pending open  提议 提案 草稿 建议
//	deprecated deprecated obsolete retired  废弃 已废弃 弃用 已弃用
//	superseded superseded replaced  替代 已替代 取代 已取代 被取代 被替代
//	rejected   rejected declined refused  拒绝 已拒绝 否决 已否决
//
// Matching uses the first word, lower-cased, so "superseded by [x](x.md)" is superseded. "Partially (or
// partly) superseded by ..." is accepted: the decision is still in force in part. Any other word ("on
// hold") leaves Status empty; the original wording is kept in StatusText whenever it is not simply the
// status (docs/format.md status_text). The status text (the whole Status section for adr-tools, which
// writes "Supersedes [2. x](0002-x.md)" under "Accepted") is searched for references to other ADRs:
// after "superseded by" (replaced, deprecated, obsoleted by) for SupersededBy, after "supersedes" or
// "replaces" for Supersedes; a reference is a markdown link (its file's path and number), "ADR-0019",
// "#19" or a bare number. phodal/adr writes a dated status history
// ("2017-11-22 提议", "2017-12-01 通过"): the last dated line is the current status. log4brains names files
// by date (20200924-x.md): they have no ADR number (Number 0, with a warning) and the date becomes Date
// when the file does not state one.
//
// # Keys
//
// ValidKey and DeriveKey implement docs/format.md "Keys and names". Keys are unique within a
// Plan across knowledge, conventions and skills: a later item whose key is taken gets "-2", "-3", ...
// (in walk order, so the result is deterministic) and a warning.
package importer
