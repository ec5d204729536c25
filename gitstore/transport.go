package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// ErrNonFastForward is returned by Push when the remote ref has moved past what we have (git's
// "[rejected] (fetch first)" or "(non-fast-forward)"): the caller fetches, merges and retries.
var ErrNonFastForward = errors.New("remote ref moved: not a fast-forward")

// TransferError is a fetch or push that git refused or could not do; Reason holds the remote's or git's
// own words (the last lines of its stderr, or the porcelain status line).
type TransferError struct {
	Op     string // "fetch" or "push"
	Remote string
	Reason string
	Err    error
}

func (e *TransferError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Op, e.Remote, e.Reason)
}

func (e *TransferError) Unwrap() error { return e.Err }

// sshConfigured reports whether core.sshCommand is set in the repository's config or the global one.
func (r *Repo) sshConfigured() bool {
	if r.ConfigValue("core", "", "sshCommand") != "" {
		return true
	}
	cfg, err := config.LoadConfig(config.GlobalScope)
	return err == nil && cfg.Raw != nil && cfg.Raw.Section("core").Option("sshCommand") != ""
}

// HasGit reports whether a git binary is on PATH; without one, transfers use go-git's transport.
func HasGit() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

// TransferOptions tune Fetch and Push. Progress, when set, receives git's progress output (a terminal).
// Origin says who named the remote (CheckRemote): an agent may only name a configured remote.
// TrackingRef, for Push, is the local remote-tracking ref git updates after a successful push
// (refs/remotes/<remote>/<branch>): ctx recovers its own stale lock on it first and records the git child
// as its possible owner (docs/locks.md).
type TransferOptions struct {
	Progress    *os.File
	Origin      RemoteOrigin
	TrackingRef string
}

// Fetch fetches refspecs (e.g. "+refs/heads/ctx:refs/remotes/origin/ctx") from remote (a remote name or a
// URL) with the system git, non-interactive, bounded by ctx's deadline; with no git binary it uses go-git's
// transport. A remote that lacks the source ref is not an error when the refspec's source is optional
// (prefix "?" — ctx strips it and treats "couldn't find remote ref" as success with nothing fetched);
// found reports whether anything matched.
//
// remote must pass CheckRemote (a *RemoteError otherwise, before git runs) and refspec must be a refspec
// of full ref names; both go after "--" on git's command line, so neither is ever read as an option.
func (r *Repo) Fetch(ctx context.Context, remote string, refspec string, opt TransferOptions) (found bool, err error) {
	missing, err := r.FetchRefs(ctx, remote, []string{refspec}, opt)
	return err == nil && len(missing) == 0, err
}

// FetchRefs fetches several refspecs in one transfer (one connection, one pack), as Fetch does one. A
// refspec may also be a pattern whose last component, on both sides, is "*" ("+refs/ctx/machines/*:
// refs/ctx/incoming/x/m/*"): it matches any number of the remote's refs, none included, and git applies its
// own ref-name rules to each name it receives. A "?" prefix marks a non-pattern refspec whose source is
// optional: when the remote lacks it, the fetch is run again without it, and its source is returned in
// missing (a remote without any of them fetches nothing). Errors as Fetch.
func (r *Repo) FetchRefs(ctx context.Context, remote string, refspecs []string, opt TransferOptions) (missing []string, err error) {
	if err := r.CheckRemote(remote, opt.Origin); err != nil {
		return nil, err
	}
	optional := map[string]bool{} // by source
	var specs, dsts []string
	for _, spec := range refspecs {
		isOptional, spec := strings.HasPrefix(spec, "?"), strings.TrimPrefix(spec, "?")
		if err := checkRefspec(spec, true); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", remote, err)
		}
		src, dst, _ := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if isOptional && !strings.HasSuffix(src, "/*") {
			optional[src] = true
		}
		specs = append(specs, spec)
		if !strings.HasSuffix(dst, "/*") {
			dsts = append(dsts, dst)
		}
	}
	if err := r.RecoverLocks(ctx, dsts); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", remote, err)
	}
	// What the destinations held before the fetch: a tip a ctx fetch completed before bounds the walk of
	// the objects a partial clone lacks (completeFetched).
	before := r.fetchedTips(specs)
	for len(specs) > 0 {
		var src string
		if !HasGit() {
			src, err = r.fetchGoGit(ctx, remote, specs)
		} else {
			src, err = r.fetchGit(ctx, remote, specs, dsts, opt)
		}
		if err == nil {
			return missing, r.completeFetched(ctx, remote, specs, before, opt)
		}
		if src == "" || !optional[src] {
			return missing, err
		}
		// The remote lacks an optional source: fetch the others without it.
		missing = append(missing, src)
		kept := specs[:0:0]
		for _, spec := range specs {
			if s, _, _ := strings.Cut(strings.TrimPrefix(spec, "+"), ":"); s != src {
				kept = append(kept, spec)
			}
		}
		specs = kept
	}
	return missing, nil
}

