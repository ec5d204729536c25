package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// writeFiles writes files (slash-separated paths relative to dir) with their contents, making folders.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newInitRepo makes a repository with ctx initialised (no hooks) and returns its path.
func newInitRepo(t testing.TB) string {
	t.Helper()
	dir := testenv.NewRepo(t)
	run(t, dir, 0, "init", "--no-hooks")
	return dir
}

// showRef is `git show REF:PATH`; ok false when the path is not there.
func showRef(dir, ref, p string) (string, bool) {
	var args []string
	if ref == "refs/ctx/private" || ref == "refs/ctx/ephemeral" {
		args = []string{"--git-dir=" + filepath.Join(dir, ".git", "ctx", "private.git")}
	}
	out, err := testenv.GitErr(dir, append(args, "show", ref+":"+p)...)
	return out, err == nil
}

// jsonList runs a ctx list command with --json and decodes its array.
func jsonList(t testing.TB, dir string, args ...string) []map[string]any {
	t.Helper()
	out := run(t, dir, 0, append(args, "--json")...)
	var v []map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("ctx %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// TestImportNeverMovesAnEntry: an import into another scope whose derived key holds a different public
// entry must not delete or move that entry; the clash is an error and nothing is written. The same holds
// for `ctx knowledge set --scope` (a set never moves an entry; `ctx knowledge scope` does).
func TestImportNeverMovesAnEntry(t *testing.T) {
	dir := newInitRepo(t)
	outside := t.TempDir()
	writeFiles(t, dir, map[string]string{"CLAUDE.md": "# Team rules\n\nShared with everyone.\n"})
	writeFiles(t, outside, map[string]string{"CLAUDE.md": "# My private notes\n"})
	run(t, dir, 0, "import", "CLAUDE.md")
	before, ok := showRef(dir, "ctx", "knowledge/claude.md")
	if !ok || !strings.Contains(before, "Shared with everyone.") {
		t.Fatalf("public import: %q %v", before, ok)
	}
	tip := testenv.Git(t, dir, "rev-parse", "ctx")

	_, stderr, code := runCode(dir, "", "import", "--scope", "private", filepath.Join(outside, "CLAUDE.md"))
	if code == 0 {
		t.Fatalf("import --scope private of a different CLAUDE.md succeeded; stderr:\n%s", stderr)
	}
	if !strings.Contains(stderr, "claude") || !strings.Contains(stderr, "public") {
		t.Errorf("the error must name the key and the scope that holds it:\n%s", stderr)
	}
	if got, ok := showRef(dir, "ctx", "knowledge/claude.md"); !ok || got != before {
		t.Fatalf("the public entry changed or vanished: %q %v", got, ok)
	}
	if tip2 := testenv.Git(t, dir, "rev-parse", "ctx"); tip2 != tip {
		t.Fatalf("the branch moved: %s -> %s", tip, tip2)
	}
	if _, ok := showRef(dir, "refs/ctx/private", "knowledge/claude.md"); ok {
		t.Fatal("the other text was stored as private")
	}

	// The same file again into private: already there (public), nothing moves, no error.
	run(t, dir, 0, "import", "--scope", "private", "CLAUDE.md")
	if got, ok := showRef(dir, "ctx", "knowledge/claude.md"); !ok || got != before {
		t.Fatalf("an unchanged import moved the entry: %q %v", got, ok)
	}

	// A set with another scope is refused too; the scope command moves.
	_, stderr, code = runCode(dir, "", "knowledge", "set", "claude", "other text", "--scope", "private")
	if code == 0 || !strings.Contains(stderr, "ctx knowledge scope") {
		t.Fatalf("knowledge set --scope private on a public key: exit %d\n%s", code, stderr)
	}
	if got, ok := showRef(dir, "ctx", "knowledge/claude.md"); !ok || got != before {
		t.Fatalf("knowledge set moved the entry: %q %v", got, ok)
	}
	run(t, dir, 0, "knowledge", "scope", "claude", "private")
	if _, ok := showRef(dir, "refs/ctx/private", "knowledge/claude.md"); !ok {
		t.Fatal("knowledge scope did not move the entry")
	}
}

// TestImportPushesNoLocalPath: nothing machine-local reaches a pushed object: no absolute path, no home
// folder, neither in commit messages (Ctx-Key trailer, subject) nor in decisions' source field.
func TestImportPushesNoLocalPath(t *testing.T) {
	remote := testenv.BareRemote(t)
	a := testenv.Clone(t, remote, "a")
	run(t, a, 0, "init", "--no-hooks")
	outside := t.TempDir()
	writeFiles(t, a, map[string]string{
		"docs/adr/0001-use-go.md":   "# 1. Use Go\n\n## Status\n\nAccepted\n\n## Context\n\nx\n",
		"docs/adr/0002-use-json.md": "# 2. Use JSON\n\n## Status\n\nProposed\n",
		"AGENTS.md":                 "# Agents\n",
	})
	writeFiles(t, outside, map[string]string{
		"adr/0003-use-yaml.md": "# 3. Use YAML\n\n## Status\n\nAccepted\n",
		"CLAUDE.md":            "# Outside\n",
	})
	run(t, a, 0, "import", filepath.Join(a, "docs", "adr"), filepath.Join(a, "AGENTS.md"),
		filepath.Join(outside, "adr"), filepath.Join(outside, "CLAUDE.md"))
	run(t, a, 0, "push")

	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = remote
	all, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	for _, local := range []string{a, outside, filepath.Dir(a), filepath.Dir(outside), home} {
		if local != "" && local != "/" && strings.Contains(string(all), local) {
			i := strings.Index(string(all), local)
			t.Errorf("a pushed object holds the local path %s: ...%s...", local, string(all)[max(0, i-300):min(len(all), i+200)])
		}
	}
	ds := jsonList(t, a, "decision", "list")
	sources := map[string]bool{}
	for _, d := range ds {
		full := run(t, a, 0, "decision", "get", strings.TrimSpace(jsonNumber(d["id"])), "--json")
		var dd map[string]any
		if err := json.Unmarshal([]byte(full), &dd); err != nil {
			t.Fatal(err)
		}
		sources[dd["source"].(string)] = true
	}
	for _, want := range []string{"docs/adr/0001-use-go.md", "docs/adr/0002-use-json.md", "adr/0003-use-yaml.md"} {
		if !sources[want] {
			t.Errorf("source %q missing; sources %v", want, sources)
		}
	}
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestImportDotSkipsOwnOutput: `ctx import .` never reads .context/, ctx's own export, or files git
// ignores; rounds of export + import keep the store the same size (1 -> 1 -> 1 decisions).
func TestImportDotSkipsOwnOutput(t *testing.T) {
	dir := newInitRepo(t)
	run(t, dir, 0, "decision", "add", "Use Postgres", "--context", "ACID", "--status", "accepted")
	writeFiles(t, dir, map[string]string{
		".gitignore":           "local/\n",
		"local/CLAUDE.md":      "# ignored by git\n",
		"CONTRIBUTING.md":      "# Contributing\n\nUse PRs.\n",
		"sub/build/.keep":      "",
		"docs/adr/0007-use.md": "# 7. Use things\n\n## Status\n\nAccepted\n",
	})
	for round := 0; round < 3; round++ {
		run(t, dir, 0, "import", ".")
		ds := jsonList(t, dir, "decision", "list")
		if len(ds) != 2 {
			t.Fatalf("round %d: %d decisions, want 2 (Use Postgres and ADR 7): %v", round, len(ds), ds)
		}
		ks := jsonList(t, dir, "knowledge", "list")
		for _, k := range ks {
			key := k["key"].(string)
			if strings.Contains(key, "context") || strings.Contains(key, "local") {
				t.Errorf("round %d: imported %q", round, key)
			}
		}
		cs := jsonList(t, dir, "convention", "list")
		if len(cs) != 1 {
			t.Errorf("round %d: conventions %v", round, cs)
		}
		run(t, dir, 0, "export", "-o", "AGENTS.md")
	}
	if n := len(jsonList(t, dir, "knowledge", "list")); n != 0 {
		t.Errorf("the exported AGENTS.md was imported back: %d knowledge entries", n)
	}
}

// TestImportUpdatesChangedADR: editing an ADR and importing again updates its decision (same id) and
// says so; it does not add a second decision.
func TestImportUpdatesChangedADR(t *testing.T) {
	dir := newInitRepo(t)
	adr := "docs/adr/0012-use-postgres.md"
	writeFiles(t, dir, map[string]string{adr: "# 12. Use Postgres\n\n## Status\n\nProposed\n\n## Context\n\nWe need a database.\n"})
	run(t, dir, 0, "import", "docs/adr")
	writeFiles(t, dir, map[string]string{adr: "# 12. Use Postgres 16\n\n## Status\n\nAccepted\n\n## Context\n\nWe need a database with JSON.\n"})
	out := run(t, dir, 0, "import", "docs/adr")
	if !strings.Contains(out, "updated") || !strings.Contains(out, "12") {
		t.Errorf("the import must say it updated decision 12:\n%s", out)
	}
	ds := jsonList(t, dir, "decision", "list")
	if len(ds) != 1 {
		t.Fatalf("%d decisions after re-import, want 1: %v", len(ds), ds)
	}
	got := run(t, dir, 0, "decision", "get", "12", "--json")
	for _, want := range []string{`"title": "Use Postgres 16"`, `"status": "accepted"`, "with JSON"} {
		if !strings.Contains(got, want) {
			t.Errorf("decision 12 lacks %s:\n%s", want, got)
		}
	}
	// Unchanged: nothing to do.
	out = run(t, dir, 0, "import", "docs/adr")
	if !strings.Contains(out, "nothing new") {
		t.Errorf("third import: %s", out)
	}
}

// TestImportAgentFiles: Cursor rules imported by their folder or one by one, Claude Code commands, a
// CLAUDE.md @import followed (inside the repository) or warned about (outside), and convention keys that
// do not depend on the clone's folder name.
func TestImportAgentFiles(t *testing.T) {
	dir := newInitRepo(t)
	writeFiles(t, dir, map[string]string{
		".cursor/rules/go-style.mdc":      "---\ndescription: Go style\nglobs: \"*.go\"\n---\nUse gofmt.\n",
		".cursor/rules/testing.mdc":       "---\ndescription: Tests\n---\nTable tests.\n",
		".claude/commands/review.md":      "Review the diff for bugs.\n",
		"docs/architecture.md":            "Hexagonal, one binary.\n",
		"CLAUDE.md":                       "# Project\n\nSee @docs/architecture.md for the layout.\n@~/.claude/my-notes.md\n",
		"backend/CONTRIBUTING.md":         "# Backend\n",
		"CONTRIBUTING.md":                 "# Contributing\n",
		".github/copilot-instructions.md": "Be terse.\n",
	})
	out := run(t, dir, 0, "import", ".cursor/rules")
	if strings.Contains(out, "nothing new") {
		t.Fatalf("import .cursor/rules imported nothing:\n%s", out)
	}
	ks := keysOf(jsonList(t, dir, "knowledge", "list"))
	if !ks["cursor-rules-go-style"] || !ks["cursor-rules-testing"] {
		t.Fatalf("cursor rules: %v", ks)
	}
	// One .mdc file alone gets the same key: nothing new.
	out = run(t, dir, 0, "import", ".cursor/rules/go-style.mdc")
	if !strings.Contains(out, "nothing new") {
		t.Errorf("re-import of one rule: %s", out)
	}
	_, stderr, code := runCode(dir, "", "import", ".")
	if code != 0 {
		t.Fatalf("import .: exit %d\n%s", code, stderr)
	}
	ks = keysOf(jsonList(t, dir, "knowledge", "list"))
	for _, want := range []string{"claude-commands-review", "claude", "github-copilot-instructions"} {
		if !ks[want] {
			t.Errorf("knowledge %q missing: %v", want, ks)
		}
	}
	claude := run(t, dir, 0, "knowledge", "get", "claude")
	if !strings.Contains(claude, "Hexagonal, one binary.") || !strings.Contains(claude, "See @docs/architecture.md") {
		t.Errorf("the @import is not followed into the entry:\n%s", claude)
	}
	if !strings.Contains(stderr, "CLAUDE.md: line 4: @~/.claude/my-notes.md") {
		t.Errorf("no warning naming the @import line outside the repository:\n%s", stderr)
	}
	cs := keysOf(jsonList(t, dir, "convention", "list"))
	if !cs["contributing"] || !cs["backend-contributing"] {
		t.Errorf("conventions: %v", cs)
	}

	// The same CONTRIBUTING.md in a clone with another folder name gets the same key.
	for _, name := range []string{"sonar", "sonar-other"} {
		clone := filepath.Join(t.TempDir(), name)
		testenv.Git(t, "", "init", "-q", "-b", "main", clone)
		writeFiles(t, clone, map[string]string{"CONTRIBUTING.md": "# Contributing\n"})
		testenv.Git(t, clone, "add", ".")
		testenv.Git(t, clone, "commit", "-qm", "x")
		run(t, clone, 0, "init", "--no-hooks")
		run(t, clone, 0, "import", ".")
		if cs := keysOf(jsonList(t, clone, "convention", "list")); !cs["contributing"] || len(cs) != 1 {
			t.Errorf("clone %s: conventions %v", name, cs)
		}
	}
}

func keysOf(list []map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, e := range list {
		if k, ok := e["key"].(string); ok {
			out[k] = true
		}
		if k, ok := e["name"].(string); ok {
			out[k] = true
		}
	}
	return out
}

// TestImportSymlinksAndSecrets: a link out of the imported tree is never followed; a file that looks
// like a secret by its name (or its link target's) is refused without --allow-secret.
func TestImportSymlinksAndSecrets(t *testing.T) {
	dir := newInitRepo(t)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"passwd": "root:x:0:0:SECRET-OUTSIDE-7a1\n"})
	writeFiles(t, dir, map[string]string{
		"docs/adr/0001-real.md": "# 1. Real\n\n## Status\n\nAccepted\n",
		"notes/target.md":       "# 9. Inside link target\n\n## Status\n\nAccepted\n",
		".env.local":            "DB_PASSWORD=SECRET-ENV-5c2\n",
	})
	if err := os.Symlink(filepath.Join(outside, "passwd"), filepath.Join(dir, "docs/adr/0002-passwd.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "docs/adr/0003-etc.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../notes/target.md", filepath.Join(dir, "docs/adr/0009-inside.md")); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCode(dir, "", "import", "docs/adr")
	if code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "0002-passwd.md") || !strings.Contains(stderr, "0003-etc.md") {
		t.Errorf("no warning about the links out of the tree:\n%s", stderr)
	}
	all := run(t, dir, 0, "export") + run(t, dir, 0, "decision", "list", "--json")
	for _, leak := range []string{"SECRET-OUTSIDE-7a1", "root:x:0"} {
		if strings.Contains(all, leak) {
			t.Errorf("a link out of the tree was followed: %s", leak)
		}
	}
	ds := jsonList(t, dir, "decision", "list")
	if len(ds) != 2 {
		t.Errorf("want decisions 1 and 9 (the link inside the repository): %v", ds)
	}

	// A link whose target looks like a secret, and a file named like one.
	if err := os.Symlink("../../.env.local", filepath.Join(dir, "docs/adr/0004-config.md")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"conventions/credentials.md": "aws_secret_access_key = SECRET-CRED-9d\n"})
	_, stderr, code = runCode(dir, "", "import", "docs/adr", "conventions")
	if code == 0 || !strings.Contains(stderr, "--allow-secret") || !strings.Contains(stderr, "credentials.md") || !strings.Contains(stderr, "0004-config.md") {
		t.Fatalf("secret-looking files: exit %d\n%s", code, stderr)
	}
	if strings.Contains(run(t, dir, 0, "export"), "SECRET-") {
		t.Fatal("a secret-looking file was imported without --allow-secret")
	}
	run(t, dir, 0, "import", "--allow-secret", "conventions")
	if !strings.Contains(run(t, dir, 0, "convention", "get", "credentials"), "SECRET-CRED-9d") {
		t.Error("--allow-secret did not import the file")
	}
}

// TestImportSkillFrontMatter: a BOM before the front matter, invalid YAML and a repeated key give the
// same description on every path: the dry run, skill list, and a hand edit recorded with ctx commit.
func TestImportSkillFrontMatter(t *testing.T) {
	dir := newInitRepo(t)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"bom/SKILL.md":      "\ufeff---\nname: bom\ndescription: Reads files with a BOM\n---\nBody.\n",
		"colon/SKILL.md":    "---\nname: colon\ndescription: a: b\n---\nBody.\n",
		"repeated/SKILL.md": "---\nname: repeated\ndescription: first\ndescription: second\n---\nBody.\n",
	})
	want := map[string]string{"bom": "Reads files with a BOM", "colon": "a: b", "repeated": "first"}
	var plan []map[string]any
	if err := json.Unmarshal([]byte(run(t, dir, 0, "import", "-n", "--json", src)), &plan); err != nil {
		t.Fatal(err)
	}
	for _, it := range plan {
		if it["description"] != want[it["key"].(string)] {
			t.Errorf("dry run %s: description %q, want %q", it["key"], it["description"], want[it["key"].(string)])
		}
	}
	run(t, dir, 0, "import", src)
	for _, sk := range jsonList(t, dir, "skill", "list") {
		if sk["description"] != want[sk["name"].(string)] {
			t.Errorf("skill list %s: description %q, want %q", sk["name"], sk["description"], want[sk["name"].(string)])
		}
	}
	// Hand edit + ctx commit.
	writeFiles(t, dir, map[string]string{".context/skills/hand/SKILL.md": "\ufeff---\nname: hand\ndescription: x: y\n---\nBody.\n"})
	run(t, dir, 0, "commit")
	for _, sk := range jsonList(t, dir, "skill", "list") {
		if sk["name"] == "hand" && sk["description"] != "x: y" {
			t.Errorf("hand-edited skill: description %q", sk["description"])
		}
	}
}

