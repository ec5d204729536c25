package mcp

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/tokens"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/time/rate"
)

// HTTPPath is the endpoint of the Streamable HTTP transport.
const HTTPPath = "/mcp"

// Defaults of HTTPOptions.
const (
	DefaultHTTPRate  = 20  // requests per second per token
	DefaultHTTPBurst = 100 // requests a token may make at once before the rate applies
)

// TokenVerifier checks a bearer token (tokens.Store does). An error refuses the request with 401.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (tokens.Token, error)
}

// HTTPOptions configure [Server.ServeHTTP] and [Server.HTTPHandler].
type HTTPOptions struct {
	Tokens         TokenVerifier // required: every request needs "Authorization: Bearer <token>"
	AllowedOrigins []string      // Origin values accepted besides the server's own (scheme://host[:port])
	MaxBodyBytes   int64         // request body limit in bytes; 0 is 4 MiB, as a stdio request line
	Rate           float64       // requests per second per token; 0 is DefaultHTTPRate
	Burst          int           // 0 is DefaultHTTPBurst
	AccessLog      io.Writer     // one JSON object per request, never a token; nil is Options.Stderr
	TLSCert        string        // with TLSKey: serve HTTPS
	TLSKey         string
	// ShutdownGrace is how long requests in flight may take to finish once ctx is done; 0 is 10 s.
	ShutdownGrace time.Duration
}

// Caller is who an HTTP request speaks for, from its bearer token: its writes are authored by Member
// <Email>, carry Ctx-Agent Agent (when set, else the client's own name), and a ReadOnly caller sees and
// may call the read-only tools only. No tool argument can change it.
type Caller struct {
	TokenID  string
	Member   string
	Email    string
	Agent    string
	ReadOnly bool
}

type callerKey struct{}

// callerOf is the request's caller; nil over stdio.
func callerOf(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

// CheckListenAddr refuses to serve on addr (host:port) unless it is a loopback address, or allowRemote
// is set with TLS or with insecure (docs/http.md "Safety"). A host name other than localhost counts as
// remote.
func CheckListenAddr(addr string, allowRemote, withTLS, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if isLoopback(host) {
		return nil
	}
	if !allowRemote {
		return fmt.Errorf("listen address %q is not a loopback address: pass --allow-remote (with --tls-cert and --tls-key, or --insecure) to serve other machines", addr)
	}
	if !withTLS && !insecure {
		return fmt.Errorf("serving %q to other machines needs TLS (--tls-cert and --tls-key) or an explicit --insecure", addr)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// ServeHTTP serves the MCP Streamable HTTP transport (endpoint [HTTPPath]) on ln until ctx is done, with
// the resources, tools and prompts of stdio, and runs the change notifications ([Server.Watch]). When ctx
// is done it stops accepting requests, ends the event streams (GET), lets the requests in flight finish
// within opt.ShutdownGrace, and returns nil. The caller checks the address first (CheckListenAddr).
func (x *Server) ServeHTTP(ctx context.Context, ln net.Listener, opt HTTPOptions) error {
	h, err := x.httpHandler(opt)
	if err != nil {
		return err
	}
	grace := opt.ShutdownGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: x.s.log,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	if opt.TLSCert != "" || opt.TLSKey != "" {
		cert, err := tls.LoadX509KeyPair(opt.TLSCert, opt.TLSKey)
		if err != nil {
			return fmt.Errorf("mcp http: TLS certificate: %w", err)
		}
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, hs.TLSConfig)
	}
	defer x.s.reads.close()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var bg sync.WaitGroup
	bg.Go(func() {
		if err := x.s.watch(watchCtx); err != nil && watchCtx.Err() == nil {
			x.s.log.Printf("watch: %v", err)
		}
	})
	defer bg.Wait()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("mcp http: %w", err)
	case <-ctx.Done():
	}
	h.stopStreams()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	_ = h.mcp.Shutdown(sctx) // closes mcp-go's sessions and its idle-session sweeper; serves no listener itself
	err = hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		x.s.log.Printf("http: requests still running after %v: closing them", grace)
		err = hs.Close()
	}
	if serr := <-served; err == nil && serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("mcp http: shutdown: %w", err)
	}
	return nil
}

