package mcp

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/tokens"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// transportCase connects a client to a server over one transport.
type transportCase struct {
	name  string
	serve func(t testing.TB, st *store.Store, opt Options, protocolVersion string) *session
}

// transports are stdio and Streamable HTTP; over HTTP the client's token speaks for the repository's git
// user (Ada Lovelace) with the agent opt.Agent, so that both transports write as the same identity.
func transports() []transportCase {
	return []transportCase{
		{"stdio", serve},
		{"http", func(t testing.TB, st *store.Store, opt Options, pv string) *session {
			h := startHTTP(t, st, opt, HTTPOptions{})
			tok := h.token(t, tokens.Spec{Member: "Ada Lovelace", Email: "ada@example.com", Agent: opt.Agent})
			return h.connect(t, tok, pv, "ctx-test")
		}},
	}
}

// httpServer is a Server's HTTP handler on an httptest server (loopback), with its token store and
// access log.
type httpServer struct {
	url    string
	tokens *tokens.Store
	log    *syncBuffer
	stderr *syncBuffer
}

func startHTTP(t testing.TB, st *store.Store, opt Options, hopt HTTPOptions) *httpServer {
	t.Helper()
	h := &httpServer{tokens: tokens.Open(t.TempDir()), log: &syncBuffer{}, stderr: &syncBuffer{}}
	if opt.Stderr == nil {
		opt.Stderr = h.stderr
	}
	if hopt.Tokens == nil {
		hopt.Tokens = h.tokens
	}
	hopt.AccessLog = h.log
	x := NewServer(st, opt)
	handler, err := x.HTTPHandler(hopt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = x.Watch(ctx) }()
	ts := httptest.NewServer(handler)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		cancel()
		<-done
	})
	h.url = ts.URL
	return h
}

func (h *httpServer) token(t testing.TB, sp tokens.Spec) string {
	t.Helper()
	tok, _, err := h.tokens.Add(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// connect starts an initialised mcp-go Streamable HTTP client with the bearer token.
func (h *httpServer) connect(t testing.TB, token, protocolVersion, clientName string) *session {
	t.Helper()
	c, err := client.NewStreamableHttpClient(h.url+HTTPPath,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}),
		// The standalone GET stream of the protocol versions before 2026-07-28, which clients of those
		// versions still use for server notifications; TestHTTPNotifications needs it.
		transport.WithContinuousListening(), //nolint:staticcheck // deprecated for new protocol versions only
		transport.WithHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	s := &session{c: c, noteCh: make(chan struct{}, 1024), stderr: h.stderr}
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		s.mu.Lock()
		s.notes = append(s.notes, n)
		s.mu.Unlock()
		select {
		case s.noteCh <- struct{}{}:
		default:
		}
	})
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("client start: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = protocolVersion
	req.Params.ClientInfo = mcpgo.Implementation{Name: clientName, Version: "1.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize over HTTP: %v\nstderr: %s", err, s.stderr)
	}
	return s
}

