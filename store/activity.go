package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// ActivityDir holds the team pulse: activity/<member>/<agent>--<machine>.json (docs/format.md), one file
// per member, agent and machine, so that one agent's check-out never erases another's entry.
const ActivityDir = "activity"

// StaleAfter is the stale threshold of docs/format.md "Activity": entries older than 48 hours are stale.
const StaleAfter = 48 * time.Hour

// Activity statuses (ActivityEntry.status, docs/format.md "Activity").
const (
	StatusActive     = "active"
	StatusCheckedOut = "checked_out"
)

// Enumerations of the team pulse fields (docs/format.md "Activity").
var (
	Availabilities = []string{"online", "working", "idle", "asleep", "away", "offline"}
	FailureClasses = []string{"auth", "rate_limit", "timeout", "provider", "runtime", "agent", "other"}
	FailureSteps   = []string{"claude_code_sign_in", "codex_sign_in", "grok_sign_in", "claude_code_usage_limit",
		"codex_usage_limit", "task_time_limit", "reply_time_limit", "claude_code_service", "codex_service",
		"grok_service", "claude_code_not_found", "codex_not_found", "cli_not_found", "cli_did_not_start",
		"cli_crashed", "worktree_failed", "cross_owner_off", "room_not_linked", "cli_replies_only",
		"cli_tasks_unverified", "entry_changed", "git_too_old", "app_build_unchecked", "claude_code_max_turns",
		"stopped_extra_tools", "agent_error", "see_runner_log"}
	IntentKinds = []string{"add", "change", "remove", "rename", "revert", "migrate"}
)

// Limits and patterns of the team pulse fields (docs/format.md "Activity"; lengths count characters, as
// JSON Schema's maxLength does).
const (
	MaxDoing        = 200
	MaxTaskID       = 64
	MaxBranch       = 200
	MaxFiles        = 50
	MaxFile         = 300
	MaxLastDecision = 500
	MaxIntentPaths  = 20
	MaxIntentPath   = 300
	MaxIntentAreas  = 10
	MaxIntentArea   = 40
)

var (
	taskIDPattern = lazyre.New(`^[A-Za-z0-9_-]+$`)
	// dateTimePattern is the date-time pattern of get_project_context's schemas (leap years included).
	dateTimePattern = lazyre.New(`^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$`)
)

// RunFailure is an activity entry's run_failure (docs/format.md "Activity"): {"class", "step"}, both
// required, each from its enum.
type RunFailure struct {
	Class string `json:"class"`
	Step  string `json:"step"`
}

// Intent is an activity entry's intent (docs/format.md "Activity"): {"kind" (enum), "paths" (≤20, each
// 1..300), "areas" (≤10, each 1..40), "expires_at" (date-time)}, all required.
type Intent struct {
	Kind      string   `json:"kind"`
	Paths     []string `json:"paths"`
	Areas     []string `json:"areas"`
	ExpiresAt string   `json:"expires_at"`
}

// ActivityEntry is the activity record of docs/format.md "Activity": {member, agent, machine, task,
// issue_ref, status ("active" or "checked_out"), updated_at} plus the team pulse fields {availability, doing,
// task_id, branch, files, last_decision, run_failure, intent}, stored as
// activity/<member>/<agent>--<machine>.json. task_id, branch and last_decision are null when unset; files is
// [] when empty; run_failure and intent are omitted when unset.
type ActivityEntry struct {
	Member       string      `json:"member"`
	Agent        string      `json:"agent"`
	Machine      string      `json:"machine"`
	Task         string      `json:"task"`
	IssueRef     string      `json:"issue_ref"`
	Status       string      `json:"status"`
	UpdatedAt    string      `json:"updated_at"`
	Availability string      `json:"availability"`
	Doing        string      `json:"doing"`
	TaskID       *string     `json:"task_id"`
	Branch       *string     `json:"branch"`
	Files        []string    `json:"files"`
	LastDecision *string     `json:"last_decision"`
	RunFailure   *RunFailure `json:"run_failure,omitempty"`
	Intent       *Intent     `json:"intent,omitempty"`
}

// Activity is an ActivityEntry as listed (context://activity, docs/mcp.md): the entry, its scope (not in
// JSON) and whether it is stale.
type Activity struct {
	ActivityEntry
	Stale bool   `json:"stale"`
	Scope Scope  `json:"-"`
	Path  string `json:"-"`
}

