package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/google/uuid"
)

// SchemaVersion is the Manifest schema_version ctx writes (docs/format.md "Records").
const SchemaVersion = "0.4.0"

// Manifest is the Manifest record (docs/format.md "Records"; context://manifest), stored as manifest.json.
type Manifest struct {
	SchemaVersion string             `json:"schema_version"`
	Project       Project            `json:"project"`
	Adapters      map[string]Adapter `json:"adapters"`
	Team          Team               `json:"team"`
	CreatedAt     string             `json:"created_at"`
	UpdatedAt     string             `json:"updated_at"`
}

// Project is the manifest's project: name, a random id made at init, and the origin remote's URL.
type Project struct {
	Name    string `json:"name"`
	ID      string `json:"id"`
	RepoURL string `json:"repo_url"`
}

// Adapter is an agent adapter's settings.
type Adapter struct {
	Enabled bool `json:"enabled"`
}

// Team lists the members.
type Team struct {
	Members []Member `json:"members"`
}

// Member is a team member: name, machine, when added (docs/format.md "Records").
type Member struct {
	Name    string `json:"name"`
	Machine string `json:"machine"`
	Added   string `json:"added"`
}

// ManifestPath is the manifest's path on the branch.
const ManifestPath = "manifest.json"

// ReadManifest reads manifest.json.
func (v *View) ReadManifest(ctx context.Context) (Manifest, error) {
	var m Manifest
	b, err := v.ReadIn(ctx, Public, ManifestPath)
	if err != nil {
		return m, fmt.Errorf("read manifest: %w", err)
	}
	if m, err = parseManifest(b); err != nil {
		return m, fmt.Errorf("%s: %w (repair: ctx doctor)", ManifestPath, err)
	}
	return m, nil
}

