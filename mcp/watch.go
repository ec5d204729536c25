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
// can find the URIs each one subscribed to, whatever the transport.
type hub struct {
	mu       sync.Mutex
	sessions map[string]server.ClientSession
}

func newHub() *hub { return &hub{sessions: map[string]server.ClientSession{}} }

func (h *hub) add(cs server.ClientSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessions[cs.SessionID()] = cs
}

func (h *hub) remove(cs server.ClientSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, cs.SessionID())
}

// subscriptions returns, for each subscribed URI, the ids of the sessions subscribed to it.
func (h *hub) subscriptions() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]string{}
	for id, cs := range h.sessions {
		subs, ok := cs.(server.SessionWithResourceSubscriptions)
		if !ok || !cs.Initialized() {
			continue
		}
		for _, u := range subs.SubscribedResources() {
			out[u] = append(out[u], id)
		}
	}
	return out
}

// watch is the loop of Watch: it polls st.Tips every PollInterval. When a tip moved it sends
// notifications/resources/list_changed to every session, then renders each subscribed URI again and
// sends notifications/resources/updated {uri} to its subscribers when its content differs from the
// last rendering (or was never rendered). Read errors are logged, never fatal: the next tick retries.
func (s *srv) watch(ctx context.Context) error {
	last, err := s.st.Tips(ctx)
	if err != nil {
		s.log.Printf("read context refs: %v", err)
	}
	seen := map[string]string{} // subscribed URI -> the digest of its last rendering
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
		last = tips
		subs := s.hub.subscriptions()
		for u := range seen {
			if _, ok := subs[u]; !ok {
				delete(seen, u)
			}
		}
		if moved {
			s.log.Printf("context refs moved: %s", describeTips(tips))
			s.mcp.SendNotificationToAllClients(mcpgo.MethodNotificationResourcesListChanged, nil)
		}
		uris := make([]string, 0, len(subs))
		for u := range subs {
			uris = append(uris, u)
		}
		sort.Strings(uris)
		for _, u := range uris {
			old, had := seen[u]
			if had && !moved {
				continue
			}
			c, err := s.render(ctx, u)
			if err != nil {
				s.log.Printf("render %s: %v", u, err)
				continue
			}
			sum := contentsDigest(c)
			seen[u] = sum
			if !moved || (had && old == sum) {
				continue
			}
			for _, id := range subs[u] {
				if err := s.mcp.SendNotificationToSpecificClient(id, mcpgo.MethodNotificationResourceUpdated, map[string]any{"uri": u}); err != nil {
					s.log.Printf("notify %s of %s: %v", id, u, err)
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
