package mcp

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
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

// localRefArgs prepends --git-dir=<the store's local-only repository> to args that name the private or
// ephemeral ref: those refs live in <git common dir>/ctx/private.git, not in the repository's refs/.
func localRefArgs(dir string, args []string) []string {
	for _, a := range args {
		if strings.Contains(a, store.RefPrivate) || strings.Contains(a, store.RefEphemeral) {
			common, err := testenv.GitErr(dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
			if err != nil {
				return args
			}
			return append([]string{"--git-dir=" + filepath.Join(common, "ctx", "private.git")}, args...)
		}
	}
	return args
}

// git runs the real git CLI in dir and returns its trimmed output (in the local-only repository for the
// private and ephemeral refs, see localRefArgs).
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, localRefArgs(dir, args)...)
}

// repoIdentity is testenv's environment (TestMain) with two changes for the test: the identity comes
// from the repository's config (newRepo sets it), not from GIT_AUTHOR_* and GIT_COMMITTER_*, and the
// machine is "testbox".
func repoIdentity(t *testing.T) {
	t.Helper()
	testenv.Unsetenv(t, "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
	t.Setenv("CTX_MACHINE", "testbox")
}

// newRepo makes a git repository with one commit on main and an initialised context store.
func newRepo(t *testing.T, actor store.Actor) (string, *store.Store) {
	t.Helper()
	repoIdentity(t)
	dir := filepath.Join(t.TempDir(), "engine-notes")
	git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	git(t, dir, "config", "user.name", "Ada Lovelace")
	git(t, dir, "config", "user.email", "ada@example.com")
	// origin looks like GitHub (the manifest's repo_url, get_project_context's team) but is a local bare
	// repository, through git's own url.<base>.insteadOf.
	bare := filepath.Join(t.TempDir(), "analytical", "engine-notes.git")
	git(t, filepath.Dir(filepath.Dir(bare)), "init", "-q", "--bare", bare)
	git(t, dir, "config", "url."+bare+".insteadOf", "https://github.com/analytical/engine-notes.git")
	git(t, dir, "remote", "add", "origin", "https://github.com/analytical/engine-notes.git")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# engine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "README.md")
	git(t, dir, "commit", "-q", "-m", "initial")
	ctx := context.Background()
	st, err := store.Open(ctx, dir, actor)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	if _, err := st.Init(ctx, store.InitOptions{}); err != nil {
		t.Fatalf("store.Init: %v", err)
	}
	return dir, st
}

// session is a real mcp-go client connected to ServeStdio over a pair of io.Pipes.
type session struct {
	c      *client.Client
	mu     sync.Mutex
	notes  []mcpgo.JSONRPCNotification
	noteCh chan struct{}
	stderr *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve starts ServeStdio on st and connects an initialised client (protocolVersion "" = the client's
// default negotiation). The server is stopped, and its error checked, at the end of the test.
func serve(t testing.TB, st *store.Store, opt Options, protocolVersion string) *session {
	t.Helper()
	return serveAs(t, st, opt, protocolVersion, "ctx-test")
}

// serveAs is serve with a client whose clientInfo.name is clientName.
func serveAs(t testing.TB, st *store.Store, opt Options, protocolVersion, clientName string) *session {
	t.Helper()
	stderr := &syncBuffer{}
	if opt.Stderr == nil {
		opt.Stderr = stderr
	}
	return serveServer(t, NewServer(st, opt), stderr, protocolVersion, clientName)
}

// serveServer is serveAs on a server built by NewServer (whose Options.Stderr writes to stderr), for a
// test that registers more on it first.
func serveServer(t testing.TB, x *Server, stderr *syncBuffer, protocolVersion, clientName string) *session {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	s := &session{noteCh: make(chan struct{}, 1024), stderr: stderr}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := x.ServeStdio(ctx, serverIn, serverOut)
		serverOut.Close()
		done <- err
	}()
	tr := transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader("")))
	var opts []client.ClientOption
	if protocolVersion != "" {
		opts = append(opts, client.WithProtocolVersion(protocolVersion))
	}
	s.c = client.NewClient(tr, opts...)
	s.c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		s.mu.Lock()
		s.notes = append(s.notes, n)
		s.mu.Unlock()
		select {
		case s.noteCh <- struct{}{}:
		default:
		}
	})
	if err := s.c.Start(ctx); err != nil {
		t.Fatalf("client start: %v", err)
	}
	t.Cleanup(func() {
		s.c.Close()
		go func() { _, _ = io.Copy(io.Discard, clientIn) }() // never block the server's last writes
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("ServeStdio did not return after its input closed")
		}
		cancel()
	})
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = protocolVersion
	req.Params.ClientInfo = mcpgo.Implementation{Name: clientName, Version: "1.0"}
	if _, err := s.c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v\nstderr: %s", err, s.stderr)
	}
	return s
}

// waitNote waits until a notification with the method (and, when uri != "", that params.uri) arrived.
func (s *session) waitNote(t *testing.T, method, uri string, within time.Duration) bool {
	t.Helper()
	deadline := time.After(within)
	for {
		if s.hasNote(method, uri) {
			return true
		}
		select {
		case <-s.noteCh:
		case <-deadline:
			return s.hasNote(method, uri)
		}
	}
}

func (s *session) hasNote(method, uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.notes {
		if n.Method != method {
			continue
		}
		if uri == "" || n.Params.AdditionalFields["uri"] == uri {
			return true
		}
	}
	return false
}

func (s *session) clearNotes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = nil
}

// read reads a resource and returns its only contents' text, checking uri and mimeType.
func (s *session) read(t testing.TB, uri string) string {
	t.Helper()
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := s.c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcpgo.TextResourceContents)
	if !ok {
		t.Fatalf("read %s: contents %T", uri, res.Contents[0])
	}
	if tc.URI != uri || tc.MIMEType != "application/json" {
		t.Errorf("read %s: uri %q mimeType %q", uri, tc.URI, tc.MIMEType)
	}
	return tc.Text
}

// readJSON reads a resource and decodes it.
func (s *session) readJSON(t *testing.T, uri string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s.read(t, uri)), &v); err != nil {
		t.Fatalf("read %s: not JSON: %v", uri, err)
	}
	return v
}

// call calls a tool; it fails the test on a JSON-RPC error.
func (s *session) call(t *testing.T, name string, args map[string]any) *mcpgo.CallToolResult {
	t.Helper()
	res, err := s.callErr(name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func (s *session) callErr(name string, args map[string]any) (*mcpgo.CallToolResult, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return s.c.CallTool(context.Background(), req)
}

// structured returns a successful tool result's structuredContent as generic JSON.
func structured(t *testing.T, name string, res *mcpgo.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: structuredContent %s: %v", name, b, err)
	}
	// The first text item is the JSON result; a second one may note what was cut to fit the response limit.
	var text map[string]any
	first := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(mcpgo.TextContent); ok {
			first = tc.Text
		}
	}
	// ... unless the result fits the response limit only once (renderOnce): then the text says so.
	if err := json.Unmarshal([]byte(first), &text); err != nil && !strings.HasPrefix(first, "The result is in structuredContent only") {
		t.Errorf("%s: text content is not the JSON result: %.300q", name, first)
	}
	return m
}

func resultText(res *mcpgo.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
