package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/rogpeppe/go-internal/lockedfile"
)

// Local usage accounting (docs/mcp.md "Local usage"): the number of tools/call requests this machine's
// stdio servers answered and the serialized bytes of those responses, counted only after the whole
// response line was written to the client. It is local (a file in the git common dir, never pushed),
// fail-open (an error is reported in status, never to a call) and switchable off with CTX_MCP_USAGE=off
// or Options.NoUsage.

// usageVersion is the version of the usage file's format.
const usageVersion = 1

// usageFlushDelay is how long counted calls wait before they are written: a burst of calls costs one
// file write, not one per call, off the response path.
const usageFlushDelay = time.Second

// usageEnv switches the accounting off when set to off, 0 or false; it is read again for every call.
const usageEnv = "CTX_MCP_USAGE"

// usageFile is the file's content and the compact report's counters.
type usageFile struct {
	Version       int                   `json:"version"`
	Calls         int64                 `json:"tool_calls"`
	ResponseBytes int64                 `json:"mcp_response_bytes"`
	ByTool        map[string]*toolUsage `json:"by_tool"`
	UpdatedAt     string                `json:"updated_at,omitempty"`
}

type toolUsage struct {
	Calls         int64 `json:"tool_calls"`
	ResponseBytes int64 `json:"mcp_response_bytes"`
}

func (f *usageFile) add(tool string, calls, bytes int64) {
	if f.ByTool == nil {
		f.ByTool = map[string]*toolUsage{}
	}
	t := f.ByTool[tool]
	if t == nil {
		t = &toolUsage{}
		f.ByTool[tool] = t
	}
	t.Calls += calls
	t.ResponseBytes += bytes
	f.Calls += calls
	f.ResponseBytes += bytes
}

// usage records delivered calls of one server and writes them to path in the background.
type usage struct {
	path string
	off  bool // Options.NoUsage

	// fileMu serialises this server's reads and writes of the file (flush, report); between processes
	// (several servers of one repository) the lock file <path>.lock does. mu guards pending and errCode
	// only, so a delivered call never waits for the file.
	fileMu  sync.Mutex
	mu      sync.Mutex
	pending usageFile // counted, not yet in the file
	errCode string    // the last failure, content-free ("" when none)
	kick    chan struct{}
}

func newUsage(path string, off bool) *usage {
	return &usage{path: path, off: off, kick: make(chan struct{}, 1)}
}