// MarshalRecord renders a JSON record as docs/format.md says: two-space indent, final newline, no HTML
// escaping.
func MarshalRecord(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// InitOptions configure Init.
type InitOptions struct {
	Branch string // context branch name; "" = the configured one, else "ctx"
	Remote string // remote to adopt an existing context branch from; "" = origin when it exists
	// Adopt takes the files of an existing .context/ that ctx did not write into the context branch (one
	// commit of hand edits, InitResult.AdoptedFiles); without it Init refuses them (ErrForeignCheckout).
	Adopt bool
}

// InitResult says what Init did.
type InitResult struct {
	Created  bool   // a new context branch with a manifest was committed
	Adopted  string // the remote whose context branch was adopted, if any
	Existing bool   // the branch existed already: nothing changed
	// AdoptedFiles are the files of .context/ that ctx did not write, committed with InitOptions.Adopt.
	AdoptedFiles []HandEdit
	Tip          gitstore.Hash // the branch's tip
	// Orphaned is the ref (under OrphanedPrefix) that keeps OrphanedTip, the last tip of a context branch
	// deleted with git that .context/ was checked out from; "" when there was none.
	Orphaned    string
	OrphanedTip gitstore.Hash
	// Unreachable is set when the remote could not be reached to look for its context branch: the store
	// was created offline (or adopted from FromTracking), and Unreachable holds the transfer error (git's
	// words). A later pull merges the remote's branch, if it has one.
	Unreachable error
	// FromTracking names the remote-tracking ref (refs/remotes/<remote>/<branch>) adopted while the remote
	// could not be reached: the remote's branch as this repository last fetched it.
	FromTracking string
}

// Init creates the context branch with a manifest.json (docs/format.md "Records"; repo_url from the origin
// remote), the checked-out tree .context/ and its line in info/exclude. Where the remote already has a
// context branch it is adopted instead of starting a second history. Run again, it changes nothing.
// It never touches HEAD, the index or the working files.
func (s *Store) Init(ctx context.Context, opt InitOptions) (*InitResult, error) {
	if opt.Branch != "" && opt.Branch != s.cfg.Branch {
		if err := validBranch(opt.Branch); err != nil {
			return nil, err
		}
		// A store exists already under another name: init does not start a second one.
		// (A branch of the default name that is not a context store is the user's own: --branch is how to
		// choose another name then.)
		cur, err := s.repo.Resolve(ctx, s.BranchRef())
		if err != nil {
			return nil, err
		}
		isStore := false
		if !cur.IsZero() {
			if isStore, err = s.isContextTip(ctx, cur); err != nil {
				return nil, err
			}
		}
		if isStore {
			return nil, invalidf("this repository's context branch is %s already; ctx init --branch %s would start a second store (to rename it: git branch -m %s %s, then ctx init --branch %s)",
				s.BranchRef(), opt.Branch, s.cfg.Branch, opt.Branch, opt.Branch)
		}
		s.cfg.Branch = opt.Branch
	}
	if err := s.checkBranchIsContext(ctx); err != nil {
		return nil, err
	}
	if err := s.checkCheckoutDirFree(ctx); err != nil {
		return nil, err
	}
	if opt.Remote != "" {
		if err := s.CheckRemote(opt.Remote, gitstore.FromUser); err != nil {
			return nil, err
		}
		s.cfg.Remote = opt.Remote
	}
	res := &InitResult{}
	tip, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		if res.Orphaned, res.OrphanedTip, err = s.keepOrphaned(ctx); err != nil {
			return nil, err
		}
	}
	// refuseForeign refuses, before anything is written, a .context/ holding files ctx did not write.
	refuseForeign := func(pub gitstore.Hash) error {
		if opt.Adopt {
			return nil
		}
		return s.refuseForeignCheckout(ctx, "ctx init", pub)
	}
	switch {
	case !tip.IsZero():
		if err := refuseForeign(tip); err != nil {
			return nil, err
		}
		res.Existing = true
	default:
		remote := s.RemoteName(ctx)
		if remote != "" {
			rt, found, err := s.fetch(ctx, remote, gitstore.FromUser)
			var te *gitstore.TransferError
			switch {
			case errors.As(err, &te) && ctx.Err() == nil:
				// Unreachable (offline, a typo in the URL, no access): initialise offline, say so. A
				// remote-tracking ref of the branch that an earlier fetch left (git fetch, a clone's first
				// pull) is the remote's branch as last seen: adopted as online, once it passes the checks of
				// a pull, rather than a store of its own that the next sync would merge as a second identity.
				res.Unreachable, found = err, false
				if tr, terr := s.trackedOffline(ctx, remote); terr != nil {
					return nil, terr
				} else if !tr.IsZero() {
					rt, found, res.FromTracking = tr, true, s.TrackingRef(remote)
				}
			case err != nil:
				return nil, err
			}
			if found {
				if err := refuseForeign(rt); err != nil {
					return nil, err
				}
				if err := s.repo.UpdateRef(ctx, s.BranchRef(), gitstore.ZeroHash, rt, "ctx init: adopt "+remote); err != nil {
					return nil, err
				}
				res.Adopted = remote
				break
			}
		}
		if err := refuseForeign(gitstore.ZeroHash); err != nil {
			return nil, err
		}
		if err := s.createBranch(ctx); err != nil {
			return nil, err
		}
		res.Created = true
	}
	if res.Tip, err = s.repo.Resolve(ctx, s.BranchRef()); err != nil {
		return nil, err
	}
	if s.cfg.Branch != DefaultBranch || fileMissing(s.configPath()) {
		if err := s.saveConfig(); err != nil {
			return nil, err
		}
	}
	if err := s.ensureExcluded(); err != nil {
		return nil, err
	}
	if _, err := s.Refresh(ctx); err != nil {
		// The branch exists now: init succeeded, and the next command checks .context/ out.
		warn(ctx, fmt.Sprintf("the context branch is ready, but checking out %s failed: %v", CheckoutDir, err))
	} else if opt.Adopt {
		// The files ctx did not write are hand edits now (the refresh kept them): one commit records them,
		// with the checks of ctx commit (a file it refuses fails init with its reason; the branch stays).
		if _, res.AdoptedFiles, err = s.CommitHandEdits(ctx, "ctx init --adopt: files of the existing "+CheckoutDir+"/"); err != nil {
			return res, fmt.Errorf("the context branch is ready, but committing the files of the existing %s/ failed (fix them, then ctx commit): %w", CheckoutDir, err)
		}
	}
	return res, nil
}

// trackedOffline returns the tip of the remote-tracking ref of the context branch, checked as a pull checks
// a fetched tip (CheckIncoming), for Init when remote cannot be reached; ZeroHash when there is none or it
// names no commit of this repository.
func (s *Store) trackedOffline(ctx context.Context, remote string) (gitstore.Hash, error) {
	tr, err := s.repo.Resolve(ctx, s.TrackingRef(remote))
	if err != nil || tr.IsZero() {
		return gitstore.ZeroHash, err
	}
	if _, err := s.repo.Commit(ctx, tr); err != nil {
		return gitstore.ZeroHash, nil
	}
	if err := s.CheckIncoming(ctx, s.TrackingRef(remote), tr, gitstore.ZeroHash, nil); err != nil {
		return gitstore.ZeroHash, err
	}
	return tr, nil
}