// post sends one raw JSON-RPC POST and returns the status and body.
func (h *httpServer) post(t *testing.T, header map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+HTTPPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// refsOf is every ref of the repository and of its local-only store with its commit.
func refsOf(t *testing.T, dir string) string {
	out := git(t, dir, "for-each-ref")
	args := localRefArgs(dir, []string{"for-each-ref", store.RefPrivate, store.RefEphemeral})
	local, _ := testenv.GitErr(dir, args...) // no local-only store yet: nothing written there
	return out + "\n" + local
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

func writeBody(key string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"context_add_knowledge","arguments":{"key":"` +
		key + `","content":"x"}}}`)
}

// TestHTTPAuthRefused: no token, a malformed one, a wrong one, a revoked and an expired one are all
// 401 with WWW-Authenticate, and nothing is written; the access log never holds a token.
func TestHTTPAuthRefused(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	h := startHTTP(t, st, Options{}, HTTPOptions{})
	good := h.token(t, tokens.Spec{Member: "Ada Lovelace"})
	revoked := h.token(t, tokens.Spec{Member: "Bob"})
	if _, err := h.tokens.Revoke(context.Background(), "Bob"); err != nil {
		t.Fatal(err)
	}
	expired := h.token(t, tokens.Spec{Member: "Carol", TTL: time.Nanosecond})
	time.Sleep(2 * time.Millisecond)
	wrong := good[:len(good)-2] + "xx"
	if strings.HasSuffix(good, "xx") {
		wrong = good[:len(good)-2] + "yy"
	}
	before := refsOf(t, dir)
	for name, hdr := range map[string]map[string]string{
		"none":      {},
		"basic":     {"Authorization": "Basic " + good},
		"malformed": {"Authorization": "Bearer not-a-token"},
		"wrong":     {"Authorization": "Bearer " + wrong},
		"revoked":   {"Authorization": "Bearer " + revoked},
		"expired":   {"Authorization": "Bearer " + expired},
	} {
		for _, body := range [][]byte{[]byte(initializeBody), writeBody("k-" + name)} {
			code, resp := h.post(t, hdr, body)
			if code != http.StatusUnauthorized {
				t.Errorf("%s token: status %d, want 401: %s", name, code, resp)
			}
		}
	}
	if after := refsOf(t, dir); after != before {
		t.Errorf("refused requests wrote:\nbefore %s\nafter %s", before, after)
	}
	// the good token gets through
	if code, resp := h.post(t, map[string]string{"Authorization": "Bearer " + good}, []byte(initializeBody)); code != http.StatusOK {
		t.Errorf("good token: status %d: %s", code, resp)
	}
	log := h.log.String()
	for _, tok := range []string{good, revoked, expired, wrong} {
		// ctx_<id>_<secret>: the secret is all after the second '_' (it may hold '_' itself: base64url)
		parts := strings.SplitN(tok, "_", 3)
		secret := parts[len(parts)-1]
		if len(secret) < 16 {
			t.Fatalf("token %q: secret %q too short to check", tok, secret)
		}
		if strings.Contains(log, secret) {
			t.Errorf("the access log holds a token:\n%s", log)
		}
	}
	if !strings.Contains(log, `"refused":"token"`) || !strings.Contains(log, `"member":"Ada Lovelace"`) {
		t.Errorf("the access log lacks the refusals or the member:\n%s", log)
	}
}

// TestHTTPIdentityFromToken: two members write at the same time through their own tokens; each commit's
// author and Ctx-Agent are its token's, a forged agent argument changes nothing, and
// get_project_context marks each caller's own member and agent is_you, with the pulse's agent_id
// member/agent.
func TestHTTPIdentityFromToken(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	h := startHTTP(t, st, Options{Session: "srv-sess"}, HTTPOptions{})
	ada := h.connect(t, h.token(t, tokens.Spec{Member: "Ada Lovelace", Email: "ada@example.com", Agent: "claude-code"}), "", "cursor")
	bob := h.connect(t, h.token(t, tokens.Spec{Member: "Bob Babbage", Email: "bob@example.com", Agent: "codex"}), "", "claude-code")

	var wg sync.WaitGroup
	for i := range 4 {
		for _, c := range []struct {
			s    *session
			name string
		}{{ada, "ada"}, {bob, "bob"}} {
			wg.Go(func() {
				res, err := c.s.callErr("context_add_knowledge", map[string]any{"key": fmt.Sprintf("%s-%d", c.name, i), "content": "by " + c.name})
				if err != nil || res.IsError {
					t.Errorf("%s write %d: %v %s", c.name, i, err, resultText(res))
				}
			})
		}
	}
	wg.Wait()
	log := git(t, dir, "log", "--format=%an <%ae>|%(trailers:key=Ctx-Agent,valueonly,separator=)|%(trailers:key=Ctx-Key,valueonly,separator=)", st.BranchRef())
	seen := map[string]int{}
	for _, l := range strings.Split(log, "\n") {
		parts := strings.Split(l, "|")
		if len(parts) != 3 || !strings.Contains(parts[2], "-") {
			continue
		}
		who := parts[2][:strings.IndexByte(parts[2], '-')]
		want := map[string]string{"ada": "Ada Lovelace <ada@example.com>|claude-code", "bob": "Bob Babbage <bob@example.com>|codex"}[who]
		if parts[0]+"|"+parts[1] != want {
			t.Errorf("commit of %s: author|agent %q, want %q", parts[2], parts[0]+"|"+parts[1], want)
		}
		seen[who]++
	}
	if seen["ada"] != 4 || seen["bob"] != 4 {
		t.Errorf("commits per member %v, want 4 each:\n%s", seen, log)
	}
	if out := git(t, dir, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Errorf("git fsck: %s", out)
	}

	// a forged agent argument: the session records the token's agent
	res := bob.call(t, "context_append_session", map[string]any{"session_id": "forged", "agent": "ada-lovelace/claude-code", "summary": "s"})
	if got := structured(t, "context_append_session", res)["session"].(map[string]any)["agent"]; got != "codex" {
		t.Errorf("append_session with a forged agent recorded agent %v, want codex", got)
	}
	if a := git(t, dir, "log", "-1", "--format=%an|%(trailers:key=Ctx-Agent,valueonly,separator=)", st.BranchRef()); a != "Bob Babbage|codex" {
		t.Errorf("forged-agent commit by %q, want Bob Babbage|codex", a)
	}

	// check-in as Bob: the pulse's agent_id is member/agent; is_you marks the caller
	bob.call(t, "context_check_in", map[string]any{"task": "auth"})
	for _, c := range []struct {
		s         *session
		you, addr string
	}{{ada, "ada-lovelace/claude-code", ""}, {bob, "bob-babbage/codex", "bob-babbage/codex"}} {
		pc := structured(t, "get_project_context", c.s.call(t, "get_project_context", map[string]any{"project": "engine-notes"}))
		var yous []string
		for _, m := range pc["members"].([]any) {
			mm := m.(map[string]any)
			if mm["is_you"] == true {
				yous = append(yous, mm["address"].(string))
			}
		}
		if strings.Join(yous, ",") != strings.SplitN(c.you, "/", 2)[0]+","+c.you {
			t.Errorf("is_you for %s: %v", c.you, yous)
		}
		if c.addr != "" {
			p := pc["pulse"].([]any)
			if len(p) != 1 || p[0].(map[string]any)["agent_id"] != c.addr {
				t.Errorf("pulse = %v, want agent_id %s", p, c.addr)
			}
		}
	}
}

// TestHTTPOrigin: a browser page of another origin is refused with 403; the server's own origin and a
// configured one are accepted.
func TestHTTPOrigin(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	h := startHTTP(t, st, Options{}, HTTPOptions{AllowedOrigins: []string{"https://app.example.com"}})
	tok := h.token(t, tokens.Spec{Member: "Ada Lovelace"})
	auth := "Bearer " + tok
	for origin, want := range map[string]int{
		"http://evil.example":     http.StatusForbidden,
		"null":                    http.StatusForbidden,
		"https://app.example.com": http.StatusOK,
		h.url:                     http.StatusOK,
	} {
		if code, body := h.post(t, map[string]string{"Authorization": auth, "Origin": origin}, []byte(initializeBody)); code != want {
			t.Errorf("Origin %s: status %d, want %d: %s", origin, code, want, body)
		}
	}
}

// TestHTTPBodyLimit: a 10 MiB body is refused with 413 before it reaches the server; nothing is written.
func TestHTTPBodyLimit(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	h := startHTTP(t, st, Options{}, HTTPOptions{})
	tok := h.token(t, tokens.Spec{Member: "Ada Lovelace"})
	before := refsOf(t, dir)
	big := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"context_add_knowledge","arguments":{"key":"big","content":"` +
		strings.Repeat("a", 10<<20) + `"}}}`)
	if code, _ := h.post(t, map[string]string{"Authorization": "Bearer " + tok}, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("10 MiB body: status %d, want 413", code)
	}
	// without Content-Length (chunked): refused the same way
	req, _ := http.NewRequest(http.MethodPost, h.url+HTTPPath, io.MultiReader(bytes.NewReader(big)))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked 10 MiB body: status %d, want 413", resp.StatusCode)
	}
	if after := refsOf(t, dir); after != before {
		t.Errorf("a refused body wrote")
	}
}

// TestHTTPReadOnlyToken: a read-only token lists only the read-only tools, cannot call a write tool,
// and reads.
func TestHTTPReadOnlyToken(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st)
	h := startHTTP(t, st, Options{}, HTTPOptions{})
	s := h.connect(t, h.token(t, tokens.Spec{Member: "Ada Lovelace", ReadOnly: true}), "", "x")
	lt, err := s.c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		if tl.Annotations.ReadOnlyHint == nil || !*tl.Annotations.ReadOnlyHint {
			t.Errorf("read-only token lists the write tool %s", tl.Name)
		}
		names = append(names, tl.Name)
	}
	if len(names) < 5 {
		t.Errorf("read-only token lists %v", names)
	}
	before := refsOf(t, dir)
	// a tool error, as documented (it was mcp-go's -32602 "tool not found", a protocol error)
	for _, name := range []string{"context_add_knowledge", "context_push", "context_check_in"} {
		res, err := s.callErr(name, map[string]any{"key": "k", "content": "x", "task": "t"})
		if err != nil || res == nil || !res.IsError || !strings.Contains(resultText(res), "read-only") {
			t.Errorf("read-only token called %s: %v %v", name, err, res)
		}
	}
	if _, err := s.callErr("no_such_tool", map[string]any{}); err == nil {
		t.Errorf("read-only token called an unknown tool without a protocol error")
	}
	if after := refsOf(t, dir); after != before {
		t.Errorf("a read-only token wrote")
	}
	if v := s.readJSON(t, "context://knowledge"); len(v.([]any)) == 0 {
		t.Errorf("read-only token reads no knowledge")
	}
}

