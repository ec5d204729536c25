package blame

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/gitstore"

	"github.com/ctx-dev/ctx/internal/lazyre"
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

var idRe = lazyre.New(`^[A-Za-z0-9._:-]{1,128}$`)

// SessionFromEnv returns the active agent session named by the environment (getenv), if any. Values that
// are not plain ids (1–128 letters, digits, ".", "_", ":", "-") are ignored.
func SessionFromEnv(getenv func(string) string) (NoteRecord, bool) {
	for _, a := range AgentEnvs {
		v := strings.TrimSpace(getenv(a.Var))
		if v == "" || !idRe.Get().MatchString(v) {
			continue
		}
		agent := a.Agent
		if agent == "" {
			agent = strings.TrimSpace(getenv("CTX_AGENT"))
			if !idRe.Get().MatchString(agent) {
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
		if cur != nil && idRe.Get().MatchString(cur.Agent) && idRe.Get().MatchString(cur.Session) {
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
		case "ctx-rewrite":
			flush()
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

// RewriteRecord is a rewrite recorded in a note on refs/notes/ctx by ctx's post-rewrite hook: the noted
// commit was made by rewriting From (git commit --amend, git rebase), as git itself reported it.
type RewriteRecord struct {
	From string    // the full id of the original commit
	By   string    // amend or rebase (git's post-rewrite argument)
	At   time.Time // when the hook ran
}

// RewriteText is the text of the note record for r.
func RewriteText(r RewriteRecord) string {
	return fmt.Sprintf("ctx-rewrite: v1\nfrom: %s\nby: %s\nat: %s\n", r.From, r.By, r.At.UTC().Format(time.RFC3339))
}

var fullOIDRe = lazyre.New(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// ParseRewrites reads the rewrite records of a note; records without a full commit id or with another
// command than amend or rebase are dropped.
func ParseRewrites(text string) []RewriteRecord {
	var out []RewriteRecord
	var cur *RewriteRecord
	flush := func() {
		if cur != nil && fullOIDRe.Get().MatchString(cur.From) && (cur.By == "amend" || cur.By == "rebase") {
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
		case "ctx-rewrite":
			flush()
			cur = &RewriteRecord{}
		case "from":
			if cur != nil {
				cur.From = v
			}
		case "by":
			if cur != nil {
				cur.By = v
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

// RewriteEnabled reports whether git copies the notes of refs/notes/ctx when commits are rewritten: a
// value of notes.rewriteRef names it, exactly or by a glob (git-config(1) "notes.rewriteRef"). ctx hooks
// install --blame sets it; ctx's post-rewrite hook records rewrites only then.
func RewriteEnabled(ctx context.Context, dir string) bool {
	out, err := gitstore.Git(ctx, dir, "config", "--get-all", "notes.rewriteRef")
	if err != nil {
		return false
	}
	for v := range strings.SplitSeq(out, "\n") {
		if v = strings.TrimSpace(v); v == NotesRef {
			return true
		} else if ok, _ := path.Match(v, NotesRef); ok {
			return true
		}
	}
	return false
}

// RecordRewrites notes, on each commit git just rewrote in the repository containing dir, the commit it
// was rewritten from, for ctx's post-rewrite hook (command is git's argument: amend or rebase). The pairs
// come from git itself: for amend, the newest entry of HEAD's reflog ("commit (amend): ...", its new and
// old ids); for rebase, the list git hands the hook (the rebase's rewritten-list file, read while the hook
// runs). It records nothing unless RewriteEnabled. It returns the number of records written.
func RecordRewrites(ctx context.Context, dir, command string, now time.Time) (int, error) {
	if (command != "amend" && command != "rebase") || !RewriteEnabled(ctx, dir) {
		return 0, nil
	}
	var pairs [][2]string
	switch command {
	case "amend":
		out, err := gitstore.Git(ctx, dir, "log", "-g", "-2", "--format=%H %gs", "HEAD")
		if err != nil {
			return 0, fmt.Errorf("record the rewrite: %w", err)
		}
		lines := strings.Split(out, "\n")
		if len(lines) == 2 {
			newID, subj, _ := strings.Cut(lines[0], " ")
			oldID, _, _ := strings.Cut(lines[1], " ")
			if strings.HasPrefix(subj, "commit (amend):") {
				pairs = append(pairs, [2]string{oldID, newID})
			}
		}
	case "rebase":
		p, err := gitstore.Git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-path", "rebase-merge/rewritten-list")
		if err != nil {
			return 0, fmt.Errorf("record the rewrite: %w", err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return 0, nil
			}
			return 0, fmt.Errorf("record the rewrite: %w", err)
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 {
				pairs = append(pairs, [2]string{f[0], f[1]})
			}
		}
	}
	n := 0
	for _, pr := range pairs {
		oldID, newID := pr[0], pr[1]
		if !fullOIDRe.Get().MatchString(oldID) || !fullOIDRe.Get().MatchString(newID) || oldID == newID {
			continue
		}
		if list, err := gitstore.Git(ctx, dir, "notes", "--ref="+NotesRef, "list", newID); err == nil && list != "" {
			old, err := gitstore.Git(ctx, dir, "notes", "--ref="+NotesRef, "show", newID)
			if err != nil {
				return n, fmt.Errorf("record the rewrite: %w", err)
			}
			dup := false
			for _, r := range ParseRewrites(old) {
				dup = dup || r.From == oldID
			}
			if dup {
				continue
			}
		}
		rec := RewriteRecord{From: oldID, By: command, At: now}
		if _, err := gitstore.Git(ctx, dir, "notes", "--ref="+NotesRef, "append", "-m", RewriteText(rec), newID); err != nil {
			return n, fmt.Errorf("record the rewrite: %w", err)
		}
		n++
	}
	return n, nil
}
