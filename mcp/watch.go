package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// hub tracks the server's client sessions (through the register/unregister hooks), so that the watcher
// can find the URIs each one subscribed to, whatever the transport: a session that records its own
// subscriptions (stdio's, server.SessionWithResourceSubscriptions) is asked for them; for the others
// (mcp-go's Streamable HTTP sessions, which record none) the hub records resources/subscribe and
// resources/unsubscribe itself (the after-subscribe hooks, subscribed).
type hub struct {
	mu       sync.Mutex
	sessions map[string]server.ClientSession
	subs     map[string]map[string]bool // session id -> the URIs it subscribed to (hook-recorded)
	pub      map[string]bool            // session id -> its requests are public-only (store.WithPublicOnly)
}

func newHub() *hub {
	return &hub{sessions: map[string]server.ClientSession{}, subs: map[string]map[string]bool{}, pub: map[string]bool{}}
}

// add records a new session; ctx is the request that registered it: a public-only one (over HTTP, a
// token holder's) makes the session public-only (local, list_changed of the private scopes: never).
func (h *hub) add(ctx context.Context, cs server.ClientSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessions[cs.SessionID()] = cs
	if store.PublicOnly(ctx) {
		h.pub[cs.SessionID()] = true
	}
}

func (h *hub) remove(cs server.ClientSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, cs.SessionID())
	delete(h.subs, cs.SessionID())
	delete(h.pub, cs.SessionID())
}

// subscribed records a successful resources/subscribe (on) or resources/unsubscribe (!on) of the
// request's session, unless the session records its own; a public-only request (over HTTP) makes the
// session's renderings public-only.
func (h *hub) subscribed(ctx context.Context, uri string, on bool) {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil {
		return
	}
	if _, own := cs.(server.SessionWithResourceSubscriptions); own {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	id := cs.SessionID()
	if _, live := h.sessions[id]; !live {
		return
	}
	if !on {
		delete(h.subs[id], uri)
		return
	}
	if h.subs[id] == nil {
		h.subs[id] = map[string]bool{}
	}
	if len(h.subs[id]) < maxSubscriptions {
		h.subs[id][uri] = true
	}
	h.pub[id] = h.pub[id] || store.PublicOnly(ctx)
}

// local returns the ids of the initialised sessions that see every scope (not public-only: stdio's, the
// machine user's), sorted.
func (h *hub) local() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id, cs := range h.sessions {
		if cs.Initialized() && !h.pub[id] {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// maxSubscriptions bounds the URIs the hub records for one session (each is rendered on every move of
// the refs).
const maxSubscriptions = 1024

// subscription is a subscribed URI and whether its subscribers read public-only.
type subscription struct {
	uri string
	pub bool
}

// subscriptions returns, for each subscribed URI (and view), the ids of the sessions subscribed to it.
func (h *hub) subscriptions() map[subscription][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[subscription][]string{}
	for id, cs := range h.sessions {
		if !cs.Initialized() {
			continue
		}
		if subs, ok := cs.(server.SessionWithResourceSubscriptions); ok {
			for _, u := range subs.SubscribedResources() {
				out[subscription{u, false}] = append(out[subscription{u, false}], id)
			}
			continue
		}
		for u := range h.subs[id] {
			k := subscription{u, h.pub[id]}
			out[k] = append(out[k], id)
		}
	}
	return out
}

// watch is the loop of Watch: it polls st.Tips every PollInterval. When a tip moved it sends
// notifications/resources/list_changed: to every session when the public ref moved, else (only a private
// or ephemeral ref moved) to the sessions that see those scopes (hub.local): a public-only session over
// HTTP reads none of them, so their moves are none of its business and must not reach it (docs/http.md).
// Then it renders each subscribed URI again and
// sends notifications/resources/updated {uri} to its subscribers when its content differs from the
// last rendering (or was never rendered). Read errors are logged, never fatal: the next tick retries.
func (s *srv) watch(ctx context.Context) error {
	last, err := s.st.Tips(ctx)
	if err != nil {
		s.log.Printf("read context refs: %v", err)
	}
	seen := map[subscription]string{} // subscribed URI (and view) -> the digest of its last rendering
	t := time.NewTicker(s.opt.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		tips, err := s.st.Tips(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.log.Printf("read context refs: %v", err)
			continue
		}
		moved := last != nil && !maps.Equal(tips, last)
		publicMoved := moved && tips[store.Public] != last[store.Public]
		last = tips
		subs := s.hub.subscriptions()
		for k := range seen {
			if _, ok := subs[k]; !ok {
				delete(seen, k)
			}
		}
		if moved {
			s.log.Printf("context refs moved: %s", describeTips(tips))
			if publicMoved {
				s.mcp.SendNotificationToAllClients(mcpgo.MethodNotificationResourcesListChanged, nil)
			} else {
				for _, id := range s.hub.local() {
					if err := s.mcp.SendNotificationToSpecificClient(id, mcpgo.MethodNotificationResourcesListChanged, nil); err != nil {
						s.log.Printf("notify %s of the list: %v", id, err)
					}
				}
			}
		}
		keys := make([]subscription, 0, len(subs))
		for k := range subs {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return keys[i].uri < keys[j].uri || keys[i].uri == keys[j].uri && !keys[i].pub && keys[j].pub
		})
		for _, k := range keys {
			old, had := seen[k]
			if had && !moved {
				continue
			}
			rctx := ctx
			if k.pub {
				rctx = store.WithPublicOnly(ctx) // what its subscribers over HTTP read (docs/http.md)
			}
			c, err := s.render(rctx, k.uri)
			if err != nil {
				s.log.Printf("render %s: %v", k.uri, err)
				continue
			}
			sum := contentsDigest(c)
			seen[k] = sum
			if !moved || (had && old == sum) {
				continue
			}
			for _, id := range subs[k] {
				if err := s.mcp.SendNotificationToSpecificClient(id, mcpgo.MethodNotificationResourceUpdated, map[string]any{"uri": k.uri}); err != nil {
					s.log.Printf("notify %s of %s: %v", id, k.uri, err)
				}
			}
		}
	}
}

func describeTips(tips map[store.Scope]store.Hash) string {
	out := ""
	for _, sc := range store.Scopes {
		if h := tips[sc]; !h.IsZero() {
			out += fmt.Sprintf(" %s=%s", sc, h.String()[:12])
		}
	}
	return out
}

// contentsDigest identifies a resource's rendering (SHA-256 of its texts) without keeping it.
func contentsDigest(cs []mcpgo.ResourceContents) string {
	h := sha256.New()
	for _, c := range cs {
		if t, ok := c.(mcpgo.TextResourceContents); ok {
			fmt.Fprintf(h, "%d:%s\x00", len(t.Text), t.Text)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
