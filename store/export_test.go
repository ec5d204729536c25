package store

import (
	"os"
	"sync"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/store/checkoutrec"
)

// GitRepo is the store's repository, for tests that move refs by hand.
func (s *Store) GitRepo() *gitstore.Repo { return s.repo }

// SetRefreshInterrupt installs f as the hook a refresh calls after each file it writes or removes (a panic
// there is a refresh killed half way) and returns the function that removes it.
func SetRefreshInterrupt(f func(done int)) func() {
	old := refreshInterrupt
	refreshInterrupt = f
	return func() { refreshInterrupt = old }
}

// SetOnCheckoutRead installs f as the hook called with every file read from the checked-out tree and
// returns the function that removes it.
func SetOnCheckoutRead(f func(p string)) func() {
	old := onCheckoutRead
	onCheckoutRead = f
	if f != nil {
		// A scan reads the files of a big folder on several goroutines (statuspreload.go): f is called
		// one at a time.
		var mu sync.Mutex
		onCheckoutRead = func(p string) {
			mu.Lock()
			defer mu.Unlock()
			f(p)
		}
	}
	return func() { onCheckoutRead = old }
}

// SetStatPreload makes a scan stat a folder of at least 2*perWorker files on up to workers goroutines,
// whatever the machine's processors (statuspreload.go), batch files at a time, and returns the function
// that restores the defaults.
func SetStatPreload(perWorker, workers, batch int) func() {
	oldPer, oldMax, oldProcs, oldBatch := statPreloadPerWorker, statPreloadMaxWorkers, statPreloadProcs, statPreloadBatch
	statPreloadPerWorker, statPreloadMaxWorkers, statPreloadBatch = perWorker, workers, batch
	statPreloadProcs = func(int) int { return workers }
	return func() {
		statPreloadPerWorker, statPreloadMaxWorkers, statPreloadProcs, statPreloadBatch = oldPer, oldMax, oldProcs, oldBatch
	}
}

// SetOnStatPreload installs f as the hook called with the files and goroutines of every batch a scan
// stats on more than one goroutine, and returns the function that removes it.
func SetOnStatPreload(f func(files, workers int)) func() {
	old := onStatPreload
	onStatPreload = f
	return func() { onStatPreload = old }
}

// MadeBlobsUsed is how many files refreshes wrote from the contents their pull's merge made, in this process.
func MadeBlobsUsed() int64 { return madeBlobsUsed.Load() }

// RecordsParsed is how many times a checkout record was parsed in this process.
func RecordsParsed() int64 { return checkoutrec.ParseCount.Load() }

// SetLazyRecordMin sets the size from which a refresh reads the checkout record lazily and appends its
// changes to RecordLogFile, and returns the function that restores it.
func SetLazyRecordMin(n int) func() {
	old := checkoutrec.LazyRecordMin
	checkoutrec.LazyRecordMin = n
	return func() { checkoutrec.LazyRecordMin = old }
}

// SetOnCheckoutList installs f as the hook called with every folder of the checked-out tree a hand-edit
// scan lists, and returns the function that removes it.
func SetOnCheckoutList(f func(dir string)) func() {
	old := onCheckoutList
	onCheckoutList = f
	return func() { onCheckoutList = old }
}

// StatusIndexPath is where the store's status index is.
func (s *Store) StatusIndexPath() string { return s.statusIndexPath() }

// SetMaxFileBytes sets the store's file limit (MaxFileBytes) to n and returns the function that restores it.
func SetMaxFileBytes(n int64) func() {
	old := maxFileBytes
	maxFileBytes = n
	return func() { maxFileBytes = old }
}

// SetTipBounds sets the bounds of a fetched tip (MaxTipFiles, MaxTipAddedBytes) to files and bytes and
// returns the function that restores them.
func SetTipBounds(files int, bytes int64) func() {
	oldFiles, oldBytes := maxTipFiles, maxTipAddedBytes
	maxTipFiles, maxTipAddedBytes = files, bytes
	return func() { maxTipFiles, maxTipAddedBytes = oldFiles, oldBytes }
}

// SetOnIndexRebuild installs f as the hook called whenever a hand-edit scan builds the status index from
// the whole checkout record, and returns the function that removes it.
func SetOnIndexRebuild(f func()) func() {
	old := onIndexRebuild
	onIndexRebuild = f
	return func() { onIndexRebuild = old }
}

// SetOnIndexExtend installs f as the hook called whenever a hand-edit scan brings the status index up to
// the lines a refresh appended to the checkout record's log, and returns the function that removes it.
func SetOnIndexExtend(f func(paths int)) func() {
	old := onIndexExtend
	onIndexExtend = f
	return func() { onIndexExtend = old }
}

// ForgetCheckout puts the worktree back to before its first checkout (a fresh clone): it removes
// .context/, the marker that it was checked out here and the status index, so that the next refresh checks
// it out whole instead of refusing with a *CheckoutMissingError.
func (s *Store) ForgetCheckout() error {
	for _, p := range []string{s.CheckoutRoot(), s.GitPath("ctx/" + checkoutMadeFile), s.statusIndexPath()} {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// SetOneSidedOff makes merges read and merge every changed path (true), as before one-sided changes were
// taken by name; it returns the function that puts it back.
func SetOneSidedOff(off bool) (restore func()) {
	old := oneSidedOff
	oneSidedOff = off
	return func() { oneSidedOff = old }
}

// OneSidedTaken is how many paths merges have decided by name so far.
func OneSidedTaken() int64 { return oneSidedTaken.Load() }

// SetOnIndexCarried installs f as the hook called whenever a refresh writes the status index of the record
// it wrote (carriedIndex), and returns the function that removes it.
func SetOnIndexCarried(f func(paths int)) func() {
	old := onIndexCarried
	onIndexCarried = f
	return func() { onIndexCarried = old }
}

// SetCarryIndex turns off (or on) the refresh's use of the status index as the record's entries and its
// writing of the next index, and returns the function that restores it.
func SetCarryIndex(on bool) func() {
	old := carryIndex
	carryIndex = on
	return func() { carryIndex = old }
}

// CompileRecordSchemaChecked compiles an embedded record schema, validating it against its metaschema.
func CompileRecordSchemaChecked(name string) error {
	_, err := compileRecordSchemaDoc(name, true)
	return err
}

// HiddenPaths is the map of paths a public-only view of the checked-out tree reads from the public ref
// (publicCheckoutView), nil for any other view.
func (v *View) HiddenPaths() map[string]bool {
	if r, ok := v.r.(publicPrefixReader); ok {
		if sr, ok := r.r.(shadowedReader); ok {
			return sr.hidden
		}
	}
	return nil
}
