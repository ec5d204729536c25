package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctx-dev/ctx/store"
)

// The write tools over the rest of the model (docs/mcp.md): state, sessions, skills (usage,
// feedback, proposals), activity (check-in/out, intent) and scope moves. Each runs one store write:
// one commit on the ref of the scope it touches (docs/format.md), none when nothing changes (commit ""),
// none on error. Arguments are checked against the tool's schema (schemas/<tool>.input.json), decoded into the
// tool's argument struct, and then checked against the store's own rules before the store is called, so that a bad argument is a tool error naming the
// field (argError) and never a half-done write. Every result is a JSON object with a "commit" field:
// the new commit of the first scope whose ref moved, in the order of store.Scopes ("" when none moved);
// writes that can move two refs (a scope move, a skill removed from two scopes) add "commits" {scope:
// commit}.

func (s *srv) toolUpdateState() tool {
	return newTool(toolSpec{name: "context_update_state", title: "Update state",
		desc: "Change the active state (current task, blockers, progress): only the fields given change; an empty " +
			"list or object clears. Records last_agent and last_machine. One commit. Returns {state, commit}."},
		s.updateState)
}

func (s *srv) toolAppendSession() tool {
	return newTool(toolSpec{name: "context_append_session", title: "Append session",
		desc: "Record what a session did (its summary in context://history): starts the session " +
			"when it does not exist, else replaces its summary and appends the lists without duplicates. " +
			"session_id defaults to the server's session. One commit. Returns {session, commit}."},
		s.appendSession)
}

func (s *srv) toolEndSession() tool {
	return newTool(toolSpec{name: "context_end_session", title: "End session",
		desc: "Mark a session ended (ended = now; a session ended already keeps its time), optionally with a " +
			"final summary. One commit. Returns {session, commit}."},
		s.endSession)
}

func (s *srv) toolAddSkill() tool {
	return newTool(toolSpec{name: "context_add_skill", title: "Add skill",
		desc: "Add or replace an agent skill: skills/<name>/SKILL.md in the Agent Skills format (front matter " +
			"name and description, then the instructions). One commit. Returns {name, description, scope, commit}."},
		s.addSkill)
}

func (s *srv) toolRemoveSkill() tool {
	return newTool(toolSpec{name: "context_remove_skill", title: "Remove skill", destructive: true,
		desc: "Remove a skill with its feedback, usage and proposals from every scope holding it. " +
			"Returns {name, commit, commits}."},
		s.removeSkill)
}

func (s *srv) toolReportSkillUsage() tool {
	return newTool(toolSpec{name: "context_report_skill_usage", title: "Report skill usage",
		desc: "Record that a skill was used (skills/<name>/.usage/YYYY-MM.ndjson; counted in context://skills/stats). " +
			"One commit. Returns {skill_name, usage, commit}."},
		s.reportSkillUsage)
}

func (s *srv) toolRateSkill() tool {
	return newTool(toolSpec{name: "context_rate_skill", title: "Rate skill",
		desc: "Rate a skill 1-5 with an optional comment (a skill with 2+ ratings " +
			"averaging below 3.0 needs attention). One commit. Returns {skill_name, feedback, commit}."},
		s.rateSkill)
}

func (s *srv) toolProposeSkillImprovement() tool {
	return newTool(toolSpec{name: "context_propose_skill_improvement", title: "Propose skill improvement",
		desc: "Propose a new version of a skill's SKILL.md (the whole file) with a rationale; the proposal " +
			"records a unified diff current -> proposed and waits as pending. One commit. Returns {proposal, commit}."},
		s.proposeSkill)
}

func (s *srv) toolListSkillProposals() tool {
	return newTool(toolSpec{name: "context_list_skill_proposals", title: "List skill proposals", readOnly: true,
		desc: "List skill improvement proposals, of one skill or of all, optionally only those with one status " +
			"(pending, accepted, rejected, upstream). Returns {proposals}."},
		s.listProposals)
}

func (s *srv) toolResolveSkillProposal() tool {
	return newTool(toolSpec{name: "context_resolve_skill_proposal", title: "Resolve skill proposal",
		desc: "Settle a pending proposal: accept (replaces SKILL.md in the same commit), reject or upstream. " +
			"One commit. Returns {proposal, commit}."},
		s.resolveProposal)
}

