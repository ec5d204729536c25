// Package hooks installs, removes, reports and runs ctx's git hooks in a
// user's repository (docs/hooks.md).
//
// ctx keeps a context branch (refs/heads/ctx) and a checked-out view of it
// in .context/. Four git hooks (githooks(5)) keep the view fresh:
//
//	post-checkout  refresh the view and this machine's activity (branch);
//	               only on branch checkouts (git's third argument is 1),
//	               file checkouts (`git checkout -- f`, flag 0) are skipped
//	post-merge     refresh the view
//	post-rewrite   refresh the view (after `commit --amend` and `rebase`)
//	pre-push       opt-in (Options.PrePush): run `ctx push` alongside
//	               `git push`; a failed ctx push is reported on stderr and
//	               does NOT block the user's push
//	post-commit    opt-in (Options.Blame): note the agent session that made
//	               the commit on refs/notes/ctx (docs/blame.md)
//
// The shape of a hook file ctx touches:
//
//	#!/bin/sh                        <- only written when ctx creates the file
//	...user lines, unchanged...
//	# >>> ctx hooks >>>
//	...thin shim: `ctx hooks run <name> "$@"`, time-bounded, failing open...
//	# <<< ctx hooks <<<
//	exec some-cmd "$@"               <- a final exec/exit of the user stays last
//
// Rules (docs/hooks.md):
//   - The hooks directory is the one git uses: `git rev-parse --git-path
//     hooks`, which respects core.hooksPath and linked worktrees. ctx never
//     sets core.hooksPath.
//   - User hooks are kept: ctx only adds or removes its marked block. Install
//     is idempotent and Uninstall restores a user's file byte for byte. Files
//     are replaced atomically (temp file in the same directory + rename) and
//     keep their mode.
//   - When a hook manager (husky, lefthook, pre-commit) owns the hooks, ctx
//     edits nothing and returns a Snippet for the user to paste.
//   - When the hooks directory is inside the work tree (core.hooksPath=.githooks,
//     a folder the team commits), ctx edits nothing there unless the user asks
//     (Options.InWorkTree) and returns the lines to add instead.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
)

// Hook is the name of a git hook ctx manages (githooks(5)).
type Hook string

// The hooks ctx manages.
const (
	PostCheckout Hook = "post-checkout"
	PostMerge    Hook = "post-merge"
	PostRewrite  Hook = "post-rewrite"
	PrePush      Hook = "pre-push"
	PostCommit   Hook = "post-commit"
)

// DefaultHooks are installed by every Install; PrePush and PostCommit only on opt-in.
var DefaultHooks = []Hook{PostCheckout, PostMerge, PostRewrite}

// AllHooks is every hook ctx may have installed, in report order.
var AllHooks = []Hook{PostCheckout, PostMerge, PostRewrite, PrePush, PostCommit}

// Valid reports whether h is one of the hooks ctx manages.
func (h Hook) Valid() bool {
	for _, k := range AllHooks {
		if h == k {
			return true
		}
	}
	return false
}

// Options select what Install adds.
type Options struct {
	// PrePush installs the pre-push hook that runs `ctx push` (docs/hooks.md:
	// "pre-push can run ctx push when the user opts in"). When false, Install
	// leaves the pre-push file as it is (a previous opt-in is kept; Uninstall
	// removes it).
	PrePush bool
	// Blame installs the post-commit hook that records, for a commit made while a coding agent's session
	// is active (its session variable is in git's environment), a note on refs/notes/ctx naming the
	// session (docs/blame.md "The post-commit hook"). When false, Install leaves the post-commit file as
	// it is.
	Blame bool
	// InWorkTree lets Install write into a hooks directory inside the work tree (core.hooksPath=.githooks,
	// a folder the team commits): those files are the user's repository's, so Install writes there only
	// on the user's explicit request (`ctx hooks install --in-work-tree`). When false, Install writes
	// nothing in such a directory and returns the lines to add in Status.Snippet (docs/hooks.md "Where
	// the hooks go").
	InWorkTree bool
}

// Manager is a git hook manager that owns the hooks directory.
type Manager string

// The hook managers ctx recognises. The empty Manager means plain git hooks.
const (
	NoManager Manager = ""
	Husky     Manager = "husky"
	Lefthook  Manager = "lefthook"
	PreCommit Manager = "pre-commit"
)

