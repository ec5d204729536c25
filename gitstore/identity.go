package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/ctx-dev/ctx/gitstore/identcache"
	"github.com/ctx-dev/ctx/internal/clock"
	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/go-git/go-git/v5/config"
)

// ErrNoIdentity is returned when no user.name/user.email is configured, as C git refuses to commit then.
var ErrNoIdentity = errors.New("no git identity: set it with git config user.name \"Your Name\" and git config user.email you@example.com")

// Identity returns the author identity C git would use for a commit in this repository, by asking git
// itself (`git var GIT_AUTHOR_IDENT`): the environment (GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, EMAIL), author.*
// and user.* of every config git reads (GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, GIT_CONFIG_NOSYSTEM,
// GIT_CONFIG_COUNT, include.path, includeIf gitdir: and onbranch:, ...). git is run with
// user.useConfigOnly, so that an e-mail address is never guessed from the login and host names (which
// would put the machine's name in pushed commits): without a configured one (or $EMAIL, which git also
// reads) the error is ErrNoIdentity.
// The answer is cached for the process while the environment and the config files' stamps stay the same.
// Without a git binary, the repository's, global and system config are read with go-git. When is the
// current time.
//
// A context made by WithIdentity overrides it: the author is then the caller the context speaks for (an
// MCP HTTP request's token, docs/http.md); the committer stays this process's identity.
func (r *Repo) Identity(ctx context.Context) (Signature, error) {
	if sig, ok := ctx.Value(identityKey{}).(Signature); ok {
		sig.When = clock.Now()
		return sig, nil
	}
	id, err := r.idents(ctx)
	if err != nil {
		return Signature{}, err
	}
	sig := id.author
	sig.When = clock.Now()
	return sig, nil
}

type identityKey struct{}

// WithIdentity returns a context in which Identity reports name and email, the author of the commits
// written with it. name must not be empty; neither may contain '<', '>' or a newline.
func WithIdentity(ctx context.Context, name, email string) context.Context {
	return context.WithValue(ctx, identityKey{}, Signature{Name: name, Email: email})
}

// Committer is the committer identity C git would use (`git var GIT_COMMITTER_IDENT`: GIT_COMMITTER_NAME,
// GIT_COMMITTER_EMAIL, committer.* and user.* config), resolved and cached like Identity.
func (r *Repo) Committer(ctx context.Context) (Signature, error) {
	id, err := r.idents(ctx)
	if err != nil {
		return Signature{}, err
	}
	sig := id.committer
	sig.When = clock.Now()
	return sig, nil
}

// identities is one resolution of the author and committer.
type identities struct {
	author, committer Signature
}

// identCache holds resolved identities by repository and stamp (see identStamp).
var identCache sync.Map // string -> identities

// idents resolves both identities, from the cache when nothing they depend on changed.
func (r *Repo) idents(ctx context.Context) (identities, error) {
	key := r.identStamp()
	if v, ok := identCache.Load(key); ok {
		return v.(identities), nil
	}
	if id, ok := r.savedIdents(key); ok {
		identCache.Store(key, id)
		return id, nil
	}
	id, err := r.gitIdents(ctx)
	if errors.Is(err, exec.ErrNotFound) {
		id, err = r.configIdents()
	}
	if err != nil {
		return identities{}, err
	}
	identCache.Store(key, id)
	r.saveIdents(key, id)
	return id, nil
}

// identFile is where the last identities asked of git are kept for the next process, beside the digest
// of their identStamp (package identcache, which the lean front reads too): asking `git var` twice cost a
// one-shot write about 5 ms of CPU, a quarter of `ctx knowledge set` in a small store (bench/README.md,
// "Fifth round").
func (r *Repo) identFile() string { return filepath.Join(r.CtxDir(), identcache.FileName) }

// savedIdents returns the identities of identFile when they were saved under the same stamp.
func (r *Repo) savedIdents(key string) (identities, bool) {
	p, ok := identcache.Load(r.identFile(), key)
	if !ok {
		return identities{}, false
	}
	return identities{author: Signature{Name: p.Author.Name, Email: p.Author.Email},
		committer: Signature{Name: p.Committer.Name, Email: p.Committer.Email}}, true
}

// saveIdents writes id under key into identFile (identcache.Save). Failures are ignored.
func (r *Repo) saveIdents(key string, id identities) {
	identcache.Save(r.identFile(), key, identcache.Pair{
		Author:    identcache.Ident{Name: id.author.Name, Email: id.author.Email},
		Committer: identcache.Ident{Name: id.committer.Name, Email: id.committer.Email}})
}

// identStamp names what an identity depends on (identcache.Stamp): the repository, the environment git
// reads it from, and the size and modification time of the config files.
func (r *Repo) identStamp() string { return identcache.Stamp(r.gitDir, r.commonDir) }

// identLine is git's ident: "Name <email> 1700000000 +0100".
var identLine = lazyre.New(`^(.*) <(.*)> -?\d+ [-+]\d{4}$`)

