package adapters

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/adapters/internal/block"
	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// fixture is a repository with a context store holding public, private and ephemeral entries.
type fixture struct {
	st   *store.Store
	dir  string
	opts Options
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, dir := storetest.New(t)
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.SetEntry(ctx, store.ConventionKind, store.SetEntry{Key: "git", Content: "Always use feature branches.\n"}))
	must(st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "architecture", Content: "The API talks to PostgreSQL 16.\n"}))
	must(st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "pager", Content: "PRIVATE-PAGER-NUMBER\n", Scope: store.Private}))
	must(st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "scratch", Content: "EPHEMERAL-SCRATCH\n", Scope: store.Ephemeral}))
	_, _, err := st.AddSkill(ctx, "release", "Cut a release", "1. Tag.\n2. Push.\n", store.Public)
	must(nil, err)
	_, _, err = st.AddSkill(ctx, "secret-skill", "Private skill", "PRIVATE-SKILL\n", store.Private)
	must(nil, err)
	{
		_, _, err := st.AddDecision(ctx, store.NewDecision{Title: "Use PostgreSQL", Status: "accepted", Context: "ACID", Decision: "PG 16", Consequences: "ops"})
		must(nil, err)
	}
	return &fixture{st: st, dir: dir, opts: Options{Root: dir, StateDir: t.TempDir()}}
}

func (f *fixture) content(t *testing.T) *Content {
	t.Helper()
	c, err := Load(context.Background(), f.st)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fixture) export(t *testing.T, clients ...string) *Plan {
	t.Helper()
	pl, err := PlanExport(context.Background(), f.opts, f.content(t), clients...)
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.Apply(context.Background()); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return pl
}

func (f *fixture) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) write(t *testing.T, p, s string) {
	t.Helper()
	full := filepath.Join(f.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) exists(p string) bool {
	_, err := os.Lstat(filepath.Join(f.dir, filepath.FromSlash(p)))
	return err == nil
}

// TestExportPublicOnly: every client's files hold the public context and never a private or ephemeral
// entry or skill.
func TestExportPublicOnly(t *testing.T) {
	f := newFixture(t)
	f.export(t)
	var all strings.Builder
	for _, p := range []string{"CLAUDE.md", "AGENTS.md", "GEMINI.md", ".github/copilot-instructions.md",
		".cursor/rules/ctx-conventions.mdc", ".cursor/rules/ctx-knowledge.mdc", ".cursor/rules/ctx-decisions.mdc"} {
		all.WriteString(f.read(t, p))
	}
	for _, want := range []string{"Always use feature branches.", "PostgreSQL 16", "1. Use PostgreSQL (accepted)", "release: Cut a release"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("export lacks %q", want)
		}
	}
	for _, bad := range []string{"PRIVATE-PAGER-NUMBER", "EPHEMERAL-SCRATCH", "PRIVATE-SKILL", "secret-skill"} {
		if strings.Contains(all.String(), bad) {
			t.Errorf("export leaks %q", bad)
		}
	}
	for _, dir := range []string{".claude/skills", ".agents/skills", ".cursor/skills", ".gemini/skills", ".opencode/skills", ".github/skills"} {
		if f.exists(dir + "/secret-skill") {
			t.Errorf("private skill exported to %s", dir)
		}
	}
}

// TestSkillsByteIdenticalAndRemoved: each client's skills folder gets the branch's SKILL.md byte for
// byte; removing the skill from the branch removes ctx's folder and never the user's own.
func TestSkillsByteIdenticalAndRemoved(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.write(t, ".claude/skills/mine/SKILL.md", "---\nname: mine\ndescription: the user's\n---\nmine\n")
	f.write(t, ".claude/skills/mine/helper.sh", "echo hi\n")
	f.export(t)
	v, _ := f.st.RefView(ctx)
	sk, err := v.GetSkill(ctx, "release")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{".claude/skills", ".agents/skills", ".cursor/skills", ".gemini/skills", ".opencode/skills", ".github/skills"} {
		if got := f.read(t, dir+"/release/SKILL.md"); got != sk.Content {
			t.Fatalf("%s/release/SKILL.md differs from the branch:\n%q\n%q", dir, got, sk.Content)
		}
	}
	if _, err := f.st.RemoveSkill(ctx, "release"); err != nil {
		t.Fatal(err)
	}
	f.export(t)
	for _, dir := range []string{".claude/skills", ".agents/skills", ".github/skills"} {
		if f.exists(dir + "/release") {
			t.Errorf("%s/release still there after the skill left the branch", dir)
		}
		if !f.exists(dir) && dir == ".claude/skills" {
			t.Errorf("%s removed", dir)
		}
	}
	if f.read(t, ".claude/skills/mine/SKILL.md") == "" || !f.exists(".claude/skills/mine/helper.sh") {
		t.Fatal("the user's own skill folder was touched")
	}
}

