package gitstore

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

// ErrUnsafeRemote is wrapped by every RemoteError: a remote value ctx refuses to hand to git.
var ErrUnsafeRemote = errors.New("unsafe remote")

// RemoteError is a remote name or URL that ctx refuses before running git (docs/security.md, "Trust
// boundaries: remotes and arguments"): Remote is the value as given, Reason says which rule it broke.
type RemoteError struct {
	Remote string
	Reason string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("remote %q refused: %s", e.Remote, e.Reason)
}

func (e *RemoteError) Unwrap() error { return ErrUnsafeRemote }

// RemoteOrigin says where a remote value came from: the user's own command line or settings, or an agent
// (an MCP argument), which may only name a configured remote.
type RemoteOrigin int

const (
	// FromUser: a --remote flag, `ctx config remote`, or the repository's configured remotes.
	FromUser RemoteOrigin = iota
	// FromAgent: an MCP tool argument. Only the name of a remote configured in the repository is accepted.
	FromAgent
)

// knownSchemes are the URL schemes of git's built-in transports (git-fetch(1) "GIT URLS"). Any other
// "<scheme>://" or "<transport>::<address>" runs a remote helper program (git-remote-<transport>).
var knownSchemes = map[string]string{
	"ssh": "ssh", "git+ssh": "ssh", "ssh+git": "ssh",
	"git":  "git",
	"http": "http", "https": "https",
	"ftp": "ftp", "ftps": "ftps",
	"file": "file",
}

// ValidRemoteName reports whether name may be a remote's name: git's rules for one component of a ref
// name (git-check-ref-format(1): it becomes refs/remotes/<name>/...), and never starting with "-".
func ValidRemoteName(name string) error {
	if name == "" {
		return errors.New("empty remote name")
	}
	for _, seg := range strings.Split(name, "/") {
		if err := validRefComponent(seg); err != nil {
			return err
		}
	}
	if strings.HasPrefix(name, "-") {
		return errors.New("starts with '-' (git would read it as an option)")
	}
	return nil
}

// validRefComponent applies git-check-ref-format(1) to one slash-separated component.
func validRefComponent(c string) error {
	switch {
	case c == "":
		return errors.New("empty component")
	case strings.HasPrefix(c, "."):
		return errors.New("a component starts with '.'")
	case strings.HasSuffix(c, ".lock"):
		return errors.New("a component ends with '.lock'")
	case strings.Contains(c, ".."):
		return errors.New("contains '..'")
	case strings.Contains(c, "@{"), c == "@":
		return errors.New("contains '@{' or is '@'")
	case !utf8.ValidString(c):
		return errors.New("not valid UTF-8")
	}
	for _, r := range c {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return fmt.Errorf("contains %q", r)
		}
	}
	return nil
}

// ConfiguredRemote reports whether name is a remote of the repository's config (remote.<name>.url).
func (r *Repo) ConfiguredRemote(name string) bool {
	cfg, err := r.st.Config()
	if err != nil {
		return false
	}
	_, ok := cfg.Remotes[name]
	return ok
}