// completeFetched makes the objects of the refs the refspecs specs fetched into complete, in a partial
// clone (CompleteObjects): the fetch asked for whole objects, but a tip the repository already had
// (filtered, from the clone or a plain git fetch) is not sent again. before are the tips the destinations
// held before the fetch (fetchedTips): those a ctx fetch completed (the record of completeTips) bound the
// walk, so that a fetch lists the objects of what it brought, not of the whole history again.
func (r *Repo) completeFetched(ctx context.Context, remote string, specs []string, before []Hash, opt TransferOptions) error {
	if !HasGit() || !r.PartialClone() {
		return nil
	}
	tips := r.fetchedTips(specs)
	if _, err := r.completeObjects(ctx, remote, tips, before, opt); err != nil {
		return fmt.Errorf("fetch %s: %w", remote, err)
	}
	return nil
}

// fetchedTips are the commits the destinations of the refspecs specs name (every ref a pattern's prefix
// holds), zero ones left out.
func (r *Repo) fetchedTips(specs []string) []Hash {
	var tips []Hash
	for _, spec := range specs {
		_, dst, _ := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if prefix, ok := strings.CutSuffix(dst, "*"); ok {
			refs, err := r.RefsUnder(prefix, 0)
			if err != nil {
				continue // the completion below reads them again, and fails there
			}
			for _, h := range refs {
				tips = append(tips, h)
			}
			continue
		}
		if h, err := readRef(r.refDir(dst), dst); err == nil && !h.IsZero() {
			tips = append(tips, h)
		}
	}
	return tips
}

// fetchGit is one git fetch of FetchRefs. When git says the remote has no ref named by a refspec's
// source ("couldn't find remote ref <src>"), src names it.
func (r *Repo) fetchGit(ctx context.Context, remote string, specs, lockRefs []string, opt TransferOptions) (src string, err error) {
	// fsck every received object with git's own rules (a tree entry named "..", ".git" or one of its
	// aliases, a "/" in a name...): a hostile remote's objects are refused before any ref moves
	// (docs/security.md).
	// --refmap= : only the refspec given moves a ref (no opportunistic update of the remote-tracking ref:
	// a caller that fetches into a quarantine ref moves that one itself, after its checks).
	args := append(fsckArgs(), "--git-dir="+r.commonDir, "fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--refmap=")
	if opt.Progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	if _, err := os.Stat(filepath.Join(r.commonDir, "shallow")); err == nil {
		// A shallow clone (git clone --depth): fetch the whole history of the refspec's source, so that a
		// merge finds its merge base. --depth counts from the fetched tip only, so the user's shallow
		// branches stay shallow (--unshallow would deepen them all); objects the repository has are not
		// sent again.
		args = append(args, "--depth=2147483646")
	}
	if r.PartialClone() {
		// Whole objects: ctx reads them in process, which fetches nothing on demand (partial.go).
		args = append(args, "--no-filter")
	}
	args = append(args, "--", remote)
	args = append(args, specs...)
	_, stderr, err := r.runGit(ctx, opt, lockRefs, args...)
	if err != nil {
		if _, rest, ok := strings.Cut(stderr, "couldn't find remote ref "); ok {
			src, _, _ = strings.Cut(rest, "\n")
			src = strings.TrimSpace(src)
		}
		if isFsckFailure(stderr) {
			err = errors.Join(ErrFsck, err)
		}
		return src, &TransferError{Op: "fetch", Remote: remote, Reason: lastLines(stderr, err), Err: err}
	}
	r.Reindex() // git may have stored what it received as a new pack
	return "", nil
}