// IsStale applies the stale rule of docs/format.md "Activity": updated_at older than 48 hours before now. An
// updated_at that does not parse as RFC 3339 is stale (its freshness cannot be shown).
func IsStale(updatedAt string, now time.Time) bool {
	t, err := time.Parse(time.RFC3339Nano, updatedAt)
	if err != nil {
		return true
	}
	return now.Sub(t) > StaleAfter
}

// MemberKey makes a member key from a name (issue: "the git identity's name made into a key"): lower
// case, runs of anything but a-z and 0-9 become one '-', no leading or trailing '-', at most 39 bytes (seed
// 002's owner: ^[a-z0-9]+(?:-[a-z0-9]+)*$, maxLength 39). "" when nothing is left.
func MemberKey(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 39 {
		out = strings.TrimRight(out[:39], "-")
	}
	return out
}

// ActivityPath is the file of one member's agent on one machine.
func ActivityPath(member, agent, machine string) string {
	return ActivityDir + "/" + member + "/" + agent + "--" + machine + ".json"
}

// member resolves the member key: explicit (validated with ValidKey) or made from the git identity's
// name (else its e-mail's local part).
func (s *Store) member(ctx context.Context, explicit string) (string, error) {
	if explicit != "" {
		if err := normKey(&explicit); err != nil {
			return "", fmt.Errorf("member: %w", err)
		}
		return explicit, nil
	}
	id, err := s.repo.Identity(ctx)
	if err != nil {
		return "", err
	}
	m := MemberKey(id.Name)
	if m == "" {
		local, _, _ := strings.Cut(id.Email, "@")
		m = MemberKey(local)
	}
	if m == "" {
		return "", fmt.Errorf("cannot make a member key from the git identity %q: give the member explicitly", id.Name)
	}
	return m, nil
}

// activityFile resolves and validates the path of this actor's entry.
func (s *Store) activityFile(ctx context.Context, member string) (string, string, error) {
	m, err := s.member(ctx, member)
	if err != nil {
		return "", "", err
	}
	if err := ValidKey(s.Actor.Agent); err != nil {
		return "", "", fmt.Errorf("agent: %w", err)
	}
	if strings.Contains(s.Actor.Agent, "--") {
		return "", "", fmt.Errorf("agent %q: \"--\" is not allowed (it separates agent and machine in activity file names)", s.Actor.Agent)
	}
	if err := ValidKey(s.Actor.Machine); err != nil {
		return "", "", fmt.Errorf("machine: %w", err)
	}
	return m, ActivityPath(m, s.Actor.Agent, s.Actor.Machine), nil
}

// ValidateActivity checks an entry's status and the limits, patterns and enums of its team pulse fields
// (docs/format.md "Activity"). The error names the field.
func ValidateActivity(e ActivityEntry) error {
	chars := utf8.RuneCountInString
	bad := func(field, format string, a ...any) error {
		return invalidf("invalid activity: %s %s", field, fmt.Sprintf(format, a...))
	}
	if e.Status != StatusActive && e.Status != StatusCheckedOut {
		return bad("status", "%q: use active or checked_out", e.Status)
	}
	if !contains(Availabilities, e.Availability) {
		return bad("availability", "%q: use one of %s", e.Availability, strings.Join(Availabilities, ", "))
	}
	if n := chars(e.Doing); n > MaxDoing {
		return bad("doing", "is %d characters, at most %d allowed", n, MaxDoing)
	}
	if e.TaskID != nil {
		if n := chars(*e.TaskID); n < 1 || n > MaxTaskID {
			return bad("task_id", "is %d characters, 1 to %d allowed (or null)", n, MaxTaskID)
		}
		if !taskIDPattern.Get().MatchString(*e.TaskID) {
			return bad("task_id", "%q does not match ^[A-Za-z0-9_-]+$", *e.TaskID)
		}
	}
	if e.Branch != nil {
		if n := chars(*e.Branch); n > MaxBranch {
			return bad("branch", "is %d characters, at most %d allowed", n, MaxBranch)
		}
	}
	if len(e.Files) > MaxFiles {
		return bad("files", "has %d items, at most %d allowed", len(e.Files), MaxFiles)
	}
	for i, f := range e.Files {
		if n := chars(f); n > MaxFile {
			return bad(fmt.Sprintf("files[%d]", i), "is %d characters, at most %d allowed", n, MaxFile)
		}
	}
	if e.LastDecision != nil {
		if n := chars(*e.LastDecision); n > MaxLastDecision {
			return bad("last_decision", "is %d characters, at most %d allowed", n, MaxLastDecision)
		}
	}
	if rf := e.RunFailure; rf != nil {
		if !contains(FailureClasses, rf.Class) {
			return bad("run_failure.class", "%q: use one of %s", rf.Class, strings.Join(FailureClasses, ", "))
		}
		if !contains(FailureSteps, rf.Step) {
			return bad("run_failure.step", "%q: use one of %s", rf.Step, strings.Join(FailureSteps, ", "))
		}
	}
	if in := e.Intent; in != nil {
		if err := ValidateIntent(*in); err != nil {
			return err
		}
	}
	return nil
}