// TestKeysNFCAndReservedNames: a key typed in decomposed Unicode finds the entry; a skill named stats is
// refused with an error that says why.
func TestKeysNFCAndReservedNames(t *testing.T) {
	dir := newInitRepo(t)
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	run(t, dir, 0, "knowledge", "set", nfc, "espresso")
	if got := run(t, dir, 0, "knowledge", "get", nfd); got != "espresso\n" {
		t.Errorf("get by the NFD key: %q", got)
	}
	run(t, dir, 0, "knowledge", "set", nfd, "ristretto")
	if n := len(jsonList(t, dir, "knowledge", "list")); n != 1 {
		t.Errorf("NFD and NFC keys made %d entries", n)
	}
	_, stderr, code := runCode(dir, "", "skill", "add", "stats", "-d", "Statistics", "Body")
	if code == 0 || !strings.Contains(stderr, "reserved") {
		t.Errorf("skill add stats: exit %d\n%s", code, stderr)
	}
}

// TestDecisionSupersedeSetsBothSides: `ctx decision supersede OLD NEW` marks OLD superseded_by NEW and
// records supersedes on NEW (docs/format.md).
func TestDecisionSupersedeSetsBothSides(t *testing.T) {
	dir := newInitRepo(t)
	run(t, dir, 0, "decision", "add", "Use MySQL", "--status", "accepted")
	run(t, dir, 0, "decision", "add", "Use Postgres", "--status", "accepted")
	run(t, dir, 0, "decision", "supersede", "1", "2")
	var d1, d2 map[string]any
	if err := json.Unmarshal([]byte(run(t, dir, 0, "decision", "get", "1", "--json")), &d1); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(run(t, dir, 0, "decision", "get", "2", "--json")), &d2); err != nil {
		t.Fatal(err)
	}
	if d1["status"] != "superseded" || d1["superseded_by"] != float64(2) {
		t.Errorf("old: %v", d1)
	}
	if s, _ := d2["supersedes"].([]any); len(s) != 1 || s[0] != float64(1) {
		t.Errorf("new decision lacks supersedes [1]: %v", d2)
	}
}

