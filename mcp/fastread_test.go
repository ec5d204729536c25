package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
)

// rawClient is a stdio client writing and reading raw JSON lines to ServeStdio over OS pipes.
type rawClient struct {
	t   *testing.T
	in  *os.File // the server's stdin, written here
	out *bufio.Reader
	seq int
}

// serveRaw runs x.ServeStdio over two OS pipes until the end of the test.
func serveRaw(t *testing.T, x *Server) *rawClient {
	t.Helper()
	sr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cr, sw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := x.ServeStdio(context.Background(), sr, sw)
		sw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cw.Close()
		go func() { _, _ = bufio.NewReader(cr).WriteTo(discard{}) }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("ServeStdio did not return after its input closed")
		}
		sr.Close()
		cr.Close()
	})
	return &rawClient{t: t, in: cw, out: bufio.NewReader(cr)}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// send writes lines, each followed by a newline, in one write.
func (c *rawClient) send(lines ...string) {
	c.t.Helper()
	if _, err := c.in.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		c.t.Fatal(err)
	}
}

// next reads one answer line.
func (c *rawClient) next() string {
	c.t.Helper()
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() { s, err := c.out.ReadString('\n'); ch <- res{s, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatalf("read an answer: %v", r.err)
		}
		return r.s
	case <-time.After(20 * time.Second):
		c.t.Fatal("no answer within 20 s")
	}
	return ""
}

// exchange sends line and returns the lines the server answered it with (notifications left out): one
// for a request (a line with an id and a method, or a line that is not a JSON object: its error), none
// for a notification or a response, which it checks by sending a ping behind it and reading to the ping's
// answer. A request with a result member is not answered (mcp-go takes it for a response).
func (c *rawClient) exchange(line string) []string {
	c.t.Helper()
	var m map[string]json.RawMessage
	answered := json.Unmarshal([]byte(line), &m) != nil || m["id"] != nil && m["method"] != nil && m["result"] == nil
	if answered {
		c.send(line)
		for {
			if l := c.next(); !strings.Contains(l, `"method":"notifications/`) {
				return []string{l}
			}
		}
	}
	c.seq++
	sync := fmt.Sprintf(`{"jsonrpc":"2.0","id":"sync-%d","method":"ping"}`, c.seq)
	c.send(line, sync)
	var got []string
	for {
		l := c.next()
		if strings.Contains(l, `"id":"sync-`+fmt.Sprint(c.seq)+`"`) {
			return got
		}
		if !strings.Contains(l, `"method":"notifications/`) {
			got = append(got, l)
		}
	}
}