// Push pushes refspec (never forced: a leading "+" is refused) to remote with the system git (go-git's
// transport without one). It returns ErrNonFastForward (wrapped in a TransferError) when the remote moved,
// and a TransferError with the remote's reason for any other refusal or failure. remote and refspec are
// checked as Fetch checks them and go after "--".
func (r *Repo) Push(ctx context.Context, remote string, refspec string, opt TransferOptions) error {
	st, err := r.PushRefs(ctx, remote, []string{refspec}, opt)
	if err != nil {
		return err
	}
	return st[0].Err
}

// PushStatus is what the remote did with one refspec of PushRefs.
type PushStatus struct {
	Ref string // the remote ref: the refspec's destination
	// Err is nil when the remote ref now holds the pushed commit (updated, created, or already there);
	// else a *TransferError with the remote's reason, wrapping ErrNonFastForward when the remote ref had
	// moved past what was pushed (another pusher won).
	Err error
}

// PushRefs pushes several refspecs in one transfer, none forced (a leading "+" is refused), and returns
// one PushStatus per refspec, in their order. The push is not atomic (git push without --atomic): the
// remote takes or refuses each ref on its own, and a refused ref is a PushStatus error, not an error of
// PushRefs. The error is for a push that did not happen at all: an unreachable remote, a refused remote or
// refspec (checked as Push checks them). opt.TrackingRef as in Push.
func (r *Repo) PushRefs(ctx context.Context, remote string, refspecs []string, opt TransferOptions) ([]PushStatus, error) {
	out := make([]PushStatus, len(refspecs))
	for i, spec := range refspecs {
		if strings.HasPrefix(spec, "+") {
			return nil, fmt.Errorf("push %s: refusing forced refspec %q", remote, spec)
		}
		_, dst, _ := strings.Cut(spec, ":")
		out[i].Ref = dst
	}
	if err := r.CheckRemote(remote, opt.Origin); err != nil {
		return nil, err
	}
	for _, spec := range refspecs {
		if err := checkRefspec(spec, false); err != nil {
			return nil, fmt.Errorf("push %s: %w", remote, err)
		}
	}
	var lockRefs []string
	if opt.TrackingRef != "" {
		lockRefs = append(lockRefs, opt.TrackingRef)
		if err := r.RecoverLocks(ctx, lockRefs); err != nil {
			return nil, fmt.Errorf("push %s: %w", remote, err)
		}
	}
	if !HasGit() {
		for i, spec := range refspecs {
			out[i].Err = r.pushGoGit(ctx, remote, spec)
			var te *TransferError
			if out[i].Err != nil && !errors.Is(out[i].Err, ErrNonFastForward) && !(errors.As(out[i].Err, &te) && strings.Contains(te.Reason, "rejected")) {
				return nil, out[i].Err // not a refusal of the ref: the remote could not be reached
			}
		}
		return out, nil
	}
	args := []string{"--git-dir=" + r.commonDir, "push", "--porcelain", "--no-verify", "--no-recurse-submodules"}
	if opt.Progress != nil {
		args = append(args, "--progress")
	}
	args = append(args, "--", remote)
	args = append(args, refspecs...)
	stdout, stderr, err := r.runGit(ctx, opt, lockRefs, args...)
	// git push --porcelain prints one line per ref: "<flag>\t<src>:<dst>\t<summary>", flag "!" for a
	// refused ref (git-push(1) "OUTPUT").
	seen := make([]bool, len(refspecs))
	for _, line := range strings.Split(stdout, "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) < 3 || len(parts[0]) != 1 {
			continue
		}
		_, dst, _ := strings.Cut(parts[1], ":")
		for i := range out {
			if out[i].Ref != dst || seen[i] {
				continue
			}
			seen[i] = true
			if parts[0] != "!" {
				break
			}
			reason := strings.TrimSpace(parts[2])
			// "failed to update ref" / "failed to lock": the remote's ref moved between its advertisement and
			// its update (another pusher won the race; stderr says "cannot lock ref ... but expected ..."):
			// fetch, merge and retry like a non-fast-forward.
			if strings.Contains(reason, "fetch first") || strings.Contains(reason, "non-fast-forward") ||
				strings.Contains(reason, "failed to update ref") || strings.Contains(reason, "failed to lock") {
				out[i].Err = &TransferError{Op: "push", Remote: remote, Reason: reason + remoteLines(stderr), Err: ErrNonFastForward}
			} else {
				out[i].Err = &TransferError{Op: "push", Remote: remote, Reason: reason + remoteLines(stderr), Err: errors.New("rejected")}
			}
			break
		}
	}
	if err != nil {
		for i := range out {
			if !seen[i] {
				return nil, &TransferError{Op: "push", Remote: remote, Reason: lastLines(stderr, err), Err: err}
			}
		}
	}
	return out, nil
}