// HookStatus describes one hook file.
type HookStatus struct {
	Name Hook `json:"name"`
	// Path is the absolute path of the hook file (it may not exist).
	Path string `json:"path"`
	// Installed: the file holds ctx's block.
	Installed bool `json:"installed"`
	// UserContent: the file has lines of the user's besides ctx's block (and
	// besides the "#!/bin/sh" ctx wrote when it created the file).
	UserContent bool `json:"user_content"`
	// Exists: the file exists.
	Exists bool `json:"exists"`
	// Executable: the file is executable by its owner. git ignores hook files
	// that are not executable; ctx never changes a user's file mode.
	Executable bool `json:"executable"`
	// Outdated: the file holds ctx's block, but not the one this ctx writes (an older ctx installed it):
	// `ctx hooks install` updates it.
	Outdated bool `json:"outdated"`
	// Changed: this Install/Uninstall call rewrote or removed the file.
	Changed bool `json:"changed"`
	// Skipped says why ctx left this file alone (a symlink, not a shell
	// script, ...); empty otherwise.
	Skipped string `json:"skipped,omitempty"`
}

// Status is the result of Install, Uninstall and Report; `ctx hooks status --json` prints it (snake_case keys).
type Status struct {
	// Dir is the absolute hooks directory git uses.
	Dir string `json:"dir"`
	// Manager is the hook manager found, if any. When set, Install writes
	// nothing and Snippet holds the text to paste into the manager's config.
	Manager Manager      `json:"manager"`
	Hooks   []HookStatus `json:"hooks"`
	Snippet string       `json:"snippet,omitempty"`
	// InWorkTree: Dir is inside the work tree (and outside the git dir), where core.hooksPath puts it for a
	// hooks folder the repository tracks (.githooks): its files are the user's, and Install writes there
	// only with Options.InWorkTree.
	InWorkTree bool `json:"in_work_tree"`
	// Notes are human-readable remarks for `ctx hooks status`.
	Notes []string `json:"notes,omitempty"`
}

// Hook returns the status of hook h, and false when h is not in s.Hooks.
func (s Status) Hook(h Hook) (HookStatus, bool) {
	for _, hs := range s.Hooks {
		if hs.Name == h {
			return hs, true
		}
	}
	return HookStatus{}, false
}

// git runs `git args...` on the repository containing dir and returns its stdout without the trailing
// newline (gitstore.Git: the one way ctx runs git, with one environment policy).
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitstore.Git(ctx, dir, args...)
}

// gitPath returns `git rev-parse --git-path name` for workTree, absolute.
// git prints the path relative to the directory it ran in (-C workTree).
func gitPath(ctx context.Context, workTree, name string) (string, error) {
	out, err := git(ctx, workTree, "rev-parse", "--git-path", name)
	if err != nil {
		return "", err
	}
	return absFrom(workTree, out)
}

func absFrom(base, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("absolute path of %s: %w", p, err)
	}
	return filepath.Clean(p), nil
}

