package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// Markers delimit ctx's block in a hook file. Everything between them
// (inclusive) belongs to ctx; everything else belongs to the user.
const (
	BeginMarker = "# >>> ctx hooks >>>"
	EndMarker   = "# <<< ctx hooks <<<"
	// createdLine, inside the block, records that ctx created the file, so
	// Uninstall deletes it when nothing of the user's is left.
	createdLine = "# (ctx created this file; `ctx hooks uninstall` deletes it unless you added lines)"
	// shebang is the first line of a hook file ctx creates.
	shebang = "#!/bin/sh\n"
)

// Time limits of the shim, in seconds. The refresh hooks must stay fast; a
// push goes over the network.
const (
	RefreshTimeoutSeconds = 2
	PushTimeoutSeconds    = 30
)

// timeoutSeconds is the limit the shim of hook h puts on `ctx hooks run`.
func timeoutSeconds(h Hook) int {
	if h == PrePush {
		return PushTimeoutSeconds
	}
	return RefreshTimeoutSeconds
}

// Block returns ctx's block for hook h, each line ending in "\n". created
// marks a file ctx created.
//
// The shim (docs/hooks.md: "command -v ctx || exit 0, then ctx hooks run <name>
// "$@", time-bounded, failing open"):
//   - saves the exit status the user's lines left in $? and restores it at
//     the end, so appending the block does not change what the hook returns
//     to git (post-checkout's status is `git checkout`'s status);
//   - never exits: a missing ctx skips the call instead of `exit 0`, so the
//     user's lines after the block still run;
//   - is skipped when CTX_HOOKS=0 (the user's switch) or CTX_IN_HOOK is set
//     (ctx itself runs git from a hook, e.g. `ctx push` from pre-push, which
//     would otherwise run the hook again);
//   - passes CTX_HOOK_TIMEOUT=N, the bound `ctx hooks run` puts on itself (a
//     deadline on its work, then an exit whatever it is blocked on): no
//     timeout(1) process between the shell and ctx;
//   - gives ctx no stdin (pre-push and post-rewrite read theirs from stdin:
//     it stays for the user's lines); for the other hooks it discards ctx's
//     stdout and keeps its stderr, which git shows: ctx is silent when all
//     went well and says why when a refresh failed (a conflict, a lock held,
//     a `.context` symlink refused), and the hook still succeeds;
//   - pre-push: ctx's messages go to stderr and a failure prints one line
//     but the hook still succeeds: the user's `git push` is never blocked by
//     the context branch.
func Block(h Hook, created bool) string {
	n := timeoutSeconds(h)
	run := fmt.Sprintf(`"$ctx_bin" hooks run %s "$@" </dev/null`, h)
	var redirect, onFail string
	if h == PrePush {
		redirect = ` >&2`
		onFail = ` || echo 'ctx: pushing the context branch failed; git push goes on (run "ctx push" to retry)' >&2`
	} else {
		redirect = ` >/dev/null` // stderr stays: ctx's warnings, nothing when all went well
		onFail = ` || :`
	}
	var b strings.Builder
	b.WriteString(BeginMarker + "\n")
	if created {
		b.WriteString(createdLine + "\n")
	}
	b.WriteString("# Added by `ctx hooks install`; `ctx hooks uninstall` removes it. Set CTX_HOOKS=0 to skip.\n")
	b.WriteString("# A missing, broken or slow ctx never fails this git command.\n")
	b.WriteString("ctx_hook_rc=$?\n")
	cond := `[ "${CTX_HOOKS:-1}" != 0 ] && [ -z "${CTX_IN_HOOK:-}" ] && command -v ctx >/dev/null 2>&1`
	if h == PostCheckout {
		cond = `[ "${3:-1}" != 0 ] && ` + cond // a file checkout moves no branch (GuardHook)
	}
	switch {
	case h == PostCheckout:
		b.WriteString(freshFunc)
		b.WriteString(keptFunc)
		cond += ` && ! { ctx_fresh && ctx_kept "$@"; }`
	case refreshHook(h):
		b.WriteString(freshFunc)
		cond += " && ! ctx_fresh"
	}
	b.WriteString("if " + cond + "; then\n")
	if h == PostCheckout {
		// The lean front answers post-checkout itself on its happy path (docs/hooks.md "The shim starts
		// ctx-full"): started by name, with no subshell.
		run = strings.Replace(run, `"$ctx_bin"`, "ctx", 1)
	} else {
		b.WriteString(fullLines)
	}
	fmt.Fprintf(&b, "\tCTX_IN_HOOK=1 CTX_HOOK_TIMEOUT=%d %s%s%s\n", n, run, redirect, onFail)
	b.WriteString("fi\n")
	b.WriteString(`[ "$ctx_hook_rc" = 0 ] || (exit "$ctx_hook_rc")` + "\n")
	b.WriteString(sumLine(b.String()))
	b.WriteString(EndMarker + "\n")
	return b.String()
}