// checkRefspec accepts "[+]<src>:<dst>" where both are full ref names (refs/...) that git's
// check-ref-format accepts: the only refspecs ctx builds. With patterns, both sides may instead end in the
// component "*" (refs/ctx/machines/*), and nowhere else. Anything else is a programming error or a value
// from outside that must not reach git.
func checkRefspec(spec string, patterns bool) error {
	src, dst, ok := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
	if !ok {
		return fmt.Errorf("refspec %q: want <src>:<dst>", spec)
	}
	srcGlob, dstGlob := strings.HasSuffix(src, "/*"), strings.HasSuffix(dst, "/*")
	if srcGlob != dstGlob || srcGlob && !patterns {
		return fmt.Errorf("refspec %q: a pattern needs \"/*\" at the end of both sides", spec)
	}
	for _, ref := range []string{src, dst} {
		if srcGlob {
			ref = strings.TrimSuffix(ref, "*") + "x"
		}
		if err := ValidRefName(ref); err != nil {
			return fmt.Errorf("refspec %q: %w", spec, err)
		}
	}
	return nil
}

// runGit runs a transfer with the system git. lockRefs are the local refs git may lock: an owner record
// names them for as long as git runs (startOwner), so that a lock git leaves when killed is known as ctx's.
func (r *Repo) runGit(ctx context.Context, opt TransferOptions, lockRefs []string, args ...string) (string, string, error) {
	c := gitCmd{dir: r.commonDir, args: args, userSSH: r.sshConfigured(), group: true}
	if opt.Progress != nil { // not a nil *os.File in the interface
		c.progress = opt.Progress
	}
	if r.workTree != "" {
		c.dir = r.workTree
	}
	if len(lockRefs) > 0 {
		if f, done := r.startOwner(subcommand(args), lockRefs); f != nil {
			c.owner = f
			defer done()
		}
	}
	return c.run(ctx)
}

// subcommand returns git's subcommand in args: the first argument after the global options.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// remoteLines returns the "remote: ..." lines of git's stderr (a hook's message), prefixed by "; ".
func remoteLines(stderr string) string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "remote: ") && strings.TrimSpace(strings.TrimPrefix(l, "remote:")) != "" {
			out = append(out, strings.TrimSpace(strings.TrimPrefix(l, "remote:")))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; remote says: " + strings.Join(out, " / ")
}

