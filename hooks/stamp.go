package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/ctx-dev/ctx/store"
)

// StampFile is the file, in the worktree's git dir (`git rev-parse --git-path ctx-hook-stamp`), in which
// a refresh hook records what it brought .context/ in step with, so that the shim of the next refresh hook
// can tell, with two git processes and no ctx, that nothing moved (docs/hooks.md "A checkout that moves
// nothing"). It is one line:
//
//	REF REF ...|REF=OID REF=OID ... HEAD
//
// the context refs (as ctx names them), then `git for-each-ref --format='%(refname)=%(objectname)' REF...`
// read before the refresh, joined by spaces with a space after each, then `*` when the result does not
// depend on git's HEAD, else `git rev-parse --symbolic-full-name HEAD` (a branch's full name, or HEAD
// when detached).
//
// Whatever changes .context/ removes it first (store.HookStampFile, the same name).
const StampFile = store.HookStampFile

// CheckoutRecord is the checkout record of .context/ (the store's RecordFile) relative to the work tree:
// the shim runs ctx whenever it is missing (a new or removed .context/).
const CheckoutRecord = store.CheckoutDir + "/" + store.RecordFile

// checkoutDir is the checked-out tree's folder at the work tree's root (store.CheckoutDir).
const checkoutDir = store.CheckoutDir

// stampRef is what a ref of the stamp may look like: the shim splits the list on spaces and gives it to
// git for-each-ref, so no option, space, glob or quote can reach it.
var stampRef = lazyre.New(`^refs/[A-Za-z0-9._/-]+$`)

// stamp is the state a refresh hook read before it ran.
type stamp struct {
	path string   // the stamp file
	refs []string // the context refs
	key  string   // REF=OID ... of the refs, each followed by a space
}

// beginStamp removes the stamp of workTree (a hook that fails or is cut short leaves none, so the next
// one runs ctx) and reads the refs' tips before the refresh: when refs move while the hook runs, the stamp
// names the older tips and the next hook runs ctx again. It returns nil when there is nothing to stamp
// (no StampRefs action, a ref name the shim could not pass safely, git failing).
func beginStamp(ctx context.Context, workTree string, a Actions, loc Local) *stamp {
	var p string
	if loc != nil {
		p = loc.GitPath(StampFile)
	} else {
		var err error
		if p, err = gitPath(ctx, workTree, StampFile); err != nil {
			return nil
		}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if a.StampRefs == nil {
		return nil
	}
	refs, err := a.StampRefs(ctx, workTree)
	if err != nil || len(refs) == 0 {
		return nil
	}
	for _, r := range refs {
		if !stampRef.Get().MatchString(r) {
			return nil
		}
	}
	var values []string
	if loc != nil {
		if values, err = loc.RefValues(ctx, refs); err != nil {
			return nil
		}
	} else {
		out, err := git(ctx, workTree, append([]string{"for-each-ref", "--format=%(refname)=%(objectname)"}, refs...)...)
		if err != nil {
			return nil
		}
		values = strings.Fields(out)
	}
	var key strings.Builder
	for _, f := range values {
		key.WriteString(f + " ")
	}
	return &stamp{path: p, refs: refs, key: key.String()}
}

// write records the stamp after a successful hook: followsHead says whether what the hook did depends on
// git's HEAD (this machine's activity records the branch).
func (st *stamp) write(ctx context.Context, workTree string, followsHead bool, loc Local) error {
	head := "*"
	if followsHead {
		var h string
		var err error
		if loc != nil {
			h, err = loc.Head(ctx)
		} else {
			h, err = git(ctx, workTree, "rev-parse", "--symbolic-full-name", "HEAD")
		}
		if err != nil {
			return err
		}
		head = strings.TrimSpace(h)
		if head == "" || head == "*" || strings.ContainsAny(head, " |\n") {
			return nil
		}
	}
	line := strings.Join(st.refs, " ") + "|" + st.key + head + "\n"
	// Atomic but not synced: the stamp is a cache, like the files of .context/ it vouches for (written
	// without fsync too), and its two fsyncs were 5 to 15 ms of the user's checkout on a busy disk. Lost
	// in a crash, the next hook runs ctx.
	root, err := os.OpenRoot(filepath.Dir(st.path))
	if err != nil {
		return fmt.Errorf("hook stamp: %w", err)
	}
	defer root.Close()
	if err := atomicfile.WriteIn(root, filepath.Base(st.path), []byte(line), 0o644, atomicfile.NoSync); err != nil {
		return fmt.Errorf("hook stamp: %w", err)
	}
	return nil
}

// fresh is the shim's ctx_fresh in process (docs/hooks.md "A checkout that moves nothing"): the checkout
// record exists and the stamp's line equals the refs' values now followed by `*` or by HEAD's full name.
// It reads the stamp, stats the record and resolves the stamp's refs and HEAD; any doubt is false.
func fresh(ctx context.Context, workTree string, loc Local) bool {
	if _, err := os.Stat(filepath.Join(workTree, filepath.FromSlash(CheckoutRecord))); err != nil {
		return false
	}
	b, err := os.ReadFile(loc.GitPath(StampFile))
	if err != nil || len(b) > 64<<10 {
		return false
	}
	line, ok := strings.CutSuffix(string(b), "\n")
	if !ok || strings.Contains(line, "\n") {
		return false
	}
	list, want, ok := strings.Cut(line, "|")
	if !ok {
		return false
	}
	refs := strings.Fields(list)
	if len(refs) == 0 {
		return false
	}
	for _, r := range refs {
		if !stampRef.Get().MatchString(r) {
			return false
		}
	}
	values, err := loc.RefValues(ctx, refs)
	if err != nil {
		return false
	}
	var have strings.Builder
	for _, v := range values {
		have.WriteString(v + " ")
	}
	if want == have.String()+"*" {
		return true
	}
	head, err := loc.Head(ctx)
	return err == nil && head != "" && want == have.String()+head
}
