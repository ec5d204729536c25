package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/tokens"
)

// TestHTTPWriteOfPrivateKeyReadsBack: a token that writes a key the machine user holds privately (a
// knowledge entry, a skill) reads back what it wrote, exactly as for a key nobody holds, so that no
// answer tells it a private entry exists (docs/http.md "Private scopes stay the machine user's"); the
// machine user keeps reading the private copy, and ctx status shows it the public copy (a clash of kind
// scopes whose repair names the HTTP write, not only a merge). Found by a tester: the read-back said
// "not found" for a private key only, an oracle for private keys, and status showed nothing.
func TestHTTPWriteOfPrivateKeyReadsBack(t *testing.T) {
	ctx := context.Background()
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st)
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "privk", Content: "PRIVATE-VALUE-9f1\n", Scope: store.Private}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.AddSkill(ctx, "privskill", "the user's own", "PRIVATE-STEPS-4e2\n", store.Private); err != nil {
		t.Fatal(err)
	}
	h := startHTTP(t, st, Options{}, HTTPOptions{})
	rw := h.connect(t, h.token(t, tokens.Spec{Member: "Eve", Email: "eve@example.com"}), "", "x")

	answers := map[string]string{}
	for _, key := range []string{"privk", "otherk"} {
		rw.call(t, "context_add_knowledge", map[string]any{"key": key, "content": "written by eve"})
		answers[key] = fmt.Sprint(rw.readJSON(t, "context://knowledge/"+key))
		if !strings.Contains(answers[key], "written by eve") {
			t.Errorf("context://knowledge/%s after the caller's write: %s", key, answers[key])
		}
		if list := fmt.Sprint(rw.readJSON(t, "context://knowledge")); !strings.Contains(list, key) {
			t.Errorf("context://knowledge after writing %s: %s", key, list)
		}
	}
	if strings.ReplaceAll(answers["privk"], "privk", "otherk") != answers["otherk"] {
		t.Errorf("the read-backs differ: %s / %s", answers["privk"], answers["otherk"])
	}
	for _, name := range []string{"privskill", "otherskill"} {
		res := rw.call(t, "context_add_skill", map[string]any{"name": name, "description": "eve's", "instructions": "EVE-STEPS\n"})
		if res.IsError {
			t.Fatalf("add skill %s: %s", name, resultText(res))
		}
		if got := rw.read(t, "context://skills/"+name); !strings.Contains(got, "EVE-STEPS") || strings.Contains(got, "PRIVATE") {
			t.Errorf("context://skills/%s after the caller's write: %s", name, got)
		}
		if list := fmt.Sprint(rw.readJSON(t, "context://skills")); !strings.Contains(list, name) {
			t.Errorf("context://skills after writing %s: %s", name, list)
		}
		res = rw.call(t, "context_propose_skill_improvement", map[string]any{"skill_name": name,
			"proposed_content": "---\nname: " + name + "\ndescription: eve's\n---\nEVE-STEPS-2\n", "rationale": "better"})
		if res.IsError {
			t.Errorf("propose for %s: %s", name, resultText(res))
		}
		res = rw.call(t, "context_list_skill_proposals", map[string]any{"skill_name": name})
		if res.IsError || !strings.Contains(resultText(res), "better") {
			t.Errorf("proposals of %s: %s", name, resultText(res))
		}
	}

	// The machine user still reads its private copies, and is shown the public ones.
	v, err := st.CheckoutView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := v.GetEntry(ctx, store.KnowledgeKind, "privk"); err != nil || e.Scope != store.Private || !strings.Contains(e.Content, "PRIVATE-VALUE-9f1") {
		t.Errorf("the machine user's privk: %+v %v", e, err)
	}
	stat, err := st.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shown := fmt.Sprintf("%+v", stat.Clashes)
	for _, want := range []string{"knowledge/privk.md", "skills/privskill/", "mcp serve --http"} {
		if !strings.Contains(shown, want) {
			t.Errorf("ctx status's clashes lack %q: %s", want, shown)
		}
	}
	if strings.Contains(shown, "otherk") || strings.Contains(shown, "otherskill") {
		t.Errorf("ctx status shows a clash of a key held once: %s", shown)
	}
}