// lastLines is git's reason for a failure: the lines its transport printed before its first "error:" or
// "fatal:" line (the ssh client's own words, "ssh: connect to host ... Connection refused", "Permission
// denied (publickey)": at most the last 4, never git's "hint:" lines), its "error:" and "fatal:" lines in
// full (git prints hints after them, which must not push them out), then the text after the last of them
// (git's advice, such as "Please make sure you have the correct access rights / and the repository
// exists.", one sentence wrapped on lines: joined with spaces, at most 4 lines); without such lines its
// last 4 non-blank lines. Control characters (a hostile server's escape sequences) become "?"; of a line
// that progress output rewrote with carriage returns, the last version is kept.
func lastLines(stderr string, err error) string {
	var lines, errs, before []string
	seen := map[string]bool{}
	lastErr := -1
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = strings.TrimSpace(l[i+1:])
		}
		l = sanitizeLine(l)
		if l == "" {
			continue
		}
		lines = append(lines, l)
		if strings.HasPrefix(l, "error:") || strings.HasPrefix(l, "fatal:") {
			lastErr = len(lines) - 1
			if !seen[l] && len(errs) < 6 {
				seen[l] = true
				errs = append(errs, l)
			}
		} else if len(errs) == 0 && !strings.HasPrefix(l, "hint:") && !strings.HasPrefix(l, "remote:") && !isProgress(l) {
			before = append(before, l)
		}
	}
	if len(errs) > 0 {
		if len(before) > 4 {
			before = before[len(before)-4:]
		}
		errs = append(before, errs...)
		if tail := lines[lastErr+1:]; len(tail) > 0 {
			if len(tail) > 4 {
				tail = tail[len(tail)-4:]
			}
			errs = append(errs, strings.Join(tail, " "))
		}
		lines = errs
	} else if len(lines) > 4 {
		lines = lines[len(lines)-4:]
	}
	s := strings.Join(lines, " / ")
	if s == "" && err != nil {
		return err.Error()
	}
	return s
}

// isProgress reports whether l is a line of git's progress output ("Receiving objects: 100% (5/5), done.").
func isProgress(l string) bool {
	return strings.Contains(l, " objects: ") || strings.HasPrefix(l, "Resolving deltas:")
}

// sanitizeLine replaces the control characters of one line of git's output (tabs included) and invalid
// UTF-8 with "?", so that a remote's text cannot move the terminal's cursor or hide itself.
func sanitizeLine(l string) string {
	return strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == utf8.RuneError {
			return '?'
		}
		return c
	}, l)
}

// remoteForGoGit returns a go-git remote for a configured remote name or a URL. It reads the remotes from
// the storage's config directly rather than through git.Open, which refuses repositories using
// extensions.worktreeConfig (docs/architecture.md "Commits").
func (r *Repo) remoteForGoGit(remote string) (*git.Remote, error) {
	cfg, err := r.st.Config()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if rc, ok := cfg.Remotes[remote]; ok {
		return git.NewRemote(r.st, rc), nil
	}
	return git.NewRemote(r.st, &config.RemoteConfig{Name: "anonymous", URLs: []string{remote}}), nil
}

var inProcessFileTransport sync.Once

// useInProcessFileTransport makes go-git serve file:// and path remotes in process: its default file
// transport runs the git-upload-pack and git-receive-pack binaries, which do not exist when git does not.
func useInProcessFileTransport() {
	inProcessFileTransport.Do(func() {
		if _, err := exec.LookPath("git-upload-pack"); err == nil {
			return
		}
		client.InstallProtocol("file", localTransport{server.NewServer(localLoader{})})
	})
}

// localLoader opens a local repository for go-git's in-process server: a bare repository or a work tree's
// .git (go-git's own loader opens a work tree's root as if it were the git dir).
type localLoader struct{}

func (localLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	dir := ep.Path
	if _, err := os.Stat(filepath.Join(dir, "config")); err != nil {
		dir = filepath.Join(dir, ".git")
		if _, err := os.Stat(filepath.Join(dir, "config")); err != nil {
			return nil, transport.ErrRepositoryNotFound
		}
	}
	return filesystem.NewStorage(osfs.New(dir), newObjectCache()), nil
}

