package blame

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/history"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// prEvidence is what a transcript's gh call says about a pull request: its commits (gh pr view --json
// commits) or its head and base branches (gh pr create).
type prEvidence struct {
	ev         Evidence
	commits    []string // full ids, from gh pr view --json commits
	head, base string   // branch names, from gh pr create
}

var (
	ghPRRe     = lazyre.New(`(?:^|[\s;&|(])gh\s+pr\s+(create|view)(?:\s|$)`)
	prURLRe    = lazyre.New(`https?://([A-Za-z0-9.-]+)/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/pull/([0-9]+)\b`)
	creatingRe = lazyre.New(`Creating (?:draft )?pull request for (\S+) into (\S+) in (\S+)`)
	branchRe   = lazyre.New(`^[A-Za-z0-9._/-]{1,200}$`)
)

// commandOf is the shell command of a tool call's input: the "command" or "cmd" field of a JSON object
// (a string, or an argument vector joined by spaces), else the input itself.
func commandOf(input string) string {
	var m map[string]any
	if json.Unmarshal([]byte(input), &m) != nil {
		return input
	}
	for _, k := range []string{"command", "cmd"} {
		switch v := m[k].(type) {
		case string:
			return v
		case []any:
			var parts []string
			for _, x := range v {
				if s, ok := x.(string); ok {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, " ")
		}
	}
	return ""
}

// words splits a command line into words, honouring single and double quotes (enough to read gh's flags;
// no expansion).
func words(cmd string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range cmd {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// flagValue is the value of a gh flag (--head X, --head=X, -H X) in args.
func flagValue(args []string, long, short string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, long+"="); ok {
			return v
		}
		if (a == long || a == short) && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// outputOf is the text of a tool output event (JSON-string escapes of Codex cells undone).
func outputOf(e history.Event) string {
	text := e.Text
	if e.Tool != nil && e.Tool.Output != "" {
		text = e.Tool.Output
	}
	return strings.ReplaceAll(text, `\n`, "\n")
}

// transcriptPR finds, in sessions working in this repository, the newest gh call with one successful
// linked output that binds pull request n to its commits: `gh pr view N --json commits` (the commits
// listed) or `gh pr create` whose output prints the pull request's URL, on a repository that is one of
// this repository's remotes, with its head branch named (--head, or gh's "Creating pull request for HEAD
// into BASE" line).
func (b *Blamer) transcriptPR(ctx context.Context, n int) (*prEvidence, error) {
	if b.ix == nil {
		return nil, nil
	}
	xs, err := b.ix.CallsContaining(ctx, "gh pr ")
	if err != nil {
		return nil, err
	}
	var found *prEvidence
	for _, x := range xs {
		if x.Call.Tool == nil || len(x.Outputs) != 1 || !b.inRepo(ctx, x.Session.CWD) {
			continue
		}
		o := x.Outputs[0]
		if o.Tool != nil && (o.Tool.IsError || (o.Tool.ExitCode != nil && *o.Tool.ExitCode != 0)) {
			continue
		}
		cmd := commandOf(x.Call.Tool.Input)
		m := ghPRRe.Get().FindStringSubmatch(cmd)
		if m == nil {
			continue
		}
		out := outputOf(o)
		args := words(cmd[strings.Index(cmd, "gh"):])
		e := Evidence{Kind: KindPullRequest, SessionID: x.Session.ID, Provider: x.Session.Provider, NativeSessionID: x.Session.NativeID,
			EventID: o.ID, At: o.At, Tool: x.Call.Tool.Name}
		switch m[1] {
		case "view":
			if p := b.viewEvidence(ctx, n, args, out); p != nil {
				e.Excerpt = clipText(cmd, 200)
				p.ev = e
				found = p
			}
		case "create":
			if p := b.createEvidence(ctx, n, args, out); p != nil {
				e.Excerpt = clipText(cmd+"\n"+strings.TrimSpace(out), 300)
				p.ev = e
				found = p
			}
		}
	}
	return found, nil
}

// viewEvidence reads `gh pr view N --json commits[,...]`: the JSON object printed lists the commits; the
// pull request is N by the command's argument (a number or its URL) or the object's number.
func (b *Blamer) viewEvidence(ctx context.Context, n int, args []string, out string) *prEvidence {
	if !strings.Contains(flagValue(args, "--json", ""), "commits") {
		return nil
	}
	i := strings.Index(out, "{")
	if i < 0 {
		return nil
	}
	var obj struct {
		Number  int    `json:"number"`
		URL     string `json:"url"`
		Commits []struct {
			OID string `json:"oid"`
		} `json:"commits"`
	}
	if json.NewDecoder(strings.NewReader(out[i:])).Decode(&obj) != nil || len(obj.Commits) == 0 {
		return nil
	}
	named := obj.Number == n
	if len(args) > 3 && !strings.HasPrefix(args[3], "-") {
		if args[3] == strconv.Itoa(n) {
			named = true
		} else if u := prURLRe.Get().FindStringSubmatch(args[3]); u != nil {
			named = u[4] == strconv.Itoa(n) && b.isRemote(ctx, u[1], u[2], u[3])
		} else {
			return nil // another pull request, or a branch name
		}
	}
	if !named {
		return nil
	}
	p := &prEvidence{}
	for _, c := range obj.Commits {
		if !fullOIDRe.Get().MatchString(c.OID) {
			return nil
		}
		full, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", c.OID+"^{commit}")
		if err != nil || full != c.OID {
			return nil // a commit not in this repository: the evidence cannot be checked here
		}
		p.commits = append(p.commits, c.OID)
	}
	return p
}

// createEvidence reads `gh pr create`: its output prints the new pull request's URL, on one of this
// repository's remotes, and the head branch is named by --head or by gh's "Creating pull request for" line.
func (b *Blamer) createEvidence(ctx context.Context, n int, args []string, out string) *prEvidence {
	var u []string
	for _, x := range prURLRe.Get().FindAllStringSubmatch(out, -1) {
		if x[4] == strconv.Itoa(n) {
			u = x
		}
	}
	if u == nil || !b.isRemote(ctx, u[1], u[2], u[3]) {
		return nil
	}
	head, base := flagValue(args, "--head", "-H"), flagValue(args, "--base", "-B")
	if c := creatingRe.Get().FindStringSubmatch(out); c != nil {
		if head == "" {
			head = c[1]
		}
		if base == "" {
			base = c[2]
		}
	}
	if _, h, ok := strings.Cut(head, ":"); ok { // owner:branch of a fork
		head = h
	}
	if !validBranch(head) || (base != "" && !validBranch(base)) {
		return nil
	}
	return &prEvidence{head: head, base: base}
}

func validBranch(s string) bool {
	return branchRe.Get().MatchString(s) && !strings.HasPrefix(s, "-") && !strings.Contains(s, "..")
}

// isRemote reports whether one of the repository's remotes is host/owner/repo (https, ssh or scp-like
// URL, with or without .git; case-insensitive).
func (b *Blamer) isRemote(ctx context.Context, host, owner, repo string) bool {
	out, err := b.git(ctx, "remote", "-v")
	if err != nil {
		return false
	}
	want := strings.ToLower(host + "/" + owner + "/" + strings.TrimSuffix(repo, ".git"))
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		u := strings.ToLower(f[1])
		for _, p := range []string{"https://", "http://", "ssh://", "git://"} {
			u = strings.TrimPrefix(u, p)
		}
		if at := strings.Index(u, "@"); at >= 0 && at < strings.IndexAny(u+"/", ":/") {
			u = u[at+1:]
		}
		u = strings.Replace(u, ":", "/", 1)
		u = strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
		if u == want {
			return true
		}
	}
	return false
}

// branchTip resolves a branch named by evidence: the local branch, else one remote-tracking branch of
// that name (several remotes with different tips: none).
func (b *Blamer) branchTip(ctx context.Context, name string) string {
	if h, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+name+"^{commit}"); err == nil && h != "" {
		return h
	}
	out, err := b.git(ctx, "for-each-ref", "--format=%(objectname)", "refs/remotes/*/"+name)
	if err != nil {
		return ""
	}
	tip := ""
	for h := range strings.SplitSeq(out, "\n") {
		if h == "" {
			continue
		}
		if tip != "" && tip != h {
			return ""
		}
		tip = h
	}
	return tip
}
