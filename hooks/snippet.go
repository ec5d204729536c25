package hooks

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Snippet returns the text to add to manager m's config so that it runs
// ctx's refresh hooks (post-checkout, post-merge, post-rewrite). ctx prints
// it instead of editing the manager's files (docs/hooks.md). NoManager gets "".
func Snippet(m Manager) string { return SnippetFor(m, Options{}) }

// SnippetFor is Snippet with the opt-in pre-push hook when opt.PrePush, post-commit when opt.Blame.
//
// Each command fails open like ctx's own block: a missing ctx is skipped, a
// failing or slow one never fails the git command.
func SnippetFor(m Manager, opt Options) string {
	hooks := snippetHooks(opt)
	var b strings.Builder
	switch m {
	case Husky:
		// Commands, not lines to paste into files: husky v8 (core.hooksPath=.husky) has git run
		// .husky/<hook> itself, and git ignores a hook file that is not executable, so a file created by
		// hand from a pasted line never ran. These create it with a shebang, keep an existing file's lines
		// (ending its last line first), add ctx's line once and set the exec bit; husky v9 (.husky/_ runs
		// .husky/<hook> with sh) is served by the same files.
		b.WriteString("# husky (v8 and v9): run these commands in a shell at the top of the repository. For each hook they\n")
		b.WriteString("# add ctx's line to .husky/<hook> (once; a missing file is created with #!/usr/bin/env sh) and make\n")
		b.WriteString("# the file executable, which husky v8 needs: git ignores a hook file without the exec bit.\n")
		b.WriteString("mkdir -p .husky\n")
		b.WriteString(`ctx_hook() { f=.husky/$1; if ! grep -qsF "ctx hooks run $1 " "$f"; then [ -s "$f" ] || printf '#!/usr/bin/env sh\n' >"$f"; [ -z "$(tail -c 1 "$f")" ] || echo >>"$f"; printf '%s\n' "$2" >>"$f"; fi; chmod +x "$f"; }` + "\n")
		for _, h := range hooks {
			fmt.Fprintf(&b, "ctx_hook %s %s\n", h, shellQuote(shellLine(h, `"$@"`)))
		}
		b.WriteString("unset -f ctx_hook\n")
	case Lefthook:
		b.WriteString("# lefthook.yml: add these hooks, then run `lefthook install`\n")
		for _, h := range hooks {
			fmt.Fprintf(&b, "%s:\n  commands:\n    ctx:\n      run: %s\n", h, yamlQuote(shellLine(h, lefthookArgs(h))))
		}
	case PreCommit:
		b.WriteString("# .pre-commit-config.yaml: add this local repository, then run\n")
		b.WriteString("#   pre-commit install")
		for _, h := range hooks {
			fmt.Fprintf(&b, " --hook-type %s", h)
		}
		b.WriteString("\nrepos:\n  - repo: local\n    hooks:\n")
		for _, h := range hooks {
			fmt.Fprintf(&b, "      - id: ctx-%s\n", h)
			fmt.Fprintf(&b, "        name: ctx hooks run %s\n", h)
			b.WriteString("        language: system\n")
			fmt.Fprintf(&b, "        entry: %s\n", yamlQuote("sh -c "+shellQuote(shellLine(h, preCommitArgs(h)))))
			fmt.Fprintf(&b, "        stages: [%s]\n", h)
			b.WriteString("        always_run: true\n        pass_filenames: false\n")
		}
	default:
		return ""
	}
	return b.String()
}

// UninstallSnippetFor returns the text that undoes SnippetFor(m, opt): what `ctx hooks uninstall` prints
// when manager m owns the hooks (ctx edits no manager's files). For husky, whose snippet is commands, these
// are commands too: they delete from .husky/<hook> every line that runs `ctx hooks run <hook> ` and keep
// every other line, the file and its mode (a file left with only its shebang stays). For the managers
// configured by a file (lefthook, pre-commit) it is the entries to delete from that file. NoManager gets "".
func UninstallSnippetFor(m Manager, opt Options) string {
	if m != Husky {
		install := SnippetFor(m, opt)
		if install == "" {
			return ""
		}
		return "# delete these entries from the configuration (they are what ctx hooks install printed):\n" + install
	}
	hooks := snippetHooks(opt)
	var b strings.Builder
	b.WriteString("# husky (v8 and v9): run these commands in a shell at the top of the repository. For each hook they\n")
	b.WriteString("# delete the lines that run `ctx hooks run <hook>` from .husky/<hook> and keep every other line.\n")
	b.WriteString(`ctx_unhook() { f=.husky/$1; [ -f "$f" ] || return 0; grep -vF "ctx hooks run $1 " "$f" >"$f.ctx-tmp"; cat "$f.ctx-tmp" >"$f" && rm -f "$f.ctx-tmp"; }` + "\n")
	for _, h := range hooks {
		fmt.Fprintf(&b, "ctx_unhook %s\n", h)
	}
	b.WriteString("unset -f ctx_unhook\n")
	return b.String()
}

