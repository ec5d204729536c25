package mcp

import (
	"context"
	"errors"
	"fmt"
	"github.com/ctx-dev/ctx/internal/fairshare"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The prompts of docs/mcp.md: context_onboarding (what an agent reads before starting work:
// context://summary, conventions, knowledge, decisions and skills, in one message; public scope only, stale
// activity omitted) and context_handoff (what the next agent needs to continue this one's work). Both return
// one user message of markdown text, read from the checked-out tree like the resources, and bounded in size:
// a section that does not fit ends with a visible marker "[truncated: N more <things>; read <uri>]", never
// silently.

// PromptLimit is the most bytes of text a prompt returns (64 KiB): a prompt lands in the model's context
// window whole, so a huge store must not flood it; the resources hold the rest.
const PromptLimit = 64 << 10

// maxPromptItem is the most bytes one entry's content takes in a prompt; a longer one is cut with a
// marker naming its resource.
const maxPromptItem = 8 << 10

// recentSessions is how many sessions context_onboarding shows (the newest).
const recentSessions = 5

// handoffCommits is how many of this agent's commits context_handoff shows, among the last handoffLogDepth
// commits of the public branch.
const (
	handoffCommits  = 10
	handoffLogDepth = 500
)

func (s *srv) addPrompts() {
	s.mcp.AddPrompt(mcpgo.NewPrompt("context_onboarding",
		mcpgo.WithPromptTitle("Onboarding"),
		mcpgo.WithPromptDescription("Everything a new agent should read before starting work on this project: "+
			"conventions first, then knowledge, decisions, skills, the current state, who is doing what and the "+
			"recent sessions. Shared (public) context only; bounded to 64 KiB, with the resources for the rest.")),
		s.onboardingPrompt)
	s.mcp.AddPrompt(mcpgo.NewPrompt("context_handoff",
		mcpgo.WithPromptTitle("Handoff"),
		mcpgo.WithPromptDescription("Hand the work over to the next agent or session: the current state, this "+
			"agent's open session, its recent commits and the team's activity, and what to record before stopping."),
		mcpgo.WithArgument("session_id", mcpgo.ArgumentDescription(
			"The session to hand over. Omitted: the server's session, else this agent's latest open session."))),
		s.handoffPrompt)
	s.mcp.AddPrompt(mcpgo.NewPrompt("context_resolve_conflicts",
		mcpgo.WithPromptTitle("Resolve merge conflicts"),
		mcpgo.WithPromptDescription("The open merge conflicts of the context branch with their diffs, and how to "+
			"settle each with context_resolve_conflict.")),
		s.resolveConflictsPrompt)
}

// section is one part of a prompt: a title and items rendered in order. unit names what an item is in the
// truncation marker ("knowledge entries"), uri the resource holding all of them.
type section struct {
	title, empty, unit, uri string
	items                   []string
}

// markerReserve is the room kept for a section's truncation marker.
const markerReserve = 160

// fit renders header and sections within limit bytes. Each section gets a share of the room left after
// the header and titles by max-min fairness (a section smaller than an equal share keeps all its items;
// the rest is split between the bigger ones), so that a huge knowledge base cannot push the decisions
// or the state out. Within a section, items are kept in order while they fit; the rest are counted in
// "[truncated: N more <unit>; read <uri>]".
func fit(header string, secs []section, footer string, limit int) string {
	room := limit - len(header) - len(footer)
	sizes := make([]int, len(secs))
	for i, sec := range secs {
		room -= len("## \n\n") + len(sec.title) + markerReserve + 1
		if len(sec.items) == 0 {
			room -= len(sec.empty) + 1
		}
		for _, it := range sec.items {
			sizes[i] += len(it)
		}
	}
	alloc := fairshare.Split(sizes, max(room, 0))
	var b strings.Builder
	b.WriteString(header)
	for i, sec := range secs {
		fmt.Fprintf(&b, "## %s\n\n", sec.title)
		if len(sec.items) == 0 {
			b.WriteString(sec.empty + "\n\n")
			continue
		}
		used, n := 0, 0
		for _, it := range sec.items {
			if used+len(it) > alloc[i] {
				break
			}
			b.WriteString(it)
			used += len(it)
			n++
		}
		if more := len(sec.items) - n; more > 0 {
			fmt.Fprintf(&b, "[truncated: %d more %s; read %s]\n", more, sec.unit, sec.uri)
		}
		b.WriteString("\n")
	}
	b.WriteString(footer)
	out := b.String()
	if len(out) > limit { // cannot happen with the reserves above; never exceed the limit anyway
		cut := "\n[truncated: output limit]\n"
		out = truncUTF8(out, limit-len(cut)) + cut
	}
	return out
}

// truncUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// promptEntry renders one knowledge entry or convention, its content cut at maxPromptItem; full is the
// length of its whole content (e.Content may hold only its beginning).
func promptEntry(uriPrefix string, e store.Entry, full int) string {
	body := e.Content
	if len(body) > maxPromptItem || full > len(body) {
		cut := truncUTF8(body, maxPromptItem)
		body = cut + fmt.Sprintf("\n[truncated: %d more bytes; read %s%s]", full-len(cut), uriPrefix, e.Key)
	}
	return fmt.Sprintf("### %s\n\n%s\n\n", e.Key, strings.TrimRight(body, "\n"))
}

func promptText(desc, text string) *mcpgo.GetPromptResult {
	return mcpgo.NewGetPromptResult(desc, []mcpgo.PromptMessage{
		mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent(text)),
	})
}

// onboardingPrompt is context_onboarding: public scope only (private and ephemeral entries never appear:
// scope filtering happens here and in `ctx export`, not in the resources), conventions
// first, then knowledge, decisions (id, title, status), skills (name, description), the state, non-stale
// activity (stale entries are omitted, docs/mcp.md "Prompts") and the last 5 sessions,
// newest first.
func (s *srv) onboardingPrompt(ctx context.Context, req mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, fmt.Errorf("context_onboarding: read the checked-out tree: %w", err)
	}
	title, text, err := onboarding(ctx, s.store(ctx), v, PromptLimit)
	if err != nil {
		return nil, err
	}
	return promptText(title, text), nil
}

