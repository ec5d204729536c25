package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrNoIdentity is returned when no user.name/user.email is configured, as C git refuses to commit then.
var ErrNoIdentity = errors.New("no git identity: set it with git config user.name \"Your Name\" and git config user.email you@example.com")

// Identity returns the user's git identity as C git resolves it for an author (git-commit-tree(1),
// git-config(1)): GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL, then user.name / user.email of the repository
// config, the global config (~/.gitconfig, $XDG_CONFIG_HOME/git/config) and the system config. When is
// the current time.
func (r *Repo) Identity(ctx context.Context) (object.Signature, error) {
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
	if name == "" || email == "" {
		return object.Signature{}, ErrNoIdentity
	}
	return object.Signature{Name: name, Email: email, When: time.Now()}, nil
}

// Committer is Identity with GIT_COMMITTER_NAME / GIT_COMMITTER_EMAIL taking precedence.
func (r *Repo) Committer(ctx context.Context) (object.Signature, error) {
	sig, err := r.Identity(ctx)
	sig = committerOf(sig)
	if err != nil && sig.Name != "" && sig.Email != "" {
		sig.When = time.Now()
		return sig, nil
	}
	return sig, err
}

// committerOf applies GIT_COMMITTER_NAME / GIT_COMMITTER_EMAIL to an author identity.
func committerOf(sig object.Signature) object.Signature {
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
		cfg, err := config.LoadConfig(scope)
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