// TestHTTPRateLimit: past its burst, a token gets 429 with Retry-After; another token is not slowed.
func TestHTTPRateLimit(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	h := startHTTP(t, st, Options{}, HTTPOptions{Rate: 0.001, Burst: 3})
	a, b := h.token(t, tokens.Spec{Member: "A"}), h.token(t, tokens.Spec{Member: "B"})
	codes := []int{}
	for range 5 {
		code, _ := h.post(t, map[string]string{"Authorization": "Bearer " + a}, []byte(initializeBody))
		codes = append(codes, code)
	}
	if fmt.Sprint(codes) != "[200 200 200 429 429]" {
		t.Errorf("statuses %v, want three 200 then 429", codes)
	}
	if code, _ := h.post(t, map[string]string{"Authorization": "Bearer " + b}, []byte(initializeBody)); code != http.StatusOK {
		t.Errorf("another token: %d", code)
	}
}

// TestHTTPSessionBoundToToken: a session made with one token cannot be used with another.
func TestHTTPSessionBoundToToken(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	h := startHTTP(t, st, Options{}, HTTPOptions{})
	a, b := h.token(t, tokens.Spec{Member: "A"}), h.token(t, tokens.Spec{Member: "B"})
	req, _ := http.NewRequest(http.MethodPost, h.url+HTTPPath, strings.NewReader(initializeBody))
	req.Header.Set("Authorization", "Bearer "+a)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	before := refsOf(t, dir)
	if code, body := h.post(t, map[string]string{"Authorization": "Bearer " + b, "Mcp-Session-Id": sid}, writeBody("stolen")); code != http.StatusForbidden {
		t.Errorf("another token on the session: %d %s", code, body)
	}
	if after := refsOf(t, dir); after != before {
		t.Errorf("a request on another token's session wrote")
	}
	if code, body := h.post(t, map[string]string{"Authorization": "Bearer " + a, "Mcp-Session-Id": sid}, []byte(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)); code != http.StatusOK {
		t.Errorf("the session's own token: %d %s", code, body)
	}
}

