package mcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/store"
)

// The write tools of issue #3 over the rest of the model (design §7): state, sessions, skills (usage,
// feedback, proposals), activity (check-in/out, intent) and scope moves. Each runs one store write:
// one commit on the ref of the scope it touches (design §3), none when nothing changes (commit ""), none
// on error. Arguments are checked against the tool's schema (schemas/<tool>.input.json) and then against
// the store's own rules before the store is called, so that a bad argument is a tool error naming the
// field (argError) and never a half-done write. Every result is a JSON object with a "commit" field:
// the new commit of the first scope whose ref moved, in the order of store.Scopes ("" when none moved);
// writes that can move two refs (a scope move, a skill removed from two scopes) add "commits" {scope:
// commit}.

func (s *srv) modelToolDefs() []toolDef {
	return []toolDef{
		{name: "context_update_state", title: "Update state",
			desc: "Change the active state (current task, blockers, progress): only the fields given change; an empty " +
				"list or object clears. Records last_agent and last_machine. One commit. Returns {state, commit}.",
			run: s.updateState},
		{name: "context_append_session", title: "Append session",
			desc: "Record what a session did (its summary in context://history): starts the session " +
				"when it does not exist, else replaces its summary and appends the lists without duplicates. " +
				"session_id defaults to the server's session. One commit. Returns {session, commit}.",
			run: s.appendSession},
		{name: "context_end_session", title: "End session",
			desc: "Mark a session ended (ended = now; a session ended already keeps its time), optionally with a " +
				"final summary. One commit. Returns {session, commit}.",
			run: s.endSession},
		{name: "context_add_skill", title: "Add skill",
			desc: "Add or replace an agent skill: skills/<name>/SKILL.md in the Agent Skills format (front matter " +
				"name and description, then the instructions). One commit. Returns {name, description, scope, commit}.",
			run: s.addSkill},
		{name: "context_remove_skill", title: "Remove skill", destructive: true,
			desc: "Remove a skill with its feedback, usage and proposals from every scope holding it. " +
				"Returns {name, commit, commits}.",
			run: s.removeSkill},
		{name: "context_report_skill_usage", title: "Report skill usage",
			desc: "Record that a skill was used (skills/<name>/.usage.ndjson; counted in context://skills/stats). " +
				"One commit. Returns {skill_name, usage, commit}.",
			run: s.reportSkillUsage},
		{name: "context_rate_skill", title: "Rate skill",
			desc: "Rate a skill 1-5 with an optional comment (a skill with 2+ ratings " +
				"averaging below 3.0 needs attention). One commit. Returns {skill_name, feedback, commit}.",
			run: s.rateSkill},
		{name: "context_propose_skill_improvement", title: "Propose skill improvement",
			desc: "Propose a new version of a skill's SKILL.md (the whole file) with a rationale; the proposal " +
				"records a unified diff current -> proposed and waits as pending. One commit. Returns {proposal, commit}.",
			run: s.proposeSkill},
		{name: "context_list_skill_proposals", title: "List skill proposals", readOnly: true,
			desc: "List skill improvement proposals, of one skill or of all, optionally only those with one status " +
				"(pending, accepted, rejected, upstream). Returns {proposals}.",
			run: s.listProposals},
		{name: "context_resolve_skill_proposal", title: "Resolve skill proposal",
			desc: "Settle a pending proposal: accept (replaces SKILL.md in the same commit), reject or upstream. " +
				"One commit. Returns {proposal, commit}.",
			run: s.resolveProposal},
		{name: "context_check_in", title: "Check in",
			desc: "Tell the team what you are working on (context://activity and get_project_context's pulse), " +
				"as this server's agent on this machine. One commit. Returns {activity, commit}.",
			run: s.checkIn},
		{name: "context_check_out", title: "Check out",
			desc: "Tell the team you stopped: your activity entry becomes checked_out (offline). One commit. " +
				"Returns {activity, commit}.",
			run: s.checkOut},
		{name: "context_set_intent", title: "Set intent",
			desc: "Announce what you intend to change (kind, paths, areas, expires_at) so " +
				"that teammates avoid the same files. One commit. Returns {activity, commit}.",
			run: s.setIntent},
		{name: "context_set_scope", title: "Set scope",
			desc: "Move a knowledge entry, convention, decision or skill to another scope (public, private, " +
				"ephemeral) in one step. Returns {kind, key, scope, commit, commits}.",
			run: s.setScope},
	}
}

