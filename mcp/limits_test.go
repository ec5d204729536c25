package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The test server binary, built once per run of the package's tests into buildDir (removed by TestMain).
var (
	buildDir   string
	buildOnce  sync.Once
	builtBin   string
	buildErr   error
	buildLimit = 5 * time.Minute
)

// TestMain runs the tests in testenv's hermetic environment and removes the test server's build.
func TestMain(m *testing.M) {
	cleanup, err := testenv.Hermetic()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	cleanup()
	os.Exit(code)
}

// buildTestServer builds mcp/internal/testserver (`ctx mcp serve` on the store of its working
// directory), once per run, within its own time bound.
func buildTestServer(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "ctx-mcp-testserver-"); buildErr != nil {
			return
		}
		bin := filepath.Join(buildDir, "testserver")
		ctx, cancel := context.WithTimeout(context.Background(), buildLimit)
		defer cancel()
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./internal/testserver")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build testserver (bound %v): %v\n%s", buildLimit, err, out)
			return
		}
		builtBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// proc is a server subprocess driven by a real mcp-go stdio client.
type proc struct {
	c   *client.Client
	cmd *exec.Cmd
}

// spawn starts the test server in dir (args: its flags) and initialises an mcp-go stdio client named
// clientName.
func spawn(t *testing.T, bin, dir, clientName string, args ...string) *proc {
	t.Helper()
	p := &proc{}
	tr := transport.NewStdioWithOptions(bin, nil, args, transport.WithCommandFunc(
		func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), env...)
			p.cmd = cmd
			return cmd, nil
		}))
	p.c = client.NewClient(tr)
	ctx := context.Background()
	if err := p.c.Start(ctx); err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { p.c.Close() })
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcpgo.Implementation{Name: clientName, Version: "1.0"}
	if _, err := p.c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return p
}

// peakRSS is the server process's peak resident set size in bytes (VmHWM of /proc/PID/status).
func (p *proc) peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc to measure the server's memory: %v", err)
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", p.cmd.Process.Pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

func (p *proc) read(uri string) (*mcpgo.ReadResourceResult, error) {
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = uri
	return p.c.ReadResource(context.Background(), req)
}

func responseSize(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

const mib = 1 << 20

// A 50 MiB knowledge entry read through a real stdio client is refused with a JSON-RPC error naming the
// limit and the CLI command that prints it, without the server loading it: the server's peak RSS stays
// far below the entry's size. The list resource, get_project_context and the onboarding prompt show the
// beginning of it with a marker, within the 1 MiB response limit, and the server stays up.
func TestLargeEntryBoundedMemory(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	big := strings.Repeat("0123456789abcdef\n", 50*mib/17+1)
	// ctx writes no file over store.MaxFileBytes (32 MiB and a little): the 50 MiB entry reached the branch
	// with plain git (or before that limit), as ctx doctor would report it.
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "big", Content: "placeholder\n"}); err != nil {
		t.Fatal(err)
	}
	content := strings.Replace(testenv.Git(t, dir, "show", "ctx:knowledge/big.md"), "placeholder", strings.TrimSuffix(big, "\n"), 1) + "\n"
	tree := testenv.WithEntry(t, dir, testenv.Git(t, dir, "rev-parse", "ctx^{tree}"), []string{"knowledge", "big.md"}, "100644",
		testenv.Blob(t, dir, content))
	testenv.Git(t, dir, "update-ref", "refs/heads/ctx", testenv.CommitTree(t, dir, tree, testenv.Git(t, dir, "rev-parse", "ctx"), "a 50 MiB entry"))
	if _, err := st.Refresh(ctx); err != nil { // .context/ holds it before the server starts, as after a write
		t.Fatal(err)
	}
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "small", Content: "hello\n"}); err != nil {
		t.Fatal(err)
	}
	p := spawn(t, buildTestServer(t), dir, "ctx-test")

	_, err := p.read("context://knowledge/big")
	if err == nil || !strings.Contains(err.Error(), "output_limit_exceeded") || !strings.Contains(err.Error(), "ctx knowledge get big") {
		t.Fatalf("read knowledge/big: %v; want a JSON-RPC error output_limit_exceeded naming `ctx knowledge get big`", err)
	}
	t.Logf("read knowledge/big: %v", err)

	res, err := p.read("context://knowledge")
	if err != nil {
		t.Fatalf("read knowledge: %v", err)
	}
	if n := responseSize(t, res); n > maxResponseBytes {
		t.Errorf("context://knowledge: %d bytes, over the limit", n)
	}
	var list []entryItem
	if err := json.Unmarshal([]byte(res.Contents[0].(mcpgo.TextResourceContents).Text), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[1].Key != "small" || list[1].Content != "hello\n" {
		t.Fatalf("knowledge list = %d items", len(list))
	}
	if !regexp.MustCompile(`\n\n\[truncated: showing \d+ of 52428\d\d\d bytes; the entry is over the MCP response limit: ` +
		"`ctx knowledge get big` prints it\\]$").MatchString(list[0].Content) {
		t.Errorf("big in the list: no marker: ...%q", list[0].Content[max(len(list[0].Content)-200, 0):])
	}

	pc, err := p.c.CallTool(ctx, callReq("get_project_context", map[string]any{"project": "engine-notes"}))
	if err != nil || pc.IsError {
		t.Fatalf("get_project_context: %v %v", err, pc)
	}
	if n := responseSize(t, pc); n > maxResponseBytes {
		t.Errorf("get_project_context: %d bytes", n)
	}
	gp, err := p.c.GetPrompt(ctx, mcpgo.GetPromptRequest{Params: mcpgo.GetPromptParams{Name: "context_onboarding"}})
	if err != nil || !strings.Contains(gp.Messages[0].Content.(mcpgo.TextContent).Text, "[truncated: ") {
		t.Errorf("context_onboarding: %v", err)
	}

	// search still works: the big entry is searched in its first bytes.
	sr, err := p.c.CallTool(ctx, callReq("search", map[string]any{"query": "hello"}))
	if err != nil || sr.IsError || !strings.Contains(fmt.Sprint(sr.StructuredContent), "small") {
		t.Errorf("search: %v %v", err, sr)
	}

	// The server is still up and serves the rest.
	if _, err := p.read("context://knowledge/small"); err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
	peak := p.peakRSS(t)
	t.Logf("server peak RSS with a %d-byte entry: %.1f MiB", len(big), float64(peak)/mib)
	if peak > 128*mib {
		t.Errorf("server peak RSS %.1f MiB: reading around a 50 MiB entry must not load it", float64(peak)/mib)
	}
}