// Onboarding renders the public context of the store as markdown, as the context_onboarding prompt and
// `ctx export` show it: conventions first, then knowledge, decisions, skills, the state, non-stale
// activity and the last sessions; private and ephemeral entries are never included (docs/mcp.md: scope
// filtering happens at the export and onboarding level). limit bounds the text in bytes, with a visible
// "[truncated: ...]" marker per cut section. It returns a title and the text.
func Onboarding(ctx context.Context, st *store.Store, limit int) (title, text string, err error) {
	v, err := st.CheckoutView(ctx)
	if err != nil {
		return "", "", fmt.Errorf("context_onboarding: read the checked-out tree: %w", err)
	}
	return onboarding(ctx, st, v, limit)
}

// onboarding is Onboarding on view v. Of each knowledge entry and convention it reads only what the
// prompt shows (maxPromptItem bytes).
func onboarding(ctx context.Context, st *store.Store, v *store.View, limit int) (title, text string, err error) {
	m, err := v.ReadManifest(ctx)
	if err != nil {
		return "", "", fmt.Errorf("context_onboarding: %w", err)
	}
	var secs []section
	for _, k := range []struct {
		kind                    store.Kind
		title, empty, unit, uri string
	}{
		{store.ConventionKind, "Conventions", "(no conventions yet)", "conventions", "context://conventions"},
		{store.KnowledgeKind, "Knowledge", "(no knowledge yet)", "knowledge entries", "context://knowledge"},
	} {
		es, err := loadEntries(ctx, v, k.kind, func(sizes []int) []int {
			out := make([]int, len(sizes))
			for i, n := range sizes {
				out[i] = min(n, maxPromptItem)
			}
			return out
		})
		if err != nil {
			return "", "", fmt.Errorf("context_onboarding: %w", err)
		}
		sec := section{title: k.title, empty: k.empty, unit: k.unit, uri: k.uri}
		for _, e := range es {
			if e.Scope == store.Public {
				sec.items = append(sec.items, promptEntry(k.uri+"/", e.Entry, e.full))
			}
		}
		secs = append(secs, sec)
	}

	ds, err := v.ListDecisions(ctx)
	if err != nil {
		return "", "", fmt.Errorf("context_onboarding: %w", err)
	}
	dsec := section{title: "Decisions", empty: "(no decisions yet)", unit: "decisions", uri: "context://decisions"}
	for _, d := range ds {
		if d.Scope == store.Public {
			dsec.items = append(dsec.items, fmt.Sprintf("- %d. %s (%s)\n", d.ID, oneLine(d.Title), d.Status))
		}
	}
	secs = append(secs, dsec)

	sks, err := v.ListSkills(ctx)
	if err != nil {
		return "", "", fmt.Errorf("context_onboarding: %w", err)
	}
	ssec := section{title: "Skills", empty: "(no skills yet)", unit: "skills", uri: "context://skills"}
	for _, sk := range sks {
		if sk.Scope == store.Public {
			ssec.items = append(ssec.items, fmt.Sprintf("- %s: %s\n", sk.Name, oneLine(sk.Description)))
		}
	}
	secs = append(secs, ssec)

	stsec := section{title: "Current state", empty: "(no current task, blockers or progress)", unit: "state lines", uri: "context://state"}
	if _, sc, err := v.Read(ctx, store.StatePath); err == nil && sc == store.Public {
		st, err := v.GetState(ctx)
		if err != nil {
			return "", "", fmt.Errorf("context_onboarding: %w", err)
		}
		stsec.items = stateLines(st)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("context_onboarding: %w", err)
	}
	secs = append(secs, stsec)

	as, err := v.ListActivity(ctx)
	if err != nil {
		return "", "", fmt.Errorf("context_onboarding: %w", err)
	}
	asec := section{title: "Team activity", empty: "(nobody checked in within the last 48 hours)", unit: "activity entries", uri: "context://activity"}
	now := time.Now()
	for _, a := range as {
		if a.Scope != store.Public || a.Stale || store.IsStale(a.UpdatedAt, now) {
			continue
		}
		asec.items = append(asec.items, activityLine(a))
	}
	secs = append(secs, asec)

	ss, err := v.ListSessions(ctx)
	if err != nil {
		return "", "", fmt.Errorf("context_onboarding: %w", err)
	}
	hsec := section{title: "Recent sessions", empty: "(no sessions yet)", unit: "sessions", uri: "context://history"}
	var pub []store.SessionSummary
	for _, x := range ss {
		if x.Scope == store.Public {
			pub = append(pub, x)
		}
	}
	for i := len(pub) - 1; i >= 0 && i >= len(pub)-recentSessions; i-- {
		hsec.items = append(hsec.items, sessionLine(pub[i]))
	}
	secs = append(secs, hsec)

	header := fmt.Sprintf("# Onboarding: %s\n\nThis is the shared context of this project, kept by ctx on the git "+
		"branch of its context store. Follow the conventions; use the knowledge and decisions before asking "+
		"teammates to re-explain them.\n\n", oneLine(m.Project.Name))
	footer := "## Next\n\nTell the team what you work on with context_check_in, record what you learn with " +
		"context_add_knowledge and decisions with context_record_decision, and summarise your session with " +
		"context_append_session before you stop.\n"
	return "Onboarding for " + oneLine(m.Project.Name), fit(header, secs, footer, limit), nil
}