// activityPulseProblem says why the activity record b (which RecordProblem accepts) breaks the rules of
// its status and team pulse fields (ValidateActivity: "invalid activity: availability \"sleeping\": use one
// of ..."), or "" when it keeps them. A status or availability that is absent or empty (a record of a ctx
// before the team pulse) is not checked.
func activityPulseProblem(b []byte) string {
	var e ActivityEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return err.Error()
	}
	if e.Status == "" {
		e.Status = StatusActive
	}
	if e.Availability == "" {
		e.Availability = Availabilities[0]
	}
	if err := ValidateActivity(e); err != nil {
		return err.Error()
	}
	return ""
}

// ValidateIntent checks an intent against the rules of docs/format.md "Activity".
func ValidateIntent(in Intent) error {
	chars := utf8.RuneCountInString
	bad := func(field, format string, a ...any) error {
		return invalidf("invalid activity: intent.%s %s", field, fmt.Sprintf(format, a...))
	}
	if !contains(IntentKinds, in.Kind) {
		return bad("kind", "%q: use one of %s", in.Kind, strings.Join(IntentKinds, ", "))
	}
	if len(in.Paths) > MaxIntentPaths {
		return bad("paths", "has %d items, at most %d allowed", len(in.Paths), MaxIntentPaths)
	}
	for i, p := range in.Paths {
		if n := chars(p); n < 1 || n > MaxIntentPath {
			return bad(fmt.Sprintf("paths[%d]", i), "is %d characters, 1 to %d allowed", n, MaxIntentPath)
		}
	}
	if len(in.Areas) > MaxIntentAreas {
		return bad("areas", "has %d items, at most %d allowed", len(in.Areas), MaxIntentAreas)
	}
	for i, a := range in.Areas {
		if n := chars(a); n < 1 || n > MaxIntentArea {
			return bad(fmt.Sprintf("areas[%d]", i), "is %d characters, 1 to %d allowed", n, MaxIntentArea)
		}
	}
	if !dateTimePattern.Get().MatchString(in.ExpiresAt) {
		return bad("expires_at", "%q is not a date-time (RFC 3339, e.g. 2026-11-29T23:00:00Z)", in.ExpiresAt)
	}
	return nil
}

// CheckIn is the input of Store.CheckIn. Member "" is made from the git identity's name. Task, IssueRef
// and Doing are set as given (a check-in restates the work). Availability "" is "working" when a task or
// doing is given, else "online". The pointer and slice fields are left as they were when nil: TaskID,
// Branch and LastDecision (a pointer to "" sets null), Files (an empty slice clears), RunFailure
// (ClearRunFailure removes it) and Intent.
type CheckIn struct {
	Member          string
	Task            string
	IssueRef        string
	Availability    string
	Doing           string
	TaskID          *string
	Branch          *string
	Files           []string
	LastDecision    *string
	RunFailure      *RunFailure
	ClearRunFailure bool
	Intent          *Intent
}

func nullable(p *string) *string {
	if p == nil || *p == "" {
		return nil
	}
	v := *p
	return &v
}

// readActivity reads an activity file from the first scope holding it; raw nil when absent. One that does
// not decode is a *malformedRecordError, returned with its scope and raw nil.
func readActivity(ctx context.Context, v *View, p string) (ActivityEntry, Scope, []byte, error) {
	var e ActivityEntry
	b, sc, err := v.Read(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return e, Public, nil, nil
	}
	if err != nil {
		return e, "", nil, err
	}
	if err := json.Unmarshal(b, &e); err != nil {
		// A check-in writes over it (writeActivity).
		return ActivityEntry{}, sc, nil, &malformedRecordError{path: p, scope: sc, err: err, repair: "ctx activity check-in (MCP: context_check_in)"}
	}
	return e, sc, b, nil
}