// TestNeverTouchUsersSkillFolder: a folder of the user's where ctx would write a skill, even one whose
// SKILL.md is the branch's bytes, is reported and never written or removed.
func TestNeverTouchUsersSkillFolder(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.write(t, ".claude/skills/release/notes.md", "user notes\n")
	pl, err := PlanExport(ctx, f.opts, f.content(t), "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.Apply(ctx); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("Apply = %v, want ErrNotOurs", err)
	}
	if f.exists(".claude/skills/release/SKILL.md") {
		t.Fatal("ctx wrote into the user's skill folder")
	}
	// The user's own copy of a branch skill (imported from here) is the branch's bytes: still theirs.
	v, _ := f.st.RefView(ctx)
	sk, _ := v.GetSkill(ctx, "release")
	f.write(t, ".claude/skills/release/SKILL.md", sk.Content)
	// Status does not pass it off as ctx's: in step, with a note that it is the user's.
	sts, err := Status(ctx, f.opts, f.content(t), "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	var note string
	for _, fs := range sts[0].Files {
		if fs.Path == ".claude/skills/release/SKILL.md" {
			note = fs.Detail
		}
	}
	if !strings.Contains(note, "the user's own file") {
		t.Fatalf("status of the user's skill copy: detail %q, want it named the user's", note)
	}
	f.export(t, "claude-code")
	if _, err := f.st.RemoveSkill(ctx, "release"); err != nil {
		t.Fatal(err)
	}
	f.export(t, "claude-code")
	if f.read(t, ".claude/skills/release/SKILL.md") != sk.Content {
		t.Fatal("ctx removed the user's own skill file")
	}
}

// TestHandEditedSkillLeftAlone: a SKILL.md ctx wrote and the user changed is neither overwritten nor
// removed; status says hand-edited.
func TestHandEditedSkillLeftAlone(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.export(t, "claude-code")
	f.write(t, ".claude/skills/release/SKILL.md", "edited\n")
	if _, _, err := f.st.AddSkill(ctx, "release", "Cut a release", "1. Tag.\n2. Push.\n3. Announce.\n", store.Public); err != nil {
		t.Fatal(err)
	}
	pl, err := PlanExport(ctx, f.opts, f.content(t), "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.Apply(ctx); !errors.Is(err, ErrHandEdited) {
		t.Fatalf("Apply = %v, want ErrHandEdited", err)
	}
	if f.read(t, ".claude/skills/release/SKILL.md") != "edited\n" {
		t.Fatal("hand-edited SKILL.md overwritten")
	}
	st, err := Status(ctx, f.opts, f.content(t), "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if st[0].State != HandEdited {
		t.Fatalf("status = %+v", st)
	}
}

// TestStatusAndDryRun: status moves missing -> in-step -> stale; a dry run prints a diff and writes
// nothing; a hand-edited block is reported and never overwritten.
func TestStatusAndDryRun(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	state := func() State {
		t.Helper()
		st, err := Status(ctx, f.opts, f.content(t), "claude-code")
		if err != nil {
			t.Fatal(err)
		}
		return st[0].State
	}
	if s := state(); s != Missing {
		t.Fatalf("fresh: %s", s)
	}
	pl, err := PlanExport(ctx, f.opts, f.content(t), "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	diff := pl.Diff()
	if !strings.Contains(diff, "+++ b/CLAUDE.md") || !strings.Contains(diff, "--- /dev/null") || !strings.Contains(diff, "+Always use feature branches.") {
		t.Fatalf("diff:\n%s", diff)
	}
	if f.exists("CLAUDE.md") || f.exists(".claude") {
		t.Fatal("planning wrote files")
	}
	f.export(t, "claude-code")
	if s := state(); s != InStep {
		t.Fatalf("after export: %s", s)
	}
	if _, err := f.st.SetEntry(ctx, store.ConventionKind, store.SetEntry{Key: "tests", Content: "Table tests.\n"}); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != Stale {
		t.Fatalf("after a new convention: %s", s)
	}
	edited := strings.Replace(f.read(t, "CLAUDE.md"), "feature branches", "trunk", 1)
	f.write(t, "CLAUDE.md", edited)
	if s := state(); s != HandEdited {
		t.Fatalf("after a hand edit: %s", s)
	}
	pl, _ = PlanExport(ctx, f.opts, f.content(t), "claude-code")
	if err := pl.Apply(ctx); !errors.Is(err, block.ErrHandEdited) {
		t.Fatalf("Apply = %v", err)
	}
	if f.read(t, "CLAUDE.md") != edited {
		t.Fatal("hand-edited block overwritten")
	}
}

// TestCursorRulesFrontMatter: each rule starts with front matter holding description, globs and
// alwaysApply (a YAML boolean), and conventions always apply.
func TestCursorRulesFrontMatter(t *testing.T) {
	f := newFixture(t)
	f.export(t, "cursor")
	for name, always := range map[string]string{"ctx-conventions.mdc": "true", "ctx-knowledge.mdc": "false", "ctx-decisions.mdc": "false"} {
		b := []byte(f.read(t, ".cursor/rules/"+name))
		fm, body, ok := store.SplitFrontMatter(b)
		if !ok {
			t.Fatalf("%s: no front matter:\n%s", name, b)
		}
		m, err := store.ParseMeta(fm)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var a bool
		if m.String("description") == "" || !m.Has("globs") || !m.Decode("alwaysApply", &a) || (a != (always == "true")) {
			t.Fatalf("%s: front matter %q", name, fm)
		}
		if !bytes.HasPrefix(body, []byte(GeneratedMarker)) {
			t.Fatalf("%s: body does not start with the generated marker", name)
		}
	}
}

// TestBlockBounded: a store far larger than the bound gives a block within it, with visible truncation
// markers and the pointer to the MCP resources.
func TestBlockBounded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var b store.Batch
	for i := range 200 {
		b.Entries = append(b.Entries, store.BatchEntry{Kind: store.KnowledgeKind, SetEntry: store.SetEntry{
			Key: "k" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + itoa(i), Content: strings.Repeat("word ", 300)}})
	}
	if _, _, err := f.st.Apply(ctx, store.Op{Name: "test", Summary: "many"}, b); err != nil {
		t.Fatal(err)
	}
	f.opts.MaxBlock = 8 << 10
	f.export(t, "claude-code")
	sp, err := block.Find([]byte(f.read(t, "CLAUDE.md")))
	if err != nil || sp == nil {
		t.Fatal(err)
	}
	if len(sp.Body) > f.opts.MaxBlock {
		t.Fatalf("block body is %d bytes, bound %d", len(sp.Body), f.opts.MaxBlock)
	}
	for _, want := range []string{"[truncated: ", "more knowledge entries; read context://knowledge]", "context://conventions", "1. Use PostgreSQL"} {
		if !bytes.Contains(sp.Body, []byte(want)) {
			t.Fatalf("block lacks %q", want)
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}

// TestImportRoundTrip: import the user's files, export, import again: the second import changes
// nothing (no commit), and never reads ctx's block, ctx's rules or the skills ctx wrote.
func TestImportRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	corpus := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "agents", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	f.write(t, "CLAUDE.md", corpus("trigger.dev/CLAUDE.md"))
	f.write(t, "AGENTS.md", strings.ReplaceAll(corpus("trigger.dev/AGENTS.md"), "\n", "\r\n"))
	f.write(t, "GEMINI.md", "\ufeff"+corpus("superpowers/GEMINI.md"))
	f.write(t, ".cursor/rules/go.mdc", "---\ndescription: Go rules\nglobs: \"*.go\"\nalwaysApply: false\n---\nUse gofmt.\n")
	f.write(t, ".claude/skills/mine/SKILL.md", "---\nname: mine\ndescription: the user's\n---\nmine\n")
	imp := func() *store.Applied {
		t.Helper()
		plan, err := ImportPlan(ctx, f.opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := f.st.ApplyReport(ctx, store.Op{Name: "import", Summary: "import"}, importer.Batch(plan, store.Public))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	imp()
	tip := storetest.GitRef(t, f.dir, "refs/heads/ctx", "rev-parse", "refs/heads/ctx")
	f.export(t)
	if res := imp(); res.Committed != nil && res.Changed() {
		t.Fatalf("import after export changed the store: %+v", res.Items)
	}
	if got := storetest.GitRef(t, f.dir, "refs/heads/ctx", "rev-parse", "refs/heads/ctx"); got != tip {
		t.Fatalf("the context branch moved: %s -> %s", tip, got)
	}
	// And once more, export then import: still nothing.
	f.export(t)
	imp()
	if got := storetest.GitRef(t, f.dir, "refs/heads/ctx", "rev-parse", "refs/heads/ctx"); got != tip {
		t.Fatalf("the context branch moved on the second round: %s -> %s", tip, got)
	}
}

// TestImportRefusesBrokenBlock: an instruction file whose block is half deleted is a clear error, not a
// guess at which lines are the user's.
func TestImportRefusesBrokenBlock(t *testing.T) {
	f := newFixture(t)
	f.write(t, "CLAUDE.md", "user\n")
	f.export(t, "claude-code")
	s := f.read(t, "CLAUDE.md")
	f.write(t, "CLAUDE.md", strings.Replace(s, block.End, "", 1))
	_, err := ImportPlan(context.Background(), f.opts, nil, "claude-code")
	if !errors.Is(err, block.ErrBroken) || !strings.Contains(err.Error(), "CLAUDE.md") {
		t.Fatalf("ImportPlan = %v", err)
	}
}

// TestCleanKeepsQuotedMarkers: a file that is no instruction file and quotes the block's markers (a page
// about ctx) is imported as it is, not refused as a broken block.
func TestCleanKeepsQuotedMarkers(t *testing.T) {
	root := t.TempDir()
	opts := Options{Root: root, StateDir: t.TempDir()}
	text := []byte("# Conventions\n\n```\n<!-- ctx:begin sha256=<64 hex> -->\n<!-- ctx:end -->\n```\n")
	plan := importer.Plan{Items: []importer.Item{{Kind: importer.KindConvention, Key: "conventions",
		Source: filepath.Join(root, "CONVENTIONS.md"), Path: "CONVENTIONS.md", Content: text}}}
	out, err := Clean(opts, plan)
	if err != nil || len(out.Items) != 1 || !bytes.Equal(out.Items[0].Content, text) {
		t.Fatalf("Clean = %+v, %v", out.Items, err)
	}
}

// TestSymlinkNotFollowed: an instruction file or skills folder that is a symbolic link is reported, and
// nothing is written through it.
func TestSymlinkNotFollowed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "target.md"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "target.md"), filepath.Join(f.dir, "CLAUDE.md")); err != nil {
		t.Skip("no symlinks here")
	}
	if err := os.MkdirAll(filepath.Join(f.dir, ".claude"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.dir, ".claude", "skills")); err != nil {
		t.Fatal(err)
	}
	pl, err := PlanExport(ctx, f.opts, f.content(t), "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.Apply(ctx); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Apply = %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "target.md")); string(b) != "outside\n" {
		t.Fatal("wrote through the CLAUDE.md link")
	}
	if _, err := os.Stat(filepath.Join(outside, "release")); err == nil {
		t.Fatal("wrote through the skills folder link")
	}
}

// TestLinkWritesNothing: with CLAUDE.md a symbolic link and the skills folder free, an export writes
// nothing at all (not the skill files before failing on the link), says the path once, and records
// nothing; once the link is gone the export writes everything.
func TestLinkWritesNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := os.Symlink(filepath.Join(t.TempDir(), "nowhere.md"), filepath.Join(f.dir, "CLAUDE.md")); err != nil {
		t.Skip("no symlinks here")
	}
	pl, err := PlanExport(ctx, f.opts, f.content(t), "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	err = pl.Apply(ctx)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || strings.Count(err.Error(), "CLAUDE.md") != 1 {
		t.Fatalf("Apply = %v, want one error naming CLAUDE.md once", err)
	}
	if f.exists(".claude") {
		t.Fatal("the skill files were written although CLAUDE.md is a link")
	}
	if len(pl.Pending()) != 0 {
		t.Fatalf("Pending after a refused Apply = %+v, want none (nothing was written)", pl.Pending())
	}
	if err := os.Remove(filepath.Join(f.dir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	f.export(t, "claude-code")
	if !f.exists("CLAUDE.md") || !f.exists(".claude") {
		t.Fatal("the export after the link went wrote nothing")
	}
}

// TestRuleRemovedWhenSectionEmpties: ctx's Cursor rule for a section goes when the section has nothing
// left; the user's own rules stay.
func TestRuleRemovedWhenSectionEmpties(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.write(t, ".cursor/rules/mine.mdc", "---\ndescription: mine\nglobs:\nalwaysApply: true\n---\nmine\n")
	f.export(t, "cursor")
	if !f.exists(".cursor/rules/ctx-knowledge.mdc") {
		t.Fatal("no knowledge rule")
	}
	if _, err := f.st.RemoveEntry(ctx, store.KnowledgeKind, "architecture"); err != nil {
		t.Fatal(err)
	}
	f.export(t, "cursor")
	if f.exists(".cursor/rules/ctx-knowledge.mdc") {
		t.Fatal("ctx-knowledge.mdc kept with no knowledge left")
	}
	if !f.exists(".cursor/rules/mine.mdc") || !f.exists(".cursor/rules/ctx-conventions.mdc") {
		t.Fatal("other rules removed")
	}
}

// TestApplyLeavesFileChangedSincePlan: a file written between PlanExport and Apply (the user, another
// export) is left as it is and reported; the other files are written.
func TestApplyLeavesFileChangedSincePlan(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.write(t, "CLAUDE.md", "user\n")
	pl, err := PlanExport(ctx, f.opts, f.content(t), "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "CLAUDE.md", "user, edited meanwhile\n")
	if err := pl.Apply(ctx); !errors.Is(err, ErrMoved) {
		t.Fatalf("Apply = %v, want ErrMoved", err)
	}
	if f.read(t, "CLAUDE.md") != "user, edited meanwhile\n" {
		t.Fatal("overwrote a file changed since the plan")
	}
	if !f.exists(".claude/skills/release/SKILL.md") {
		t.Fatal("the other files were not written")
	}
}

// TestRemoveKeepsUsersChanges: remove takes out ctx's block (keeping the text the user added since) and
// ctx's files, and leaves a skill file the user edited.
func TestRemoveKeepsUsersChanges(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.export(t, "claude-code")
	f.write(t, "CLAUDE.md", f.read(t, "CLAUDE.md")+"\nadded by the user\n")
	f.write(t, ".claude/skills/release/SKILL.md", "edited\n")
	pl, err := PlanRemove(ctx, f.opts, "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.Apply(ctx); !errors.Is(err, ErrHandEdited) {
		t.Fatalf("Apply = %v", err)
	}
	if got := f.read(t, "CLAUDE.md"); got != "\nadded by the user\n" {
		t.Fatalf("CLAUDE.md = %q", got)
	}
	if f.read(t, ".claude/skills/release/SKILL.md") != "edited\n" {
		t.Fatal("edited skill removed")
	}
}

// An entry cut in a rendered file says where the rest is for an agent with MCP and for one without: the
// MCP server refuses an entry over its response limit, the CLI prints it whole.
func TestCutEntryNamesBothWays(t *testing.T) {
	for prefix, cmd := range map[string]string{"context://knowledge/": "ctx knowledge get big", "context://conventions/": "ctx convention get big"} {
		got := entryItem(prefix, store.Entry{Key: "big", Content: strings.Repeat("x", maxItem+10)})
		if !strings.Contains(got, "[truncated: 10 more bytes; read "+prefix+"big or run "+cmd+"]") {
			t.Errorf("%s: %q", prefix, got[len(got)-120:])
		}
	}
}