// oneLine is the first line of s: a value of a fetched branch (a project or member name, a task) never
// starts a line, a heading or a section of its own in a prompt.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func stateLines(st store.ActiveState) []string {
	var out []string
	if st.CurrentTask != "" {
		out = append(out, fmt.Sprintf("- current task: %s\n", oneLine(st.CurrentTask)))
	}
	for _, b := range st.Blockers {
		out = append(out, fmt.Sprintf("- blocker: %s\n", oneLine(b)))
	}
	keys := make([]string, 0, len(st.Progress))
	for k := range st.Progress {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, fmt.Sprintf("- progress %s: %s\n", k, oneLine(st.Progress[k])))
	}
	if len(out) > 0 && st.LastAgent != "" {
		out = append(out, fmt.Sprintf("- last updated by %s on %s at %s\n", st.LastAgent, st.LastMachine, st.UpdatedAt))
	}
	return out
}

func activityLine(a store.Activity) string {
	line := fmt.Sprintf("- %s (%s on %s): %s", oneLine(a.Member), oneLine(a.Agent), oneLine(a.Machine), oneLine(a.Status))
	if a.Task != "" {
		line += ", " + oneLine(a.Task)
	}
	if a.IssueRef != "" {
		line += " (" + a.IssueRef + ")"
	}
	if a.Doing != "" {
		line += "; doing: " + oneLine(a.Doing)
	}
	if a.Branch != nil && *a.Branch != "" {
		line += "; branch " + *a.Branch
	}
	if len(a.Files) > 0 {
		line += "; files " + strings.Join(a.Files, ", ")
	}
	if a.Intent != nil {
		line += fmt.Sprintf("; intends to %s %s until %s", a.Intent.Kind, strings.Join(append(append([]string{}, a.Intent.Paths...), a.Intent.Areas...), ", "), a.Intent.ExpiresAt)
	}
	return line + fmt.Sprintf(" [%s]\n", a.UpdatedAt)
}