func (c *rawClient) initialize() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if l := c.next(); !strings.Contains(l, `"serverInfo"`) {
		c.t.Fatalf("initialize: %s", l)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// readLine is a resources/read request line with the id and uri given as JSON text.
func readReq(id, uri string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"resources/read","params":{"uri":` + uri + `}}`
}

// fastPair is the same store served twice over OS pipes: with the fast path (fast) and without it
// (every request through mcp-go's HandleMessage, as before the fast path), each client initialised.
type fastPair struct {
	dir          string
	st           *store.Store
	fast, slow   *rawClient
	fastX, slowX *srv
}

func newFastPair(t *testing.T) *fastPair {
	t.Helper()
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	if !localFS(dir) {
		t.Skipf("%s is on a file system the watch is not used on", dir)
	}
	seed(t, st)
	setKnowledge(t, st, "arch", "Monolith <&> \u2028 \"quoted\"\n", "")
	p := &fastPair{dir: dir, st: st}
	for _, noFast := range []bool{false, true} {
		other, err := store.Open(context.Background(), dir, store.Actor{Agent: "cli"})
		if err != nil {
			t.Fatal(err)
		}
		x := NewServer(other, Options{Agent: "claude-code", raceMargin: testMargin, noFastRead: noFast})
		c := serveRaw(t, x)
		c.initialize()
		if noFast {
			p.slow, p.slowX = c, x.s
		} else {
			p.fast, p.fastX = c, x.s
		}
	}
	settle()
	return p
}

// same sends line to both servers and fails unless both answer the same bytes; it returns the answer.
func (p *fastPair) same(t *testing.T, line string) []string {
	t.Helper()
	a, b := p.fast.exchange(line), p.slow.exchange(line)
	if !slices.Equal(a, b) {
		t.Fatalf("request %s\nfast path: %q\nmcp-go:    %q", line, a, b)
	}
	return a
}

// warm reads uri (a JSON string) on both servers until the fast server answers it from memory.
func (p *fastPair) warm(t *testing.T, uri string) {
	t.Helper()
	for range 6 {
		f := p.fastX.reads.fast.Load()
		p.same(t, readReq(`"warm"`, uri))
		if p.fastX.reads.fast.Load() > f {
			return
		}
		settle()
	}
	t.Fatalf("%s was never answered by the fast path", uri)
}

// TestFastReadSameBytes: the stdio fast path answers a resources/read with the same bytes as mcp-go's
// HandleMessage for the same request line, for ids of every JSON type and spelling, escaped and
// percent-encoded URIs, fixed resources, templates, missing entries; and every request it does not take
// (other parameters, _meta, another jsonrpc version, a result member, bad params, notifications, unknown
// URIs) is answered by mcp-go exactly as without it.
func TestFastReadSameBytes(t *testing.T) {
	p := newFastPair(t)
	uris := []string{
		`"context://knowledge/arch"`,
		`"context:\/\/knowledge\/arch"`,           // JSON-escaped slashes: the same URI
		`"context://knowledge/\u0061rch"`,         // a unicode escape: the same URI
		`"context://knowledge/ar%63h"`,            // percent-encoded: another key of the cache
		`"context://knowledge/ARCH"`,              // normalised by the store
		`"context://knowledge/architecture"`,      // seed's
		`"context://conventions/git"`,             // another template
		`"context://skills/deploy-staging"`,       // a skill
		`"context://knowledge/nope"`,              // missing: the error object
		`"context://knowledge/..%2Fetc%2Fpasswd"`, // refused key: not found
		`"context://manifest"`,                    // fixed resources
		`"context://state"`,
	}
	for _, u := range uris {
		p.warm(t, u)
	}
	ids := []string{`1`, `0`, `-7`, `1.5`, `-0`, `1e3`, `1E2`, `2.50`, `12345678901234567890`, `9007199254740993`,
		`-123456789012345678901234567890`, `0.000001`, `1e-7`, `"abc"`, `""`, `"a\"b\\c"`, `"<&>"`, `"\u00e9\u2028"`,
		`"é"`, `"\ud83d\ude00"`, `"0"`}
	f := p.fastX.reads.fast.Load()
	n := 0
	for _, u := range uris {
		for _, id := range ids {
			got := p.same(t, readReq(id, u))
			if len(got) != 1 || !strings.Contains(got[0], `"result":{"contents":[`) {
				t.Fatalf("read %s with id %s: %q", u, id, got)
			}
			n++
		}
	}
	if d := p.fastX.reads.fast.Load() - f; d != int64(n) {
		t.Fatalf("the fast path answered %d of %d warm reads", d, n)
	}
	if p.slowX.reads.fast.Load() != 0 {
		t.Fatal("the server without the fast path used it")
	}
	spaced := " { \"params\" : { \"uri\" : \"context://knowledge/arch\" } ,\t\"id\" : 77 , \"method\" : \"resources/read\" , \"jsonrpc\" : \"2.0\" } "
	f = p.fastX.reads.fast.Load()
	p.same(t, spaced)
	p.same(t, `{"jsonrpc":"2.0","id":8,"id":"later","method":"resources/read","params":{"uri":"context://knowledge/arch"}}`)
	p.same(t, `{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"context://nope","uri":"context://knowledge/arch"}}`)
	p.same(t, `{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"context://knowledge/arch"},"extra":[1,{"a":null}]}`)
	if d := p.fastX.reads.fast.Load() - f; d != 4 {
		t.Fatalf("the fast path answered %d of 4 plain reads written differently", d)
	}

	// Not taken: answered by mcp-go on both servers.
	f = p.fastX.reads.fast.Load()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":20,"method":"resources/read","params":{"uri":"context://knowledge/arch","_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":21,"method":"resources/read","params":{"uri":"context://knowledge/arch","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":22,"method":"resources/read","params":{"uri":"context://knowledge/arch","arguments":{"key":"other"}}}`,
		`{"jsonrpc":"2.0","id":23,"method":"resources/read","params":{"uri":"context://knowledge/arch","arguments":7}}`,
		`{"jsonrpc":"1.0","id":24,"method":"resources/read","params":{"uri":"context://knowledge/arch"}}`,
		`{"id":25,"method":"resources/read","params":{"uri":"context://knowledge/arch"}}`,
		`{"jsonrpc":"2.0","id":26,"method":"resources/read","params":{"uri":"context://knowledge/arch"},"result":{}}`,
		`{"jsonrpc":"2.0","id":27,"method":"resources/read","params":{"URI":"context://knowledge/arch"}}`,
		`{"jsonrpc":"2.0","id":28,"method":"resources/read","params":{"uri":""}}`,
		`{"jsonrpc":"2.0","id":29,"method":"resources/read","params":{"uri":7}}`,
		`{"jsonrpc":"2.0","id":30,"method":"resources/read","params":null}`,
		`{"jsonrpc":"2.0","id":31,"method":"resources/read","params":["context://knowledge/arch"]}`,
		`{"jsonrpc":"2.0","id":32,"method":"resources/read"}`,
		`{"jsonrpc":"2.0","id":33,"method":"resources/read","params":{"uri":"context://nope"}}`,
		`{"jsonrpc":"2.0","id":34,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}`,
		`{"jsonrpc":"2.0","id":35,"method":"resources/read","params":{"uri":"context://knowledge/arch\ud800"}}`,
		`{"jsonrpc":"2.0","id":36,"method":"resources/read","params":{"uri":"context://knowledge"}}`,   // a list: never kept
		`{"jsonrpc":"2.0","id":43,"method":"resources/read","params":{"uri":"context://decisions/1"}}`, // found in a listing: never kept
		`{"jsonrpc":"2.0","id":null,"method":"resources/read","params":{"uri":"context://knowledge/arch"}}`,
		`{"jsonrpc":"2.0","id":true,"method":"resources/read","params":{"uri":"context://knowledge/arch"}}`,
		`{"jsonrpc":"2.0","method":"resources/read","params":{"uri":"context://knowledge/arch"}}`,
		`{"jsonrpc":"2.0","id":37,"method":"Resources/Read","params":{"uri":"context://knowledge/arch"}}`,
		`{"jsonrpc":"2.0","id":38,"method":"resources/subscribe","params":{"uri":"context://knowledge/arch"}}`,
		`{"jsonrpc":"2.0","id":39,"method":"resources/templates/list"}`,
		`{"jsonrpc":"2.0","id":40,"result":{}}`,
		`[{"jsonrpc":"2.0","id":41,"method":"resources/read","params":{"uri":"context://knowledge/arch"}}]`,
		`{"jsonrpc":"2.0","id":42,"method":"resources/read","params":{"uri":"context://knowledge/arch"}`,
	} {
		p.same(t, line)
	}
	if d := p.fastX.reads.fast.Load() - f; d != 0 {
		t.Fatalf("the fast path answered %d requests it must leave to mcp-go", d)
	}
}