// validBranch checks a context branch name as git check-ref-format(1) does for refs/heads/<name>.
func validBranch(name string) error {
	if err := gitstore.ValidBranchName(name); err != nil {
		return invalidf("invalid branch name %q: %s", name, strings.TrimPrefix(err.Error(), fmt.Sprintf("branch %q: ", name)))
	}
	return nil
}

// checkBranchIsContext refuses a context branch that is the branch checked out in this worktree, or an
// existing branch that is not a context store (no manifest.json at its root): ctx would commit its entries
// onto the user's code (ctx init --branch main).
func (s *Store) checkBranchIsContext(ctx context.Context) error {
	if s.repo.CurrentBranch() == s.cfg.Branch {
		return invalidf("branch %s is checked out in this worktree: the context branch must be a branch of its own (the default is %s)", s.cfg.Branch, DefaultBranch)
	}
	if err := s.checkBranchNotCheckedOut(); err != nil {
		return err
	}
	tip, err := s.repo.Resolve(ctx, s.BranchRef())
	if err != nil || tip.IsZero() {
		return err
	}
	if ok, err := s.isContextTip(ctx, tip); err != nil {
		return err
	} else if !ok {
		return invalidf("branch %s exists and is not a context store (it has no %s): choose another name with ctx init --branch NAME", s.cfg.Branch, ManifestPath)
	}
	return nil
}

// isContextTip says whether the commit tip holds a manifest.json at its root.
func (s *Store) isContextTip(ctx context.Context, tip gitstore.Hash) (bool, error) {
	tree, err := s.repo.TreeOf(ctx, tip)
	if err != nil {
		return false, err
	}
	return s.hasManifest(ctx, tree)
}

// hasManifest says whether tree holds a manifest.json at its root.
func (s *Store) hasManifest(ctx context.Context, tree gitstore.Hash) (bool, error) {
	h, err := s.repo.PathHash(ctx, tree, ManifestPath)
	return err == nil && !h.IsZero(), err
}

// ErrNotContextBranch is matched (errors.Is) by the error of a write or a doctor run on a context branch
// name that holds a branch of the user's (no manifest.json at its root): ctx writes nothing to it. The
// error also matches ErrNotInitialized (exit 4: there is no context store under that name).
var ErrNotContextBranch = errors.New("not a context store")

// notContextError is the error of ErrNotContextBranch, naming the branch.
type notContextError struct{ branch string }

func (e *notContextError) Error() string {
	return fmt.Sprintf("branch %s is not a context store (it has no %s; it is a branch of yours): ctx writes nothing to it; make the store under another name with ctx init --branch NAME "+
		"(if it is your team's store and its %s was deleted, ctx doctor --fix puts it back)",
		e.branch, ManifestPath, ManifestPath)
}

func (e *notContextError) Is(target error) bool {
	return target == ErrNotContextBranch || target == ErrNotInitialized
}

// checkContextTree fails with the ErrNotContextBranch error when the public tip's tree (zero: no branch
// yet, fine) has no manifest.json.
func (s *Store) checkContextTree(ctx context.Context, tree gitstore.Hash) error {
	if tree.IsZero() {
		return nil
	}
	if ok, err := s.hasManifest(ctx, tree); err != nil {
		return err
	} else if !ok {
		return s.notContextBranch()
	}
	return nil
}

func (s *Store) notContextBranch() error { return &notContextError{branch: s.cfg.Branch} }

// checkContextTip is checkContextTree of the context branch's tip; it returns the tip and its tree (both
// zero when there is no branch, with a nil error), for the caller to read the tree of that tip once.
func (s *Store) checkContextTip(ctx context.Context) (tip, tree gitstore.Hash, err error) {
	if tip, err = s.repo.Resolve(ctx, s.BranchRef()); err != nil || tip.IsZero() {
		return tip, tree, err
	}
	if tree, err = s.repo.TreeOf(ctx, tip); err != nil {
		return tip, tree, err
	}
	return tip, tree, s.checkContextTree(ctx, tree)
}

// checkCheckoutDirFree refuses to check the store out into a .context/ folder whose files git tracks in
// the user's branch: they would mix with the store's files and be committed to the context branch.
func (s *Store) checkCheckoutDirFree(ctx context.Context) error {
	if s.repo.Bare() || !gitstore.HasGit() {
		return nil
	}
	tracked, err := s.repo.TrackedFiles(ctx, CheckoutDir)
	if err == nil && len(tracked) > 0 {
		return invalidf("this repository tracks files in %s/ (%s...): ctx keeps its checked-out tree there; move them first",
			CheckoutDir, tracked[0])
	}
	return nil
}

