package main_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// TestMCPServeHTTP runs the real binary: ctx team token add prints a token whose hash alone is stored
// (never on the branch), ctx mcp serve --http serves it on loopback, a write through it is authored by
// the token's member with its agent, SIGTERM ends the server with exit 0, and a revoked token is gone.
// A non-loopback address without --allow-remote is a usage error.
func TestMCPServeHTTP(t *testing.T) {
	remote := testenv.BareRemote(t)
	dir := testenv.Clone(t, remote, "a")
	run(t, dir, 0, "init", "--no-hooks")

	out := run(t, dir, 0, "team", "token", "add", "Grace Hopper", "--email", "grace@example.com", "--agent", "claude-code", "--expires", "30d")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	tok := lines[len(lines)-1]
	if !regexp.MustCompile(`^ctx_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$`).MatchString(tok) {
		t.Fatalf("the last line is not a token: %q", out)
	}
	common := testenv.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	b, err := os.ReadFile(filepath.Join(common, "ctx", "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), tok[17:]) {
		t.Fatalf("tokens.json holds the token")
	}
	if tree := testenv.Git(t, dir, "ls-tree", "-r", "--name-only", "ctx"); strings.Contains(tree, "token") {
		t.Fatalf("the context branch holds a token file:\n%s", tree)
	}
	if list := run(t, dir, 0, "team", "token", "list"); !strings.Contains(list, "Grace Hopper") || !strings.Contains(list, "claude-code") || strings.Contains(list, tok[17:]) {
		t.Fatalf("token list:\n%s", list)
	}

	// refused addresses
	if _, stderr, code := runCode(dir, "", "mcp", "serve", "--http", "0.0.0.0:0"); code != 2 || !strings.Contains(stderr, "--allow-remote") {
		t.Errorf("--http 0.0.0.0:0: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runCode(dir, "", "mcp", "serve", "--http", "0.0.0.0:0", "--allow-remote"); code != 2 || !strings.Contains(stderr, "TLS") {
		t.Errorf("--allow-remote without TLS: exit %d, %s", code, stderr)
	}

	cmd := exec.Command(ctxBin, "mcp", "serve", "--http", "127.0.0.1:0")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }() // already gone after the SIGTERM below
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if m := regexp.MustCompile(`serving (http://\S+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			if !strings.Contains(sc.Text(), "(1 token;") { // it said "1 tokens"
				t.Errorf("the server's first line: %s", sc.Text())
			}
			break
		}
	}
	if url == "" {
		t.Fatal("the server did not say where it listens")
	}
	var logBuf bytes.Buffer
	logDone := make(chan struct{})
	go func() { _, _ = io.Copy(&logBuf, stderr); close(logDone) }()

	post := func(auth, session, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, _ := post("", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d", resp.StatusCode)
	}
	resp, body := post(tok, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q %s", resp.StatusCode, sid, body)
	}
	post(tok, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, body = post(tok, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"context_add_knowledge","arguments":{"key":"over-http","content":"hi"}}}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `over-http`) || strings.Contains(body, `"isError":true`) {
		t.Fatalf("tools/call: %d %s", resp.StatusCode, body)
	}
	if a := testenv.Git(t, dir, "log", "-1", "--format=%an <%ae>|%(trailers:key=Ctx-Agent,valueonly,separator=)", "ctx"); a != "Grace Hopper <grace@example.com>|claude-code" {
		t.Errorf("the write is authored %q", a)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { <-logDone; done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, logBuf.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop on SIGTERM")
	}
	if strings.Contains(logBuf.String(), tok[17:]) {
		t.Errorf("the server's log holds the token")
	}
	if !strings.Contains(logBuf.String(), `"member":"Grace Hopper"`) {
		t.Errorf("no access log line names the member:\n%s", logBuf.String())
	}

	run(t, dir, 0, "team", "token", "revoke", "Grace Hopper")
	if list := run(t, dir, 0, "team", "token", "list", "--json"); strings.TrimSpace(list) != "[]" {
		t.Errorf("after revoke: %s", list)
	}
	run(t, dir, 3, "team", "token", "revoke", "Grace Hopper")
	run(t, dir, 2, "team", "token", "add", "x", "--expires", "soon")
}