// CheckRemote decides whether remote may be handed to git as the repository argument of fetch or push
// (docs/security.md, "Trust boundaries: remotes and arguments"). Accepted:
//   - the name of a remote configured in the repository that is a valid remote name (its URL is the user's
//     own configuration and git applies its own protocol policy to it);
//   - from the user only, a URL ctx recognises: <scheme>://... with one of git's built-in schemes, an
//     scp-like [user@]host:path, or a local path; a remote-helper transport (<name>::<address>, or an
//     unknown <name>://) only when the user's git config allows that protocol
//     (protocol.<name>.allow, else protocol.allow, set to "always" or "user").
//
// Refused, as a *RemoteError: anything starting with "-", control characters, a host or user starting
// with "-", a command transport ("ext::", "fd::", ...) git config does not allow, and from an agent
// anything that is not a configured remote's name.
func (r *Repo) CheckRemote(remote string, origin RemoteOrigin) error {
	bad := func(format string, a ...any) error {
		return &RemoteError{Remote: remote, Reason: fmt.Sprintf(format, a...)}
	}
	if remote == "" {
		return bad("empty")
	}
	if strings.HasPrefix(remote, "-") {
		return bad("it starts with '-', so git would read it as an option")
	}
	for _, c := range remote {
		if c < 0x20 || c == 0x7f {
			return bad("it contains control characters")
		}
	}
	if r.ConfiguredRemote(remote) {
		if err := ValidRemoteName(remote); err != nil {
			return bad("not a valid remote name: %v", err)
		}
		return nil
	}
	if origin == FromAgent {
		return bad("an agent may only name a remote configured in this repository (git remote -v lists them)")
	}
	proto, rest, err := transportOf(remote)
	if err != nil {
		return bad("%v", err)
	}
	switch proto {
	case "ssh":
		if host := sshHost(rest); strings.HasPrefix(host, "-") {
			return bad("its host or user starts with '-', which ssh would read as an option")
		}
		return nil
	case "file", "git", "http", "https", "ftp", "ftps":
		return nil
	}
	if !r.protocolAllowed(proto) {
		return bad("%q is a command transport (it runs git-remote-%s); allow it in your own git config with "+
			"`git config protocol.%s.allow always` if you mean it", proto, proto, proto)
	}
	return nil
}

// transportOf returns the protocol name git's transport_get would use for url (git's protocol.<name>.allow
// names) and the part after the scheme.
func transportOf(url string) (proto, rest string, err error) {
	// <transport>::<address>: a remote helper (gitremote-helpers(7)).
	i := 0
	for i < len(url) && isSchemeChar(url[i], i == 0) {
		i++
	}
	if i > 0 && strings.HasPrefix(url[i:], "::") {
		return strings.ToLower(url[:i]), url[i+2:], nil
	}
	if i > 0 && strings.HasPrefix(url[i:], "://") {
		scheme := strings.ToLower(url[:i])
		if p, ok := knownSchemes[scheme]; ok {
			return p, url[i+3:], nil
		}
		return scheme, url[i+3:], nil
	}
	// scp-like [user@]host:path: a ':' before any '/' (git's url_is_local_not_ssh).
	colon, slash := strings.IndexByte(url, ':'), strings.IndexByte(url, '/')
	if colon > 0 && (slash < 0 || colon < slash) {
		return "ssh", url, nil
	}
	if colon == 0 {
		return "", "", errors.New("empty host before ':'")
	}
	return "file", url, nil
}

func isSchemeChar(c byte, first bool) bool {
	alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	if first {
		return alpha
	}
	return alpha || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}

// sshHost returns the [user@]host part of an ssh URL (after "ssh://", or scp-like "user@host:path").
func sshHost(rest string) string {
	end := strings.IndexAny(rest, ":/")
	if end < 0 {
		end = len(rest)
	}
	h := rest[:end]
	if at := strings.LastIndexByte(h, '@'); at >= 0 {
		if strings.HasPrefix(h, "-") {
			return h
		}
		return h[at+1:]
	}
	return h
}

// protocolAllowed reports whether the user's git config allows protocol: protocol.<name>.allow, else
// protocol.allow, set to "always" or "user" (git-config(1) "protocol.allow"); GIT_ALLOW_PROTOCOL, when
// set, must list it too. An unset policy is a refusal here, although git's own default for helpers is
// "user": ctx runs helpers only when the user has said so.
func (r *Repo) protocolAllowed(proto string) bool {
	if env, ok := os.LookupEnv("GIT_ALLOW_PROTOCOL"); ok {
		listed := false
		for _, p := range strings.FieldsFunc(env, func(r rune) bool { return r == ':' || r == ',' }) {
			listed = listed || p == proto
		}
		if !listed {
			return false
		}
	}
	policy := r.anyConfig("protocol", proto, "allow")
	if policy == "" {
		policy = r.anyConfig("protocol", "", "allow")
	}
	return policy == "always" || policy == "user"
}

