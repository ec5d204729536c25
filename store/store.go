// Package store is ctx's typed context model on top of gitstore: the manifest and team, knowledge,
// conventions, decisions, state, sessions, skills (with usage, feedback and proposals) and the team's
// activity, with key validation, one commit per write on the context refs, sync with a remote through
// the merge layer, and the checked-out tree `.context/`.
//
// Layout and formats: docs/format.md. Scopes map to refs: public → refs/heads/<branch> (pushed), private →
// refs/ctx/private and ephemeral → refs/ctx/ephemeral, both kept in the local-only repository
// <git common dir>/ctx/private.git (gitstore.Repo.KeepLocal), never pushed.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/ctx-dev/ctx/store/checkoutrec"
)

// Hash is a git object name (a commit's, a tree's or a blob's): gitstore's type, so that callers of store
// need not import gitstore.
type Hash = gitstore.Hash

// Scope is where an entry lives (docs/format.md): checkoutrec.Scope, the type of the checkout record.
type Scope = checkoutrec.Scope

// The three scopes.
const (
	Public    Scope = "public"
	Private   Scope = "private"
	Ephemeral Scope = "ephemeral"
)

// Scopes lists the scopes in read-precedence order: an entry found in an earlier one hides the others.
var Scopes = []Scope{Ephemeral, Private, Public}

// ParseScope validates a scope name; "" means public.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "", Public:
		return Public, nil
	case Private, Ephemeral:
		return Scope(s), nil
	}
	return "", invalidf("invalid scope %q: use public, private or ephemeral", s)
}

// The local refs of the private and ephemeral scopes. They live in the local-only repository
// <git common dir>/ctx/private.git, not in the repository's refs/ (gitstore.Repo.KeepLocal).
const (
	RefPrivate   = "refs/ctx/private"
	RefEphemeral = "refs/ctx/ephemeral"
)

// DefaultBranch is the context branch's default name.
const DefaultBranch = "ctx"

// CheckoutDir is the checked-out tree's folder at the worktree root.
const CheckoutDir = ".context"

// ErrNotInitialized is returned when the repository has no context branch yet.
var ErrNotInitialized = errors.New("no context store here: run `ctx init` (or `ctx pull` to get the team's)")

// NotFoundError is a missing entry; Msg is the not-found text of docs/format.md (e.g. "Knowledge entry 'x'
// not found").
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// Actor says who writes: recorded in the commit trailers (docs/architecture.md "Commits") and in entries'
// front matter.
type Actor struct {
	Agent   string // e.g. claude-code; "cli" for a person at the terminal
	Session string
	Machine string
}

// Config is ctx's per-repository configuration, kept in <git common dir>/ctx/config.json (never pushed).
type Config struct {
	Branch       string `json:"branch"`
	Remote       string `json:"remote,omitempty"`
	PushWithGit  bool   `json:"sync.push-with-git,omitempty"`
	TimeoutSecs  int    `json:"sync.timeout,omitempty"`
	AgentDefault string `json:"agent,omitempty"`
	// HistorySources are the agent-history roots configured for this repository (ctx history sources
	// add), imported beside the providers' automatic roots (docs/history.md "Configured roots").
	HistorySources []HistorySource `json:"history.sources,omitempty"`
	// HistoryShare limits `ctx history share`: "summaries" shares a session's header and summary events
	// only; "" or "full" shares its events, redacted (docs/blame.md "Sharing").
	HistoryShare string `json:"history.share,omitempty"`
}

// Store is an open context store of one repository: its writes (one commit each), sync, checkout and the
// views to read it through (RefView, CheckoutView; the reads themselves are View's methods).
type Store struct {
	repo  *gitstore.Repo
	cfg   Config
	Actor Actor

	timeoutOverride time.Duration // SetTransferTimeout; 0: the configured timeout

	recCache recordCache       // the checkout record's scopes as CheckoutView last read them
	parsed   checkoutrec.Cache // the checkout record last parsed, by its bytes
	scanned  indexHandoff      // the status index of the last hand-edit scan, for the refresh after it
	made     madeBlobs         // the files a pull's merge wrote, for its refresh (Pull drops them)
	notes    notesSeen         // the remote's notes tip as the last pull's listing gave it, for PullNotes
	skels    *skelCache        // the look-alike index of the folders writes check (lookalike); shared by WithActor's stores
	dirOK    *dirVerified      // the last tracked-files check of .context/ that found none (checkCheckoutDir); shared too
}

// Close closes the packfiles the store's repository keeps open (gitstore.Repo.Close). The Store stays
// usable: a later read opens them again.
func (s *Store) Close() error { return s.repo.Close() }