// enabled re-resolves the switch: Options.NoUsage, then CTX_MCP_USAGE.
func (u *usage) enabled() bool {
	if u.off || u.path == "" {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(os.Getenv(usageEnv))) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// delivered counts one tools/call of tool whose response of n bytes (the newline included) was written;
// the caller resolved enabled() when the request arrived.
func (u *usage) delivered(tool string, n int) {
	u.mu.Lock()
	u.pending.add(tool, 1, int64(n))
	u.mu.Unlock()
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// run writes the counted calls to the file at most once per usageFlushDelay while there are new ones,
// and once more when ctx ends.
func (u *usage) run(ctx context.Context) {
	for {
		select {
		case <-u.kick:
			t := time.NewTimer(usageFlushDelay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			u.flush()
			if ctx.Err() != nil {
				return
			}
		case <-ctx.Done():
			u.flush()
			return
		}
	}
}

// flush adds the pending counts to the file (under the lock file: read, add, atomic write). On failure
// the counts go back to pending and the failure is reported in status.
func (u *usage) flush() {
	u.fileMu.Lock()
	defer u.fileMu.Unlock()
	u.mu.Lock()
	p := u.pending
	u.pending = usageFile{}
	u.mu.Unlock()
	if p.Calls == 0 {
		return
	}
	code := u.write(p)
	u.mu.Lock()
	defer u.mu.Unlock()
	if code != "" {
		for name, t := range p.ByTool {
			u.pending.add(name, t.Calls, t.ResponseBytes)
		}
	}
	u.errCode = code
}

// write adds p to the file under its lock file; it returns "" or the failure's code.
func (u *usage) write(p usageFile) string {
	if err := os.MkdirAll(filepath.Dir(u.path), 0o700); err != nil {
		return "usage_write_failed"
	}
	unlock, err := lockedfile.MutexAt(u.path + ".lock").Lock()
	if err != nil {
		return "usage_write_failed"
	}
	defer unlock()
	f, err := readUsage(u.path)
	if err != nil {
		return "usage_unreadable"
	}
	for name, t := range p.ByTool {
		f.add(name, t.Calls, t.ResponseBytes)
	}
	f.Version, f.UpdatedAt = usageVersion, time.Now().UTC().Format(time.RFC3339)
	b, err := json.Marshal(f)
	if err == nil {
		err = atomicfile.Write(u.path, b, 0o600)
	}
	if err != nil {
		return "usage_write_failed"
	}
	return ""
}

// readUsage reads the usage file; a missing file is empty counts.
func readUsage(path string) (usageFile, error) {
	var f usageFile
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Version != usageVersion {
		return usageFile{}, errors.New("unreadable usage file")
	}
	return f, nil
}

// Versions of the local usage report (docs/mcp.md "Local usage"). usageDefinitionVersion is what a
// counted call is (a tools/call of a known tool whose whole response line was written and flushed; its
// bytes are that line with its newline); usageRetentionVersion is what is kept (aggregate counters per
// tool in the usage file, no per-call records, nothing of a call's arguments or result, kept until the
// file is removed). Either changes when its rule does.
const (
	usageDefinitionVersion = 1
	usageRetentionVersion  = 1
)

// localUsage is the compact report of status: enablement, state, the definition and retention versions
// and a stable content-free error when unavailable; never counts (docs/mcp.md "Local usage": "Compact local_usage contains
// only enablement, state, definition/retention versions, and a stable content-free error").
type localUsage struct {
	Enabled           bool   `json:"enabled"`
	State             string `json:"state"` // recording, disabled, unavailable
	DefinitionVersion int    `json:"definition_version"`
	RetentionVersion  int    `json:"retention_version"`
	Error             string `json:"error,omitempty"` // usage_unreadable, usage_write_failed
}

// UsageReport is the full local usage report (`ctx mcp usage --json`): the compact report's fields plus
// the counters, {tool_calls, mcp_response_bytes, by_tool {<tool> {tool_calls, mcp_response_bytes}},
// updated_at}.
type UsageReport struct {
	localUsage
	usageFile
}

// report is the compact report; it reads the file only to say whether it is readable.
func (u *usage) report() localUsage {
	if !u.enabled() {
		// disabled: no I/O at all (an explicit off takes effect before the file is touched)
		return localUsage{State: "disabled", DefinitionVersion: usageDefinitionVersion, RetentionVersion: usageRetentionVersion}
	}
	return u.full().localUsage
}

// full is the compact report with the counters (the file's plus those counted and not yet written).
func (u *usage) full() UsageReport {
	r := UsageReport{localUsage: localUsage{Enabled: u.enabled(), DefinitionVersion: usageDefinitionVersion,
		RetentionVersion: usageRetentionVersion}}
	r.Version, r.ByTool = usageVersion, map[string]*toolUsage{}
	if u.path == "" {
		r.State = "disabled"
		return r
	}
	u.fileMu.Lock()
	defer u.fileMu.Unlock()
	f, err := readUsage(u.path)
	u.mu.Lock()
	defer u.mu.Unlock()
	if !r.Enabled {
		r.State = "disabled"
	}
	if err != nil {
		if r.Enabled {
			r.State, r.Error = "unavailable", "usage_unreadable"
		}
		return r
	}
	for name, t := range u.pending.ByTool {
		f.add(name, t.Calls, t.ResponseBytes)
	}
	if f.ByTool == nil {
		f.ByTool = map[string]*toolUsage{}
	}
	f.Version = usageVersion
	r.usageFile = f
	if r.Enabled {
		r.State, r.Error = "recording", u.errCode
		if u.errCode != "" {
			r.State = "unavailable"
		}
	}
	return r
}

// LocalUsage returns the full local usage report of the repository whose git common dir is commonDir
// (`ctx mcp usage --json`, docs/mcp.md "Local usage"). It only reads; noUsage reports it disabled, as
// Options.NoUsage does, with the counters kept so far.
func LocalUsage(commonDir string, noUsage bool) UsageReport {
	return newUsage(usagePath(commonDir), noUsage).full()
}

// usagePath is the usage file of the repository whose git common dir is commonDir.
func usagePath(commonDir string) string {
	return filepath.Join(commonDir, "ctx", "mcp-usage.json")
}