func (s *srv) toolCheckIn() tool {
	return newTool(toolSpec{name: "context_check_in", title: "Check in",
		desc: "Tell the team what you are working on (context://activity and get_project_context's pulse), " +
			"as this server's agent on this machine. One commit. Returns {activity, commit}."},
		s.checkIn)
}

func (s *srv) toolCheckOut() tool {
	return newTool(toolSpec{name: "context_check_out", title: "Check out",
		desc: "Tell the team you stopped: your activity entry becomes checked_out (offline). One commit. " +
			"Returns {activity, commit}."},
		s.checkOut)
}

func (s *srv) toolSetIntent() tool {
	return newTool(toolSpec{name: "context_set_intent", title: "Set intent",
		desc: "Announce what you intend to change (kind, paths, areas, expires_at) so " +
			"that teammates avoid the same files. One commit. Returns {activity, commit}."},
		s.setIntent)
}

func (s *srv) toolSetScope() tool {
	return newTool(toolSpec{name: "context_set_scope", title: "Set scope",
		desc: "Move a knowledge entry, convention, decision or skill to another scope (public, private, " +
			"ephemeral) in one step. Returns {kind, key, scope, commit, commits}."},
		s.setScope)
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

// updateState is context_update_state (store.UpdateState): a field given replaces the stored one, an
// omitted one is left alone. At least one field must be given: a call without any would only restamp
// last_agent.
func (s *srv) updateState(ctx context.Context, a updateStateArgs) (any, error) {
	p := store.StatePatch{CurrentTask: a.CurrentTask, Blockers: a.Blockers}
	if a.Progress != nil {
		for k := range *a.Progress {
			if strings.TrimSpace(k) == "" {
				return nil, argErrorf("argument 'progress': keys must not be blank")
			}
		}
		p.Progress = a.Progress
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

// updateStateArgs are the arguments of context_update_state: nil is an omitted field.
type updateStateArgs struct {
	secretArg
	CurrentTask *string            `json:"current_task"`
	Blockers    *[]string          `json:"blockers"`
	Progress    *map[string]string `json:"progress"`
}

// activeStateOf renders a store.ActiveState in context://state's shape (blockers [] and progress {} rather than
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
func (s *srv) appendSession(ctx context.Context, a appendSessionArgs) (any, error) {
	id := s.store(ctx).Actor.Session
	if a.SessionID != nil {
		id = *a.SessionID
	}
	if id != "" {
		if err := validKeyArg("session_id", id); err != nil {
			return nil, err
		}
	}
	agent := strings.TrimSpace(a.Agent)
	if agent == "" {
		return nil, argErrorf("argument 'agent': must not be blank")
	}
	if callerOf(ctx) != nil {
		agent = s.clientAgent(ctx) // over HTTP the token says who writes, never an argument (docs/http.md)
	} else if err := store.ValidKey(agent); err != nil || strings.Contains(agent, "--") {
		// the argument is recorded as the session's agent: a name like every Ctx-Agent (no newline that
		// would forge lines of the onboarding prompt, no "--", the activity files' separator)
		return nil, argErrorf("argument 'agent': one name such as claude-code (no '/', control character, or \"--\"): %q", agent)
	}
	summary := a.Summary
	if strings.TrimSpace(summary) == "" {
		return nil, argErrorf("argument 'summary': must not be blank")
	}
	ss, c, err := s.store(ctx).AppendSession(ctx, store.SessionUpdate{ID: id, Agent: agent, Summary: summary,
		KnowledgeAdded: a.KnowledgeAdded, DecisionsAdded: a.DecisionsAdded, SkillsUsed: a.SkillsUsed})
	if err != nil {
		return nil, err
	}
	return sessionResult{ss, firstCommit(c)}, nil
}

// appendSessionArgs are the arguments of context_append_session; SessionID nil is omitted.
type appendSessionArgs struct {
	secretArg
	SessionID      *string  `json:"session_id"`
	Agent          string   `json:"agent"`
	Summary        string   `json:"summary"`
	KnowledgeAdded []string `json:"knowledge_added"`
	DecisionsAdded []string `json:"decisions_added"`
	SkillsUsed     []string `json:"skills_used"`
}

// endSessionArgs are the arguments of context_end_session.
type endSessionArgs struct {
	secretArg
	SessionID string `json:"session_id"`
	Summary   string `json:"summary"`
}

// endSession is context_end_session (store.EndSession); a missing session is "Session 'x' not found".
func (s *srv) endSession(ctx context.Context, a endSessionArgs) (any, error) {
	id := a.SessionID
	if err := validKeyArg("session_id", id); err != nil {
		return nil, err
	}
	ss, c, err := s.store(ctx).EndSession(ctx, id, a.Summary)
	if err != nil {
		return nil, err
	}
	return sessionResult{ss, firstCommit(c)}, nil
}

// addSkill is context_add_skill (store.AddSkill): Agent Skills' rules on the description (not blank, at
// most store.MaxSkillDescription characters) are checked here first so that they name the field.
func (s *srv) addSkill(ctx context.Context, a addSkillArgs) (any, error) {
	name := a.Name
	if err := validKeyArg("name", name); err != nil {
		return nil, err
	}
	desc := a.Description
	if strings.TrimSpace(desc) == "" {
		return nil, argErrorf("argument 'description': must not be blank (Agent Skills format)")
	}
	sk, c, err := s.store(ctx).AddSkill(ctx, name, desc, a.Instructions, store.Scope(a.Scope))
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

// addSkillArgs are the arguments of context_add_skill.
type addSkillArgs struct {
	secretArg
	Name         string `json:"name"`
	Description  string `json:"description"`
	Instructions string `json:"instructions"`
	Scope        string `json:"scope"`
}

// skillNameArgs are the arguments of context_remove_skill.
type skillNameArgs struct {
	secretArg
	Name string `json:"name"`
}

// removeSkill is context_remove_skill (store.RemoveSkill: one commit per scope holding the skill).
func (s *srv) removeSkill(ctx context.Context, a skillNameArgs) (any, error) {
	name := a.Name
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

// existingSkill reads a skill from the refs, so that a tool on a missing skill is "Skill 'x'
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
func (s *srv) reportSkillUsage(ctx context.Context, a skillUsageArgs) (any, error) {
	name := a.SkillName
	if _, err := s.existingSkill(ctx, "skill_name", name); err != nil {
		return nil, err
	}
	sid := a.SessionID
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

// skillUsageArgs are the arguments of context_report_skill_usage.
type skillUsageArgs struct {
	secretArg
	SkillName string `json:"skill_name"`
	SessionID string `json:"session_id"`
}

// rateSkillArgs are the arguments of context_rate_skill.
type rateSkillArgs struct {
	secretArg
	SkillName string `json:"skill_name"`
	Rating    int    `json:"rating"`
	Comment   string `json:"comment"`
}

// rateSkill is context_rate_skill (store.RateSkill; the schema holds "rating 1-5").
func (s *srv) rateSkill(ctx context.Context, a rateSkillArgs) (any, error) {
	name := a.SkillName
	if _, err := s.existingSkill(ctx, "skill_name", name); err != nil {
		return nil, err
	}
	if a.Rating < 1 || a.Rating > 5 {
		return nil, argErrorf("argument 'rating': must be a whole number from 1 to 5")
	}
	f, c, err := s.store(ctx).RateSkill(ctx, name, a.Rating, a.Comment)
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
func (s *srv) proposeSkill(ctx context.Context, a proposeSkillArgs) (any, error) {
	name := a.SkillName
	sk, err := s.existingSkill(ctx, "skill_name", name)
	if err != nil {
		return nil, err
	}
	content := a.ProposedContent
	if strings.TrimSpace(content) == "" {
		return nil, argErrorf("argument 'proposed_content': must not be blank")
	}
	if content == sk.Content {
		return nil, argErrorf("argument 'proposed_content': is the same as the current SKILL.md of '%s'", name)
	}
	p, c, err := s.store(ctx).ProposeSkill(ctx, name, content, a.Rationale)
	if err != nil {
		return nil, err
	}
	return proposalResult{p, firstCommit(c)}, nil
}

// proposeSkillArgs are the arguments of context_propose_skill_improvement.
type proposeSkillArgs struct {
	secretArg
	SkillName       string `json:"skill_name"`
	ProposedContent string `json:"proposed_content"`
	Rationale       string `json:"rationale"`
}

// listProposalsArgs are the arguments of context_list_skill_proposals; SkillName nil is every skill.
type listProposalsArgs struct {
	SkillName *string `json:"skill_name"`
	Status    string  `json:"status"`
}

// listProposals is context_list_skill_proposals (read-only, from the checked-out tree as the resources
// are): one skill's proposals, or every skill's ordered by skill name, each skill's by created_at.
func (s *srv) listProposals(ctx context.Context, a listProposalsArgs) (any, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the checked-out tree: %w", err)
	}
	status := a.Status
	var names []string
	if a.SkillName != nil {
		name := *a.SkillName
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
func (s *srv) resolveProposal(ctx context.Context, a resolveProposalArgs) (any, error) {
	name, id := a.SkillName, a.ID
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
	p, c, err := s.store(ctx).ResolveProposal(ctx, name, id, a.Decision)
	if err != nil {
		return nil, err
	}
	return proposalResult{p, firstCommit(c)}, nil
}

// resolveProposalArgs are the arguments of context_resolve_skill_proposal.
type resolveProposalArgs struct {
	secretArg
	SkillName string `json:"skill_name"`
	ID        string `json:"id"`
	Decision  string `json:"decision"`
}

type activityResult struct {
	Activity store.ActivityEntry `json:"activity"`
	Commit   string              `json:"commit"`
}

// checkIn is context_check_in (store.CheckIn) as the server's agent on this machine, the member made from
// the git identity (store.CheckIn). branch omitted is the work tree's current branch, as `ctx activity
// check-in` does, so that the CLI and the tool record the same entry. The values are checked against
// pulse's limits (store.ValidateActivity, docs/format.md) before the write, as errors naming the field.
func (s *srv) checkIn(ctx context.Context, a checkInArgs) (any, error) {
	in := store.CheckIn{Task: a.Task, IssueRef: a.IssueRef, Availability: a.Availability, Doing: a.Doing}
	branch := s.currentBranch()
	if a.Branch != nil {
		branch = *a.Branch
	}
	in.Branch = &branch
	if a.Files != nil {
		in.Files = *a.Files
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

// checkInArgs are the arguments of context_check_in; nil is an omitted field.
type checkInArgs struct {
	secretArg
	Task         string    `json:"task"`
	IssueRef     string    `json:"issue_ref"`
	Availability string    `json:"availability"`
	Doing        string    `json:"doing"`
	Branch       *string   `json:"branch"`
	Files        *[]string `json:"files"`
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
func (s *srv) checkOut(ctx context.Context, _ secretArg) (any, error) {
	e, c, err := s.store(ctx).CheckOut(ctx)
	if err != nil {
		return nil, err
	}
	return activityResult{e, firstCommit(c)}, nil
}

// setIntentArgs are the arguments of context_set_intent.
type setIntentArgs struct {
	secretArg
	Kind      string   `json:"kind"`
	Paths     []string `json:"paths"`
	Areas     []string `json:"areas"`
	ExpiresAt string   `json:"expires_at"`
}

// setIntent is context_set_intent (store.SetIntent), checked against the intent's rules
// (store.ValidateIntent, docs/format.md) first.
func (s *srv) setIntent(ctx context.Context, a setIntentArgs) (any, error) {
	in := store.Intent{Kind: a.Kind, Paths: a.Paths, Areas: a.Areas, ExpiresAt: a.ExpiresAt}
	if err := store.ValidateIntent(in); err != nil {
		return nil, activityArgError(err)
	}
	e, c, err := s.store(ctx).SetIntent(ctx, in)
	if err != nil {
		return nil, err
	}
	return activityResult{e, firstCommit(c)}, nil
}

// setScopeArgs are the arguments of context_set_scope.
type setScopeArgs struct {
	secretArg
	Kind  string `json:"kind"`
	Key   idArg  `json:"key"`
	Scope string `json:"scope"`
}

// setScope is context_set_scope (store.SetScope): key is a knowledge/convention key, a skill name, or a
// decision's id (number) or exact title. commit is the new commit on the target scope's ref; commits
// also has the one that deleted the entry from its old ref.
func (s *srv) setScope(ctx context.Context, a setScopeArgs) (any, error) {
	kind := a.Kind
	key := a.Key.text
	if a.Key.number && kind != "decision" {
		return nil, argErrorf("argument 'key': a number is only a decision id")
	}
	if kind != "decision" {
		if err := validKeyArg("key", key); err != nil {
			return nil, err
		}
	} else if strings.TrimSpace(key) == "" {
		return nil, argErrorf("argument 'key': must be a decision id or title")
	}
	sc, err := store.ParseScope(a.Scope)
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
