package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
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

// TestLocalUsageStatusAndSwitch: status reports the compact local usage; CTX_MCP_USAGE=off stops the
// counting of the calls that arrive after it and status says disabled; counts persist across servers.
func TestLocalUsageStatusAndSwitch(t *testing.T) {
	_, st := newRepo(t, store.Actor{Machine: "testbox"})
	s := serve(t, st, Options{}, "")
	lu := obj(structured(t, "status", s.call(t, "status", nil))["local_usage"])
	if lu["enabled"] != true || lu["state"] != "recording" || lu["tool_calls"] != float64(0) || lu["version"] != float64(1) {
		t.Fatalf("local_usage = %v", lu)
	}
	s.call(t, "search", map[string]any{"query": "x"})
	// A call is counted right after its response was written: the client may ask before that.
	searches := func() map[string]any {
		var lu map[string]any
		for range 100 {
			lu = obj(structured(t, "status", s.call(t, "status", nil))["local_usage"])
			if obj(obj(lu["by_tool"])["search"])["tool_calls"] == float64(1) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return lu
	}
	lu = searches()
	if obj(obj(lu["by_tool"])["search"])["tool_calls"] != float64(1) || lu["mcp_response_bytes"].(float64) < 100 ||
		obj(obj(lu["by_tool"])["status"])["tool_calls"].(float64) < 1 {
		t.Errorf("local_usage after status and search = %v", lu)
	}
	t.Setenv(usageEnv, "off")
	s.call(t, "search", map[string]any{"query": "x"})
	lu = obj(structured(t, "status off", s.call(t, "status", nil))["local_usage"])
	if lu["enabled"] != false || lu["state"] != "disabled" || lu["tool_calls"] != float64(0) {
		t.Errorf("local_usage off = %v", lu)
	}
	t.Setenv(usageEnv, "")
	if lu = searches(); obj(obj(lu["by_tool"])["search"])["tool_calls"] != float64(1) {
		t.Errorf("the search while off was counted: %v", lu)
	}
	s2 := serve(t, st, Options{}, "")
	// The first server writes its counts within usageFlushDelay of the call: poll the second's status.
	for range 60 {
		lu = obj(structured(t, "second server", s2.call(t, "status", nil))["local_usage"])
		if obj(obj(lu["by_tool"])["search"])["tool_calls"] == float64(1) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if obj(obj(lu["by_tool"])["search"])["tool_calls"] != float64(1) {
		t.Errorf("local_usage of a second server = %v", lu)
	}
	s3 := serve(t, st, Options{NoUsage: true}, "")
	if lu := obj(structured(t, "no usage", s3.call(t, "status", nil))["local_usage"]); lu["state"] != "disabled" {
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