func fileMissing(p string) bool {
	_, err := os.Stat(p)
	return errors.Is(err, fs.ErrNotExist)
}

func (s *Store) createBranch(ctx context.Context) error {
	name := ""
	url := ""
	if remotes, err := s.repo.Remotes(ctx); err == nil {
		for _, r := range remotes {
			if r.Name == "origin" {
				url = r.URL
			}
		}
	}
	if url != "" {
		name = strings.TrimSuffix(filepath.Base(strings.TrimRight(url, "/")), ".git")
	}
	if name == "" || name == "." {
		dir := s.repo.WorkTree()
		if dir == "" {
			dir = strings.TrimSuffix(s.repo.CommonDir(), string(filepath.Separator)+".git")
		}
		name = strings.TrimSuffix(filepath.Base(dir), ".git")
	}
	t := now()
	m := Manifest{SchemaVersion: SchemaVersion, Project: Project{Name: name, ID: uuid.NewString(), RepoURL: portableURL(url)},
		Adapters: map[string]Adapter{}, Team: Team{Members: []Member{}}, CreatedAt: t, UpdatedAt: t}
	// A new store starts in the date-sharded layout (docs/format.md "Layout for growth").
	b, err := marshalKeeping([]byte(fmt.Sprintf(`{"%s": %d}`, LayoutField, LayoutSharded)), m)
	if err != nil {
		return err
	}
	msg := s.Message(Op{Name: "init", Summary: "initialise context store for " + name})
	_, err = s.repo.Transact(ctx, []string{s.BranchRef()}, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		if !tips[s.BranchRef()].Commit.IsZero() {
			return nil, nil // another process initialised it meanwhile
		}
		return map[string]*gitstore.Write{s.BranchRef(): {Changes: []gitstore.Change{{Path: ManifestPath, Data: b}}, Message: msg}}, nil
	})
	return err
}

// ensureExcluded adds "/.context/" to <common dir>/info/exclude once (gitignore(5)), so the checked-out
// tree never shows in git status.
func (s *Store) ensureExcluded() error {
	if s.repo.Bare() {
		return nil
	}
	p := filepath.Join(s.repo.CommonDir(), "info", "exclude")
	b, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", p, err)
	}
	line := "/" + CheckoutDir + "/"
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == line || strings.TrimSpace(l) == "/"+CheckoutDir || strings.TrimSpace(l) == CheckoutDir+"/" {
			return nil
		}
	}
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		b = append(b, '\n')
	}
	b = append(b, []byte("# ctx: the checked-out context tree\n"+line+"\n")...)
	if err := writeFileAtomic(p, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// RedactURL drops the user and password from a URL (https://user:token@host/...) before ctx prints it
// (the pre-push hook's messages, ctx remote); an ssh URL keeps its login (ssh://git@host/x: part of the
// address, no secret) and loses only a password (dropSecret). Anything that is not such a URL comes back
// as it is.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil || u.Host == "" {
		return s
	}
	if _, secret := u.User.Password(); !secret && sshScheme(u.Scheme) {
		return s
	}
	dropSecret(u)
	return u.String()
}

// dropSecret takes the secret out of u's user information, the one rule of what ctx prints (RedactURL)
// and records (portableURL) of a remote's URL: an ssh URL keeps its login, part of the address, and loses
// a password; any other URL loses both (a token is often the user name: https://TOKEN@host/x).
func dropSecret(u *url.URL) {
	if sshScheme(u.Scheme) {
		u.User = url.User(u.User.Username())
	} else {
		u.User = nil
	}
}

// sshScheme reports whether a URL's scheme is ssh's (ssh, git+ssh, ssh+git; any case).
func sshScheme(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "ssh", "git+ssh", "ssh+git":
		return true
	}
	return false
}

// portableURL is the remote URL as manifest.json may record it, on a branch that is pushed: nothing
// machine-local and no credentials. A local path or file:// URL (a folder of this machine) gives "", and
// the user information of a URL ("https://user:token@host/x") is dropped; "git@host:team/repo.git" and
// "https://github.com/team/repo" are kept as they are.
func portableURL(raw string) string {
	if raw == "" {
		return ""
	}
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		if strings.EqualFold(u.Scheme, "file") {
			return ""
		}
		if u.User != nil {
			dropSecret(u)
		}
		return u.String()
	}
	if i := strings.Index(raw, ":"); i > 1 && !strings.ContainsAny(raw[:i], `/\`) {
		return raw // scp-like: [user@]host:path
	}
	return "" // a path of this machine (absolute, relative, C:\...)
}