// TestHTTPNotifications: a client on the event stream (GET) is told when another client's write moved
// the context branch, and of the change of a resource it subscribed to (notifications/resources/updated,
// as over stdio), rendered as it reads it: public-only, so a change of the machine user's private entry
// of a subscribed URI sends it nothing. Found by a tester: mcp-go's HTTP sessions record no
// subscription, and no updated ever came over HTTP.
func TestHTTPNotifications(t *testing.T) {
	ctx := context.Background()
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	for _, e := range []struct {
		key string
		sc  store.Scope
	}{{"news", store.Public}, {"quiet", store.Public}, {"privk", store.Private}} {
		if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: e.key, Content: "v1\n", Scope: e.sc}); err != nil {
			t.Fatal(err)
		}
	}
	h := startHTTP(t, st, Options{PollInterval: 50 * time.Millisecond}, HTTPOptions{})
	a := h.connect(t, h.token(t, tokens.Spec{Member: "A"}), "", "a")
	b := h.connect(t, h.token(t, tokens.Spec{Member: "B"}), "", "b")
	for _, u := range []string{"context://knowledge/news", "context://knowledge/quiet", "context://knowledge/privk"} {
		req := mcpgo.SubscribeRequest{}
		req.Params.URI = u
		//nolint:staticcheck // SA1019: resources/subscribe is what the protocol versions before 2026-07-28 have
		if err := a.c.Subscribe(ctx, req); err != nil {
			t.Fatalf("subscribe %s: %v", u, err)
		}
	}
	time.Sleep(300 * time.Millisecond) // a's event stream is open, the watcher has rendered the URIs once
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "privk", Content: "v2 private\n", Scope: store.Private}); err != nil {
		t.Fatal(err)
	}
	b.call(t, "context_add_knowledge", map[string]any{"key": "news", "content": "v2"})
	if !a.waitNote(t, "notifications/resources/list_changed", "", 10*time.Second) {
		t.Errorf("no notifications/resources/list_changed over HTTP; got %v", a.notes)
	}
	if !a.waitNote(t, "notifications/resources/updated", "context://knowledge/news", 10*time.Second) {
		t.Errorf("no notifications/resources/updated of the subscribed URI over HTTP; got %v", a.notes)
	}
	time.Sleep(300 * time.Millisecond)
	for _, u := range []string{"context://knowledge/quiet", "context://knowledge/privk"} {
		if a.hasNote("notifications/resources/updated", u) {
			t.Errorf("notifications/resources/updated of %s, which did not change for the caller", u)
		}
	}
	if b.hasNote("notifications/resources/updated", "") {
		t.Errorf("b, which subscribed to nothing, was sent notifications/resources/updated")
	}
}