// firstCommit is the new commit of the first scope (store.Scopes order) whose ref moved; "" when none.
func firstCommit(c *store.Committed) string {
	if c == nil {
		return ""
	}
	for _, sc := range store.Scopes {
		if h, ok := c.Commits[sc]; ok {
			return h.String()
		}
	}
	return ""
}

// commitMap is {scope: commit} of every ref a write moved ({} when none).
func commitMap(c *store.Committed) map[store.Scope]string {
	out := map[store.Scope]string{}
	if c == nil {
		return out
	}
	for sc, h := range c.Commits {
		out[sc] = h.String()
	}
	return out
}

// validKeyArg checks an argument with store.NormalizeKey (docs/format.md "Keys and names": a key in
// decomposed form names the same entry), as an error naming the field.
func validKeyArg(field, v string) error {
	if _, err := store.NormalizeKey(v); err != nil {
		return argErrorf("argument '%s': %v", field, err)
	}
	return nil
}

// strList reads an array-of-strings argument (the schema checked the types); nil when absent.
func strList(args map[string]any, key string) []string {
	raw, ok := args[key].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(raw))
	for _, x := range raw {
		if v, ok := x.(string); ok {
			out = append(out, v)
		}
	}
	return out
}

// updateState is context_update_state (store.UpdateState): a field given replaces the stored one, an
// omitted one is left alone (issue #3). At least one field must be given: a call without any would
// only restamp last_agent.
func (s *srv) updateState(ctx context.Context, args map[string]any) (any, error) {
	var p store.StatePatch
	if v, ok := args["current_task"].(string); ok {
		p.CurrentTask = &v
	}
	if _, ok := args["blockers"]; ok {
		b := strList(args, "blockers")
		p.Blockers = &b
	}
	if raw, ok := args["progress"].(map[string]any); ok {
		m := make(map[string]string, len(raw))
		for k, v := range raw {
			if strings.TrimSpace(k) == "" {
				return nil, argErrorf("argument 'progress': keys must not be blank")
			}
			m[k], _ = v.(string)
		}
		p.Progress = &m
	}
	if p.CurrentTask == nil && p.Blockers == nil && p.Progress == nil {
		return nil, argErrorf("invalid arguments: give at least one of 'current_task', 'blockers', 'progress'")
	}
	st, c, err := s.store(ctx).UpdateState(ctx, p)
	if err != nil {
		return nil, err
	}
	return struct {
		State  activeState `json:"state"`
		Commit string      `json:"commit"`
	}{activeStateOf(st), firstCommit(c)}, nil
}

// activeStateOf renders a store.ActiveState in seed 000's shape (blockers [] and progress {} rather than
// null, updated_at null when never set).
func activeStateOf(st store.ActiveState) activeState {
	out := activeState{CurrentTask: st.CurrentTask, Blockers: st.Blockers, Progress: st.Progress,
		LastAgent: st.LastAgent, LastMachine: st.LastMachine}
	if out.Blockers == nil {
		out.Blockers = []string{}
	}
	if out.Progress == nil {
		out.Progress = map[string]string{}
	}
	if st.UpdatedAt != "" {
		out.UpdatedAt = &st.UpdatedAt
	}
	return out
}

type sessionResult struct {
	Session store.SessionSummary `json:"session"`
	Commit  string               `json:"commit"`
}

// appendSession is context_append_session (store.AppendSession). session_id omitted: the server's
// session (Options.Session, the Ctx-Session trailer of its writes), else a new UUID, so that an agent
// started with --session appends to its own session record.
func (s *srv) appendSession(ctx context.Context, args map[string]any) (any, error) {
	id := str(args, "session_id")
	if _, given := args["session_id"]; !given {
		id = s.store(ctx).Actor.Session
	}
	if id != "" {
		if err := validKeyArg("session_id", id); err != nil {
			return nil, err
		}
	}
	agent := strings.TrimSpace(str(args, "agent"))
	if agent == "" {
		return nil, argErrorf("argument 'agent': must not be blank")
	}
	summary := str(args, "summary")
	if strings.TrimSpace(summary) == "" {
		return nil, argErrorf("argument 'summary': must not be blank")
	}
	ss, c, err := s.store(ctx).AppendSession(ctx, store.SessionUpdate{ID: id, Agent: agent, Summary: summary,
		KnowledgeAdded: strList(args, "knowledge_added"), DecisionsAdded: strList(args, "decisions_added"),
		SkillsUsed: strList(args, "skills_used")})
	if err != nil {
		return nil, err
	}
	return sessionResult{ss, firstCommit(c)}, nil
}

