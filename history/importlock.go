package history

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// An import holds the index's import lock, <index dir>/import.lock (an advisory flock), from before it
// reads the sources' recorded state until its last write: two imports that read the same state would
// both append a grown file's new records (docs/history.md "Concurrent imports"). A second import waits
// for the first, as long as importLockWait, saying so on ImportWaitNotice after importNoticeAfter.
// (Variables for the tests.)
var (
	importLockWait    = 10 * time.Minute
	importNoticeAfter = time.Second
	importLockDelay   = 50 * time.Millisecond // the longest pause between two tries
)

// ImportWaitNotice receives the one line an import writes when it has waited importNoticeAfter for another
// (standard error: standard output is the command's result).
var ImportWaitNotice io.Writer = os.Stderr

// importLock is an Index's hold of its import lock: reentrant within the Index (a command holds it
// around its import, whose ImportProgress takes it again).
type importLock struct {
	mu   sync.Mutex
	held int
	fl   *flock.Flock
}

// LockImport takes the import lock of the index (see importLockWait), waiting while another import holds
// it, at most importLockWait; then it fails naming the process that holds it. It is reentrant within ix;
// the returned function releases one hold.
func (ix *Index) LockImport(ctx context.Context) (unlock func(), err error) {
	l := &ix.imp
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held > 0 {
		l.held++
		return ix.unlockImport, nil
	}
	path := filepath.Join(ix.dir, "import.lock")
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	start, delay, told := time.Now(), time.Millisecond, false
	for {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("history import lock %s: %w", path, err)
		}
		if ok {
			break
		}
		waited := time.Since(start)
		if waited >= importLockWait {
			return nil, fmt.Errorf("history import: another import (%s) has held %s for %s: try again when it ends", importHolder(ix.dir), path, waited.Round(time.Second))
		}
		if !told && waited >= importNoticeAfter && ImportWaitNotice != nil {
			told = true
			fmt.Fprintf(ImportWaitNotice, "ctx: waiting for another history import (%s) to finish\n", importHolder(ix.dir))
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("history import lock: %w", ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, importLockDelay)
	}
	// Who holds the lock, for the imports that wait: removed before it is released.
	_ = os.WriteFile(filepath.Join(ix.dir, "import.holder"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	l.fl, l.held = fl, 1
	return ix.unlockImport, nil
}

func (ix *Index) unlockImport() {
	l := &ix.imp
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == 0 {
		return
	}
	if l.held--; l.held == 0 {
		_ = os.Remove(filepath.Join(ix.dir, "import.holder"))
		_ = l.fl.Unlock()
		l.fl = nil
	}
}

// importHolder names the import that holds the lock of the index in dir: "pid N" as it recorded it, or
// "pid unknown".
func importHolder(dir string) string {
	if b, err := os.ReadFile(filepath.Join(dir, "import.holder")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return "pid " + strconv.Itoa(pid)
		}
	}
	return "pid unknown"
}