// localTransport is go-git's in-process server with one fix: upload-pack fails with "object not found"
// when the client announces a "have" the server lacks (our local commits not pushed yet), so such haves are
// dropped before it sees them, as C git's upload-pack ignores them.
type localTransport struct{ transport.Transport }

func (t localTransport) NewUploadPackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.UploadPackSession, error) {
	s, err := t.Transport.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	st, err := localLoader{}.Load(ep)
	if err != nil {
		return nil, err
	}
	return &knownHaves{UploadPackSession: s, st: st}, nil
}

type knownHaves struct {
	transport.UploadPackSession
	st storer.Storer
}

func (k *knownHaves) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	haves := req.Haves[:0:0]
	for _, h := range req.Haves {
		if k.st.HasEncodedObject(h) == nil {
			haves = append(haves, h)
		}
	}
	req.Haves = haves
	return k.UploadPackSession.UploadPack(ctx, req)
}

// fetchGoGit is one fetch of FetchRefs with go-git's transport; src as in fetchGit.
func (r *Repo) fetchGoGit(ctx context.Context, remote string, specs []string) (src string, err error) {
	useInProcessFileTransport()
	rm, err := r.remoteForGoGit(remote)
	if err != nil {
		return "", err
	}
	rs := make([]config.RefSpec, len(specs))
	for i, spec := range specs {
		rs[i] = config.RefSpec(spec)
	}
	err = rm.FetchContext(ctx, &git.FetchOptions{RemoteName: rm.Config().Name, RefSpecs: rs, Tags: git.NoTags})
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
		r.Reindex()
		return "", nil
	case errors.Is(err, git.NoMatchingRefSpecError{}) || strings.Contains(err.Error(), "couldn't find remote ref"):
		// go-git names the refspec: couldn't find remote ref "<src>:<dst>" (or the source alone).
		_, rest, _ := strings.Cut(err.Error(), "couldn't find remote ref ")
		rest = strings.Trim(strings.TrimPrefix(strings.TrimSpace(rest), "+"), "\"")
		src, _, _ = strings.Cut(rest, ":")
		return src, &TransferError{Op: "fetch", Remote: remote, Reason: err.Error(), Err: err}
	}
	return "", &TransferError{Op: "fetch", Remote: remote, Reason: err.Error(), Err: err}
}

func (r *Repo) pushGoGit(ctx context.Context, remote, refspec string) error {
	useInProcessFileTransport()
	rm, err := r.remoteForGoGit(remote)
	if err != nil {
		return err
	}
	err = rm.PushContext(ctx, &git.PushOptions{RemoteName: rm.Config().Name, RefSpecs: []config.RefSpec{config.RefSpec(refspec)}})
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
		return nil
	case errors.Is(err, git.ErrNonFastForwardUpdate) || strings.Contains(err.Error(), "non-fast-forward"):
		return &TransferError{Op: "push", Remote: remote, Reason: err.Error(), Err: ErrNonFastForward}
	}
	return &TransferError{Op: "push", Remote: remote, Reason: err.Error(), Err: err}
}