// endSession is context_end_session (store.EndSession); a missing session is seed-style "Session 'x'
// not found".
func (s *srv) endSession(ctx context.Context, args map[string]any) (any, error) {
	id := str(args, "session_id")
	if err := validKeyArg("session_id", id); err != nil {
		return nil, err
	}
	ss, c, err := s.store(ctx).EndSession(ctx, id, str(args, "summary"))
	if err != nil {
		return nil, err
	}
	return sessionResult{ss, firstCommit(c)}, nil
}

// addSkill is context_add_skill (store.AddSkill): Agent Skills' rules on the description (not blank, at
// most store.MaxSkillDescription characters) are checked here first so that they name the field.
func (s *srv) addSkill(ctx context.Context, args map[string]any) (any, error) {
	name := str(args, "name")
	if err := validKeyArg("name", name); err != nil {
		return nil, err
	}
	desc := str(args, "description")
	if strings.TrimSpace(desc) == "" {
		return nil, argErrorf("argument 'description': must not be blank (Agent Skills format)")
	}
	sk, c, err := s.store(ctx).AddSkill(ctx, name, desc, str(args, "instructions"), store.Scope(str(args, "scope")))
	if err != nil {
		return nil, err
	}
	return struct {
		Name        string      `json:"name"`
		Description string      `json:"description"`
		Scope       store.Scope `json:"scope"`
		Commit      string      `json:"commit"`
	}{sk.Name, sk.Description, sk.Scope, firstCommit(c)}, nil
}

// removeSkill is context_remove_skill (store.RemoveSkill: one commit per scope holding the skill).
func (s *srv) removeSkill(ctx context.Context, args map[string]any) (any, error) {
	name := str(args, "name")
	if err := validKeyArg("name", name); err != nil {
		return nil, err
	}
	c, err := s.store(ctx).RemoveSkill(ctx, name)
	if err != nil {
		return nil, err
	}
	return struct {
		Name    string                 `json:"name"`
		Commit  string                 `json:"commit"`
		Commits map[store.Scope]string `json:"commits"`
	}{name, firstCommit(c), commitMap(c)}, nil
}

// existingSkill reads a skill from the refs, so that a tool on a missing skill is seed 000's "Skill 'x'
// not found" before any write is tried.
func (s *srv) existingSkill(ctx context.Context, field, name string) (store.Skill, error) {
	if err := validKeyArg(field, name); err != nil {
		return store.Skill{}, err
	}
	v, err := s.refView(ctx)
	if err != nil {
		return store.Skill{}, err
	}
	return v.GetSkill(ctx, name)
}

// reportSkillUsage is context_report_skill_usage (store.ReportSkillUsage); session_id omitted is the
// server's session.
func (s *srv) reportSkillUsage(ctx context.Context, args map[string]any) (any, error) {
	name := str(args, "skill_name")
	if _, err := s.existingSkill(ctx, "skill_name", name); err != nil {
		return nil, err
	}
	sid := str(args, "session_id")
	if sid != "" {
		if err := validKeyArg("session_id", sid); err != nil {
			return nil, err
		}
	}
	u, c, err := s.store(ctx).ReportSkillUsage(ctx, name, sid)
	if err != nil {
		return nil, err
	}
	return struct {
		SkillName string           `json:"skill_name"`
		Usage     store.SkillUsage `json:"usage"`
		Commit    string           `json:"commit"`
	}{name, u, firstCommit(c)}, nil
}