// anyConfig returns a value of the repository config, else the global one, else the system one (unless
// GIT_CONFIG_NOSYSTEM), as C git's precedence has it; "" when unset everywhere.
func (r *Repo) anyConfig(section, subsection, key string) string {
	if v := r.ConfigValue(section, subsection, key); v != "" {
		return v
	}
	for _, scope := range []config.Scope{config.GlobalScope, config.SystemScope} {
		if scope == config.SystemScope && os.Getenv("GIT_CONFIG_NOSYSTEM") != "" {
			continue
		}
		cfg, err := config.LoadConfig(scope)
		if err != nil || cfg.Raw == nil {
			continue
		}
		s := cfg.Raw.Section(section)
		v := s.Option(key)
		if subsection != "" {
			v = s.Subsection(subsection).Option(key)
		}
		if v != "" {
			return v
		}
	}
	return ""
}

// ValidRefName reports whether name is a full ref name ctx may hand to git: "refs/" followed by
// components that git-check-ref-format(1) accepts, none starting with "-".
func ValidRefName(name string) error {
	rest, ok := strings.CutPrefix(name, "refs/")
	if !ok {
		return fmt.Errorf("%q is not a full ref name (refs/...)", name)
	}
	for _, seg := range strings.Split(rest, "/") {
		if err := validRefComponent(seg); err != nil {
			return fmt.Errorf("ref %q: %w", name, err)
		}
		if strings.HasPrefix(seg, "-") {
			return fmt.Errorf("ref %q: a component starts with '-'", name)
		}
	}
	return nil
}

// ValidBranchName checks a branch name as git check-ref-format(1) does for refs/heads/<name> (which
// refuses "HEAD", as git branch does), and also refuses names that git accepts but that would read as an
// option, a revision expression or a pattern (a leading "-", spaces, ~ ^ : ? * [ \), or that name
// something else first when git resolves the name alone (gitrevisions(7), "<refname>": the files of the
// git dir such as FETCH_HEAD or ORIG_HEAD — all capitals and '_' ending in HEAD, git's pseudo-ref
// shape — then refs/<name>, so a name starting with refs/, heads/, tags/ or remotes/ is ambiguous).
func ValidBranchName(name string) error {
	ref := "refs/heads/" + name
	if err := plumbing.ReferenceName(ref).Validate(); err != nil {
		return fmt.Errorf("branch %q: %w", name, err)
	}
	if strings.ContainsAny(name, " ~^:?*[\\") || strings.HasPrefix(name, "-") {
		return fmt.Errorf("branch %q: a space, one of ~^:?*[\\ or a leading '-'", name)
	}
	if pseudoRefShape(name) {
		return fmt.Errorf("branch %q: git reads this name as its own ref (HEAD, FETCH_HEAD, ORIG_HEAD...), not a branch", name)
	}
	if first, _, _ := strings.Cut(name, "/"); first == "refs" || first == "heads" || first == "tags" || first == "remotes" {
		other := "refs/" + name
		if first == "refs" {
			other = name
		}
		return fmt.Errorf("branch %q: git resolves the name to %s before refs/heads/%s: name the branch without %s/", name, other, name, first)
	}
	return ValidRefName(ref)
}

// pseudoRefShape says whether name has the shape of a ref git keeps in its git dir rather than under
// refs/: HEAD, or capitals and '_' ending in "_HEAD" (FETCH_HEAD, ORIG_HEAD, MERGE_HEAD, ...).
func pseudoRefShape(name string) bool {
	if name == "HEAD" {
		return true
	}
	if !strings.HasSuffix(name, "_HEAD") {
		return false
	}
	for _, r := range name {
		if (r < 'A' || r > 'Z') && r != '_' {
			return false
		}
	}
	return true
}