// TestPulledSkillFrontMatter: a SKILL.md written by another tool (a foreign commit made with git
// plumbing, with a BOM and invalid YAML) reads with the same description after a pull as after an import.
func TestPulledSkillFrontMatter(t *testing.T) {
	remote := testenv.BareRemote(t)
	a := testenv.Clone(t, remote, "a")
	run(t, a, 0, "init", "--no-hooks")
	run(t, a, 0, "push")
	b := testenv.Clone(t, remote, "b")
	skill := filepath.Join(t.TempDir(), "SKILL.md")
	writeFiles(t, filepath.Dir(skill), map[string]string{"SKILL.md": "\ufeff---\nname: foreign\ndescription: Deploys: carefully\n---\nBody.\n"})
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	testenv.GitEnv(t, b, idx, "read-tree", "origin/ctx")
	blob := testenv.GitEnv(t, b, nil, "hash-object", "-w", skill)
	testenv.GitEnv(t, b, idx, "update-index", "--add", "--cacheinfo", "100644,"+blob+",skills/foreign/SKILL.md")
	tree := testenv.GitEnv(t, b, idx, "write-tree")
	commit := testenv.GitEnv(t, b, nil, "commit-tree", tree, "-p", "origin/ctx", "-m", "a skill written by another tool")
	testenv.GitEnv(t, b, nil, "push", "-q", "origin", commit+":refs/heads/ctx")

	run(t, a, 0, "pull")
	for _, sk := range jsonList(t, a, "skill", "list") {
		if sk["name"] == "foreign" && sk["description"] != "Deploys: carefully" {
			t.Errorf("pulled skill: description %q", sk["description"])
		}
	}
	var plan []map[string]any
	if err := json.Unmarshal([]byte(run(t, a, 0, "import", "-n", "--json", skill)), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 || plan[0]["description"] != "Deploys: carefully" {
		t.Errorf("dry run of the same file: %v", plan)
	}
}

// TestImportLinksSupersededADRs: "Superseded by ADR-0002" and adr-tools' "Supersedes [1. x](0001-x.md)"
// become superseded_by and supersedes; "Rejected" stays rejected.
func TestImportLinksSupersededADRs(t *testing.T) {
	dir := newInitRepo(t)
	writeFiles(t, dir, map[string]string{
		"docs/adr/0001-use-mysql.md": "# 1. Use MySQL\n\n## Status\n\nSuperseded by ADR-0002\n",
		"docs/adr/0002-use-pg.md":    "# 2. Use Postgres\n\n## Status\n\nAccepted\n",
		"docs/adr/0003-use-mongo.md": "# 3. Use Mongo\n\n## Status\n\nRejected\n",
		"docs/adr/0004-use-pg16.md":  "# 4. Use Postgres 16\n\n## Status\n\nAccepted\n\nSupersedes [2. Use Postgres](0002-use-pg.md)\n",
		"docs/adr/0005-cache.md":     "# 5. Cache\n\n## Status\n\nPartially Superseded by ADR-0004\n",
	})
	run(t, dir, 0, "import", "docs/adr")
	get := func(id string) map[string]any {
		var d map[string]any
		if err := json.Unmarshal([]byte(run(t, dir, 0, "decision", "get", id, "--json")), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d1, d2, d3, d4, d5 := get("1"), get("2"), get("3"), get("4"), get("5")
	if d1["status"] != "superseded" || d1["superseded_by"] != float64(2) {
		t.Errorf("1: %v %v", d1["status"], d1["superseded_by"])
	}
	if d2["superseded_by"] != float64(4) || jsonNumber(d2["supersedes"]) != "[1]" {
		t.Errorf("2: superseded_by %v supersedes %v", d2["superseded_by"], d2["supersedes"])
	}
	if d3["status"] != "rejected" {
		t.Errorf("3: status %v", d3["status"])
	}
	if jsonNumber(d4["supersedes"]) != "[2,5]" {
		t.Errorf("4: supersedes %v", d4["supersedes"])
	}
	if d5["status"] != "accepted" || d5["superseded_by"] != float64(4) || d5["status_text"] != "Partially Superseded by ADR-0004" {
		t.Errorf("5: %v %v %v", d5["status"], d5["superseded_by"], d5["status_text"])
	}
}

// TestImportAsksAtATerminal: with stdin a terminal, ctx import asks before importing a file named like a
// secret, and imports it only on "y".
func TestImportAsksAtATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not installed: no pseudo-terminal to test with")
	}
	dir := newInitRepo(t)
	writeFiles(t, dir, map[string]string{
		"conventions/credentials.md": "SECRET-ASKED-1\n",
		"conventions/style.md":       "Use gofmt.\n",
	})
	for _, c := range []struct {
		answer string
		want   bool
	}{{"n", false}, {"y", true}} {
		cmd := exec.Command("script", "-qec", ctxBin+" import conventions", "/dev/null")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(c.answer + "\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("answer %s: %v\n%s", c.answer, err, out)
		}
		if !strings.Contains(string(out), "looks like a secret") {
			t.Fatalf("answer %s: no question asked:\n%s", c.answer, out)
		}
		_, _, code := runCode(dir, "", "convention", "get", "credentials")
		if got := code == 0; got != c.want {
			t.Errorf("answer %s: imported %v, want %v\n%s", c.answer, got, c.want, out)
		}
		if _, _, code := runCode(dir, "", "convention", "get", "style"); code != 0 {
			t.Errorf("answer %s: the other file was not imported", c.answer)
		}
	}
}

// TestInitIdentityFromGitConfigGlobal: the identity only in the file GIT_CONFIG_GLOBAL names (no
// ~/.gitconfig; a stale one in a second run): git commit works, so ctx init and writes work too, as the
// same author git would record.
func TestInitIdentityFromGitConfigGlobal(t *testing.T) {
	for _, stale := range []bool{false, true} {
		dir := testenv.NewRepo(t)
		home := t.TempDir()
		if stale {
			writeFiles(t, home, map[string]string{".gitconfig": "[user]\n\tname = Old Me\n\temail = old@example.com\n"})
		}
		global := filepath.Join(t.TempDir(), "work.gitconfig")
		writeFiles(t, filepath.Dir(global), map[string]string{"work.gitconfig": "[user]\n\tname = Grace Hopper\n\temail = grace@example.com\n"})
		env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "GIT_CONFIG_GLOBAL=" + global,
			"GIT_AUTHOR_NAME=", "GIT_AUTHOR_EMAIL=", "GIT_COMMITTER_NAME=", "GIT_COMMITTER_EMAIL=", "EMAIL="}
		testenv.GitEnv(t, dir, env, "commit", "-q", "--allow-empty", "-m", "git itself works")
		mustCtx(t, dir, env, 0, "init", "--no-hooks")
		mustCtx(t, dir, env, 0, "knowledge", "set", "k", "v")
		if got := testenv.GitEnv(t, dir, nil, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "ctx"); got != "Grace Hopper <grace@example.com>|Grace Hopper <grace@example.com>" {
			t.Errorf("stale ~/.gitconfig %v: ctx committed as %q", stale, got)
		}
	}
}