// Open opens the context store of the repository containing dir. It does not require the context branch
// to exist (Init creates it; Pull can fetch it).
func Open(ctx context.Context, dir string, actor Actor) (*Store, error) {
	repo, err := gitstore.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	// Private and ephemeral entries live in a repository of their own, where no push of this one can reach
	// them (docs/security.md, "Private and ephemeral scopes"); a store made by an older ctx has them moved
	// there now.
	if err := repo.KeepLocal(ctx, RefPrivate, RefEphemeral); err != nil {
		_ = repo.Close()
		return nil, err
	}
	s := &Store{repo: repo, Actor: actor, skels: &skelCache{}, dirOK: &dirVerified{}}
	if err := s.loadConfig(); err != nil {
		_ = repo.Close()
		return nil, err
	}
	if s.Actor.Machine == "" {
		s.Actor.Machine = machineName()
	}
	if s.Actor.Agent == "" {
		s.Actor.Agent = "cli"
	}
	return s, nil
}

func machineName() string {
	if m := os.Getenv("CTX_MACHINE"); m != "" {
		return m
	}
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	h, _, _ = strings.Cut(h, ".")
	return strings.ToLower(h)
}

func (s *Store) configPath() string { return filepath.Join(s.repo.CtxDir(), "config.json") }

func (s *Store) loadConfig() error {
	c, err := s.readConfig()
	if err != nil {
		return err
	}
	s.cfg = c
	return nil
}

// readConfig reads <git common dir>/ctx/config.json (the defaults when it does not exist).
func (s *Store) readConfig() (Config, error) {
	c := Config{Branch: DefaultBranch}
	b, err := os.ReadFile(s.configPath())
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read ctx config: %w", err)
	}
	hint := "fix it or delete it: it holds only ctx's settings for this repository (ctx config), and the default branch is " + DefaultBranch
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("ctx config %s: %w (%s)", s.configPath(), historySourcesType(err), hint)
	}
	if c.Branch == "" {
		c.Branch = DefaultBranch
	}
	if err := validBranch(c.Branch); err != nil {
		return c, fmt.Errorf("ctx config %s: %w (%s)", s.configPath(), err, hint)
	}
	if err := CheckHistorySources(c.HistorySources); err != nil {
		return c, fmt.Errorf("ctx config %s: %w (%s)", s.configPath(), err, hint)
	}
	return c, nil
}

// SavedConfig reads the configuration as it is saved now (a long-running server sees a setting changed
// by `ctx config` since it opened the store); Config is the copy this Store was opened with.
func (s *Store) SavedConfig() (Config, error) { return s.readConfig() }

// Config is a copy of the repository's ctx configuration as this Store uses it.
func (s *Store) Config() Config { return s.cfg }

// SetConfig replaces the configuration and writes it atomically to <git common dir>/ctx/config.json. The
// branch is chosen at Init and cannot change here: a different Branch is an invalid-input error, and so is
// a Remote git must never see (CheckRemote). Nothing is written when it fails.
func (s *Store) SetConfig(c Config) error {
	if c.Branch != s.cfg.Branch {
		return invalidf("the branch is chosen at ctx init --branch")
	}
	if c.Remote != "" && c.Remote != s.cfg.Remote {
		if err := s.CheckRemote(c.Remote, RemoteFromUser); err != nil {
			return err
		}
	}
	if err := CheckHistorySources(c.HistorySources); err != nil {
		return err
	}
	old := s.cfg
	s.cfg = c
	if err := s.saveConfig(); err != nil {
		s.cfg = old
		return err
	}
	return nil
}

// SetTransferTimeout sets the timeout of this Store's fetches and pushes, at least one second, without
// saving it (the per-command --timeout); 0 goes back to the configured one.
func (s *Store) SetTransferTimeout(d time.Duration) {
	if d == 0 {
		s.timeoutOverride = 0
		return
	}
	s.timeoutOverride = max(d.Truncate(time.Second), time.Second)
}

// saveConfig writes the configuration atomically to <git common dir>/ctx/config.json.
func (s *Store) saveConfig() error {
	b, err := json.MarshalIndent(s.cfg, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.configPath(), append(b, '\n'), 0o644)
}

// BranchRef is the public scope's ref, refs/heads/<branch>.
func (s *Store) BranchRef() string { return "refs/heads/" + s.cfg.Branch }

// RefOf returns the ref of a scope.
func (s *Store) RefOf(sc Scope) string {
	switch sc {
	case Private:
		return RefPrivate
	case Ephemeral:
		return RefEphemeral
	}
	return s.BranchRef()
}

// Refs lists the refs of all scopes, in the order of Scopes.
func (s *Store) Refs() []string {
	out := make([]string, len(Scopes))
	for i, sc := range Scopes {
		out[i] = s.RefOf(sc)
	}
	return out
}

// Initialized reports whether the context branch exists.
func (s *Store) Initialized(ctx context.Context) (bool, error) {
	h, err := s.repo.Resolve(ctx, s.BranchRef())
	return !h.IsZero(), err
}

// writeJournal writes the refresh journal at path (its folder made if missing) atomically, without fsync
// (atomicfile.WriteNoSync).
func writeJournal(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	return atomicfile.WriteNoSync(path, data, 0o644)
}

// writeFileAtomic makes path's folder and replaces path with data through atomicfile.Write.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	return atomicfile.Write(path, data, mode)
}