// fullLines pick the program the shim starts (docs/hooks.md "The shim starts ctx-full"): ctx_bin is the ctx
// that `command -v ctx` finds, or the ctx-full beside it when that is an executable file there (`make install`
// puts the two side by side, docs/architecture.md "The lean front"). The lean front would only execve
// ctx-full for `ctx hooks run` (it answers no hook), so starting ctx-full itself saves the front's start-up
// on every hook that runs ctx. A ctx found through a relative PATH entry, or without a ctx-full beside it
// (an older install, a symbolic link elsewhere, a single-program build), is started as before, by name.
// One subshell for the path: the cost of `$(...)` in sh, paid only when the hook runs ctx.
const fullLines = `	ctx_bin=$(command -v ctx 2>/dev/null) || ctx_bin=ctx
	case $ctx_bin in
	/*/ctx) if [ -f "${ctx_bin%/ctx}/ctx-full" ] && [ -x "${ctx_bin%/ctx}/ctx-full" ]; then ctx_bin=${ctx_bin%/ctx}/ctx-full; else ctx_bin=ctx; fi ;;
	*) ctx_bin=ctx ;;
	esac
`

// sumPrefix starts the line of ctx's block, just before EndMarker, that holds the SHA-256 of the block's
// lines before it (as the adapters' managed blocks do): a block whose lines no longer hash to it was edited
// by hand, and `ctx hooks uninstall` leaves it in place rather than delete the user's lines.
const sumPrefix = "# ctx-block-sha256: "

// sumLine is the checksum line of text, the block's lines before it.
func sumLine(text string) string {
	h := sha256.Sum256([]byte(text))
	return sumPrefix + hex.EncodeToString(h[:]) + "\n"
}

// blockEdited reports whether block (the lines of one span, BeginMarker to EndMarker, each keeping its
// "\n") was edited since ctx wrote it: its checksum line is not the one of the lines before it, or lines
// follow it before EndMarker. A block without a checksum line (written by an older ctx) cannot tell: false.
func blockEdited(block []string) bool {
	for i, l := range block {
		if strings.HasPrefix(l, sumPrefix) {
			return trimEOL(l)+"\n" != sumLine(strings.Join(block[:i], "")) || i != len(block)-2
		}
	}
	return false
}

// refreshHook reports whether h only brings .context/ in step with the refs (and so can be skipped when
// nothing moved). post-rewrite is not one: it also records which commit each rewritten commit came from
// (docs/blame.md "Rewrites"), and an amend moves no ref the stamp names.
func refreshHook(h Hook) bool { return h == PostCheckout || h == PostMerge }

