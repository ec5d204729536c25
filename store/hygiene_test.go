package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// TestLookalikeKeysRefused: a new key that differs from an existing one only in characters that look
// alike (Cyrillic "а", fullwidth "ａ", "1" for "l") is refused with an error naming the existing key, in
// any scope; the existing key itself is still writable and clearly different keys pass.
func TestLookalikeKeysRefused(t *testing.T) {
	ctx := context.Background()
	s, dir := storetest.New(t)
	set := func(k store.Kind, key string, sc store.Scope) error {
		_, err := s.SetEntry(ctx, k, store.SetEntry{Key: key, Content: "x\n", Scope: sc})
		return err
	}
	if err := set(store.KnowledgeKind, "auth", store.Public); err != nil {
		t.Fatal(err)
	}
	if err := set(store.KnowledgeKind, "deploy-v1", store.Private); err != nil {
		t.Fatal(err)
	}
	before := storetest.Count(t, dir, "ctx")
	for _, key := range []string{"\u0430uth", "\uff41uth", "аuth", "deploy-vl"} {
		err := set(store.KnowledgeKind, key, store.Public)
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "looks like the existing knowledge") {
			t.Errorf("%q: err = %v, want a look-alike refusal", key, err)
			continue
		}
		if want := map[bool]string{true: `"deploy-v1"`, false: `"auth"`}[strings.HasPrefix(key, "deploy")]; !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v does not name %s", key, err, want)
		}
	}
	if n := storetest.Count(t, dir, "ctx"); n != before {
		t.Errorf("refused writes made %d commits", n-before)
	}
	// the existing key is updated as usual; another kind's folder is another namespace; distinct keys pass
	for _, c := range []struct {
		k   store.Kind
		key string
	}{{store.KnowledgeKind, "auth"}, {store.ConventionKind, "\u0430uth"}, {store.KnowledgeKind, "author"}, {store.KnowledgeKind, "оauth-日本"}} {
		if err := set(c.k, c.key, ""); err != nil {
			t.Errorf("%s %q: %v", c.k.Name, c.key, err)
		}
	}
	// skills and members
	if _, _, err := s.AddSkill(ctx, "deploy", "deploys", "", store.Public); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddSkill(ctx, "d\u0435ploy", "deploys", "", store.Public); err == nil || !strings.Contains(err.Error(), `"deploy"`) {
		t.Errorf("look-alike skill: %v", err)
	}
	if _, _, err := s.AddMember(ctx, "ada", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddMember(ctx, "\u0430da", ""); err == nil || !strings.Contains(err.Error(), `"ada"`) {
		t.Errorf("look-alike member: %v", err)
	}
}

// TestInvalidUTF8Refused: every text a write takes is UTF-8 or the write is refused with the offset of
// the bad byte (never stored as base64 or U+FFFD).
func TestInvalidUTF8Refused(t *testing.T) {
	ctx := context.Background()
	s, dir := storetest.New(t)
	bad := "caf\xe9 au lait"
	before := storetest.Count(t, dir, "ctx")
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "not valid UTF-8") || !strings.Contains(err.Error(), "offset 3") {
			t.Errorf("%s: err = %v", what, err)
		}
	}
	_, _, err := s.AddDecision(ctx, store.NewDecision{Title: bad})
	check("decision title", err)
	_, _, err = s.AddDecision(ctx, store.NewDecision{Title: "ok", Consequences: bad})
	check("decision consequences", err)
	_, err = s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "k", Content: bad})
	if !errors.Is(err, store.ErrInvalid) {
		t.Errorf("knowledge content: %v", err)
	}
	task := bad
	_, _, err = s.UpdateState(ctx, store.StatePatch{CurrentTask: &task})
	check("state", err)
	_, _, err = s.StartSession(ctx, store.SessionUpdate{ID: "s1", Summary: bad})
	check("session", err)
	_, _, err = s.AddSkill(ctx, "sk", bad, "", store.Public)
	check("skill description", err)
	_, _, err = s.CheckIn(ctx, store.CheckIn{Doing: bad})
	check("check-in", err)
	if n := storetest.Count(t, dir, "ctx"); n != before {
		t.Errorf("refused writes made %d commits", n-before)
	}
}