// TestHTTPListChangedPublicOnly: a move of the private ref alone sends notifications/resources/list_changed
// to the machine user's local (stdio) session, never to a token holder's HTTP session, which sees only the
// public scope; a move of the public ref sends it to both. One server serves both transports.
func TestHTTPListChangedPublicOnly(t *testing.T) {
	ctx := context.Background()
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	stderr := &syncBuffer{}
	x := NewServer(st, Options{PollInterval: 50 * time.Millisecond, Stderr: stderr})
	local := serveServer(t, x, stderr, "", "local") // stdio, which runs the watcher
	h := &httpServer{tokens: tokens.Open(t.TempDir()), log: &syncBuffer{}, stderr: stderr}
	handler, err := x.HTTPHandler(HTTPOptions{Tokens: h.tokens, AccessLog: h.log})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(handler)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	h.url = ts.URL
	remote := h.connect(t, h.token(t, tokens.Spec{Member: "R"}), "", "remote")
	time.Sleep(300 * time.Millisecond) // remote's event stream is open
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "privk", Content: "private\n", Scope: store.Private}); err != nil {
		t.Fatal(err)
	}
	if !local.waitNote(t, "notifications/resources/list_changed", "", 10*time.Second) {
		t.Fatalf("the local session got no list_changed for the private write; got %v", local.notes)
	}
	time.Sleep(300 * time.Millisecond) // what was sent to the HTTP session at the same tick has arrived
	if remote.hasNote("notifications/resources/list_changed", "") {
		t.Errorf("the HTTP session was sent list_changed when only the private ref moved: %v", remote.notes)
	}
	local.clearNotes()
	if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "pubk", Content: "public\n"}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*session{"HTTP": remote, "local": local} {
		if !s.waitNote(t, "notifications/resources/list_changed", "", 10*time.Second) {
			t.Errorf("the %s session got no list_changed for the public write; got %v", name, s.notes)
		}
	}
}