// freshFunc is the shell function with which the shim of a refresh hook skips ctx when nothing moved since
// the last refresh hook (docs/hooks.md "A checkout that moves nothing"): the checkout record exists, and
// StampFile's line equals the refs' tips now (`git for-each-ref`) followed by `*` or by HEAD's full name
// now. One git process, no ctx: the stamp and HEAD are read by the shell from the git dir git gives its
// hooks ($GIT_DIR in a linked worktree, .git in the main one); only when neither is a folder holding HEAD
// (a .git file of a separate git dir) does `git rev-parse` find them. A HEAD that is not `ref: refs/...`
// is detached ("HEAD", as `git rev-parse --symbolic-full-name HEAD` prints it). Any doubt (no stamp, an
// odd ref name or path) runs ctx. The function's `set --` does not touch the hook's own arguments. Before
// git runs, a ref of the stamp that is a loose file of the git dir (git writes one when it moves a ref:
// update-ref, fetch) is read by the shell: a value the stamp does not name means that something moved, and
// ctx runs without the git process (a loose ref is the ref's value whatever packed-refs says; anything else,
// a symbolic ref, a ref packed only, a linked worktree's git dir, leaves the answer to git for-each-ref).
const freshFunc = `ctx_fresh() {
	[ -f ` + CheckoutRecord + ` ] || return 1
	ctx_gd=${GIT_DIR:-.git}
	if [ -d "$ctx_gd" ] && [ -f "$ctx_gd/HEAD" ]; then
		IFS= read -r ctx_head <"$ctx_gd/HEAD" || return 1
		case $ctx_head in "ref: refs/"*) ctx_head=${ctx_head#ref: } ;; *) ctx_head=HEAD ;; esac
		set -- "$ctx_gd/` + StampFile + `"
	else
		set -- $(git rev-parse --git-path ` + StampFile + ` --symbolic-full-name HEAD 2>/dev/null)
		[ $# = 2 ] || return 1
		ctx_head=$2
	fi
	[ -f "$1" ] || return 1
	IFS='|' read -r ctx_refs ctx_want <"$1" || return 1
	case " $ctx_refs" in *" -"* | *[!A-Za-z0-9/._\ -]*) return 1 ;; esac
	for ctx_w in $ctx_refs; do
		[ -f "$ctx_gd/$ctx_w" ] && IFS= read -r ctx_v <"$ctx_gd/$ctx_w" || continue
		case $ctx_v in "" | *[!0-9a-f]*) continue ;; esac
		case " $ctx_want" in *" $ctx_w=$ctx_v "*) ;; *) return 1 ;; esac
	done
	ctx_have=
	for ctx_w in $(git for-each-ref '--format=%(refname)=%(objectname)' $ctx_refs 2>/dev/null); do
		ctx_have="$ctx_have$ctx_w "
	done
	[ "$ctx_want" = "${ctx_have}*" ] || [ "$ctx_want" = "$ctx_have$ctx_head" ]
}
`

// keptFunc is the shell function with which post-checkout's shim, when the stamp holds, still runs ctx
// after a checkout away from a commit whose tree tracks files under .context/ (git's first argument,
// the previous HEAD): git removed them, and ctx puts the context branch's version back (docs/hooks.md
// "Files git removed in a checkout"). One `git cat-file -e`, only when the stamp holds and HEAD moved to
// another commit; a previous HEAD git names as all zeros (a clone's checkout) is no object, so no ctx.
const keptFunc = `ctx_kept() {
	[ "$1" = "$2" ] || ! git cat-file -e "$1:` + checkoutDir + `" 2>/dev/null
}
`

// NewFile is the content of a hook file ctx creates for h.
func NewFile(h Hook) []byte {
	return []byte(shebang + Block(h, true))
}

// splitLines splits b into lines that keep their "\n" (the last may lack it).
func splitLines(b []byte) []string {
	var lines []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, string(b))
			break
		}
		lines = append(lines, string(b[:i+1]))
		b = b[i+1:]
	}
	return lines
}