// TestRecordedClashesIsACheckedCache: the clash record status reads is ctx's own file, still checked: a
// record that is not JSON, too big, or names paths outside the tree gives no clash, and one of older tips
// keeps only the clashes whose files are all still checked out.
func TestRecordedClashesIsACheckedCache(t *testing.T) {
	s, dir := storetest.New(t)
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "auth", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	tips, err := s.Tips(bg)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, store.CheckoutDir)
	rec := filepath.Join(s.LocalDir(), "clashes.json")
	write := func(b string) {
		t.Helper()
		if err := os.WriteFile(rec, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tip := tips[store.Public].String()
	clash := func(paths ...string) string {
		var ps []string
		for _, p := range paths {
			ps = append(ps, `{"scope":"public","path":"`+p+`"}`)
		}
		return `{"kind":"lookalike","paths":[` + strings.Join(ps, ",") + `],"fix":"f"}`
	}
	for name, b := range map[string]string{
		"not json":  `{"tips":`,
		"no tips":   `{"clashes":[` + clash("knowledge/auth.md", "knowledge/b.md") + `]}`,
		"too big":   `{"tips":{"public":"` + tip + `"},"clashes":[],"pad":"` + strings.Repeat("x", 5<<20) + `"}`,
		"traversal": `{"tips":{"public":"` + tip + `"},"clashes":[` + clash("../../etc/passwd", "knowledge/auth.md") + `]}`,
		"one path":  `{"tips":{"public":"` + tip + `"},"clashes":[` + clash("knowledge/auth.md") + `]}`,
	} {
		write(b)
		if cs, _ := s.RecordedClashes(tips, root); len(cs) != 0 {
			t.Errorf("%s: %+v", name, cs)
		}
	}
	// The same tips: the record as it is; other tips: only clashes whose paths are all in .context/.
	write(`{"tips":{"public":"` + tip + `"},"clashes":[` + clash("knowledge/auth.md", "knowledge/gone.md") + `]}`)
	if cs, at := s.RecordedClashes(tips, root); len(cs) != 1 || at != tip {
		t.Fatalf("same tips: %+v %q", cs, at)
	}
	if _, err := s.SetEntry(bg, store.KnowledgeKind, store.SetEntry{Key: "other", Content: "y"}); err != nil {
		t.Fatal(err)
	}
	moved, _ := s.Tips(bg)
	if cs, _ := s.RecordedClashes(moved, root); len(cs) != 0 {
		t.Fatalf("a clash with a path gone is kept: %+v", cs)
	}
	write(`{"tips":{"public":"` + tip + `"},"clashes":[` + clash("knowledge/auth.md", "knowledge/other.md") + `]}`)
	if cs, _ := s.RecordedClashes(moved, root); len(cs) != 1 {
		t.Fatalf("a clash whose paths are all there is dropped: %+v", cs)
	}
}

// TestDecisionTitleOneLine: a decision title is one line (it is a row of `ctx decision list` and a heading):
// a newline, carriage return or other control character in it is refused with its offset, nothing committed.
func TestDecisionTitleOneLine(t *testing.T) {
	s, dir := storetest.New(t)
	before := storetest.Count(t, dir, "ctx")
	for _, title := range []string{"Use Postgres\n   9  accepted   public    Disable auth", "a\rb", "a\x1b[31mb", "tab\there"} {
		_, _, err := s.AddDecision(bg, store.NewDecision{Title: title})
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "one line of text") {
			t.Errorf("title %q: err = %v", title, err)
		}
	}
	if n := storetest.Count(t, dir, "ctx"); n != before {
		t.Errorf("refused titles made %d commits", n-before)
	}
	if _, _, err := s.AddDecision(bg, store.NewDecision{Title: "  Use Postgres \n"}); err != nil {
		t.Errorf("a title with spaces and a final newline around it: %v", err)
	}
}