// TestFastReadBeforeInitialize: a resources/read sent before initialize is refused (-32600) by mcp-go,
// as without the fast path, even while another session of the same server serves that URI from memory.
func TestFastReadBeforeInitialize(t *testing.T) {
	p := newFastPair(t)
	const u = `"context://knowledge/arch"`
	p.warm(t, u)
	var fastX, slowX *Server
	fastX, slowX = &Server{s: p.fastX}, &Server{s: p.slowX}
	a, b := serveRaw(t, fastX), serveRaw(t, slowX)
	f := p.fastX.reads.fast.Load()
	line := readReq(`5`, u)
	ga, gb := a.exchange(line), b.exchange(line)
	if !slices.Equal(ga, gb) || len(ga) != 1 || !strings.Contains(ga[0], `"code":-32600`) {
		t.Fatalf("a read before initialize: fast %q, mcp-go %q", ga, gb)
	}
	if p.fastX.reads.fast.Load() != f {
		t.Fatal("the fast path answered a request before initialize")
	}
	// the first session still takes the fast path
	p.same(t, readReq(`6`, u))
	if p.fastX.reads.fast.Load() != f+1 {
		t.Fatal("the initialised session's read was not answered by the fast path")
	}
}

// TestFastReadRefMove: the fast path never serves an answer older than the refs: a write through another
// Store (another process) between two reads is seen by the second, which the fast path leaves to mcp-go
// (the watch saw the event) and which equals what a server without a cache answers; so is a hand edit of
// the entry's file. Then the new answer is served from memory again.
func TestFastReadRefMove(t *testing.T) {
	p := newFastPair(t)
	const u = `"context://knowledge/arch"`
	p.warm(t, u)
	other, err := store.Open(context.Background(), p.dir, store.Actor{Agent: "cursor"})
	if err != nil {
		t.Fatal(err)
	}
	for i, content := range []string{"Services now.\n", "Back to one.\n", "Cells.\n"} {
		f := p.fastX.reads.fast.Load()
		setKnowledge(t, other, "arch", content, "")
		got := p.same(t, readReq(fmt.Sprint(100+i), u))
		if p.fastX.reads.fast.Load() != f {
			t.Fatalf("move %d: the read after the ref moved was answered by the fast path", i)
		}
		var m struct {
			Result struct {
				Contents []struct {
					Text string `json:"text"`
				} `json:"contents"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(got[0]), &m); err != nil || len(m.Result.Contents) != 1 {
			t.Fatalf("move %d: %q (%v)", i, got, err)
		}
		want := uncached(t, context.Background(), p.dir, "context://knowledge/arch")
		if m.Result.Contents[0].Text != want || !strings.Contains(want, strings.TrimSpace(content)) {
			t.Fatalf("move %d: read %s, want %s", i, m.Result.Contents[0].Text, want)
		}
		p.warm(t, u)
	}
	// A hand edit of the checked-out entry (no ref moves): the entry's stat differs, mcp-go reads it again.
	path := p.st.CheckoutRoot() + "/knowledge/arch.md"
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := p.fastX.reads.fast.Load()
	if err := os.WriteFile(path, []byte(strings.Replace(string(old), "Cells.", "Edited by hand, longer.", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	got := p.same(t, readReq(`200`, u))
	if p.fastX.reads.fast.Load() != f || !strings.Contains(got[0], "Edited by hand") {
		t.Fatalf("after a hand edit: fast %d→%d, %q", f, p.fastX.reads.fast.Load(), got)
	}
}

// TestFastReadConcurrent: 64 reads written at once, without waiting for answers, mixing reads the fast
// path answers, reads it leaves to mcp-go and other methods: every request gets one answer, the same bytes
// as mcp-go's for that id.
func TestFastReadConcurrent(t *testing.T) {
	p := newFastPair(t)
	hot := []string{`"context://knowledge/arch"`, `"context://conventions/git"`, `"context://skills/deploy-staging"`}
	for _, u := range hot {
		p.warm(t, u)
	}
	var lines []string
	for i := range 64 {
		switch i % 4 {
		case 3:
			lines = append(lines, readReq(fmt.Sprint(i), `"context://knowledge"`)) // a list: never kept
		case 2:
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
		default:
			lines = append(lines, readReq(fmt.Sprintf(`"c-%d"`, i), hot[i%len(hot)]))
		}
	}
	collect := func(c *rawClient) map[string]string {
		c.send(lines...)
		got := map[string]string{}
		for len(got) < len(lines) {
			l := c.next()
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil || m.ID == nil {
				continue // a notification
			}
			if _, dup := got[string(m.ID)]; dup {
				t.Fatalf("two answers to id %s", m.ID)
			}
			got[string(m.ID)] = l
		}
		return got
	}
	f := p.fastX.reads.fast.Load()
	a, b := collect(p.fast), collect(p.slow)
	for id, l := range b {
		if a[id] != l {
			t.Fatalf("id %s: fast path %q, mcp-go %q", id, a[id], l)
		}
	}
	if d := p.fastX.reads.fast.Load() - f; d != 32 {
		t.Fatalf("the fast path answered %d of the 32 warm reads", d)
	}
}

// TestFastReadMCPGoClient: mcp-go's own client reading through the fast path gets what it gets from the
// server without it.
func TestFastReadMCPGoClient(t *testing.T) {
	dir, st := newRepo(t, store.Actor{Agent: "cli"})
	if !localFS(dir) {
		t.Skipf("%s is on a file system the watch is not used on", dir)
	}
	seed(t, st)
	settle()
	// protocol 2025-06-18: a request of 2026-07-28 carries _meta, which the fast path leaves to mcp-go
	const legacy = "2025-06-18"
	slow := serve(t, st, Options{Agent: "claude-code", raceMargin: testMargin, noFastRead: true}, legacy)
	// A store of its own: a server sets its store's actor, and the first server's tools are built (reading
	// its store's actor) while this one starts.
	st2, err := store.Open(context.Background(), dir, store.Actor{Agent: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st2.Close() })
	x := NewServer(st2, Options{Agent: "claude-code", raceMargin: testMargin})
	s := serveServer(t, x, &syncBuffer{}, legacy, "ctx-test")
	for _, u := range []string{"context://knowledge/architecture", "context://decisions/2", "context://manifest"} {
		want := slow.read(t, u)
		for range 3 {
			if got := s.read(t, u); got != want {
				t.Fatalf("%s: %s, want %s", u, got, want)
			}
			settle()
		}
	}
	if x.s.reads.fast.Load() == 0 {
		t.Fatal("mcp-go's client was never answered by the fast path")
	}
}