// DeleteRemoteRef deletes ref (a full ref name) on remote, only while it still names expect: git push
// --force-with-lease=<ref>:<expect> <remote> :<ref>, so that a ref moved since the caller looked at it is
// kept (a *TransferError wrapping ErrNonFastForward then). remote is checked as Push checks it; without a
// git binary it is go-git's push with RequireRemoteRefs.
func (r *Repo) DeleteRemoteRef(ctx context.Context, remote, ref string, expect Hash, opt TransferOptions) error {
	if err := r.CheckRemote(remote, opt.Origin); err != nil {
		return err
	}
	if err := ValidRefName(ref); err != nil {
		return fmt.Errorf("delete %s: %w", remote, err)
	}
	if expect.IsZero() {
		return fmt.Errorf("delete %s %s: no expected value", remote, ref)
	}
	if !HasGit() {
		useInProcessFileTransport()
		rm, err := r.remoteForGoGit(remote)
		if err != nil {
			return err
		}
		err = rm.PushContext(ctx, &git.PushOptions{RemoteName: rm.Config().Name, RefSpecs: []config.RefSpec{config.RefSpec(":" + ref)},
			RequireRemoteRefs: []config.RefSpec{config.RefSpec(expect.String() + ":" + ref)}})
		if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
			return &TransferError{Op: "push", Remote: remote, Reason: err.Error(), Err: ErrNonFastForward}
		}
		return nil
	}
	args := []string{"--git-dir=" + r.commonDir, "push", "--porcelain", "--no-verify", "--force-with-lease=" + ref + ":" + expect.String(), "--", remote, ":" + ref}
	stdout, stderr, err := r.runGit(ctx, opt, nil, args...)
	for _, line := range strings.Split(stdout, "\n") {
		if parts := strings.SplitN(line, "\t", 3); len(parts) == 3 && parts[0] == "!" {
			reason := strings.TrimSpace(parts[2])
			cause := errors.New("rejected")
			if strings.Contains(reason, "stale info") || strings.Contains(reason, "fetch first") {
				cause = ErrNonFastForward
			}
			return &TransferError{Op: "push", Remote: remote, Reason: ref + ": " + reason + remoteLines(stderr), Err: cause}
		}
	}
	if err != nil {
		return &TransferError{Op: "push", Remote: remote, Reason: lastLines(stderr, err), Err: err}
	}
	return nil
}

// LsRemote returns the refs of remote whose full names are among names or, for a name ending in "/*",
// start with the part before the "*" (git ls-remote --refs <remote> <patterns>): one connection, no
// objects transferred. Names are full ref names or such patterns; remote is checked as Fetch checks it.
// A ref the remote advertises twice keeps its first value. Errors: a *TransferError with git's reason.
func (r *Repo) LsRemote(ctx context.Context, remote string, names []string, opt TransferOptions) (map[string]Hash, error) {
	if err := r.CheckRemote(remote, opt.Origin); err != nil {
		return nil, err
	}
	var exact, prefixes []string
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "/*"); ok {
			if err := ValidRefName(p + "/x"); err != nil {
				return nil, fmt.Errorf("ls-remote %s: %w", remote, err)
			}
			prefixes = append(prefixes, p+"/")
			continue
		}
		if err := ValidRefName(n); err != nil {
			return nil, fmt.Errorf("ls-remote %s: %w", remote, err)
		}
		exact = append(exact, n)
	}
	out := map[string]Hash{}
	add := func(name string, h Hash) {
		if _, dup := out[name]; dup {
			return
		}
		keep := false
		for _, e := range exact {
			keep = keep || name == e
		}
		for _, p := range prefixes {
			keep = keep || strings.HasPrefix(name, p)
		}
		if keep {
			out[name] = h
		}
	}
	if !HasGit() {
		useInProcessFileTransport()
		rm, err := r.remoteForGoGit(remote)
		if err != nil {
			return nil, err
		}
		refs, err := rm.ListContext(ctx, &git.ListOptions{})
		if err != nil {
			return nil, &TransferError{Op: "ls-remote", Remote: remote, Reason: err.Error(), Err: err}
		}
		for _, ref := range refs {
			if ref.Type() == plumbing.HashReference {
				add(ref.Name().String(), Hash(ref.Hash()))
			}
		}
		return out, nil
	}
	args := []string{"--git-dir=" + r.commonDir, "ls-remote", "--refs", "--", remote}
	args = append(args, names...)
	stdout, stderr, err := r.runGit(ctx, opt, nil, args...)
	if err != nil {
		return nil, &TransferError{Op: "ls-remote", Remote: remote, Reason: lastLines(stderr, err), Err: err}
	}
	for _, line := range strings.Split(stdout, "\n") {
		hash, name, ok := strings.Cut(line, "\t")
		if ok && plumbing.IsHash(hash) {
			add(name, NewHash(hash))
		}
	}
	return out, nil
}
