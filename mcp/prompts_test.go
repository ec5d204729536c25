package mcp

import (
	"context"
	"fmt"
	"github.com/ctx-dev/ctx/internal/fairshare"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

func getPrompt(name string, args map[string]string) mcpgo.GetPromptRequest {
	req := mcpgo.GetPromptRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return req
}

// promptBody returns the text of a prompt's only message (role user).
func promptBody(t *testing.T, res *mcpgo.GetPromptResult) string {
	t.Helper()
	if len(res.Messages) != 1 || res.Messages[0].Role != mcpgo.RoleUser {
		t.Fatalf("prompt messages = %+v", res.Messages)
	}
	tc, ok := res.Messages[0].Content.(mcpgo.TextContent)
	if !ok {
		t.Fatalf("prompt content %T", res.Messages[0].Content)
	}
	return tc.Text
}

// putStaleActivity writes an activity entry last updated three days ago (stale after 48 hours, docs/format.md
// "Activity").
func putStaleActivity(t *testing.T, st *store.Store) {
	t.Helper()
	e := store.ActivityEntry{Member: "old-timer", Agent: "cursor", Machine: "attic", Task: "STALE-TASK", Status: store.StatusActive,
		UpdatedAt: time.Now().Add(-72 * time.Hour).UTC().Format(time.RFC3339), Availability: "working", Files: []string{}}
	b, err := store.MarshalRecord(e)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Write(context.Background(), store.Op{Name: "test", Summary: "stale activity"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		ed.Put(store.Public, store.ActivityPath("old-timer", "cursor", "attic"), b)
		return ed, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOnboardingPrompt: public entries only, conventions before knowledge, decisions, skills, state,
// non-stale activity and recent sessions.
func TestOnboardingPrompt(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st) // architecture (public), credentials-setup (private), git convention, 2 decisions, a skill
	ctx := context.Background()
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "scratch", Content: "EPHEMERAL-NOTE\n", Scope: store.Ephemeral}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "credentials-setup", Content: "SECRET-VAULT-PATH\n"}); err != nil {
		t.Fatal(err)
	}
	task := "Implementing auth middleware"
	blockers := []string{"Waiting for API spec"}
	if _, _, err := st.UpdateState(ctx, store.StatePatch{CurrentTask: &task, Blockers: &blockers}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CheckIn(ctx, store.CheckIn{Task: "FRESH-TASK"}); err != nil {
		t.Fatal(err)
	}
	putStaleActivity(t, st)
	for i := 1; i <= 7; i++ {
		if _, _, err := st.StartSession(ctx, store.SessionUpdate{ID: fmt.Sprintf("sess-%d", i), Summary: fmt.Sprintf("SESSION-%d", i)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	s := serve(t, st, Options{Agent: "claude-code"}, "")
	lp, err := s.c.ListPrompts(ctx, mcpgo.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range lp.Prompts {
		names = append(names, p.Name)
	}
	if strings.Join(names, " ") != strings.Join(wantPrompts, " ") {
		t.Errorf("prompts/list = %v, want %v", names, wantPrompts)
	}
	res, err := s.c.GetPrompt(ctx, getPrompt("context_onboarding", nil))
	if err != nil {
		t.Fatal(err)
	}
	txt := promptBody(t, res)
	for _, want := range []string{"# Onboarding: engine-notes", "### git", "Always use feature branches.", "### architecture",
		"Microservices with gRPC.", "- 1. Use PostgreSQL for persistence (accepted)", "- 2. Adopt gRPC (proposed)",
		"- deploy-staging: Deploy the application to staging environment", "current task: " + task, "blocker: Waiting for API spec",
		"FRESH-TASK", "SESSION-7", "SESSION-3"} {
		if !strings.Contains(txt, want) {
			t.Errorf("onboarding lacks %q", want)
		}
	}
	for _, not := range []string{"credentials-setup", "SECRET-VAULT-PATH", "EPHEMERAL-NOTE", "scratch", "STALE-TASK", "old-timer", "SESSION-2\n", "SESSION-1\n"} {
		if strings.Contains(txt, not) {
			t.Errorf("onboarding shows %q (private, ephemeral, stale or older than the last 5 sessions)", not)
		}
	}
	order := []string{"## Conventions", "## Knowledge", "## Decisions", "## Skills", "## Current state", "## Team activity", "## Recent sessions"}
	last := -1
	for _, h := range order {
		i := strings.Index(txt, h)
		if i <= last {
			t.Errorf("section %q at %d, after %d: want the order %v\n%s", h, i, last, order, txt)
		}
		last = i
	}
	if strings.Index(txt, "SESSION-7") > strings.Index(txt, "SESSION-3") {
		t.Errorf("recent sessions are not newest first")
	}
	if strings.Contains(txt, "[truncated") {
		t.Errorf("a small store was truncated:\n%s", txt)
	}
}

// TestOnboardingBounded: 500 knowledge entries (180 KB, almost three times PromptLimit; 2,000 until the
// twelfth round, written as as many loose objects) do not make the prompt exceed PromptLimit; the cut is
// visible (entries cut, the last ones left out), and the later sections (decisions, state) are still there.
func TestOnboardingBounded(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st)
	ctx := context.Background()
	const facts = 500
	var b store.Batch
	for i := range facts {
		b.Entries = append(b.Entries, store.BatchEntry{Kind: store.KnowledgeKind, SetEntry: store.SetEntry{
			Key: fmt.Sprintf("fact-%04d", i), Content: strings.Repeat(fmt.Sprintf("fact %d is long. ", i), 20) + "\n"}})
	}
	b.Entries = append(b.Entries, store.BatchEntry{Kind: store.KnowledgeKind, SetEntry: store.SetEntry{
		Key: "huge", Content: strings.Repeat("é", 20000)}})
	if _, _, err := st.Apply(ctx, store.Op{Name: "import", Summary: "many facts"}, b); err != nil {
		t.Fatal(err)
	}
	s := serve(t, st, Options{Agent: "claude-code"}, "")
	start := time.Now()
	res, err := s.c.GetPrompt(ctx, getPrompt("context_onboarding", nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("onboarding over %d entries: %v", facts+3, time.Since(start))
	txt := promptBody(t, res)
	if len(txt) > PromptLimit {
		t.Errorf("onboarding is %d bytes, limit %d", len(txt), PromptLimit)
	}
	if !strings.Contains(txt, "more knowledge entries; read context://knowledge]") || !strings.Contains(txt, "[truncated: ") {
		t.Errorf("no truncation marker in %d bytes", len(txt))
	}
	for _, want := range []string{"## Conventions", "Always use feature branches.", "### architecture", "### fact-0000",
		"- 1. Use PostgreSQL for persistence (accepted)", "## Recent sessions", "## Next"} {
		if !strings.Contains(txt, want) {
			t.Errorf("bounded onboarding lost %q", want)
		}
	}
	if !strings.Contains(txt, "[truncated: ") || strings.Contains(txt, fmt.Sprintf("### fact-%04d", facts-1)) {
		t.Errorf("the last fact should be cut")
	}
}

func TestFitAndShares(t *testing.T) {
	if got := fairshare.Split([]int{10, 1000, 50}, 300); got[0] != 10 || got[2] != 50 || got[1] != 240 {
		t.Errorf("fairShares = %v", got)
	}
	secs := []section{{title: "A", unit: "as", uri: "u", items: []string{strings.Repeat("a", 600) + "\n", "b\n"}}}
	out := fit("H\n", secs, "F\n", 400)
	if len(out) > 400 || !strings.Contains(out, "[truncated: 2 more as; read u]") {
		t.Errorf("fit = %q", out)
	}
	if got := truncUTF8("éé", 3); got != "é" {
		t.Errorf("truncUTF8 = %q", got)
	}
}

// TestHandoffPrompt: the state, the caller's open session, its own recent commits, activity and the
// calls to make before stopping.
func TestHandoffPrompt(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st)
	s := serve(t, st, Options{Agent: "claude-code", Session: "sess-h"}, "")
	ctx := context.Background()
	structured(t, "update_state", s.call(t, "context_update_state", map[string]any{"current_task": "HANDOFF-TASK"}))
	structured(t, "append_session", s.call(t, "context_append_session", map[string]any{"agent": "claude-code",
		"summary": "HALF-DONE", "knowledge_added": []any{"architecture"}}))
	structured(t, "check_in", s.call(t, "context_check_in", map[string]any{"task": "CHECKED-IN-TASK"}))
	res, err := s.c.GetPrompt(ctx, getPrompt("context_handoff", nil))
	if err != nil {
		t.Fatal(err)
	}
	txt := promptBody(t, res)
	for _, want := range []string{"# Handoff from claude-code", "current task: HANDOFF-TASK", "sess-h by claude-code",
		"HALF-DONE", "knowledge added: architecture", "ctx: update session sess-h", "ctx: update state", "CHECKED-IN-TASK",
		`context_append_session {"agent": "claude-code", "summary": "...", "session_id": "sess-h"`,
		`context_end_session {"session_id": "sess-h"`} {
		if !strings.Contains(txt, want) {
			t.Errorf("handoff lacks %q:\n%s", want, txt)
		}
	}
	// commits of other agents (the seed was written by "cli") are not "your recent commits"
	if strings.Contains(txt, "ctx: add skill deploy-staging") {
		t.Errorf("handoff lists another agent's commit:\n%s", txt)
	}
	// after ending the session, handoff names no open session
	structured(t, "end_session", s.call(t, "context_end_session", map[string]any{"session_id": "sess-h"}))
	res, err = s.c.GetPrompt(ctx, getPrompt("context_handoff", map[string]string{"session_id": "sess-h"}))
	if err != nil {
		t.Fatal(err)
	}
	if txt := promptBody(t, res); !strings.Contains(txt, "sess-h by claude-code") || !strings.Contains(txt, "ended ") {
		t.Errorf("handoff with session_id:\n%s", txt)
	}
	_ = dir
}