// HTTPHandler returns the http.Handler of ServeHTTP (for tests and for embedding in another server).
// It does not run the change notifications: run [Server.Watch] beside it.
func (x *Server) HTTPHandler(opt HTTPOptions) (http.Handler, error) {
	return x.httpHandler(opt)
}

// httpHandler is the middleware chain in front of mcp-go's StreamableHTTPServer: access log, path,
// Origin, bearer token, session owner, rate limit, body limit, and the caller's identity in the
// request's context.
type httpHandler struct {
	s            *srv
	opt          HTTPOptions
	mcp          *server.StreamableHTTPServer
	log          *slog.Logger
	mu           sync.Mutex
	limiters     map[string]*rate.Limiter // token id -> its limiter
	sessions     map[string]string        // Mcp-Session-Id -> the token id that made it
	sessionOrder []string                 // session ids, oldest first
	streams      context.Context          // cancelled by stopStreams: ends GET event streams at shutdown
	stop         context.CancelFunc
}

func (x *Server) httpHandler(opt HTTPOptions) (*httpHandler, error) {
	if opt.Tokens == nil {
		return nil, errors.New("mcp http: no token store: every request must carry a bearer token")
	}
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = maxRequestBytes
	}
	if opt.Rate <= 0 {
		opt.Rate = DefaultHTTPRate
	}
	if opt.Burst <= 0 {
		opt.Burst = DefaultHTTPBurst
	}
	if opt.AccessLog == nil {
		opt.AccessLog = x.s.opt.Stderr
	}
	for _, o := range opt.AllowedOrigins {
		if _, err := url.Parse(o); err != nil || o == "" {
			return nil, fmt.Errorf("mcp http: allowed origin %q: not an origin (scheme://host[:port])", o)
		}
	}
	streams, stop := context.WithCancel(context.Background())
	h := &httpHandler{s: x.s, opt: opt, log: slog.New(slog.NewJSONHandler(opt.AccessLog, nil)),
		limiters: map[string]*rate.Limiter{}, sessions: map[string]string{}, streams: streams, stop: stop}
	// Stateful: session ids are checked against the sessions this server made (a single process serves
	// one clone); sessions idle for an hour are dropped. No event store: mcp-go's in-memory one keeps a
	// session's events without bound, so streams are not resumable (docs/http.md).
	x.s.ensureTools()
	h.mcp = server.NewStreamableHTTPServer(x.s.mcp, server.WithEndpointPath(HTTPPath), server.WithStateful(true),
		server.WithSessionIdleTTL(time.Hour), server.WithHeartbeatInterval(30*time.Second))
	return h, nil
}

func (h *httpHandler) stopStreams() { h.stop() }

// statusWriter records the status and size of a response for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// refuse answers an error status with a short plain-text reason.
func refuse(w http.ResponseWriter, code int, msg string) {
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ctx"`)
	}
	http.Error(w, msg, code)
}

