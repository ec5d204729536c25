package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// shutdownGrace is how long ServeStdio lets requests in flight finish after its input closed before it
// cancels them. subscriptions/listen streams end at once.
const shutdownGrace = 2 * time.Second

// ServeStdio serves one MCP client over newline-delimited JSON-RPC (docs/mcp.md "Transport and
// identity"): it reads requests from in and writes responses and notifications to out, one JSON object a
// line and nothing else; logs go to opt.Stderr. It also watches the context refs (see [Watch]).
//
// It returns nil when in reaches end of file (after the requests in flight have answered) or when ctx is
// done, and an error when reading in or writing out fails.
//
// ServeStdio does not use mcp-go's StdioServer: that one keeps a single process-wide session (its
// subscriptions, its writer), so two servers in one process (tests, an HTTP and a stdio server) would
// share them. Here each call has its own session.
func ServeStdio(ctx context.Context, st *store.Store, in io.Reader, out io.Writer, opt Options) error {
	return NewServer(st, opt).ServeStdio(ctx, in, out)
}

// ServeStdio is the package's ServeStdio on a server built by NewServer.
func (x *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	s := x.s
	defer s.closeIndex()
	defer s.reads.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	usageCtx, stopUsage := context.WithCancel(context.Background())
	usageDone := make(chan struct{})
	go func() { s.usage.run(usageCtx); close(usageDone) }()
	defer func() { stopUsage(); <-usageDone }() // the last counts are written before returning

	sess := newStdioSession()
	if err := s.mcp.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("mcp: register stdio session: %w", err)
	}
	defer s.mcp.UnregisterSession(context.Background(), sess.SessionID())
	reqCtx, cancelRequests := context.WithCancel(s.mcp.WithContext(ctx, sess))
	defer cancelRequests()
	streamCtx, cancelStreams := context.WithCancel(reqCtx)
	defer cancelStreams()

	w := &lineWriter{w: out}
	fast := s.reads != nil && !s.opt.noFastRead
	pub := store.PublicOnly(ctx) // the read cache's keys hold it (resources.go render)
	var bg sync.WaitGroup
	defer bg.Wait()
	defer cancel()
	bg.Go(func() {
		for {
			select {
			case n := <-sess.notifications:
				if err := w.write(n); err != nil {
					s.log.Printf("write notification: %v", err)
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	})
	bg.Go(func() {
		if err := s.watch(ctx); err != nil && ctx.Err() == nil {
			s.log.Printf("watch: %v", err)
		}
	})

	lines := make(chan inLine)
	readErr := make(chan error, 1)
	// The reader may stay blocked in in.Read after ctx is done; it ends when in is closed.
	go func() {
		r := bufio.NewReaderSize(in, 64*1024)
		for {
			line, err := readLine(r, maxRequestBytes)
			if line.size > 0 && (line.over || len(bytesTrim(line.b)) > 0) {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()

	// Admission (docs/limits.md): at most maxRunning requests are handled at once, and at most
	// maxInFlight requests holding maxInFlightBytes of request lines wait or run; one more is refused with
	// a server-busy error until a response went out.
	running := make(chan struct{}, maxRunning)
	var admit struct {
		sync.Mutex
		n     int
		bytes int64
	}
	release := func(size int64) {
		admit.Lock()
		admit.n--
		admit.bytes -= size
		admit.Unlock()
	}

	var reqs sync.WaitGroup
	var result error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-readErr:
			if !errors.Is(err, io.EOF) {
				result = fmt.Errorf("mcp: read stdin: %w", err)
			}
			break loop
		case line := <-lines:
			if line.over {
				msg := fmt.Sprintf("request of %d bytes or more is over the %d-byte request limit of this server: "+
					"it was not read", line.size, maxRequestBytes)
				resp := mcpgo.NewJSONRPCError(mcpgo.NewRequestId(guessID(line.b)), mcpgo.INVALID_REQUEST, msg, nil)
				s.log.Print(msg)
				if err := w.write(resp); err != nil {
					result = fmt.Errorf("mcp: write stdout: %w", err)
					break loop
				}
				continue
			}
			base, bad := readEnvelope(line.b)
			if bad != nil {
				if err := w.write(*bad); err != nil {
					result = fmt.Errorf("mcp: write stdout: %w", err)
					break loop
				}
				continue
			}
			if base.Method != string(mcpgo.MethodInitialize) {
				s.ensureTools() // initialize is answered without them (server.go ensureTools)
			}
			why := checkUTF8(line.b)
			if why == "" && base.ID != nil && fast && sess.Initialized() {
				// The fast path (docs/mcp.md "The stdio fast path"): a resources/read whose answer is in
				// the read cache and valid per its watch is answered here, as mcp-go would answer it.
				if answer := s.fastRead(base, pub); answer != nil {
					if _, err := w.writeResult(base.ID, answer); err != nil {
						result = fmt.Errorf("mcp: write stdout: %w", err)
						break loop
					}
					continue
				}
			}
			if why == "" && base.ID != nil {
				why = paramProblem(base)
			}
			if why == "" && base.ID != nil {
				if e := unknownSubscription(line.b, base.Method, base.ID); e != nil {
					if err := w.write(*e); err != nil {
						result = fmt.Errorf("mcp: write stdout: %w", err)
						break loop
					}
					continue
				}
			}
			if why != "" && base.ID != nil {
				if err := w.write(mcpgo.NewJSONRPCError(mcpgo.NewRequestId(base.ID), mcpgo.INVALID_PARAMS, why, nil)); err != nil {
					result = fmt.Errorf("mcp: write stdout: %w", err)
					break loop
				}
				continue
			} else if why != "" {
				s.log.Printf("dropped a notification: %s", why)
				continue
			}
			msg := json.RawMessage(line.b)
			if base.Method == string(mcpgo.MethodToolsCall) {
				if b := fitArgumentNumbers(line.b); b != nil {
					msg = b
				}
			}
			hctx := reqCtx
			stream := base.Method == string(mcpgo.MethodSubscriptionsListen)
			if stream {
				hctx = streamCtx // a stream, not a request to answer: it ends with the input
			}
			tool := "" // a tools/call of a known tool to count in the local usage, resolved before it runs
			if base.Method == string(mcpgo.MethodToolsCall) && base.ID != nil && s.usage.enabled() {
				tool = s.calledTool(line.b)
			}
			handle := func() {
				resp := s.mcp.HandleMessage(hctx, msg)
				if resp == nil {
					return
				}
				n, err := w.writeN(resp)
				if err != nil {
					s.log.Printf("write response: %v", err)
					cancel()
					return
				}
				if tool != "" {
					s.usage.delivered(tool, n) // after the whole line was written
				}
			}
			if base.ID == nil || base.Method == "" || !sess.Initialized() {
				// Notifications and responses keep their order with the requests that follow them
				// (notifications/initialized before the first request), and so does every request until
				// the session is initialised: initialize itself, so that a request sent right behind it
				// (without waiting for its answer) finds the session initialised, and a request sent before
				// it, which beforeInitialize refuses then and there.
				handle()
				continue
			}
			size := int64(len(line.b))
			admit.Lock()
			busy := admit.n >= maxInFlight || admit.bytes+size > maxInFlightBytes
			if !busy {
				admit.n++
				admit.bytes += size
			}
			n, nb := admit.n, admit.bytes
			admit.Unlock()
			if busy {
				resp := mcpgo.NewJSONRPCError(mcpgo.NewRequestId(base.ID), codeServerBusy,
					fmt.Sprintf("server busy: %d requests (%d bytes) are in flight, the most this server admits "+
						"is %d requests or %d bytes: retry after a response arrives", n, nb, maxInFlight, maxInFlightBytes),
					map[string]any{"error_code": "server_busy", "retry": true})
				if err := w.write(resp); err != nil {
					result = fmt.Errorf("mcp: write stdout: %w", err)
					break loop
				}
				continue
			}
			// Requests run concurrently (a tool call must not hold up a read); JSON-RPC pairs
			// responses by id. A stream holds no handling slot (it waits for notifications).
			reqs.Go(func() {
				defer release(size)
				if !stream {
					select {
					case running <- struct{}{}:
						defer func() { <-running }()
					case <-hctx.Done():
						return
					}
				}
				handle()
			})
		}
	}
	cancelStreams()
	done := make(chan struct{})
	go func() { reqs.Wait(); close(done) }()
	if ctx.Err() == nil {
		select {
		case <-done:
		case <-time.After(shutdownGrace):
		}
	}
	cancelRequests()
	<-done
	if err := w.failed(); err != nil && result == nil {
		result = fmt.Errorf("mcp: write stdout: %w", err)
	}
	return result
}

// notRequest is the answer to a line that does not decode as a JSON-RPC message: -32700 (parse error)
// when it is not JSON; -32600 (invalid request) when it is JSON but not an object of JSON-RPC's members,
// such as a batch (an array): the MCP revisions from 2025-06-18 have no batches, and JSON-RPC 2.0 answers
// an invalid request (an empty batch included) with one error whose id is null (docs/mcp.md "Transport
// and identity").
func notRequest(b []byte) mcpgo.JSONRPCError {
	if !json.Valid(b) {
		return mcpgo.NewJSONRPCError(mcpgo.NewRequestId(nil), mcpgo.PARSE_ERROR, "Parse error", nil)
	}
	msg := "Invalid Request: not a JSON-RPC request object"
	if b = bytesTrimLeft(b); len(b) > 0 && b[0] == '[' {
		msg = "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them): send one request object a line"
	}
	return mcpgo.NewJSONRPCError(mcpgo.NewRequestId(nil), mcpgo.INVALID_REQUEST, msg, nil)
}

// envelope is what ctx reads of a JSON-RPC message before mcp-go handles it: its id (nil when it has
// none: a notification), its method and its params as they are (nil when absent).
type envelope struct {
	ID     any
	Method string
	Params json.RawMessage
	// JSONRPC is the jsonrpc member as sent (nil when absent); hasResult is set when the message has a
	// result member. Only the stdio fast path looks at them (fastRead); mcp-go checks them itself.
	JSONRPC   json.RawMessage
	hasResult bool
}

// readEnvelope reads the id and method of message b in one parse. A message that is not a request
// object (notRequest), or a request (a message with a method) whose id is present but neither a string
// nor a number (null, true, an object, an array), returns the answer it gets instead of being handled:
// -32600 Invalid Request with id null, as JSON-RPC 2.0 answers a request whose id cannot be read (MCP
// forbids a null id). Without it such a request would be taken for a notification and get no answer at
// all, and its client would wait forever. Used by stdio and HTTP alike.
func readEnvelope(b []byte) (envelope, *mcpgo.JSONRPCError) {
	fail := func(e mcpgo.JSONRPCError) (envelope, *mcpgo.JSONRPCError) { return envelope{}, &e }
	var m struct {
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
		JSONRPC json.RawMessage `json:"jsonrpc"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	var env envelope
	if json.Unmarshal(b, &m) != nil || m.Method != nil && json.Unmarshal(m.Method, &env.Method) != nil {
		return fail(notRequest(b))
	}
	env.Params, env.JSONRPC, env.hasResult = m.Params, m.JSONRPC, m.Result != nil
	if m.Method == nil && m.Result == nil && m.Error == nil {
		// null, {}, {"jsonrpc":"2.0"}, {"id":1}: neither a request, a notification nor a response (mcp-go
		// would answer nothing, or over HTTP take it for a message of an unknown session: 404)
		e := notRequest(b)
		if id := bytesTrim(m.ID); len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
			var v any
			if json.Unmarshal(id, &v) == nil {
				e.ID = mcpgo.NewRequestId(v)
			}
		}
		e.Error.Message = "Invalid Request: a JSON-RPC message needs a method (a request or a notification), or a result or an error (a response)"
		return fail(e)
	}
	if m.ID == nil {
		return env, nil
	}
	switch id := bytesTrim(m.ID); {
	case len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9'):
		if json.Unmarshal(id, &env.ID) != nil {
			return fail(notRequest(b))
		}
	case m.Method != nil:
		why := "Invalid Request: a request's id must be a string or a number"
		if string(id) == "null" {
			why += " (MCP forbids null)"
		}
		return fail(mcpgo.NewJSONRPCError(mcpgo.NewRequestId(nil), mcpgo.INVALID_REQUEST,
			why+": send a notification without an id, or give the request an id", nil))
	}
	return env, nil
}

// fastRead is the stdio fast path's answer to request env (read by readEnvelope, its line valid UTF-8,
// the session initialised; docs/mcp.md "The stdio fast path"): the encoded result of a resources/read
// whose answer the read cache holds, valid per the watch of the refs and record (readCache.peek), for a
// caller that sees the public scope only when pub; nil for anything else, which mcp-go's HandleMessage
// then handles as it would without this path.
//
// Only the plainest request is taken: jsonrpc exactly "2.0" as sent, no result member, params an object
// whose only member is uri (exactly so spelled), a non-empty string. A request with _meta (protocol
// 2026-07-28's version and capabilities, trace context, a progress token), arguments or any other
// parameter goes through mcp-go, and so does a read the cache cannot answer. What is answered is what
// mcp-go would answer for the same request: the URI was kept by render, the handler mcp-go routes it to
// (a kept URI matched a resource or template when it was read), and the answer is encoded as mcp-go
// encodes it (lineWriter.writeResult).
func (s *srv) fastRead(env envelope, pub bool) []byte {
	if env.Method != string(mcpgo.MethodResourcesRead) || env.hasResult ||
		string(env.JSONRPC) != `"`+mcpgo.JSONRPC_VERSION+`"` || len(env.Params) == 0 || env.Params[0] != '{' {
		return nil
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(env.Params, &params) != nil || len(params) != 1 {
		return nil
	}
	var uri string
	if raw, ok := params["uri"]; !ok || len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &uri) != nil || uri == "" {
		return nil
	}
	key := uri
	if pub {
		key = "public-only\x00" + uri
	}
	return s.reads.peek(key, pub)
}

// paramProblem says why the params of request env (read by readEnvelope) cannot be used by its
// method, "" when they can or the method is not checked here: the request is answered -32602 Invalid
// params, as JSON-RPC 2.0 says, rather than with mcp-go's -32002 "handler not found for resource URI" or
// its -32600 "unparsable request", whose message names Go types. Checked: resources/read,
// resources/subscribe and resources/unsubscribe (params.uri, a non-empty string) and tools/call
// (params an object; name a non-empty string; _meta absent, null or an object; arguments are the
// tool's to refuse, fitArgumentNumbers). Only the params are parsed again, not
// the whole message; a tool's own argument checks stay the tool's (tool errors, docs/mcp.md).
func paramProblem(env envelope) string {
	method := env.Method
	switch mcpgo.MCPMethod(method) {
	case mcpgo.MethodResourcesRead, mcpgo.MethodResourcesSubscribe, mcpgo.MethodResourcesUnsubscribe:
		return uriParamProblem(method, env.Params)
	case mcpgo.MethodToolsCall:
		return toolCallParamProblem(env.Params)
	}
	return ""
}

// uriParamProblem: params of a resources/ method without a URI string (paramProblem).
func uriParamProblem(method string, raw json.RawMessage) string {
	var params *struct {
		URI json.RawMessage `json:"uri"`
	}
	if raw == nil || json.Unmarshal(raw, &params) != nil || params == nil || params.URI == nil {
		return "Invalid params: " + method + " needs params.uri, the resource's URI (a string such as context://knowledge)"
	}
	var uri string
	if json.Unmarshal(params.URI, &uri) != nil || uri == "" {
		return "Invalid params: params.uri of " + method + " must be a non-empty string (a URI such as context://knowledge)"
	}
	return ""
}

// toolCallParamProblem: params of tools/call that mcp-go could not decode (paramProblem).
func toolCallParamProblem(raw json.RawMessage) string {
	var params *struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if raw == nil || !isJSONObject(raw) || json.Unmarshal(raw, &params) != nil || params == nil {
		return "Invalid params: tools/call needs params, an object with name (the tool's name) and arguments (an object)"
	}
	var name string
	if params.Name == nil || json.Unmarshal(params.Name, &name) != nil || name == "" {
		return "Invalid params: params.name of tools/call must be a non-empty string (the tool's name)"
	}
	if !nullOrObject(params.Meta) {
		return "Invalid params: params._meta of tools/call must be an object"
	}
	// Arguments that are no object are the tool's to refuse, and so is a number of an object beyond
	// float64's range, which fitArgumentNumbers brings within it (tool errors coded invalid_request,
	// docs/mcp.md).
	return ""
}

// fitArgumentNumbers returns the tools/call request msg with every number of its params.arguments that
// lies beyond float64's range (1e400, which mcp-go cannot decode: the request would fail as a whole)
// replaced by the largest float64 of its sign, so that the call reaches its tool, whose argument checks
// refuse it as every out-of-range number (each numeric argument has a maximum or is an integer: an
// invalid_request tool error, docs/mcp.md "Errors", which keeps protocol errors for the framing). It
// returns nil when msg needs no change (the common case costs one decode of the arguments) or is not
// such a request.
func fitArgumentNumbers(msg []byte) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil {
		return nil
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(env["params"], &params) != nil || !isJSONObject(params["arguments"]) {
		return nil
	}
	var plain map[string]any
	if json.Unmarshal(params["arguments"], &plain) == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(params["arguments"]))
	d.UseNumber()
	var args any
	if d.Decode(&args) != nil {
		return nil
	}
	args = fitNumbers(args)
	b, err := json.Marshal(args)
	if err != nil {
		return nil
	}
	params["arguments"] = b
	if env["params"], err = json.Marshal(params); err != nil {
		return nil
	}
	out, err := json.Marshal(env)
	if err != nil {
		return nil
	}
	return out
}

// fitNumbers replaces, in v (decoded with UseNumber), each number beyond float64's range by the largest
// float64 of its sign (fitArgumentNumbers).
func fitNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(x), 64); err != nil {
			if strings.HasPrefix(string(x), "-") {
				return json.Number(strconv.FormatFloat(-math.MaxFloat64, 'g', -1, 64))
			}
			return json.Number(strconv.FormatFloat(math.MaxFloat64, 'g', -1, 64))
		}
	case map[string]any:
		for k, e := range x {
			x[k] = fitNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = fitNumbers(e)
		}
	}
	return v
}

// isJSONObject reports whether raw (valid JSON) is an object.
func isJSONObject(raw json.RawMessage) bool {
	b := bytes.TrimLeft(raw, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// nullOrObject reports whether raw is absent, null or an object.
func nullOrObject(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) == 0 || bytes.Equal(b, []byte("null")) || b[0] == '{'
}

// inLine is one line of input: b is the line, or only its beginning (at most idHead bytes) when over is
// set (the line was longer than the request limit and was skipped); size is its length in bytes (at
// least the limit when over).
type inLine struct {
	b    []byte
	size int64
	over bool
}

// idHead is how much of a skipped line is kept to find the request's id in.
const idHead = 4096

// readLine reads one line of at most limit bytes. A longer line is read to its end without being kept:
// only its first idHead bytes are returned, with over set.
func readLine(r *bufio.Reader, limit int) (inLine, error) {
	var l inLine
	for {
		frag, err := r.ReadSlice('\n')
		l.size += int64(len(frag))
		switch {
		case l.over:
		case len(l.b)+len(frag) > limit:
			l.over = true
			head := append(l.b, frag[:min(len(frag), max(idHead-len(l.b), 0))]...)
			l.b = head[:min(len(head), idHead)]
		default:
			l.b = append(l.b, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return l, err
	}
}

// idPattern finds a JSON-RPC id in the beginning of a request.
var idPattern = lazyre.New(`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)`)

// guessID returns the id of a request from its first bytes (a skipped request must still be answered
// with its id), nil when there is none.
func guessID(head []byte) any {
	m := idPattern.Get().FindSubmatch(head)
	if m == nil {
		return nil
	}
	var id any
	if json.Unmarshal(m[1], &id) != nil {
		return nil
	}
	if f, ok := id.(float64); ok {
		return int64(f)
	}
	return id
}

// bytesTrimLeft is b without its leading JSON white space.
func bytesTrimLeft(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}

func bytesTrim(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// lineWriter writes one JSON message a line, serialised; it remembers the first write error.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (l *lineWriter) write(v any) error {
	_, err := l.writeN(v)
	return err
}

// lineBufs are the buffers messages are encoded in, reused from one message to the next.
var lineBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeN is write that returns the bytes written, the newline included. The message is encoded (as
// json.Marshal does, followed by a newline) into a reused buffer, outside the lock, and written in one
// Write.
func (l *lineWriter) writeN(v any) (int, error) {
	buf := lineBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 64<<10 { // a large answer's buffer is not kept
			lineBufs.Put(buf)
		}
	}()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return 0, fmt.Errorf("encode message: %w", err)
	}
	return l.flush(buf)
}

// flush writes buf, one whole message, in one Write under the lock; after a failed write every later one
// returns that error. It returns the bytes written.
func (l *lineWriter) flush(buf *bytes.Buffer) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	if _, err := l.w.Write(buf.Bytes()); err != nil {
		l.err = err
		return 0, err
	}
	return buf.Len(), nil
}

// writeResult writes the response to request id whose result is already encoded, as writeN writes
// mcpgo.NewJSONRPCResultResponse(mcpgo.NewRequestId(id), result): the same members in the same order, the
// id encoded by mcp-go's RequestId (a number as the float64 it was decoded to, as mcp-go echoes it). It
// returns the bytes written, the newline included.
func (l *lineWriter) writeResult(id any, result []byte) (int, error) {
	idb, err := mcpgo.NewRequestId(id).MarshalJSON()
	if err != nil {
		return 0, fmt.Errorf("encode message: %w", err)
	}
	buf := lineBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 64<<10 {
			lineBufs.Put(buf)
		}
	}()
	buf.WriteString(`{"jsonrpc":"` + mcpgo.JSONRPC_VERSION + `","id":`)
	buf.Write(idb)
	buf.WriteString(`,"result":`)
	buf.Write(result)
	buf.WriteString("}\n")
	return l.flush(buf)
}

func (l *lineWriter) failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// stdioSession is the one client of a ServeStdio call. It records resources/subscribe so that
// notifications/resources/updated go to subscribed URIs only.
type stdioSession struct {
	id            string
	notifications chan mcpgo.JSONRPCNotification
	initialized   atomic.Bool
	mu            sync.Mutex
	subs          map[string]bool
	info          mcpgo.Implementation
	caps          mcpgo.ClientCapabilities
	filter        mcpgo.SubscriptionFilter // subscriptions/listen's opt-in (protocol 2026-07-28)
}

var sessionSeq atomic.Int64

func newStdioSession() *stdioSession {
	return &stdioSession{
		id:            fmt.Sprintf("stdio-%d", sessionSeq.Add(1)),
		notifications: make(chan mcpgo.JSONRPCNotification, 256),
		subs:          map[string]bool{},
	}
}

var (
	_ server.SessionWithResourceSubscriptions = (*stdioSession)(nil)
	_ server.SessionWithClientInfo            = (*stdioSession)(nil)
	_ server.SessionWithSubscriptionFilter    = (*stdioSession)(nil)
)

// SetSubscriptionFilter records what a subscriptions/listen stream opted in to (SEP-2575): while one is
// open, only those notification types are delivered. Legacy clients never set one and get them all.
func (s *stdioSession) SetSubscriptionFilter(f mcpgo.SubscriptionFilter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filter = f
}

func (s *stdioSession) SubscriptionFilter() (mcpgo.SubscriptionFilter, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.filter, !s.filter.IsEmpty()
}

func (s *stdioSession) SessionID() string { return s.id }
func (s *stdioSession) NotificationChannel() chan<- mcpgo.JSONRPCNotification {
	return s.notifications
}
func (s *stdioSession) Initialize()       { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool { return s.initialized.Load() }

func (s *stdioSession) SubscribeToResource(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[uri] = true
}

func (s *stdioSession) UnsubscribeFromResource(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, uri)
}

func (s *stdioSession) SubscribedResources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.subs))
	for u := range s.subs {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

func (s *stdioSession) IsSubscribedToResource(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[uri]
}

func (s *stdioSession) GetClientInfo() mcpgo.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

func (s *stdioSession) SetClientInfo(i mcpgo.Implementation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = i
}

func (s *stdioSession) GetClientCapabilities() mcpgo.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

func (s *stdioSession) SetClientCapabilities(c mcpgo.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = c
}

// calledTool is the name of the tool a tools/call request calls, "" when it names no tool of this server
// (unknown tools are not counted in the local usage).
func (s *srv) calledTool(line []byte) string {
	var req struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || !s.names[req.Params.Name] {
		return ""
	}
	return req.Params.Name
}