func trimEOL(l string) string { return strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r") }

// span is one ctx block: lines [begin, end] inclusive.
type span struct {
	begin, end int
	created    bool
}

// findBlocks returns ctx's blocks in lines. A begin marker without an end
// marker is an error: ctx will not guess where its block stops.
func findBlocks(lines []string) ([]span, error) {
	var spans []span
	for i := 0; i < len(lines); i++ {
		switch trimEOL(lines[i]) {
		case BeginMarker:
			s := span{begin: i, end: -1}
			for j := i + 1; j < len(lines); j++ {
				t := trimEOL(lines[j])
				if t == BeginMarker {
					return nil, fmt.Errorf("line %d: %q inside the block opened at line %d", j+1, BeginMarker, i+1)
				}
				if t == createdLine {
					s.created = true
				}
				if t == EndMarker {
					s.end = j
					break
				}
			}
			if s.end < 0 {
				return nil, fmt.Errorf("line %d: %q without %q", i+1, BeginMarker, EndMarker)
			}
			spans = append(spans, s)
			i = s.end
		case EndMarker:
			return nil, fmt.Errorf("line %d: %q without %q before it", i+1, EndMarker, BeginMarker)
		}
	}
	return spans, nil
}

// finalCommand matches a last command that ends the script: ctx's block goes
// before it, or it would never run.
var finalCommand = lazyre.New(`^\s*(exec|exit)(\s|;|$)`)

// insertPoint returns the index of the line before which the block goes:
// before the final `exec ...` or `exit ...` command of the user's script
// (the start of its logical line, following "\" continuations back), else
// len(lines) (append). Blank lines and comments after it do not count.
func insertPoint(lines []string) int {
	last := -1
	for i := len(lines) - 1; i >= 0; i-- {
		t := strings.TrimSpace(trimEOL(lines[i]))
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		last = i
		break
	}
	if last < 0 {
		return len(lines)
	}
	start := last
	for start > 0 && strings.HasSuffix(trimEOL(lines[start-1]), `\`) {
		start--
	}
	if finalCommand.Get().MatchString(trimEOL(lines[start])) {
		return start
	}
	return len(lines)
}

// AddBlock returns content with ctx's block for h: an existing block is
// replaced where it stands (so Install twice gives the same bytes), else the
// block is inserted before the user's final exec/exit, else appended.
//
// To restore the file byte for byte, the block mirrors the file's last
// newline: appended to a file that does not end in "\n", the block is
// preceded by "\n" and its own last line has none; RemoveBlocks undoes both.
func AddBlock(content []byte, h Hook) ([]byte, error) {
	lines := splitLines(content)
	spans, err := findBlocks(lines)
	if err != nil {
		return nil, err
	}
	if len(spans) > 0 {
		first := spans[0]
		blk := Block(h, first.created)
		if !strings.HasSuffix(lines[first.end], "\n") {
			blk = strings.TrimSuffix(blk, "\n")
		}
		var out []string
		out = append(out, lines[:first.begin]...)
		out = append(out, blk)
		prev := first.end + 1
		for _, s := range spans[1:] { // extra blocks (hand-copied): drop them
			out = append(out, lines[prev:s.begin]...)
			prev = s.end + 1
		}
		out = append(out, lines[prev:]...)
		return []byte(strings.Join(out, "")), nil
	}
	blk := Block(h, false)
	at := insertPoint(lines)
	if at == len(lines) {
		if len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") {
			return []byte(string(content) + "\n" + strings.TrimSuffix(blk, "\n")), nil
		}
		return []byte(string(content) + blk), nil
	}
	out := append(append(append([]string{}, lines[:at]...), blk), lines[at:]...)
	return []byte(strings.Join(out, "")), nil
}

// RemoveBlocks returns content without ctx's blocks. remove is true when ctx
// created the file and nothing but its "#!/bin/sh" line is left: the caller
// deletes the file.
func RemoveBlocks(content []byte) (out []byte, remove bool, err error) {
	lines := splitLines(content)
	spans, err := findBlocks(lines)
	if err != nil {
		return nil, false, err
	}
	if len(spans) == 0 {
		return content, false, nil
	}
	created := false
	var keep []string
	prev := 0
	for _, s := range spans {
		created = created || s.created
		keep = append(keep, lines[prev:s.begin]...)
		prev = s.end + 1
		if !strings.HasSuffix(lines[s.end], "\n") && len(keep) > 0 {
			// Appended to a file without a final newline: drop the "\n" ctx added.
			keep[len(keep)-1] = strings.TrimSuffix(keep[len(keep)-1], "\n")
		}
	}
	keep = append(keep, lines[prev:]...)
	out = []byte(strings.Join(keep, ""))
	if created && (len(out) == 0 || string(out) == shebang) {
		return nil, true, nil
	}
	return out, false, nil
}

// userContent reports whether content has lines of the user's outside ctx's
// blocks (the "#!/bin/sh" of a file ctx created does not count).
func userContent(content []byte) bool {
	out, remove, err := RemoveBlocks(content)
	if err != nil {
		return true
	}
	return !remove && len(bytes.TrimSpace(out)) > 0
}

// shells are the interpreters ctx's shim runs under.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "yash": true, "posh": true}

// notShell returns a reason when content is not a POSIX-shell script ctx can
// add lines to, else "". A file without "#!" is run by git with /bin/sh
// (run-command's ENOEXEC fallback), so text without one counts as shell.
func notShell(content []byte) string {
	head := content
	if len(head) > 8<<10 {
		head = head[:8<<10]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return "binary file"
	}
	if !bytes.HasPrefix(content, []byte("#!")) {
		return ""
	}
	first := trimEOL(string(splitLines(content)[0]))
	fields := strings.Fields(strings.TrimPrefix(first, "#!"))
	if len(fields) == 0 {
		return ""
	}
	interp := path.Base(fields[0])
	if interp == "env" {
		interp = ""
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
				continue
			}
			interp = path.Base(f)
			break
		}
	}
	if shells[interp] {
		return ""
	}
	return fmt.Sprintf("not a shell script (%s)", first)
}
