package mcp

import (
	"context"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// TestNotifications: a write by another Store handle (another process) moves the context refs; within a
// few poll intervals the server sends notifications/resources/list_changed, and
// notifications/resources/updated for the subscribed URIs whose content changed, not for the others.
func TestNotifications(t *testing.T) {
	for _, pv := range []string{mcpgo.LATEST_LEGACY_PROTOCOL_VERSION, ""} {
		name := pv
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			dir, st := newRepo(t, store.Actor{Agent: "cli"})
			seed(t, st)
			const poll = 50 * time.Millisecond
			s := serve(t, st, Options{Agent: "claude-code", PollInterval: poll}, pv)
			ctx := context.Background()
			uris := []string{"context://knowledge", "context://knowledge/architecture", "context://conventions"}
			if pv == "" {
				// protocol 2026-07-28: notifications are opted in to with subscriptions/listen (SEP-2575)
				lctx, stop := context.WithCancel(ctx)
				listening := make(chan error, 1)
				go func() {
					listening <- s.c.Listen(lctx, mcpgo.SubscriptionFilter{ResourcesListChanged: true, ResourceSubscriptions: uris})
				}()
				t.Cleanup(func() { stop(); <-listening }) //nolint:errcheck // the stream ends with the cancellation's error
			} else {
				for _, uri := range uris {
					req := mcpgo.SubscribeRequest{}
					req.Params.URI = uri
					//nolint:staticcheck // SA1019: the older protocol versions this case covers have only resources/subscribe
					if err := s.c.Subscribe(ctx, req); err != nil {
						t.Fatalf("subscribe %s: %v", uri, err)
					}
				}
			}
			time.Sleep(3 * poll) // let the watcher take its baseline
			s.clearNotes()

			other, err := store.Open(ctx, dir, store.Actor{Agent: "cursor"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "architecture", Content: "Monolith now.\n"}); err != nil {
				t.Fatal(err)
			}
			if !s.waitNote(t, mcpgo.MethodNotificationResourcesListChanged, "", 20*poll) {
				t.Fatalf("no list_changed within %v; stderr:\n%s", 20*poll, s.stderr)
			}
			for _, uri := range []string{"context://knowledge", "context://knowledge/architecture"} {
				if !s.waitNote(t, mcpgo.MethodNotificationResourceUpdated, uri, 20*poll) {
					t.Errorf("no resources/updated for %s", uri)
				}
			}
			if s.hasNote(mcpgo.MethodNotificationResourceUpdated, "context://conventions") {
				t.Errorf("resources/updated for context://conventions, which did not change")
			}
			// the new content is what the server now reads
			jsonEq(t, "after", s.readJSON(t, "context://knowledge/architecture"), `{"key":"architecture","content":"Monolith now.\n"}`)

			// a write through the server's own tool notifies too
			s.clearNotes()
			s.call(t, "context_add_convention", map[string]any{"key": "style", "content": "gofmt\n"})
			if !s.waitNote(t, mcpgo.MethodNotificationResourceUpdated, "context://conventions", 20*poll) {
				t.Errorf("no resources/updated for context://conventions after the server's own write")
			}
		})
	}
}
