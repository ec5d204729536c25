package hooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/store"
)

// What the pre-push hook decides before it pushes the context branch (docs/hooks.md "pre-push: which
// remote, and dry runs").

// DryRunSkip is Run's reason when the pre-push hook runs for `git push --dry-run`: nothing is pushed.
const DryRunSkip = "git push --dry-run: the context branch is not pushed"

// procRoot is where the process table is read (Linux's /proc); a variable for tests.
var procRoot = "/proc"

// maxAncestors bounds the walk up from `ctx hooks run` to the git process that runs the hook: the shell of
// the hook file, then git; a hook manager (lefthook, pre-commit) adds a process or two.
const maxAncestors = 8

// gitPushDryRun reports whether the nearest `git` ancestor of this process is `git push` with --dry-run
// (-n). git passes the pre-push hook only the remote's name and URL, and the same standard input for a dry
// run as for a push (githooks(5); git 2.39 runs the hook for both), so the only place the flag can be read
// is git's own command line: /proc/PID/cmdline of the ancestors. known is false when that cannot be read
// (no /proc: macOS; no git among the first ancestors) or the git process is not `git push`: the caller then
// pushes as before (docs/hooks.md says how to keep a dry run dry there: --no-verify or CTX_HOOKS=0).
func gitPushDryRun() (dry, known bool) {
	pid := os.Getppid()
	for i := 0; i < maxAncestors && pid > 1; i++ {
		argv, ppid, err := procInfo(pid)
		if err != nil {
			return false, false
		}
		if sub, rest, ok := gitCommand(argv); ok {
			if sub != "push" {
				return false, false
			}
			return pushDryRun(rest), true
		}
		pid = ppid
	}
	return false, false
}

// procInfo reads the command line and the parent of process pid from procRoot.
func procInfo(pid int) (argv []string, ppid int, err error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return nil, 0, err
	}
	argv = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	st, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return nil, 0, err
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses; the fields start after the last ')'.
	s := string(st)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, 0, fmt.Errorf("%s/stat: no ')'", dir)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return nil, 0, fmt.Errorf("%s/stat: too short", dir)
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return nil, 0, fmt.Errorf("%s/stat: ppid: %w", dir, err)
	}
	return argv, ppid, nil
}

// gitCommand splits the command line of a git process into its subcommand and the subcommand's arguments,
// past git's own options (git(1): -C PATH, -c NAME=VALUE, --git-dir PATH, ...). ok is false when argv is
// not git's (argv[0]'s base name is neither git nor git-SUBCOMMAND) or names no subcommand. An alias runs
// as `git SUBCOMMAND ...` again (git 2.39 executes it anew), so a dry run through an alias is seen too.
func gitCommand(argv []string) (sub string, rest []string, ok bool) {
	if len(argv) == 0 {
		return "", nil, false
	}
	base := filepath.Base(argv[0])
	if s, found := strings.CutPrefix(base, "git-"); found && s != "" {
		return s, argv[1:], true
	}
	if base != "git" {
		return "", nil, false
	}
	withArg := map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
		"--super-prefix": true, "--config-env": true, "--exec-path": false}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			return a, argv[i+1:], true
		}
		if withArg[a] {
			i++
		}
	}
	return "", nil, false
}

// pushDryRun reports whether `git push ARGS` is a dry run, reading ARGS as git's parse-options does: -n
// alone or among bundled short flags (-nv), --dry-run or an unambiguous abbreviation (--dry), the last of
// --dry-run / --no-dry-run winning; the values of the options that take one (-o VALUE, --repo VALUE, ...)
// are skipped, and nothing after "--" is an option.
func pushDryRun(args []string) bool {
	dry := false
	// Long options of git push (2.39) that take a value in the next argument when it is not given with "=".
	valued := []string{"repo", "receive-pack", "exec", "push-option", "recurse-submodules"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return dry
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			neg := false
			if n, ok := strings.CutPrefix(name, "no-"); ok {
				name, neg = n, true
			}
			if len(name) >= 2 && strings.HasPrefix("dry-run", name) {
				dry = !neg
				continue
			}
			if !hasValue && !neg && len(name) >= 3 {
				for _, v := range valued {
					if strings.HasPrefix(v, name) {
						i++
						break
					}
				}
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := a[j]
				if c == 'n' {
					dry = true
				}
				if c == 'o' { // -o VALUE or -oVALUE: the rest is the value
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return dry
}

// PushTarget decides where the pre-push hook pushes the context branch (docs/hooks.md "pre-push: which
// remote, and dry runs"): only to configured, the remote ctx syncs with (`ctx config remote`, else origin:
// store.RemoteName), and only when git is pushing to it: remote (git's first pre-push argument) is its name,
// or url (the second, the URL git pushes to) is one of its URLs (`git remote get-url --all`, with --push
// too: insteadOf applied as git applies it) or the same local directory. It returns the remote to push to
// (configured), or "" and the one line that says why nothing is pushed: a push of the code to a fork or a
// mirror must not publish the team's context there.
func PushTarget(ctx context.Context, workTree, configured, remote, url string) (target, skip string) {
	if configured == "" {
		return "", fmt.Sprintf("not pushing the context branch to %s: ctx has no remote to sync with (name one: ctx config remote NAME)", store.RedactURL(remote))
	}
	if remote == configured {
		return configured, ""
	}
	var urls []string
	for _, args := range [][]string{{"remote", "get-url", "--all", "--", configured}, {"remote", "get-url", "--push", "--all", "--", configured}} {
		if out, err := git(ctx, workTree, args...); err == nil {
			urls = append(urls, strings.Split(out, "\n")...)
		}
	}
	for _, u := range urls {
		if u != "" && (u == url || u == remote || sameDir(workTree, u, url)) {
			return configured, ""
		}
	}
	return "", fmt.Sprintf("not pushing the context branch to %s: ctx syncs with %s (ctx config remote); ctx push --remote %s publishes it there",
		store.RedactURL(remote), configured, shellWord(store.RedactURL(remote)))
}

// sameDir reports whether URLs a and b are local paths (no scheme, no host:) of the same directory; a
// relative path is relative to the work tree, where git runs the hook.
func sameDir(workTree, a, b string) bool {
	dir := func(u string) (os.FileInfo, bool) {
		u = strings.TrimPrefix(u, "file://")
		if u == "" || strings.Contains(u, "://") || (strings.Contains(u, ":") && !strings.HasPrefix(u, "/") && !strings.HasPrefix(u, ".")) {
			return nil, false
		}
		if !filepath.IsAbs(u) {
			u = filepath.Join(workTree, u)
		}
		fi, err := os.Stat(u)
		return fi, err == nil && fi.IsDir()
	}
	fa, ok := dir(a)
	if !ok {
		return false
	}
	fb, ok := dir(b)
	return ok && os.SameFile(fa, fb)
}

// shellWord quotes s for a shell command line when it holds anything but plain characters.
func shellWord(s string) string {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:@+=,", c)) {
			return shellQuote(s)
		}
	}
	return s
}
