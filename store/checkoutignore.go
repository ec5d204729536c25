package store

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
)

// ignoredBy says whether the checked-out tree holds IgnoreFile with IgnoreContent: a regular file (lstat
// first: a link, a FIFO or anything else at that name is not opened).
func (c *checkoutFS) ignoredBy() bool {
	if !c.ignoredByStat() {
		return false
	}
	b, err := c.readFile(IgnoreFile)
	return err == nil && string(b) == IgnoreContent
}

// ignoredByStat is ignoredBy from the lstat alone (a regular file of IgnoreContent's size): what ctx
// status checks, which reads no file of an unchanged .context/ (docs/architecture.md "Hand edits"); a
// refresh (ensureIgnored) compares the bytes too and puts back a file edited to the same size.
func (c *checkoutFS) ignoredByStat() bool {
	fi, err := c.root.Lstat(IgnoreFile)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(IgnoreContent))
}

// ensureIgnored makes the checked-out tree ignored by git whatever the repository's own .gitignore says
// (docs/architecture.md "Where things live"): IgnoreFile is written (atomically) when missing or not
// IgnoreContent, and then, once for a worktree whose .context/ had none (made by an older ctx, or by the
// first checkout), "/.context/" is added to info/exclude too (ensureExcluded). Called with the checkout
// lock held, before anything else of .context/ is written. A cheap check when all is in place: one lstat
// and a read of IgnoreContent's bytes.
func (s *Store) ensureIgnored(fsys *checkoutFS) error {
	if fsys.ignoredBy() {
		return nil
	}
	if err := s.ensureExcluded(); err != nil {
		return fmt.Errorf("exclude %s: %w", CheckoutDir, err)
	}
	if err := fsys.writeFile(IgnoreFile, []byte(IgnoreContent)); err != nil {
		return fmt.Errorf("write %s/%s (which keeps git from staging it): %w", CheckoutDir, IgnoreFile, err)
	}
	return nil
}

// isIgnoreFile says whether the slash path p of the checked-out tree is IgnoreFile: never a store path
// (validate.go's layout has no file of that name), never a hand edit, never checked out from a ref.
func isIgnoreFile(p string) bool { return p == IgnoreFile }

// GitSeesCheckout lists the files (or folders, as git collapses them) of .context/ that git sees as
// untracked: what `git add -A` would stage (`git ls-files --others --exclude-standard`), slash paths
// relative to .context/. It runs git only when IgnoreFile is not in place (Refresh writes it;
// with it git sees nothing there, gitignore(5)); none in a bare repository or without git.
func (s *Store) GitSeesCheckout(ctx context.Context) ([]string, error) {
	root := s.CheckoutRoot()
	if root == "" || !gitstore.HasGit() {
		return nil, nil
	}
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		return nil, nil
	}
	fsys, err := openCheckout(root)
	if err != nil {
		return nil, nil
	}
	ok := fsys.ignoredByStat()
	_ = fsys.Close()
	if ok {
		return nil, nil
	}
	seen, err := s.repo.UntrackedFiles(ctx, CheckoutDir)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for _, p := range seen {
		if rel, ok := strings.CutPrefix(p, CheckoutDir+"/"); ok && rel != "" {
			out = append(out, rel)
		}
	}
	return out, nil
}