// TestImportOnTwoClones: the repository's ADR folder imported on two clones, then both sync: every ADR
// is one decision (as git merges two identical adds), with the number and uid of one import, and both
// clones end on the same tip. Before, the store held every ADR twice, the copies renumbered.
func TestImportOnTwoClones(t *testing.T) {
	remote := testenv.BareRemote(t)
	seed := testenv.Clone(t, remote, "seed")
	adrs, err := filepath.Glob(filepath.Join(corpus(t), "adr", "madr", "*.md"))
	if err != nil || len(adrs) < 3 {
		t.Fatalf("corpus ADRs: %v %v", adrs, err)
	}
	files := map[string]string{}
	for _, p := range adrs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files["docs/adr/"+filepath.Base(p)] = string(b)
	}
	writeFiles(t, seed, files)
	testenv.Git(t, seed, "add", ".")
	testenv.Git(t, seed, "commit", "-qm", "adrs")
	testenv.Git(t, seed, "push", "-q", "origin", "main")
	a, b := testenv.Clone(t, remote, "a"), testenv.Clone(t, remote, "b")
	run(t, a, 0, "init", "--no-hooks")
	run(t, a, 0, "push")
	run(t, b, 0, "pull")
	run(t, a, 0, "import", "docs/adr")
	run(t, b, 0, "import", "docs/adr")
	want := len(jsonList(t, a, "decision", "list"))
	if want == 0 || len(jsonList(t, b, "decision", "list")) != want {
		t.Fatalf("imports: %d decisions on a, %d on b", want, len(jsonList(t, b, "decision", "list")))
	}
	run(t, a, 0, "sync")
	run(t, b, 0, "sync")
	run(t, a, 0, "sync")
	for _, dir := range []string{a, b} {
		got := jsonList(t, dir, "decision", "list")
		titles := map[string]int{}
		for _, d := range got {
			titles[fmt.Sprint(d["title"])]++
		}
		if len(got) != want {
			t.Errorf("%s: %d decisions after both imports merged, want %d: %v", filepath.Base(dir), len(got), want, titles)
		}
		for title, n := range titles {
			if n > 1 {
				t.Errorf("%s: %q is %d decisions", filepath.Base(dir), title, n)
			}
		}
	}
	if ta, tb := testenv.Git(t, a, "rev-parse", "ctx"), testenv.Git(t, b, "rev-parse", "ctx"); ta != tb {
		t.Errorf("tips differ: a %s, b %s", ta, tb)
	}
	if out := testenv.Git(t, a, "ls-tree", "--name-only", "ctx", "conflicts/"); out != "" {
		t.Errorf("conflicts after two identical imports: %s", out)
	}
}