// ActivityRefresh is how old an entry must be for an unchanged CheckIn to rewrite it anyway (to renew
// updated_at, so that an agent that keeps checking in never turns stale under the 48-hour rule).
const ActivityRefresh = time.Hour

// writeActivity is the common write of CheckIn, CheckOut, SetIntent and ClearIntent: it reads this
// actor's entry, applies change, validates the result (ValidateActivity; a violation writes nothing) and
// writes it with updated_at now, one commit. The entry must exist unless create is true. When change
// leaves every field as it was, nothing is written, except that with heartbeat an entry older than
// ActivityRefresh is rewritten to renew updated_at.
func (s *Store) writeActivity(ctx context.Context, op Op, member string, create, heartbeat bool, change func(e *ActivityEntry)) (ActivityEntry, *Committed, error) {
	m, p, err := s.activityFile(ctx, member)
	if err != nil {
		return ActivityEntry{}, nil, err
	}
	op.Key = m + "/" + s.Actor.Agent + "--" + s.Actor.Machine
	var out ActivityEntry
	c, err := s.Write(ctx, op, func(v *View) (Edits, error) {
		e, sc, raw, err := readActivity(ctx, v, p)
		if err != nil && (!create || writeOverMalformed(err) != nil) {
			return nil, err
		}
		if raw == nil {
			if !create {
				return nil, &NotFoundError{Msg: fmt.Sprintf("Activity entry '%s' not found", op.Key)}
			}
			e = ActivityEntry{Status: StatusActive, Availability: "online"}
		}
		e.Member, e.Agent, e.Machine = m, s.Actor.Agent, s.Actor.Machine
		if e.Files == nil {
			e.Files = []string{}
		}
		before, _ := json.Marshal(e)
		change(&e)
		if err := ValidateActivity(e); err != nil {
			return nil, err
		}
		out = e
		if after, _ := json.Marshal(e); raw != nil && string(before) == string(after) {
			if !heartbeat || !isOlder(e.UpdatedAt, ActivityRefresh) {
				return nil, nil
			}
		}
		e.UpdatedAt = now()
		out = e
		b, err := marshalKeeping(raw, e)
		if err != nil {
			return nil, err
		}
		ed := Edits{}
		ed.Put(sc, p, b)
		return ed, nil
	})
	if err != nil {
		// The operation's name only: the summary may end with the whole task (a check-in's), which
		// would bury the field at fault.
		what, _, _ := strings.Cut(op.Summary, ":")
		return ActivityEntry{}, nil, wrapErr(what, err)
	}
	return out, c, nil
}

// isOlder reports whether an RFC 3339 time is more than d ago (true when it does not parse).
func isOlder(ts string, d time.Duration) bool {
	t, err := time.Parse(time.RFC3339Nano, ts)
	return err != nil || time.Since(t) > d
}

// CheckIn records what this member's agent on this machine is doing (status active), creating or
// updating activity/<member>/<agent>--<machine>.json; one commit. The values are checked against seed
// 002's limits and patterns first: a violation is an error naming the field, and nothing is written.
func (s *Store) CheckIn(ctx context.Context, in CheckIn) (ActivityEntry, *Committed, error) {
	if err := validFields("check-in", in); err != nil {
		return ActivityEntry{}, nil, err
	}
	if in.Availability != "" && !contains(Availabilities, in.Availability) {
		return ActivityEntry{}, nil, invalidf("invalid activity: availability %q: use one of %s", in.Availability, strings.Join(Availabilities, ", "))
	}
	op := Op{Name: "activity.checkin", Summary: "check in"}
	if in.Task != "" {
		op.Summary = "check in: " + in.Task
	}
	return s.writeActivity(ctx, op, in.Member, true, true, func(e *ActivityEntry) {
		e.Status = StatusActive
		e.Task, e.IssueRef, e.Doing = in.Task, in.IssueRef, in.Doing
		switch {
		case in.Availability != "":
			e.Availability = in.Availability
		case in.Task != "" || in.Doing != "":
			e.Availability = "working"
		default:
			e.Availability = "online"
		}
		if in.TaskID != nil {
			e.TaskID = nullable(in.TaskID)
		}
		if in.Branch != nil {
			e.Branch = nullable(in.Branch)
		}
		if in.LastDecision != nil {
			e.LastDecision = nullable(in.LastDecision)
		}
		if in.Files != nil {
			e.Files = append([]string{}, in.Files...)
		}
		if in.ClearRunFailure {
			e.RunFailure = nil
		}
		if in.RunFailure != nil {
			rf := *in.RunFailure
			e.RunFailure = &rf
		}
		if in.Intent != nil {
			it := *in.Intent
			e.Intent = &it
		}
	})
}