func TestCheckListenAddr(t *testing.T) {
	for _, c := range []struct {
		addr                         string
		remote, tls, insecure, valid bool
	}{
		{"127.0.0.1:8080", false, false, false, true},
		{"[::1]:8080", false, false, false, true},
		{"localhost:0", false, false, false, true},
		{"0.0.0.0:8080", false, false, false, false},
		{"0.0.0.0:8080", true, false, false, false},
		{"0.0.0.0:8080", true, true, false, true},
		{"0.0.0.0:8080", true, false, true, true},
		{"example.com:8080", false, true, false, false},
		{":8080", false, false, false, false},
		{"nonsense", true, true, true, false},
	} {
		err := CheckListenAddr(c.addr, c.remote, c.tls, c.insecure)
		if (err == nil) != c.valid {
			t.Errorf("CheckListenAddr(%q, remote %v, tls %v, insecure %v) = %v", c.addr, c.remote, c.tls, c.insecure, err)
		}
	}
}

// TestHTTPShutdown: ServeHTTP returns nil once its context is done, after the request in flight has
// answered, and an open event stream does not hold it.
func TestHTTPShutdown(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	ts := tokens.Open(t.TempDir())
	tok, _, err := ts.Add(context.Background(), tokens.Spec{Member: "Ada Lovelace"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	x := NewServer(st, Options{})
	go func() {
		done <- x.ServeHTTP(ctx, ln, HTTPOptions{Tokens: ts, AccessLog: io.Discard, ShutdownGrace: 5 * time.Second})
	}()
	h := &httpServer{url: "http://" + ln.Addr().String(), stderr: &syncBuffer{}}
	s := h.connect(t, tok, "", "x")
	s.call(t, "context_add_knowledge", map[string]any{"key": "before-shutdown", "content": "x"})
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("shutdown took %v: the event stream held it", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeHTTP did not return after its context was done")
	}
}

// TestHTTPTLS: with --tls-cert/--tls-key the server speaks HTTPS only; a client that trusts the
// certificate initialises, a plain-HTTP request gets no MCP answer.
func TestHTTPTLS(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}

	ts := tokens.Open(t.TempDir())
	tok, _, err := ts.Add(context.Background(), tokens.Spec{Member: "Ada Lovelace"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- NewServer(st, Options{}).ServeHTTP(ctx, ln, HTTPOptions{Tokens: ts, AccessLog: io.Discard,
			TLSCert: certFile, TLSKey: keyFile})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	}()
	pool := x509.NewCertPool()
	pool.AddCert(must(x509.ParseCertificate(der)))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	post := func(c *http.Client, url string) (int, error) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := post(hc, "https://"+ln.Addr().String()+HTTPPath); err != nil || code != http.StatusOK {
		t.Errorf("HTTPS initialize: %d %v", code, err)
	}
	if code, err := post(http.DefaultClient, "http://"+ln.Addr().String()+HTTPPath); err == nil && code == http.StatusOK {
		t.Errorf("plain HTTP to the TLS server answered 200")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestHTTPPrivateScopeHidden: the private and ephemeral entries of the machine's user are not the token
// holder's. Over HTTP they cannot be read (resources, lists, the search of the context history, the
// sources), moved to the public scope and pushed, written, or removed; the same entries stay visible over
// stdio. Found by a new user: a read-only token read a private entry, and a read-write token published it
// with context_set_scope and context_push.
func TestHTTPPrivateScopeHidden(t *testing.T) {
	ctx := context.Background()
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	seed(t, st)
	for _, e := range []struct {
		key, text string
		sc        store.Scope
	}{{"privk", "PRIVATE-VALUE-9f1", store.Private}, {"ephk", "EPHEMERAL-VALUE-3c7", store.Ephemeral}} {
		if _, err := st.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: e.key, Content: e.text + "\n", Scope: e.sc}); err != nil {
			t.Fatal(err)
		}
	}
	// A private decision after seed's two public ones: number 3.
	if d, _, err := st.AddDecision(ctx, store.NewDecision{Title: "Secret vendor PRIVATE-DECISION", Scope: store.Private}); err != nil || d.ID != 3 {
		t.Fatalf("private decision: %+v %v", d, err)
	}
	h := startHTTP(t, st, Options{}, HTTPOptions{})
	ro := h.connect(t, h.token(t, tokens.Spec{Member: "Carol", ReadOnly: true}), "", "x")
	rw := h.connect(t, h.token(t, tokens.Spec{Member: "Dave", Email: "dave@example.com"}), "", "x")
	for _, s := range []*session{ro, rw} {
		list := fmt.Sprint(s.readJSON(t, "context://knowledge"))
		if strings.Contains(list, "privk") || strings.Contains(list, "ephk") || !strings.Contains(list, "architecture") {
			t.Errorf("context://knowledge over HTTP: %s", list)
		}
		for _, uri := range []string{"context://knowledge/privk", "context://knowledge/ephk"} {
			req := mcpgo.ReadResourceRequest{}
			req.Params.URI = uri
			res, err := s.c.ReadResource(ctx, req)
			if err == nil && strings.Contains(fmt.Sprint(res.Contents), "VALUE") {
				t.Errorf("%s over HTTP: %v", uri, res.Contents)
			}
		}
		for _, tool := range []struct {
			name string
			args map[string]any
		}{{"search", map[string]any{"query": "PRIVATE-VALUE"}}, {"search", map[string]any{"query": "9f1"}}, {"sources", map[string]any{}},
			{"query_events", map[string]any{}}} {
			res, err := s.callErr(tool.name, tool.args)
			if err != nil {
				continue
			}
			if txt := resultText(res); strings.Contains(txt, `"privk`) || strings.Contains(txt, "VALUE-9f1") || strings.Contains(txt, "VALUE-3c7") ||
				strings.Contains(txt, store.RefPrivate) || strings.Contains(txt, `"ephk`) || strings.Contains(txt, "knowledge/privk") {
				t.Errorf("%s over HTTP shows private data: %s", tool.name, txt)
			}
		}
	}
	// The local agent-history index (the machine user's transcripts) is not served either, and the hint
	// says so instead of sending the caller to import it.
	if res, err := ro.callErr("search", map[string]any{"query": "architecture"}); err != nil || !strings.Contains(resultText(res), "not served over HTTP") || strings.Contains(resultText(res), "ctx history import") {
		t.Errorf("search over HTTP: hint %s %v", resultText(res), err)
	}
	if res, err := ro.callErr("blame", map[string]any{"file": "README.md"}); err == nil && (res == nil || !res.IsError) {
		t.Errorf("blame of code over HTTP answered: %s", resultText(res))
	}
	before := refsOf(t, dir)
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"context_set_scope", map[string]any{"kind": "knowledge", "key": "privk", "scope": "public"}},
		{"context_add_knowledge", map[string]any{"key": "newpriv", "content": "x", "scope": "private"}},
		{"context_remove_knowledge", map[string]any{"key": "privk"}},
		{"context_set_scope", map[string]any{"kind": "knowledge", "key": "architecture", "scope": "ephemeral"}},
	} {
		res, err := rw.callErr(c.name, c.args)
		if err == nil && (res == nil || !res.IsError) {
			t.Errorf("%s %v over HTTP succeeded: %s", c.name, c.args, resultText(res))
		}
	}
	if after := refsOf(t, dir); after != before {
		t.Errorf("HTTP writes touched the refs:\nbefore %s\nafter %s", before, after)
	}
	// A public write still works, and the machine's user still sees everything. For the caller privk does
	// not exist: writing it makes a public entry of that key and leaves the private one as it is (a refusal
	// would tell the caller that the machine's user has a private entry of that name).
	rw.call(t, "context_add_knowledge", map[string]any{"key": "from-dave", "content": "public text\n"})
	rw.call(t, "context_add_knowledge", map[string]any{"key": "privk", "content": "dave's public text\n"})
	v, err := st.RefView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"privk", "ephk", "from-dave"} {
		if _, err := v.GetEntry(ctx, store.KnowledgeKind, k); err != nil {
			t.Errorf("the machine's user lost %s: %v", k, err)
		}
	}
	if e, _ := v.GetEntry(ctx, store.KnowledgeKind, "privk"); e.Scope != store.Private || !strings.Contains(e.Content, "PRIVATE-VALUE-9f1") {
		t.Errorf("privk is now %s %q", e.Scope, e.Content)
	}
	// A decision recorded over HTTP takes no number of the machine user's private decisions (it would be
	// two decisions numbered 3 on this machine): the server numbers from every scope, the caller sees only
	// the number it got, and the private decision stays out of its reads.
	res := structured(t, "record_decision", rw.call(t, "context_record_decision", map[string]any{"title": "Use NATS", "decision": "NATS"}))
	if res["id"] != float64(4) {
		t.Errorf("context_record_decision over HTTP: %v, want id 4 (3 is private)", res)
	}
	if list := fmt.Sprint(rw.readJSON(t, "context://decisions")); strings.Contains(list, "PRIVATE-DECISION") || !strings.Contains(list, "Use NATS") {
		t.Errorf("context://decisions over HTTP: %s", list)
	}
	if v, err = st.RefView(ctx); err != nil {
		t.Fatal(err)
	}
	ds, err := v.ListDecisions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nums := map[int]string{}
	for _, d := range ds {
		if other, ok := nums[d.ID]; ok {
			t.Errorf("decision %d is both %q and %q", d.ID, other, d.Title)
		}
		nums[d.ID] = d.Title
	}
}