// Dir returns the absolute hooks directory git uses for workTree: the output
// of `git rev-parse --git-path hooks` (githooks(5)), so core.hooksPath is
// respected (a relative core.hooksPath is relative to the work tree, as git
// runs hooks there) and a linked worktree gets its main repository's hooks
// (with a relative core.hooksPath, each worktree resolves it against its own
// work tree, as git does when it runs the hooks there).
//
// When git would not look for the hook files inside that directory, Dir fails with ErrHooksPath and
// nothing may be written: an empty core.hooksPath (`git config core.hooksPath ""`) makes `git rev-parse
// --git-path hooks` print "./" while git looks for each hook at "/<name>" (git 2.39), so no hook of
// .git/hooks runs at all. A core.hooksPath that names something other than a directory (/dev/null, the
// usual way to disable hooks) is ErrHooksPath too.
func Dir(ctx context.Context, workTree string) (string, error) {
	d, err := gitPath(ctx, workTree, "hooks")
	if err != nil {
		return "", fmt.Errorf("hooks dir of %s: %w", workTree, err)
	}
	probe, err := gitPath(ctx, workTree, "hooks/"+string(PostCheckout))
	if err != nil {
		return "", fmt.Errorf("hooks dir of %s: %w", workTree, err)
	}
	if filepath.Dir(probe) == d {
		if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
			// core.hooksPath=/dev/null, the usual way to turn hooks off: git runs none, and nothing can be
			// installed there.
			return "", fmt.Errorf("%w: core.hooksPath is %s, which is not a directory, so git runs no hook of this repository "+
				"(hooks are disabled); to have .context/ refreshed by git's hooks, remove the setting (git config --unset core.hooksPath) "+
				"or set it to a directory, then run ctx hooks install", ErrHooksPath, d)
		}
		return d, nil
	}
	if v, err := git(ctx, workTree, "config", "--get", "core.hooksPath"); err == nil && strings.TrimSpace(v) == "" {
		return "", fmt.Errorf("%w: core.hooksPath is set to an empty value, so git looks for each hook at %s and runs no hook of this repository: "+
			"remove the setting (git config --unset core.hooksPath) or set it to a directory, then run ctx hooks install",
			ErrHooksPath, probe)
	}
	return "", fmt.Errorf("%w: git looks for the %s hook at %s, not in %s (core.hooksPath): check git config core.hooksPath",
		ErrHooksPath, PostCheckout, probe, d)
}

// ErrHooksPath: git's hooks directory cannot be used (an empty core.hooksPath, see Dir). No hook runs;
// ctx writes nothing.
var ErrHooksPath = errors.New("git runs no hooks from its hooks directory")

// topLevel returns the root of the work tree containing dir, or dir itself.
func topLevel(ctx context.Context, dir string) string {
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil || top == "" {
		return dir
	}
	return top
}

// lefthookConfigs are the file names lefthook reads its config from.
var lefthookConfigs = []string{
	"lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml",
	"lefthook.toml", ".lefthook.toml", "lefthook.json", ".lefthook.json",
	".config/lefthook.yml", ".config/lefthook.yaml",
}

// DetectManager reports the hook manager that owns workTree's hooks, in this
// order:
//  1. hooksDir is inside the work tree's .husky/ (husky v5+ sets
//     core.hooksPath=.husky/_ or .husky): husky;
//  2. a hook file in hooksDir was generated by a manager (husky v4's
//     "husky.sh", lefthook's `lefthook run`, pre-commit's "File generated by
//     pre-commit"): that manager;
//  3. a config file at the top of the work tree: lefthook.yml and its
//     variants (lefthook), .pre-commit-config.yaml (pre-commit).
//
// A .husky/ folder alone is not husky in charge: husky v5+ runs the hooks only
// once `husky` (npm's prepare script) has set core.hooksPath to it (case 1);
// until then git runs .git/hooks, so ctx installs there.
//
// It returns NoManager otherwise. Unreadable files count as absent.
func DetectManager(ctx context.Context, workTree, hooksDir string) Manager {
	top := topLevel(ctx, workTree)
	if rel, err := filepath.Rel(top, hooksDir); err == nil {
		first := strings.Split(filepath.ToSlash(rel), "/")[0]
		if first == ".husky" {
			return Husky
		}
	}
	if m := managerFromHookFiles(hooksDir); m != NoManager {
		return m
	}
	for _, name := range lefthookConfigs {
		if fileExists(filepath.Join(top, name)) {
			return Lefthook
		}
	}
	if fileExists(filepath.Join(top, ".pre-commit-config.yaml")) || fileExists(filepath.Join(top, ".pre-commit-config.yml")) {
		return PreCommit
	}
	return NoManager
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// managerFromHookFiles looks at the first 8 KiB of each hook file in dir
// for the marks the managers' generated hooks carry.
func managerFromHookFiles(dir string) Manager {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return NoManager
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		head, err := readHead(filepath.Join(dir, e.Name()), 8<<10)
		if err != nil {
			continue
		}
		s := string(head)
		switch {
		case strings.Contains(s, "File generated by pre-commit"):
			return PreCommit
		case strings.Contains(s, "lefthook"):
			return Lefthook
		case strings.Contains(s, "husky.sh") || strings.Contains(s, "# husky"):
			return Husky
		}
	}
	return NoManager
}

func readHead(p string, n int) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:k], nil
}
