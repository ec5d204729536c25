package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// gitCmd is one run of the system git. Every git process ctx starts is made by gitCmd.run, with one
// environment policy (gitEnv): the variables with which a calling git (a hook) points at its own
// repository are dropped, so that the explicit --git-dir and --work-tree of ctx's commands win, and git
// never prompts (no terminal prompt, SSH in batch mode unless the user configured an ssh command).
type gitCmd struct {
	dir      string    // the working directory git runs in
	args     []string  // all of git's arguments, global options (--git-dir, -c) first
	userSSH  bool      // core.sshCommand is configured: do not set GIT_SSH_COMMAND (it would win over it)
	owner    *os.File  // an owner record of the ref locks git may take (startOwner), or nil
	progress io.Writer // also receives git's stderr (progress of a transfer), or nil
	group    bool      // on cancel, end git and the helpers it started (a transfer's ssh, git-remote-http)
	stdin    io.Reader // git's standard input, or nil (none)
}

// run runs git and returns its stdout and stderr. The error is git's exit error, ctx's error when ctx
// ended (wrapped as "git <subcommand>: ..."), or ErrNoGit when no git binary is on PATH.
func (c gitCmd) run(ctx context.Context) (stdout, stderr string, err error) {
	if !HasGit() {
		return "", "", ErrNoGit
	}
	cmd := exec.CommandContext(ctx, "git", c.args...)
	cmd.Env = gitEnv(os.Environ(), c.userSSH)
	cmd.Dir = c.dir
	if c.owner != nil {
		cmd.ExtraFiles = []*os.File{c.owner}
	}
	if c.group {
		// On the deadline, end git and the helpers it started (git-remote-http, ssh), which otherwise keep
		// waiting on the network and hold the output pipes open; WaitDelay bounds the wait for the pipes.
		killGroupOnCancel(cmd)
	}
	cmd.WaitDelay = 2 * time.Second
	cmd.Stdin = c.stdin
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if c.progress != nil {
		cmd.Stderr = io.MultiWriter(&errb, c.progress)
	}
	err = cmd.Run()
	if ctx.Err() != nil {
		return out.String(), errb.String(), fmt.Errorf("git %s: %w", subcommand(c.args), ctx.Err())
	}
	return out.String(), errb.String(), err
}

// repoArgs are the global options that point git at r: its git dir and, unless bare, its work tree.
func (r *Repo) repoArgs() []string {
	if r.workTree == "" {
		return []string{"--git-dir=" + r.gitDir}
	}
	return []string{"--git-dir=" + r.gitDir, "--work-tree=" + r.workTree}
}

// workDir is where git runs for r: the work tree, else the git dir.
func (r *Repo) workDir() string {
	if r.workTree != "" {
		return r.workTree
	}
	return r.gitDir
}

// Git runs `git <args>` in dir (like `git -C dir`) on the repository containing dir, found as Open finds it
// (walking up, honouring GIT_DIR and GIT_WORK_TREE) without opening its object database, and returns
// git's stdout without its
// trailing newline. git gets the repository as explicit --git-dir and --work-tree options and ctx's
// environment policy (no prompt, the calling git's GIT_DIR and friends dropped). args are git's options
// and subcommand: a caller must not put a value from outside where git would read an option. Errors:
// ErrNotRepository when no repository contains dir, ErrNoGit without a git binary, else "git <args>: <exit
// status>: <git's stderr>".
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("git %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	gitDir, workTree, err := discover(abs)
	if err != nil {
		return "", err
	}
	r := &Repo{gitDir: gitDir, workTree: workTree}
	return r.gitIn(ctx, abs, args...)
}

// Git runs `git <args>` on r, in its work tree (else its git dir), as the package function Git does.
func (r *Repo) Git(ctx context.Context, args ...string) (string, error) {
	return r.gitIn(ctx, r.workDir(), args...)
}

// gitIn runs git on r in directory dir: paths git prints relative to where it runs are relative to dir.
func (r *Repo) gitIn(ctx context.Context, dir string, args ...string) (string, error) {
	stdout, stderr, err := gitCmd{dir: dir, args: append(r.repoArgs(), args...)}.run(ctx)
	if err != nil {
		if msg := strings.TrimSpace(stderr); msg != "" {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimRight(stdout, "\r\n"), nil
}

// gitEnv is the environment of every git process ctx starts, made from env (the process's): the variables
// with which a calling git (a hook) points at its own repository are dropped, so that the explicit
// --git-dir and --work-tree of ctx's commands win, and the command is non-interactive
// (docs/security.md, "Every git command line"): no terminal prompt, SSH in batch mode. The user's own ssh
// command (GIT_SSH_COMMAND, GIT_SSH, or core.sshCommand in the repository's or the global config, which
// the caller reports as userSSH, see sshConfigured) is left as it is: setting GIT_SSH_COMMAND would
// override core.sshCommand (git-config(1)).
func gitEnv(env []string, userSSH bool) []string {
	out := env[:0:0]
	hasSSH := false
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX", "GIT_TERMINAL_PROMPT":
			continue
		case "GIT_SSH_COMMAND", "GIT_SSH":
			hasSSH = true
		}
		out = append(out, kv)
	}
	out = append(out, "GIT_TERMINAL_PROMPT=0")
	if !hasSSH && !userSSH {
		out = append(out, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
	}
	return out
}