func callReq(name string, args map[string]any) mcpgo.CallToolRequest {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return req
}

// 1,000 reads of a 600 KiB entry queued at once on the server's stdin (one line each, written before any
// response is read, as a client flooding the server would): each is answered, either whole or refused as
// server_busy (JSON-RPC -32000), the server's peak RSS stays bounded, and it still serves reads
// afterwards. The responses are checked by their first bytes and length, not decoded, so that the
// client's work stays small next to the server's.
func TestConcurrentReadsBounded(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	ctx := context.Background()
	body := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 600<<10/36)
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "mid", Content: body}); err != nil {
		t.Fatal(err)
	}
	cmd, stdin, stdout, stderr := startTestServer(t, dir)
	p := &proc{cmd: cmd}
	out := bufio.NewReaderSize(stdout, 1<<20)
	line := func() []byte {
		b, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read response: %v\nstderr: %s", err, stderr.String())
		}
		return b
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	line()
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}

	n := 1000
	if testing.Short() {
		n = 200
	}
	go func() {
		var reqs strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&reqs, `{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"context://knowledge/mid"}}`+"\n", i)
		}
		// A failed write shows as requests never answered, which the loop below reports.
		_, _ = io.WriteString(stdin, reqs.String())
	}()
	answered := map[int]bool{}
	ok, busy := 0, 0
	idRe := regexp.MustCompile(`^\{"jsonrpc":"2\.0","id":(\d+),"(result|error)"`)
	for len(answered) < n {
		b := line()
		m := idRe.FindSubmatch(b[:min(len(b), 64)])
		if m == nil {
			t.Fatalf("response %.200s", b)
		}
		id, _ := strconv.Atoi(string(m[1]))
		answered[id] = true
		switch {
		case string(m[2]) == "result" && len(b) > len(body) && len(b) <= maxResponseBytes:
			ok++
		case string(m[2]) == "error" && bytes.Contains(b, []byte(`"code":-32000`)) && bytes.Contains(b, []byte("server busy")):
			busy++
		default:
			t.Fatalf("response %d: %.300s", id, b)
		}
	}
	peak := p.peakRSS(t)
	t.Logf("%d reads of a %d-byte entry queued at once: %d answered, %d refused as busy; server peak RSS %.1f MiB",
		n, len(body), ok, busy, float64(peak)/mib)
	if ok < maxRunning || ok+busy != n {
		t.Errorf("%d answered, %d busy of %d", ok, busy, n)
	}
	if peak > 256*mib {
		t.Errorf("server peak RSS %.1f MiB under %d queued reads", float64(peak)/mib, n)
	}
	// Still serving.
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":5000,"method":"resources/read","params":{"uri":"context://knowledge/mid"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if b := line(); !bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0","id":5000,"result"`)) {
		t.Fatalf("after the flood: %.200s", b)
	}
}

// A request line longer than the request limit is answered with an invalid-request error carrying its id,
// skipped without being kept, and the server goes on serving the requests after it.
func TestOversizeRequestRefused(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeStdio(context.Background(), st, serverIn, serverOut, Options{})
		serverOut.Close()
	}()
	out := bufio.NewReader(clientIn)
	send := func(s string) {
		if _, err := io.WriteString(clientOut, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read response: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("response %q: %v", line, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	huge := `{"jsonrpc":"2.0","id":"big-7","method":"tools/call","params":{"name":"context_add_knowledge","arguments":{"key":"x","content":"` +
		strings.Repeat("y", maxRequestBytes+10) + `"}}}`
	go func() { _, _ = io.WriteString(clientOut, huge+"\n") }()
	m := recv()
	e, _ := m["error"].(map[string]any)
	if m["id"] != "big-7" || e == nil || e["code"] != float64(mcpgo.INVALID_REQUEST) || !strings.Contains(e["message"].(string), "request limit") {
		t.Fatalf("oversize request: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"context://summary"}}`)
	if m := recv(); m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("after the oversize request: %v", m)
	}
	clientOut.Close()
	go func() { _, _ = io.Copy(io.Discard, clientIn) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Nothing was written.
	if _, err := mustView(t, st).GetEntry(context.Background(), store.KnowledgeKind, "x"); err == nil {
		t.Error("the oversize write landed")
	}
}

func mustView(t *testing.T, st *store.Store) *store.View {
	t.Helper()
	v, err := st.RefView(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// startTestServer starts the test server binary (buildTestServer) in dir, its stdin and stdout piped
// and its stderr kept; the cleanup closes stdin and waits for it.
func startTestServer(t *testing.T, dir string) (*exec.Cmd, io.WriteCloser, io.Reader, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(buildTestServer(t))
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	return cmd, stdin, stdout, stderr
}