// TestHTTPSubscribeUnknownURI: over HTTP too, resources/subscribe to a URI that names no resource or
// template is -32002 (as resources/read of it), and a known one is acknowledged.
func TestHTTPSubscribeUnknownURI(t *testing.T) {
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	h := startHTTP(t, st, Options{}, HTTPOptions{})
	a := h.token(t, tokens.Spec{Member: "A"})
	req, _ := http.NewRequest(http.MethodPost, h.url+HTTPPath, strings.NewReader(initializeBody))
	req.Header.Set("Authorization", "Bearer "+a)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	hdr := map[string]string{"Authorization": "Bearer " + a, "Mcp-Session-Id": sid}
	for uri, want := range map[string]string{
		"context://nope":          `"code":-32002`,
		"file:///etc/passwd":      `"code":-32002`,
		"context://knowledge":     `"result":{}`,
		"context://decisions/12":  `"result":{}`,
		"context://knowledge/a/b": `"code":-32002`,
	} {
		code, got := h.post(t, hdr, []byte(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"`+uri+`"}}`))
		if code != http.StatusOK || !strings.Contains(got, want) || !strings.Contains(got, `"id":3`) {
			t.Errorf("subscribe %s over HTTP: %d %s, want %s", uri, code, got, want)
		}
	}
}

// TestHTTPRevokedTokenStreamEnds: the event stream (GET) of a token revoked while it is open ends, and
// gets no notification after the revoke, while another token's stream still gets them. Found by a
// tester: a revoked token's open stream kept receiving every list_changed.
func TestHTTPRevokedTokenStreamEnds(t *testing.T) {
	old := tokenRecheck
	tokenRecheck = 50 * time.Millisecond
	t.Cleanup(func() { tokenRecheck = old })
	_, st := newRepo(t, store.Actor{Agent: "cli"})
	h := startHTTP(t, st, Options{PollInterval: 50 * time.Millisecond}, HTTPOptions{})
	a := h.connect(t, h.token(t, tokens.Spec{Member: "Mal"}), "", "a")
	b := h.connect(t, h.token(t, tokens.Spec{Member: "B"}), "", "b")
	time.Sleep(200 * time.Millisecond) // the event streams are open
	if _, err := h.tokens.Revoke(context.Background(), "Mal"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // ten rechecks
	b.call(t, "context_add_knowledge", map[string]any{"key": "after-revoke", "content": "x"})
	if !b.waitNote(t, "notifications/resources/list_changed", "", 10*time.Second) {
		t.Fatalf("the valid token's stream got no list_changed; got %v", b.notes)
	}
	time.Sleep(300 * time.Millisecond)
	if a.hasNote("notifications/resources/list_changed", "") {
		t.Errorf("the revoked token's stream got a notification after the revoke: %v", a.notes)
	}
	if !strings.Contains(h.log.String(), `"msg":"stream ended"`) {
		t.Errorf("no stream ended in the access log:\n%s", h.log)
	}
}