// rateSkill is context_rate_skill (store.RateSkill; the schema holds seed 000's "rating 1-5").
func (s *srv) rateSkill(ctx context.Context, args map[string]any) (any, error) {
	name := str(args, "skill_name")
	if _, err := s.existingSkill(ctx, "skill_name", name); err != nil {
		return nil, err
	}
	r, ok := args["rating"].(float64)
	if !ok || r != float64(int(r)) || r < 1 || r > 5 {
		return nil, argErrorf("argument 'rating': must be a whole number from 1 to 5")
	}
	f, c, err := s.store(ctx).RateSkill(ctx, name, int(r), str(args, "comment"))
	if err != nil {
		return nil, err
	}
	return struct {
		SkillName string              `json:"skill_name"`
		Feedback  store.SkillFeedback `json:"feedback"`
		Commit    string              `json:"commit"`
	}{name, f, firstCommit(c)}, nil
}

type proposalResult struct {
	Proposal store.SkillProposal `json:"proposal"`
	Commit   string              `json:"commit"`
}

// proposeSkill is context_propose_skill_improvement (store.ProposeSkill). A proposal identical to the
// current SKILL.md proposes nothing: an error naming proposed_content.
func (s *srv) proposeSkill(ctx context.Context, args map[string]any) (any, error) {
	name := str(args, "skill_name")
	sk, err := s.existingSkill(ctx, "skill_name", name)
	if err != nil {
		return nil, err
	}
	content := str(args, "proposed_content")
	if strings.TrimSpace(content) == "" {
		return nil, argErrorf("argument 'proposed_content': must not be blank")
	}
	if content == sk.Content {
		return nil, argErrorf("argument 'proposed_content': is the same as the current SKILL.md of '%s'", name)
	}
	p, c, err := s.store(ctx).ProposeSkill(ctx, name, content, str(args, "rationale"))
	if err != nil {
		return nil, err
	}
	return proposalResult{p, firstCommit(c)}, nil
}

// listProposals is context_list_skill_proposals (read-only, from the checked-out tree as the resources
// are): one skill's proposals, or every skill's ordered by skill name, each skill's by created_at.
func (s *srv) listProposals(ctx context.Context, args map[string]any) (any, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the checked-out tree: %w", err)
	}
	status := str(args, "status")
	var names []string
	if name, ok := args["skill_name"].(string); ok {
		if _, err := store.NormalizeKey(name); err != nil {
			return nil, skillMissing(name)
		}
		names = []string{name}
	} else {
		sks, err := v.ListSkills(ctx)
		if err != nil {
			return nil, err
		}
		for _, sk := range sks {
			names = append(names, sk.Name)
		}
	}
	out := []store.SkillProposal{}
	for _, n := range names {
		ps, err := v.ListProposals(ctx, n, status)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return struct {
		Proposals []store.SkillProposal `json:"proposals"`
	}{out}, nil
}

// resolveProposal is context_resolve_skill_proposal (store.ResolveProposal). A missing proposal is
// "Proposal 'x' not found for skill 'y'"; one already settled is an error naming id.
func (s *srv) resolveProposal(ctx context.Context, args map[string]any) (any, error) {
	name, id := str(args, "skill_name"), str(args, "id")
	if _, err := s.existingSkill(ctx, "skill_name", name); err != nil {
		return nil, err
	}
	if err := validKeyArg("id", id); err != nil {
		return nil, err
	}
	v, err := s.refView(ctx)
	if err != nil {
		return nil, err
	}
	ps, err := v.ListProposals(ctx, name, "")
	if err != nil {
		return nil, err
	}
	found := false
	for _, p := range ps {
		if p.ID == id {
			found = true
			if p.Status != "pending" {
				return nil, argErrorf("argument 'id': proposal %s is already %s", id, p.Status)
			}
		}
	}
	if !found {
		return nil, &store.NotFoundError{Msg: fmt.Sprintf("Proposal '%s' not found for skill '%s'", id, name)}
	}
	p, c, err := s.store(ctx).ResolveProposal(ctx, name, id, str(args, "decision"))
	if err != nil {
		return nil, err
	}
	return proposalResult{p, firstCommit(c)}, nil
}

type activityResult struct {
	Activity store.ActivityEntry `json:"activity"`
	Commit   string              `json:"commit"`
}