func (h *httpHandler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	w := &statusWriter{ResponseWriter: rw}
	var c *Caller
	reason := ""
	defer func() {
		attrs := []any{"remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path, "status", w.status,
			"bytes", w.bytes, "ms", time.Since(start).Milliseconds()}
		if c != nil {
			attrs = append(attrs, "token_id", c.TokenID, "member", c.Member, "agent", c.Agent)
		}
		if reason != "" {
			attrs = append(attrs, "refused", reason)
		}
		if sid := r.Header.Get(server.HeaderKeySessionID); sid != "" {
			attrs = append(attrs, "session", sid)
		}
		h.log.Info("request", attrs...)
	}()
	if r.URL.Path != HTTPPath {
		reason = "path"
		http.NotFound(w, r)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !h.originAllowed(o, r) {
		reason = "origin"
		refuse(w, http.StatusForbidden, "forbidden: origin not allowed")
		return
	}
	tok, ok := bearer(r)
	if !ok {
		reason = "no token"
		refuse(w, http.StatusUnauthorized, "unauthorized: send Authorization: Bearer <token> (ctx team token add)")
		return
	}
	t, err := h.opt.Tokens.Verify(r.Context(), tok)
	if err != nil {
		reason = "token"
		if !errors.Is(err, tokens.ErrMalformed) && !errors.Is(err, tokens.ErrUnknown) && !errors.Is(err, tokens.ErrExpired) {
			h.s.log.Printf("http: verify token: %v", err)
			reason = "token store"
		}
		refuse(w, http.StatusUnauthorized, "unauthorized")
		return
	}
	c = &Caller{TokenID: t.ID, Member: t.Member, Email: t.Email, Agent: t.Agent, ReadOnly: t.ReadOnly}
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid != "" && !h.sessionOf(sid, t.ID) {
		reason = "session"
		refuse(w, http.StatusForbidden, "forbidden: the session belongs to another token")
		return
	}
	if !h.limiter(t.ID).Allow() {
		reason = "rate"
		w.Header().Set("Retry-After", "1")
		refuse(w, http.StatusTooManyRequests, "too many requests")
		return
	}
	if r.ContentLength > h.opt.MaxBodyBytes {
		reason = "body"
		refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", h.opt.MaxBodyBytes))
		return
	}
	ctx := context.WithValue(r.Context(), callerKey{}, c)
	ctx = store.WithIdentity(ctx, t.Member, t.Email)
	// The private and ephemeral scopes are the machine user's, not the caller's (docs/security.md).
	ctx = store.WithPublicOnly(ctx)
	if r.Method == http.MethodGet {
		// an event stream ends at shutdown, and once its token is no longer accepted (revoked, expired:
		// watchToken); requests (POST) run to their end
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(h.streams, cancel)
		defer stop()
		go h.watchToken(ctx, tok, c.TokenID, sid, cancel)
	}
	r = r.WithContext(ctx)
	if r.Method == http.MethodPost && r.Body != nil {
		// mcp-go reads the whole body first anyway; read it here, within the limit
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opt.MaxBodyBytes))
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			reason = "body"
			refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", h.opt.MaxBodyBytes))
			return
		}
		if err != nil {
			reason = "body"
			refuse(w, http.StatusBadRequest, "cannot read the request body")
			return
		}
		env, bad := readEnvelope(body)
		if bad == nil && env.ID != nil {
			if why := paramProblem(env); why != "" {
				// answered as mcp-go answers a request's error: HTTP 200 with the JSON-RPC error
				reason = "params"
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(mcpgo.NewJSONRPCError(mcpgo.NewRequestId(env.ID), mcpgo.INVALID_PARAMS, why, nil))
				return
			}
			if e := unknownSubscription(body, env.Method, env.ID); e != nil {
				reason = "params"
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(*e)
				return
			}
			if name := h.writeToolOf(c, env); name != "" {
				// a write tool of a read-only token: the tool error docs/http.md promises, not mcp-go's
				// -32602 "tool not found" (filterTools hides it from the token's tools/list)
				reason = "read-only"
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(mcpgo.NewJSONRPCResultResponse(mcpgo.NewRequestId(env.ID),
					mcpgo.NewToolResultError(name+": this token is read-only (ctx team token add --read-only): it cannot call a tool that writes; nothing was written")))
				return
			}
		}
		if bad != nil && json.Valid(body) {
			// a batch, other JSON that is no request object, or a request whose id is null (or true,
			// ...): -32600, as over stdio (mcp-go would answer -32700, a parse error, or take the
			// request for a notification and answer nothing); text that is not JSON is mcp-go's to answer
			reason = "batch"
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(*bad)
			return
		}
		if bad == nil && env.Method == string(mcpgo.MethodToolsCall) {
			if b := fitArgumentNumbers(body); b != nil {
				body = b
				r.ContentLength = int64(len(b))
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	h.mcp.ServeHTTP(w, r)
	if sid == "" {
		if made := w.Header().Get(server.HeaderKeySessionID); made != "" {
			h.bindSession(made, t.ID)
		}
	} else if r.Method == http.MethodDelete {
		h.bindSession(sid, "")
	}
}

// tokenRecheck is how often an open event stream checks that its token is still accepted; a variable
// for tests.
var tokenRecheck = time.Second

// watchToken verifies the token of an event stream every tokenRecheck (Verify rereads the token file when
// it changed: a stat) until ctx is done, and ends the stream (end) once the token is refused, so that a
// revoked or expired token gets no more notifications (docs/http.md "Tokens").
func (h *httpHandler) watchToken(ctx context.Context, tok, tokenID, sid string, end context.CancelFunc) {
	t := time.NewTicker(tokenRecheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := h.opt.Tokens.Verify(ctx, tok); err != nil && ctx.Err() == nil {
			h.log.Info("stream ended", "token_id", tokenID, "session", sid, "refused", "token")
			end()
			return
		}
	}
}

// writeToolOf is the name of the tool that env calls when it is a tools/call of a read-only caller c, in
// a session, of a tool of this server that is not read-only; "" otherwise.
func (h *httpHandler) writeToolOf(c *Caller, env envelope) string {
	if c == nil || !c.ReadOnly || env.Method != string(mcpgo.MethodToolsCall) {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(env.Params, &p) != nil || p.Name == "" {
		return ""
	}
	t := h.s.mcp.GetTool(p.Name)
	if t == nil || t.Tool.Annotations.ReadOnlyHint != nil && *t.Tool.Annotations.ReadOnlyHint {
		return ""
	}
	return p.Name
}

// maxSessions bounds the session -> token map (sessions beyond it are forgotten oldest first, and then
// only mcp-go's own session check applies to them).
const maxSessions = 1 << 16

// bindSession records that the session was made by the token (id "" forgets it).
func (h *httpHandler) bindSession(sid, tokenID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if tokenID == "" {
		delete(h.sessions, sid)
		return
	}
	if len(h.sessionOrder) >= maxSessions {
		delete(h.sessions, h.sessionOrder[0])
		h.sessionOrder = h.sessionOrder[1:]
	}
	h.sessions[sid] = tokenID
	h.sessionOrder = append(h.sessionOrder, sid)
}

// sessionOf reports whether a request with the token may use the session: one made with another token
// may not (a leaked session id gives no one else its subscriptions or its event stream).
func (h *httpHandler) sessionOf(sid, tokenID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	owner, ok := h.sessions[sid]
	return !ok || owner == tokenID
}

// bearer is the request's bearer token.
func bearer(r *http.Request) (string, bool) {
	a := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(a, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// originAllowed accepts the server's own origin (scheme://Host of the request) and the configured ones;
// a browser page of any other origin is refused (DNS rebinding, cross-site requests).
func (h *httpHandler) originAllowed(origin string, r *http.Request) bool {
	for _, o := range h.opt.AllowedOrigins {
		if strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(u.Host, r.Host)
}

// limiter is the rate limiter of a token.
func (h *httpHandler) limiter(id string) *rate.Limiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.limiters[id]
	if !ok {
		if len(h.limiters) >= 4096 {
			clear(h.limiters) // bounded: tokens are few, but never grow without end
		}
		l = rate.NewLimiter(rate.Limit(h.opt.Rate), h.opt.Burst)
		h.limiters[id] = l
	}
	return l
}

// filterTools is the tool filter of every server: a read-only caller sees (and can call) the read-only
// tools only.
func filterTools(ctx context.Context, tools []mcpgo.Tool) []mcpgo.Tool {
	c := callerOf(ctx)
	if c == nil || !c.ReadOnly {
		return tools
	}
	out := tools[:0:0]
	for _, t := range tools {
		if t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint {
			out = append(out, t)
		}
	}
	return out
}
