package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/importer")

const (
	sharedCorpus = "/work/shared/corpus" // the full corpus, when this machine has it
	repoCorpus   = "../testdata/corpus"  // the bundled subset, always tested
	goldenPlan   = "../testdata/importer/plan.json"
)

// goldenItem is the part of an Item the golden file records.
type goldenItem struct {
	Kind        Kind     `json:"kind"`
	Key         string   `json:"key,omitempty"`
	Source      string   `json:"source"`
	Number      int      `json:"number,omitempty"`
	Title       string   `json:"title,omitempty"`
	Status      string   `json:"status,omitempty"`
	StatusText  string   `json:"status_text,omitempty"`
	Date        string   `json:"date,omitempty"`
	Description string   `json:"description,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

// renderPlan writes a plan as stable JSON, with paths relative to base.
func renderPlan(t *testing.T, p Plan, base string) []byte {
	t.Helper()
	rel := func(s string) string {
		return filepath.ToSlash(strings.ReplaceAll(s, base, "corpus"))
	}
	out := struct {
		Items    []goldenItem `json:"items"`
		Warnings []string     `json:"warnings"`
	}{Items: []goldenItem{}, Warnings: []string{}}
	for _, it := range p.Items {
		desc := it.Description
		if len(desc) > 80 {
			desc = strings.ToValidUTF8(desc[:80], "") + "…"
		}
		var ws []string
		for _, w := range it.Warnings {
			ws = append(ws, rel(w))
		}
		out.Items = append(out.Items, goldenItem{
			Kind: it.Kind, Key: it.Key, Source: rel(it.Source), Number: it.Number, Title: it.Title,
			Status: it.Status, StatusText: it.StatusText, Date: it.Date, Description: desc, Warnings: ws,
		})
	}
	for _, w := range p.Warnings {
		out.Warnings = append(out.Warnings, rel(w))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkPlan checks what must hold of any plan of a corpus folder: every file accounted for, contents
// byte for byte, keys valid and unique.
func checkPlan(t *testing.T, dir string, plan Plan) {
	t.Helper()
	sources := map[string]bool{}
	keys := map[string]string{}
	for _, it := range plan.Items {
		if sources[it.Source] {
			t.Errorf("%s imported twice", it.Source)
		}
		sources[it.Source] = true
		want, err := os.ReadFile(it.Source)
		if err != nil {
			t.Fatalf("read %s: %v", it.Source, err)
		}
		// A CLAUDE.md gets the files its "@path" lines import appended after its own bytes.
		imported := bytes.HasPrefix(it.Content, want) && bytes.Contains(it.Content[len(want):], []byte("<!-- ctx: @"))
		if !bytes.Equal(it.Content, want) && !imported {
			t.Errorf("%s: content differs from the file", it.Source)
		}
		switch it.Kind {
		case KindDecision:
			if it.Key != "" {
				t.Errorf("%s: decision with key %q", it.Source, it.Key)
			}
			if it.Title == "" {
				t.Errorf("%s: decision without title", it.Source)
			}
			switch it.Status {
			case "", StatusProposed, StatusAccepted, StatusDeprecated, StatusSuperseded, StatusRejected:
			default:
				t.Errorf("%s: status %q", it.Source, it.Status)
			}
		case KindSkill, KindKnowledge, KindConvention:
			if err := ValidKey(it.Key); err != nil {
				t.Errorf("%s: %v", it.Source, err)
			}
			if prev, dup := keys[it.Key]; dup {
				t.Errorf("key %q used by %s and %s", it.Key, prev, it.Source)
			}
			keys[it.Key] = it.Source
		default:
			t.Errorf("%s: kind %q", it.Source, it.Kind)
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if sources[p] {
			return nil
		}
		for _, w := range plan.Warnings {
			if strings.HasPrefix(w, p+": ") {
				return nil
			}
		}
		t.Errorf("%s is neither an item nor a warning", p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestScanRepoCorpusGolden(t *testing.T) {
	p, err := Scan(context.Background(), repoCorpus)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, repoCorpus, p)
	got := renderPlan(t, p, repoCorpus)
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenPlan), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPlan, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPlan)
	if err != nil {
		t.Fatalf("%v (run go test ./importer -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("plan differs from %s (run go test ./importer -update and review the diff):\n%s", goldenPlan, got)
	}
}

func TestScanSharedCorpus(t *testing.T) {
	if _, err := os.Stat(sharedCorpus); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s not on this machine", sharedCorpus)
	}
	p, err := Scan(context.Background(), sharedCorpus)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, sharedCorpus, p)
	if testing.Verbose() {
		t.Logf("%s", renderPlan(t, p, sharedCorpus))
	}
}

// itemBySource finds the item of a source path ending in suffix.
func itemBySource(t *testing.T, p Plan, suffix string) Item {
	t.Helper()
	for _, it := range p.Items {
		if strings.HasSuffix(filepath.ToSlash(it.Source), suffix) {
			return it
		}
	}
	t.Fatalf("no item for %s", suffix)
	return Item{}
}

// knownFiles is what Scan must read from files of the corpus (shared and, where bundled, the repo's).
var knownFiles = []struct {
	suffix                    string
	kind                      Kind
	key                       string
	number                    int
	title, status, statusText string
	date                      string
	warning                   string // part of one warning, "" for none expected
}{
	{"adr/madr/0013-use-yaml-front-matter-for-meta-data.md", KindDecision, "", 13, "Use YAML front matter for metadata", "", "", "", "no status"},
	{"adr/madr/0003-provide-own-madr-tools.md", KindDecision, "", 3, "Write Own MADR Tooling", "", "on hold", "", "not a known word"},
	{"adr/madr/0000-use-markdown-architectural-decision-records.md", KindDecision, "", 0, "Use Markdown Architectural Decision Records", "", "", "", "reads as \"no number\""},
	{"adr/interchain-security/adr-009-soft-opt-out.md", KindDecision, "", 9, "Soft Opt-Out", "deprecated", "Deprecated by [Partial Set Security](adr-015-partial-set-security.md)", "", ""},
	{"adr/interchain-security/adr-007-pause-unbonding-on-eqv-prop.md", KindDecision, "", 7, "Pause validator unbonding during equivocation proposal", "rejected", "", "", ""},
	{"adr/interchain-security/adr-010-standalone-changeover.md", KindDecision, "", 10, "Standalone to Consumer Changeover", "accepted", "Implemented", "", ""},
	{"adr/interchain-security/adr-001-key-assignment.md", KindDecision, "", 1, "Key Assignment", "accepted", "", "", ""},
	{"adr/interchain-security/adr-011-improving-test-confidence.md", KindDecision, "", 11, "Improving testing and increasing confidence", "proposed", "", "", ""},
	{"adr/phodal-adr/0021-思考更好的-adr-格式.md", KindDecision, "", 21, "思考更好的 ADR 格式", "proposed", "提议", "2017-11-28", ""},
	{"adr/phodal-adr/0004-生成图形关系.md", KindDecision, "", 4, "生成图形关系", "accepted", "通过", "2017/11/22", ""},
	{"adr/phodal-adr/0001-编写完整的单元测试.md", KindDecision, "", 1, "编写完整的单元测试", "accepted", "完成", "2017/11/22", ""},
	{"adr/log4brains/20200924-use-markdown-architectural-decision-records.md", KindDecision, "", 0, "Use Markdown Architectural Decision Records", "accepted", "", "2020-09-24", "log4brains style"},
	{"adr/log4brains/20201030-draft-adr.md", KindDecision, "", 0, "Draft ADR", "proposed", "draft", "2020-10-30", "log4brains style"},
	{"adr/log4brains/20200926-use-the-adr-number-as-its-unique-id.md", KindDecision, "", 0, "Use the ADR number as its unique ID", "superseded", "superseded by [20201016-use-the-adr-slug-as-its-unique-id](20201016-use-the-adr-slug-as-its-unique-id.md)", "2020-09-26", ""},
	{"adr/log4brains/20201028-adr-with-no-metadata-no-title.md", KindDecision, "", 0, "Adr with no metadata no title", "", "", "2020-10-28", "no title"},
	{"adr/log4brains/20200102-adr-without-status.md", KindDecision, "", 0, "ADR without status", "", "", "2020-01-02", "no status"},
	{"adr/log4brains/adr_with_a_WeIrd-filename.md", KindDecision, "", 0, "ADR with a weird filename", "accepted", "", "2020-01-02", "no ADR number"},
	{"skills/obra-superpowers/root-cause-tracing/SKILL.md", KindSkill, "root-cause-tracing", 0, "", "", "", "", "not a valid skill name"},
	{"skills/alirezarezvani-claude-skills/sample-skill/SKILL.md", KindSkill, "sample-skill", 0, "", "", "", "", "no YAML front matter"},
	{"skills/alirezarezvani-claude-skills/code-to-prd/SKILL.md", KindSkill, "code-to-prd", 0, "", "", "", "", ""},
	{"agents/trigger.dev/apps__webapp__CLAUDE.md", KindKnowledge, "agents-trigger.dev-apps-webapp-claude", 0, "", "", "", "", "lower-cased"},
	{"agents/trigger.dev/.cursor__rules__repo.mdc", KindKnowledge, "agents-trigger.dev-cursor-rules-repo", 0, "", "", "", "", "derived from the path"},
	{"agents/trigger.dev/.github__copilot-instructions.md", KindKnowledge, "agents-trigger.dev-github-copilot-instructions", 0, "", "", "", "", ""},
	{"agents/superpowers/AGENTS.md", KindKnowledge, "agents-superpowers-agents", 0, "", "", "", "", "git symlink"},
	{"agents/pocketflow/.cursorrules", KindKnowledge, "agents-pocketflow-cursorrules", 0, "", "", "", "", ""},
	{"agents/pocketflow/.cursor__rules__core_abstraction__node.mdc", KindKnowledge, "agents-pocketflow-cursor-rules-core_abstraction-node", 0, "", "", "", "", ""},
	{"conventions/restic/CONTRIBUTING.md", KindConvention, "restic-contributing", 0, "", "", "", "", ""},
	{"conventions/cli/CONTRIBUTING.md", KindConvention, "cli-contributing", 0, "", "", "", "", ""},
	{"conventions/google-styleguide/guide.md", KindConvention, "google-styleguide-guide", 0, "", "", "", "", ""},
}

func checkKnownFiles(t *testing.T, dir string, p Plan) {
	t.Helper()
	for _, k := range knownFiles {
		if _, err := os.Stat(filepath.Join(dir, k.suffix)); err != nil {
			continue // not bundled in this corpus
		}
		it := itemBySource(t, p, k.suffix)
		got := []any{it.Kind, it.Key, it.Number, it.Title, it.Status, it.StatusText, it.Date}
		want := []any{k.kind, k.key, k.number, k.title, k.status, k.statusText, k.date}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: got kind, key, number, title, status, status_text, date = %q, want %q", k.suffix, got, want)
				break
			}
		}
		if k.warning != "" && !strings.Contains(strings.Join(it.Warnings, "\n"), k.warning) {
			t.Errorf("%s: warnings %q, want one mentioning %q", k.suffix, it.Warnings, k.warning)
		}
	}
}

func TestScanKnownFiles(t *testing.T) {
	dirs := []string{repoCorpus}
	if _, err := os.Stat(sharedCorpus); err == nil {
		dirs = append(dirs, sharedCorpus)
	}
	for _, dir := range dirs {
		p, err := Scan(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		checkKnownFiles(t, dir, p)
	}
}

// TestScanProjectRoot scans one project's folder, as `ctx import .` at a repository root would.
func TestScanProjectRoot(t *testing.T) {
	dir := filepath.Join(repoCorpus, "agents", "trigger.dev")
	p, err := Scan(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, dir, p)
	var keys []string
	for _, it := range p.Items {
		if it.Kind != KindKnowledge {
			t.Errorf("%s: kind %s", it.Source, it.Kind)
		}
		keys = append(keys, it.Key)
	}
	want := "cursor-rules-otel-metrics cursor-rules-repo cursor-rules-writing-tasks github-copilot-instructions agents claude apps-webapp-claude"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("keys = %s\nwant   %s", got, want)
	}

	// A single file: keyed by its own name; a single ADR: number from its name.
	p, err = Scan(context.Background(), filepath.Join(dir, "CLAUDE.md"),
		filepath.Join(repoCorpus, "adr", "interchain-security", "adr-009-soft-opt-out.md"),
		filepath.Join(repoCorpus, "conventions", "restic", "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 3 || p.Items[0].Key != "claude" || p.Items[1].Number != 9 || p.Items[2].Key != "restic-contributing" {
		t.Errorf("single files: %+v", p.Items)
	}
}

func TestScanErrors(t *testing.T) {
	if _, err := Scan(context.Background(), filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing path: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := Scan(context.Background()); err == nil {
		t.Error("no paths: want an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Scan(ctx, repoCorpus); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}

// writeTree writes files (slash paths -> content) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScanTree covers the rules the corpus does not exercise, on a tree written for the test.
func TestScanTree(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proj")
	writeTree(t, root, map[string]string{
		".git/config":                       "[core]\n",
		"CLAUDE.md":                         "root\n",
		"claude/x.txt":                      "not context\n",
		"sub/CLAUDE.md":                     "sub\n",
		"docs/CONTRIBUTING.md":              "contrib\n",
		"docs/adr/README.md":                "index\n",
		"docs/adr/adr-template.md":          "template\n",
		"docs/adr/0001-first.md":            "---\nstatus: accepted\n---\n# First\n",
		"docs/adr/misc/notes.md":            "# Notes\n",
		"notes/0001-a.md":                   "# A\n",
		"notes/0002-b.md":                   "# B\n",
		"notes/free.md":                     "# Free\n",
		"conventions/README.md":             "# Conventions\n",
		"conventions/go/errors.md":          "wrap them\n",
		"conventions/go/logo.png":           "png",
		".agents/skills/deploy/SKILL.md":    "---\nname: deploy\ndescription: [oops\n---\nbody\n",
		".agents/skills/deploy/run.sh":      "#!/bin/sh\n",
		".agents/skills/Big Skill/SKILL.md": "---\nname: Big Skill\ndescription: d\n---\n",
		".agents/skills/claude/SKILL.md":    "---\ndescription: collides with the knowledge key\n---\n",
		"random.md":                         "# Random\n",
	})
	if err := os.Symlink("CLAUDE.md", filepath.Join(root, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(root, "GEMINI.md")); err != nil {
		t.Fatal(err)
	}
	p, err := Scan(context.Background(), root, filepath.Join(root, "CLAUDE.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, root, p)
	got := map[string]string{}
	for _, it := range p.Items {
		rel, _ := filepath.Rel(root, it.Source)
		got[filepath.ToSlash(rel)] = string(it.Kind) + " " + it.Key + " " + strings.Join(it.Warnings, " | ")
	}
	want := map[string][]string{
		"CLAUDE.md":                         {"knowledge claude-2 ", `key "claude" is already used`}, // .agents sorts first
		"AGENTS.md":                         {"knowledge agents ", "symbolic link"},
		"sub/CLAUDE.md":                     {"knowledge sub-claude "},
		"docs/CONTRIBUTING.md":              {"convention proj-contributing "},
		"docs/adr/0001-first.md":            {"decision  "},
		"docs/adr/misc/notes.md":            {"decision  ", "no ADR number"},
		"notes/0001-a.md":                   {"decision  "},
		"notes/0002-b.md":                   {"decision  "},
		"notes/free.md":                     {"decision  ", "no ADR number"},
		"conventions/README.md":             {"convention proj-readme "},
		"conventions/go/errors.md":          {"convention go-errors "},
		".agents/skills/deploy/SKILL.md":    {"skill deploy ", "not valid YAML"},
		".agents/skills/Big Skill/SKILL.md": {"skill big-skill ", "not a valid skill name", "derived from the folder name"},
		".agents/skills/claude/SKILL.md":    {"skill claude "},
	}
	for name, parts := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: no item", name)
			continue
		}
		for _, part := range parts {
			if !strings.Contains(g, part) {
				t.Errorf("%s: got %q, want it to contain %q", name, g, part)
			}
		}
		delete(got, name)
	}
	for name, g := range got {
		t.Errorf("%s: unexpected item %q", name, g)
	}
	warnings := strings.Join(p.Warnings, "\n")
	for _, w := range []string{
		"claude/x.txt: not a decision",
		"docs/adr/README.md: index or template",
		"docs/adr/adr-template.md: index or template",
		"conventions/go/logo.png: not a decision",
		".agents/skills/deploy/run.sh: part of the skill folder",
		"GEMINI.md: a symbolic link to \"nowhere\"",
		"random.md: not a decision",
		"CLAUDE.md: already scanned as",
	} {
		if !strings.Contains(warnings, w) {
			t.Errorf("plan warnings lack %q:\n%s", w, warnings)
		}
	}
	if strings.Contains(warnings, ".git") {
		t.Errorf(".git not skipped:\n%s", warnings)
	}
	if d := itemBySource(t, p, ".agents/skills/deploy/SKILL.md").Description; d != "[oops" {
		t.Errorf("description from invalid YAML = %q", d)
	}
}