// snippetHooks are the hooks a snippet covers: DefaultHooks, then pre-push when opt.PrePush and
// post-commit when opt.Blame.
func snippetHooks(opt Options) []Hook {
	hooks := append([]Hook{}, DefaultHooks...)
	if opt.PrePush {
		hooks = append(hooks, PrePush)
	}
	if opt.Blame {
		hooks = append(hooks, PostCommit)
	}
	return hooks
}

// shellLine is the one-line, fail-open form of ctx's block, with the same
// CTX_HOOKS / CTX_IN_HOOK switches (CTX_IN_HOOK stops `ctx push`'s own git
// push from running pre-push again). It writes $VAR without braces because
// lefthook treats {...} as its templates.
func shellLine(h Hook, args string) string {
	n := timeoutSeconds(h)
	if h == PrePush {
		return fmt.Sprintf(`if [ "$CTX_HOOKS" != 0 ] && [ -z "$CTX_IN_HOOK" ] && command -v ctx >/dev/null 2>&1; then CTX_IN_HOOK=1 CTX_HOOK_TIMEOUT=%d ctx hooks run %s %s </dev/null >&2 || echo 'ctx: pushing the context branch failed; git push goes on' >&2; fi`, n, h, args)
	}
	return fmt.Sprintf(`if [ "$CTX_HOOKS" != 0 ] && [ -z "$CTX_IN_HOOK" ] && command -v ctx >/dev/null 2>&1; then CTX_IN_HOOK=1 CTX_HOOK_TIMEOUT=%d ctx hooks run %s %s </dev/null >/dev/null || :; fi`, n, h, args)
}

// lefthookArgs are lefthook's templates for git's arguments ({1}, {2}, ...).
func lefthookArgs(h Hook) string {
	switch h {
	case PostCheckout:
		return "{1} {2} {3}"
	case PrePush:
		return "{1} {2}"
	case PostCommit:
		return ""
	default:
		return "{1}"
	}
}

// preCommitArgs rebuild git's arguments from the environment pre-commit sets
// for each hook stage.
func preCommitArgs(h Hook) string {
	switch h {
	case PostCheckout:
		return `"$PRE_COMMIT_FROM_REF" "$PRE_COMMIT_TO_REF" "$PRE_COMMIT_CHECKOUT_TYPE"`
	case PostMerge:
		return `"$PRE_COMMIT_IS_SQUASH_MERGE"`
	case PostRewrite:
		return `"$PRE_COMMIT_REWRITE_COMMAND"`
	case PostCommit:
		return ""
	default:
		return `"$PRE_COMMIT_REMOTE_NAME" "$PRE_COMMIT_REMOTE_URL"`
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// yamlQuote writes s as a YAML double-quoted scalar.
func yamlQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// WorkTreeSnippet is what Install returns instead of writing into a hooks directory inside the work tree
// (st.InWorkTree, core.hooksPath=.githooks): for each hook of opt (snippetHooks) whose file lacks ctx's
// block, the one-line, fail-open form of the block (shellLine) under the file's path; "" when every one
// holds it. st is a Status that report filled (HookStatus.Installed).
func WorkTreeSnippet(st Status, opt Options) string {
	var missing []Hook
	for _, h := range snippetHooks(opt) {
		if hs, ok := st.Hook(h); ok && !hs.Installed {
			missing = append(missing, h)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s is inside the work tree (core.hooksPath): ctx edits none of its files by itself.\n", st.Dir)
	b.WriteString("# Either run `ctx hooks install --in-work-tree`, which adds ctx's block to them (as in .git/hooks),\n")
	b.WriteString("# or add each line below to the hook file named above it (a shell script, executable: git runs no\n")
	b.WriteString("# other). Then commit them for the team, or keep them out of your commits.\n")
	for _, h := range missing {
		fmt.Fprintf(&b, "# %s\n%s\n", filepath.Join(st.Dir, string(h)), shellLine(h, `"$@"`))
	}
	return b.String()
}
