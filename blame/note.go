package blame

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
)

// AgentEnv is an environment variable through which a coding agent tells the commands it runs which
// session they belong to (docs/blame.md "Environment variables").
type AgentEnv struct {
	Var   string // the variable holding the session id
	Agent string // the agent (a history provider name, or CTX_AGENT's value)
}

// AgentEnvs are the variables the post-commit hook reads, in order; the first one set wins. CTX_SESSION
// goes with CTX_AGENT (the agent's name; "unknown" when unset).
var AgentEnvs = []AgentEnv{
	{Var: "CLAUDE_CODE_SESSION_ID", Agent: "claude-code"},
	{Var: "CODEX_THREAD_ID", Agent: "codex"},
	{Var: "CTX_SESSION", Agent: ""},
}

// NoteRecord is one session recorded in a note on refs/notes/ctx.
type NoteRecord struct {
	Agent   string    // provider name (claude-code, codex) or the value of CTX_AGENT
	Session string    // the agent's own session id
	Env     string    // the variable that named it
	At      time.Time // when the hook ran
}

var idRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// SessionFromEnv returns the active agent session named by the environment (getenv), if any. Values that
// are not plain ids (1–128 letters, digits, ".", "_", ":", "-") are ignored.
func SessionFromEnv(getenv func(string) string) (NoteRecord, bool) {
	for _, a := range AgentEnvs {
		v := strings.TrimSpace(getenv(a.Var))
		if v == "" || !idRe.MatchString(v) {
			continue
		}
		agent := a.Agent
		if agent == "" {
			agent = strings.TrimSpace(getenv("CTX_AGENT"))
			if !idRe.MatchString(agent) {
				agent = "unknown"
			}
		}
		return NoteRecord{Agent: agent, Session: v, Env: a.Var}, true
	}
	return NoteRecord{}, false
}

// NoteText is the text of the note for r.
func NoteText(r NoteRecord) string {
	return fmt.Sprintf("ctx-blame: v1\nagent: %s\nsession: %s\nenv: %s\nat: %s\n", r.Agent, r.Session, r.Env, r.At.UTC().Format(time.RFC3339))
}

// ParseNote reads the records of a note (several when notes were appended or merged); lines it does not
// know are ignored, and records with an invalid agent or session are dropped.
func ParseNote(text string) []NoteRecord {
	var out []NoteRecord
	var cur *NoteRecord
	flush := func() {
		if cur != nil && idRe.MatchString(cur.Agent) && idRe.MatchString(cur.Session) {
			out = append(out, *cur)
		}
		cur = nil
	}
	for line := range strings.SplitSeq(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "ctx-blame":
			flush()
			cur = &NoteRecord{}
		case "agent":
			if cur != nil {
				cur.Agent = v
			}
		case "session":
			if cur != nil {
				cur.Session = v
			}
		case "env":
			if cur != nil {
				cur.Env = v
			}
		case "at":
			if cur != nil {
				cur.At, _ = time.Parse(time.RFC3339, v)
			}
		}
	}
	flush()
	return out
}

// RecordNote notes on the commit HEAD names, in the repository containing dir, the agent session that
// the environment (getenv) names, at time now: `git notes --ref=refs/notes/ctx append`, so a note that
// already records other sessions keeps them. It does nothing (false) when no agent session is active or
// the note already names this session. The commit itself is never changed.
func RecordNote(ctx context.Context, dir string, getenv func(string) string, now time.Time) (bool, error) {
	rec, ok := SessionFromEnv(getenv)
	if !ok {
		return false, nil
	}
	rec.At = now
	head, err := gitstore.Git(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil || head == "" {
		return false, fmt.Errorf("note the agent session: no commit at HEAD")
	}
	if list, err := gitstore.Git(ctx, dir, "notes", "--ref="+NotesRef, "list", head); err == nil && list != "" {
		old, err := gitstore.Git(ctx, dir, "notes", "--ref="+NotesRef, "show", head)
		if err != nil {
			return false, fmt.Errorf("note the agent session: %w", err)
		}
		for _, r := range ParseNote(old) {
			if r.Agent == rec.Agent && r.Session == rec.Session {
				return false, nil
			}
		}
	}
	if _, err := gitstore.Git(ctx, dir, "notes", "--ref="+NotesRef, "append", "-m", NoteText(rec), head); err != nil {
		return false, fmt.Errorf("note the agent session: %w", err)
	}
	return true, nil
}