// checkIn is context_check_in (store.CheckIn) as the server's agent on this machine, the member made from
// the git identity (store.CheckIn). branch omitted is the work tree's current branch, as `ctx activity
// check-in` does, so that the CLI and the tool record the same entry. The values are checked against
// seed 002's limits (store.ValidateActivity) before the write, as errors naming the field.
func (s *srv) checkIn(ctx context.Context, args map[string]any) (any, error) {
	in := store.CheckIn{Task: str(args, "task"), IssueRef: str(args, "issue_ref"),
		Availability: str(args, "availability"), Doing: str(args, "doing")}
	branch := s.currentBranch()
	if b, ok := args["branch"].(string); ok {
		branch = b
	}
	in.Branch = &branch
	if _, ok := args["files"]; ok {
		in.Files = strList(args, "files")
	}
	probe := store.ActivityEntry{Status: store.StatusActive, Availability: "online", Doing: in.Doing,
		Branch: in.Branch, Files: in.Files}
	if in.Availability != "" {
		probe.Availability = in.Availability
	}
	if err := store.ValidateActivity(probe); err != nil {
		return nil, activityArgError(err)
	}
	e, c, err := s.store(ctx).CheckIn(ctx, in)
	if err != nil {
		return nil, err
	}
	return activityResult{e, firstCommit(c)}, nil
}

// currentBranch is the branch of the store's work tree (the same rule as the CLI's check-in).
func (s *srv) currentBranch() string { return s.st.CurrentBranch() }

// activityArgError turns store.ValidateActivity's "invalid activity: <field> ..." into an argument
// error naming the field.
func activityArgError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "invalid activity: ")
	field, rest, _ := strings.Cut(msg, " ")
	field = strings.TrimPrefix(field, "intent.")
	return argErrorf("argument '%s': %s", field, rest)
}

// checkOut is context_check_out (store.CheckOut): this server's agent on this machine; "Activity entry
// 'x' not found" when it never checked in.
func (s *srv) checkOut(ctx context.Context, args map[string]any) (any, error) {
	e, c, err := s.store(ctx).CheckOut(ctx)
	if err != nil {
		return nil, err
	}
	return activityResult{e, firstCommit(c)}, nil
}

// setIntent is context_set_intent (store.SetIntent), checked against seed 002's intent schema
// (store.ValidateIntent) first.
func (s *srv) setIntent(ctx context.Context, args map[string]any) (any, error) {
	in := store.Intent{Kind: str(args, "kind"), Paths: strList(args, "paths"), Areas: strList(args, "areas"),
		ExpiresAt: str(args, "expires_at")}
	if err := store.ValidateIntent(in); err != nil {
		return nil, activityArgError(err)
	}
	e, c, err := s.store(ctx).SetIntent(ctx, in)
	if err != nil {
		return nil, err
	}
	return activityResult{e, firstCommit(c)}, nil
}

// setScope is context_set_scope (store.SetScope): key is a knowledge/convention key, a skill name, or a
// decision's id (number) or exact title. commit is the new commit on the target scope's ref; commits
// also has the one that deleted the entry from its old ref.
func (s *srv) setScope(ctx context.Context, args map[string]any) (any, error) {
	kind := str(args, "kind")
	var key string
	switch k := args["key"].(type) {
	case float64:
		if kind != "decision" || k != float64(int(k)) {
			return nil, argErrorf("argument 'key': a number is only a decision id")
		}
		key = strconv.Itoa(int(k))
	case string:
		key = k
	}
	if kind != "decision" {
		if err := validKeyArg("key", key); err != nil {
			return nil, err
		}
	} else if strings.TrimSpace(key) == "" {
		return nil, argErrorf("argument 'key': must be a decision id or title")
	}
	sc, err := store.ParseScope(str(args, "scope"))
	if err != nil {
		return nil, argErrorf("argument 'scope': %v", err)
	}
	c, err := s.store(ctx).SetScope(ctx, kind, key, sc)
	if err != nil {
		return nil, err
	}
	return struct {
		Kind    string                 `json:"kind"`
		Key     string                 `json:"key"`
		Scope   store.Scope            `json:"scope"`
		Commit  string                 `json:"commit"`
		Commits map[store.Scope]string `json:"commits"`
	}{kind, key, sc, commitOf(c, sc), commitMap(c)}, nil
}