func sessionLine(x store.SessionSummary) string {
	state := "open"
	if x.Ended != nil {
		state = "ended " + *x.Ended
	}
	line := fmt.Sprintf("- %s by %s, started %s, %s", x.ID, x.Agent, x.Started, state)
	if x.Summary != "" {
		line += ": " + oneLine(x.Summary)
	}
	return line + "\n"
}

// handoffPrompt is context_handoff: the state, the caller's open session (session_id, else the server's
// session, else this agent's latest open session), the latest commits of this agent on the public branch
// (store.Log, Ctx-Agent = the server's agent), non-stale activity, and what to call before stopping
// (context_append_session, context_end_session). It is for the next agent on this machine, so it does not
// filter by scope.
func (s *srv) handoffPrompt(ctx context.Context, req mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, fmt.Errorf("context_handoff: read the checked-out tree: %w", err)
	}
	agent := s.store(ctx).Actor.Agent
	st, err := v.GetState(ctx)
	if err != nil {
		return nil, fmt.Errorf("context_handoff: %w", err)
	}
	secs := []section{{title: "Current state", empty: "(no current task, blockers or progress)", unit: "state lines",
		uri: "context://state", items: stateLines(st)}}

	ss, err := v.ListSessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("context_handoff: %w", err)
	}
	want := req.Params.Arguments["session_id"]
	if want == "" {
		want = s.store(ctx).Actor.Session
	}
	var open *store.SessionSummary
	for i := len(ss) - 1; i >= 0; i-- {
		x := ss[i]
		if want != "" && x.ID == want || want == "" && x.Agent == agent && x.Ended == nil {
			open = &ss[i]
			break
		}
	}
	sessSec := section{title: "Your session", empty: "(no open session of " + agent + ")", unit: "session lines", uri: "context://history"}
	sid := want
	if open != nil {
		sid = open.ID
		sessSec.items = append(sessSec.items, sessionLine(*open))
		for _, l := range []struct {
			what string
			vals []string
		}{{"knowledge added", open.KnowledgeAdded}, {"decisions added", open.DecisionsAdded}, {"skills used", open.SkillsUsed}} {
			if len(l.vals) > 0 {
				sessSec.items = append(sessSec.items, fmt.Sprintf("- %s: %s\n", l.what, strings.Join(l.vals, ", ")))
			}
		}
	}
	secs = append(secs, sessSec)

	logSec := section{title: "Your recent commits", empty: "(no commits by " + agent + " yet)", unit: "commits", uri: "`ctx log`"}
	log, err := s.store(ctx).Log(ctx, handoffLogDepth, "")
	if err != nil && !errors.Is(err, store.ErrNotInitialized) {
		return nil, fmt.Errorf("context_handoff: %w", err)
	}
	for _, e := range log {
		if e.Agent != agent {
			continue
		}
		if len(logSec.items) == handoffCommits {
			break
		}
		logSec.items = append(logSec.items, fmt.Sprintf("- %s %s %s\n", e.Commit[:min(12, len(e.Commit))], e.Time, e.Summary))
	}
	secs = append(secs, logSec)

	as, err := v.ListActivity(ctx)
	if err != nil {
		return nil, fmt.Errorf("context_handoff: %w", err)
	}
	asec := section{title: "Team activity", empty: "(nobody checked in within the last 48 hours)", unit: "activity entries", uri: "context://activity"}
	for _, a := range as {
		if !a.Stale {
			asec.items = append(asec.items, activityLine(a))
		}
	}
	secs = append(secs, asec)

	idArg, endID := "", `"<your session id>"`
	if sid != "" {
		idArg, endID = fmt.Sprintf(`, "session_id": %q`, sid), fmt.Sprintf("%q", sid)
	}
	footer := fmt.Sprintf("## Before you stop\n\n"+
		"1. Record what this session did: context_append_session {\"agent\": %q, \"summary\": \"...\"%s, "+
		"\"knowledge_added\": [...], \"decisions_added\": [...], \"skills_used\": [...]}.\n"+
		"2. Update the state for the next agent: context_update_state {\"current_task\": ..., \"blockers\": [...], \"progress\": {...}}.\n"+
		"3. Close the session: context_end_session {\"session_id\": %s, \"summary\": \"...\"}, and context_check_out if you checked in.\n",
		agent, idArg, endID)
	header := fmt.Sprintf("# Handoff from %s\n\nWhat the next agent needs to continue this work.\n\n", agent)
	return promptText("Handoff from "+agent, fit(header, secs, footer, PromptLimit)), nil
}