// TestImportAfterAdaptersExportKeepsSkillName: the skill copies `ctx adapters export` writes are skipped
// by `ctx import .` before they take a key, so the user's own skill of the same name keeps it: rounds of
// export and import change nothing on the branch (docs/adapters.md "Import"), for every client.
func TestImportAfterAdaptersExportKeepsSkillName(t *testing.T) {
	for _, client := range []string{"claude-code", "codex", "cursor", "gemini", "copilot"} {
		t.Run(client, func(t *testing.T) {
			dir := testenv.NewRepo(t)
			writeFiles(t, dir, map[string]string{
				"tools/skills/foo/SKILL.md": "---\nname: foo\ndescription: Foo skill\n---\nDo foo.\n",
			})
			testenv.Git(t, dir, "add", "-A")
			testenv.Git(t, dir, "commit", "-qm", "skill")
			run(t, dir, 0, "init", "--no-hooks")
			run(t, dir, 0, "import", ".")
			tip := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx")
			for round := 0; round < 2; round++ {
				run(t, dir, 0, "adapters", "export", "--client", client)
				run(t, dir, 0, "import", ".")
				var names []string
				for _, s := range jsonList(t, dir, "skill", "list") {
					names = append(names, fmt.Sprint(s["name"]))
				}
				if strings.Join(names, ",") != "foo" {
					t.Fatalf("round %d: skills %v, want foo only", round, names)
				}
				if got := testenv.Git(t, dir, "rev-parse", "refs/heads/ctx"); got != tip {
					t.Errorf("round %d: the import changed the branch (%s -> %s)", round, tip, got)
				}
			}
		})
	}
}