// CheckOut marks this member's agent on this machine checked out (status checked_out, availability
// offline), keeping the entry (context://activity lists it); other agents' and machines' entries are untouched.
// The member is made from the git identity's name. *NotFoundError when it never checked in; no commit
// when it is checked out already.
func (s *Store) CheckOut(ctx context.Context) (ActivityEntry, *Committed, error) {
	op := Op{Name: "activity.checkout", Summary: "check out"}
	return s.writeActivity(ctx, op, "", false, false, func(e *ActivityEntry) {
		e.Status, e.Availability = StatusCheckedOut, "offline"
	})
}

// SetIntent records what this member's agent intends to change (its intent), creating the entry
// when needed; validated by ValidateIntent first (nothing written on error). One commit; none when the
// intent is already that one. The member is made from the git identity's name.
func (s *Store) SetIntent(ctx context.Context, in Intent) (ActivityEntry, *Committed, error) {
	if err := validFields("intent", in); err != nil {
		return ActivityEntry{}, nil, err
	}
	if err := ValidateIntent(in); err != nil {
		return ActivityEntry{}, nil, err
	}
	if in.Paths == nil {
		in.Paths = []string{}
	}
	if in.Areas == nil {
		in.Areas = []string{}
	}
	op := Op{Name: "activity.intent", Summary: "set intent: " + in.Kind}
	return s.writeActivity(ctx, op, "", true, false, func(e *ActivityEntry) {
		it := in
		e.Intent = &it
	})
}

// ClearIntent removes this agent's intent (member from the git identity, or explicit when member is not
// ""); *NotFoundError when it never checked in.
func (s *Store) ClearIntent(ctx context.Context, member string) (ActivityEntry, *Committed, error) {
	op := Op{Name: "activity.intent", Summary: "clear intent"}
	return s.writeActivity(ctx, op, member, false, false, func(e *ActivityEntry) { e.Intent = nil })
}

// ListActivity lists every activity entry of every scope (as context://activity serves them: all entries,
// stale ones included and flagged), ordered by member, agent, machine. stale = updated_at older than 48
// hours (StaleAfter). Files of the older layout activity/<member>.json are listed too.
func (v *View) ListActivity(ctx context.Context) ([]Activity, error) {
	return v.listActivity(ctx, time.Now())
}

func (v *View) listActivity(ctx context.Context, at time.Time) ([]Activity, error) {
	top, err := v.List(ctx, ActivityDir)
	if err != nil {
		return nil, err
	}
	out := []Activity{}
	add := func(sc Scope, p string) error {
		b, err := v.ReadIn(ctx, sc, p)
		if err != nil {
			return err
		}
		var e ActivityEntry
		if json.Unmarshal(b, &e) != nil {
			return nil
		}
		if e.Files == nil {
			e.Files = []string{}
		}
		out = append(out, Activity{ActivityEntry: e, Stale: IsStale(e.UpdatedAt, at), Scope: sc, Path: p})
		return nil
	}
	for _, t := range top {
		if !t.Dir {
			if strings.HasSuffix(t.Name, ".json") {
				if err := add(t.Scope, ActivityDir+"/"+t.Name); err != nil {
					return nil, err
				}
			}
			continue
		}
		files, err := v.List(ctx, ActivityDir+"/"+t.Name)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if f.Dir || !strings.HasSuffix(f.Name, ".json") {
				continue
			}
			if err := add(f.Scope, ActivityDir+"/"+t.Name+"/"+f.Name); err != nil {
				return nil, err
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Member != b.Member {
			return a.Member < b.Member
		}
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		return a.Machine < b.Machine
	})
	return out, nil
}