// gitIdents asks git for the author and committer identities; exec.ErrNotFound without a git binary.
func (r *Repo) gitIdents(ctx context.Context) (identities, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return identities{}, exec.ErrNotFound
	}
	var id identities
	for _, v := range []struct {
		name string
		sig  *Signature
	}{{"GIT_AUTHOR_IDENT", &id.author}, {"GIT_COMMITTER_IDENT", &id.committer}} {
		run := func(extra ...string) (string, string, error) {
			return gitCmd{dir: r.gitDir, args: append(append(r.repoArgs(), extra...), "var", v.name)}.run(ctx)
		}
		out, errText, err := run("-c", "user.useConfigOnly=true")
		if err != nil && os.Getenv("EMAIL") != "" && identityUnknown(errText) {
			// git takes $EMAIL when no email is configured, which user.useConfigOnly forbids; with $EMAIL
			// set nothing is guessed from the host name, so ask git the plain way.
			out, errText, err = run()
		}
		if err != nil {
			if ctx.Err() != nil {
				return identities{}, ctx.Err()
			}
			msg := strings.TrimSpace(errText)
			if _, ok := err.(*exec.ExitError); ok && identityUnknown(msg) {
				return identities{}, ErrNoIdentity
			}
			return identities{}, fmt.Errorf("git var %s: %w: %s", v.name, err, lastLine(msg))
		}
		m := identLine.Get().FindStringSubmatch(strings.TrimSpace(out))
		if m == nil || m[1] == "" || m[2] == "" {
			return identities{}, ErrNoIdentity
		}
		*v.sig = Signature{Name: m[1], Email: m[2]}
	}
	return id, nil
}

// identityUnknown reports whether git's message says that no identity is configured.
func identityUnknown(msg string) bool {
	for _, s := range []string{"identity unknown", "auto-detection is disabled", "empty ident", "unable to auto-detect", "no email was given", "no name was given"} {
		if strings.Contains(strings.ToLower(msg), s) {
			return true
		}
	}
	return false
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// configIdents resolves the identities without a git binary: the environment, then user.name and
// user.email of the repository config, the global config (GIT_CONFIG_GLOBAL, else ~/.gitconfig and
// $XDG_CONFIG_HOME/git/config) and the system config.
func (r *Repo) configIdents() (identities, error) {
	name, email := os.Getenv("GIT_AUTHOR_NAME"), os.Getenv("GIT_AUTHOR_EMAIL")
	if name == "" || email == "" {
		n, e := r.configIdentity()
		if name == "" {
			name = n
		}
		if email == "" {
			email = e
		}
	}
	if email == "" {
		email = os.Getenv("EMAIL")
	}
	if name == "" || email == "" {
		return identities{}, ErrNoIdentity
	}
	author := Signature{Name: name, Email: email}
	return identities{author: author, committer: committerOf(author)}, nil
}

// committerOf applies GIT_COMMITTER_NAME / GIT_COMMITTER_EMAIL to an author identity.
func committerOf(sig Signature) Signature {
	if n := os.Getenv("GIT_COMMITTER_NAME"); n != "" {
		sig.Name = n
	}
	if e := os.Getenv("GIT_COMMITTER_EMAIL"); e != "" {
		sig.Email = e
	}
	return sig
}

func (r *Repo) configIdentity() (name, email string) {
	if cfg, err := r.st.Config(); err == nil {
		name, email = cfg.User.Name, cfg.User.Email
	}
	for _, scope := range []config.Scope{config.GlobalScope, config.SystemScope} {
		if name != "" && email != "" {
			break
		}
		if scope == config.SystemScope && os.Getenv("GIT_CONFIG_NOSYSTEM") != "" {
			continue // as C git: GIT_CONFIG_NOSYSTEM skips the system config
		}
		var cfg *config.Config
		var err error
		if f := os.Getenv("GIT_CONFIG_GLOBAL"); scope == config.GlobalScope && f != "" {
			// As C git: GIT_CONFIG_GLOBAL replaces ~/.gitconfig and $XDG_CONFIG_HOME/git/config.
			var b []byte
			if b, err = os.ReadFile(f); err == nil {
				cfg = config.NewConfig()
				err = cfg.Unmarshal(b)
			}
		} else {
			cfg, err = config.LoadConfig(scope)
		}
		if err != nil {
			continue
		}
		if name == "" {
			name = cfg.User.Name
		}
		if email == "" {
			email = cfg.User.Email
		}
	}
	return name, email
}

// Remote is a configured remote: its name and first URL.
type Remote struct {
	Name string
	URL  string
}

// Remotes lists the remotes of the repository config, sorted by name.
func (r *Repo) Remotes(ctx context.Context) ([]Remote, error) {
	cfg, err := r.st.Config()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var out []Remote
	for name, rc := range cfg.Remotes {
		u := ""
		if len(rc.URLs) > 0 {
			u = rc.URLs[0]
		}
		out = append(out, Remote{Name: name, URL: u})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ConfigValue returns a value of the repository config (section, optional subsection, key), "" when unset.
func (r *Repo) ConfigValue(section, subsection, key string) string {
	cfg, err := r.st.Config()
	if err != nil || cfg.Raw == nil {
		return ""
	}
	s := cfg.Raw.Section(section)
	if subsection != "" {
		return s.Subsection(subsection).Option(key)
	}
	return s.Option(key)
}
