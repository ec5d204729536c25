package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
)

// TestLocalUsageCountsDeliveredCalls: the usage file counts exactly the tools/call requests of known
// tools, with the bytes of their response lines; initialize, notifications, unknown tools, malformed
// lines and tools/list are not counted.
func TestLocalUsageCountsDeliveredCalls(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"nothing"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":100000}}}`,
		`{not json`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := ServeStdio(context.Background(), st, strings.NewReader(in), &out, Options{}); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, line := range strings.SplitAfter(out.String(), "\n") {
		var m struct {
			ID any `json:"id"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && (m.ID == float64(3) || m.ID == float64(5)) {
			want += len(line)
		}
	}
	common := git(t, dir, "rev-parse", "--git-common-dir")
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	f, err := readUsage(filepath.Join(common, "ctx", "mcp-usage.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Calls != 2 || f.ResponseBytes != int64(want) || want == 0 || len(f.ByTool) != 1 || f.ByTool["search"].Calls != 2 {
		t.Errorf("usage = %+v (by tool %v), want 2 calls of search, %d bytes", f, f.ByTool, want)
	}
}

// TestLocalUsageStatusAndSwitch: status reports the compact local usage (only enablement, state, the
// definition and retention versions and an error: docs/mcp.md "Local usage", never counts), LocalUsage (ctx mcp
// usage) the counts; CTX_MCP_USAGE=off stops the counting of the calls that arrive after it and status
// says disabled; counts persist across servers.
func TestLocalUsageStatusAndSwitch(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Machine: "testbox"})
	common := git(t, dir, "rev-parse", "--git-common-dir")
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	s := serve(t, st, Options{}, "")
	compact := func(what string, s *session) map[string]any {
		t.Helper()
		lu := obj(structured(t, what, s.call(t, "status", nil))["local_usage"])
		keys := []string{}
		for k := range lu {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"definition_version", "enabled", "retention_version", "state"}; !slices.Equal(keys, want) ||
			lu["definition_version"] != float64(usageDefinitionVersion) || lu["retention_version"] != float64(usageRetentionVersion) {
			t.Errorf("%s: local_usage = %v, want exactly the keys %v", what, lu, want)
		}
		return lu
	}
	if lu := compact("status", s); lu["enabled"] != true || lu["state"] != "recording" {
		t.Fatalf("local_usage = %v", lu)
	}
	if r := LocalUsage(common, false); r.Calls != 0 || r.State != "recording" || r.Version != 1 {
		t.Fatalf("LocalUsage before any call = %+v", r)
	}
	s.call(t, "search", map[string]any{"query": "x"})
	// A call is counted right after its response was written, and written within usageFlushDelay.
	searches := func(want int64) UsageReport {
		var r UsageReport
		for range 100 {
			if r = LocalUsage(common, false); r.ByTool["search"] != nil && r.ByTool["search"].Calls == want {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		return r
	}
	r := searches(1)
	if r.ByTool["search"] == nil || r.ByTool["search"].Calls != 1 || r.ResponseBytes < 100 || r.ByTool["status"] == nil {
		t.Errorf("usage after status and search = %+v", r)
	}
	t.Setenv(usageEnv, "off")
	s.call(t, "search", map[string]any{"query": "x"})
	if lu := compact("status off", s); lu["enabled"] != false || lu["state"] != "disabled" {
		t.Errorf("local_usage off = %v", lu)
	}
	if r := LocalUsage(common, false); r.State != "disabled" || r.Enabled {
		t.Errorf("LocalUsage while off = %+v", r)
	}
	t.Setenv(usageEnv, "")
	s.call(t, "status", nil) // the second counted status: once it is written, so is anything counted before it
	var after UsageReport
	for range 100 {
		if after = LocalUsage(common, false); after.ByTool["status"] != nil && after.ByTool["status"].Calls == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after.ByTool["status"].Calls != 2 || after.ByTool["search"].Calls != 1 {
		t.Errorf("the calls while off were counted (status %+v, search %+v)", after.ByTool["status"], after.ByTool["search"])
	}
	s2 := serve(t, st, Options{}, "")
	s2.call(t, "search", map[string]any{"query": "y"})
	if r := searches(2); r.ByTool["search"].Calls != 2 {
		t.Errorf("a second server's search: %+v", r.ByTool["search"])
	}
	s3 := serve(t, st, Options{NoUsage: true}, "")
	if lu := compact("no usage", s3); lu["state"] != "disabled" {
		t.Errorf("Options.NoUsage: %v", lu)
	}
}

// TestLocalUsageTwoServersLoseNothing: two servers of one repository (two usage recorders on one file, as
// two processes would be: the lock file serialises them) flushing at once keep every count.
func TestLocalUsageTwoServersLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ctx", "mcp-usage.json")
	a, b := newUsage(path, false), newUsage(path, false)
	const rounds = 50
	done := make(chan struct{})
	for _, u := range []*usage{a, b} {
		go func() {
			defer func() { done <- struct{}{} }()
			for range rounds {
				u.delivered("search", 10)
				u.delivered("status", 1)
				u.flush()
			}
		}()
	}
	<-done
	<-done
	f, err := readUsage(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Calls != 4*rounds || f.ResponseBytes != 2*rounds*11 || f.ByTool["search"].Calls != 2*rounds {
		t.Fatalf("usage = %+v (by tool %v), want %d calls and %d bytes", f, f.ByTool, 4*rounds, 2*rounds*11)
	}
}
