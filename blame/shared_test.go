package blame

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/history"
)

// sharedRecord is a shared session record (docs/format.md "Shared sessions") of a session working in cwd
// (a teammate's machine) whose git commit printed a receipt, with commit fact value.
func sharedRecord(t *testing.T, native, cwd, value string) []byte {
	t.Helper()
	sid := history.SessionID(history.Codex, native)
	h := history.NewSharedHeader(history.Session{ID: sid, Provider: history.Codex, NativeID: native, CWD: cwd})
	ev := history.NewSharedEvent(history.Event{ID: history.EventID(sid, "L9#0"), NativeKey: "L9#0", Seq: 1,
		Type: history.ToolOutput, Role: "tool", Text: "[main " + value[:7] + "] Add hello function",
		Tool: &history.Tool{Name: "exec_command", CallID: "c1"}, Facts: []history.Fact{{Kind: "commit", Value: value}}})
	var b strings.Builder
	for _, v := range []any{h, ev} {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// A teammate's shared session proves a commit here only with the full commit id the sharer resolved: its
// working directory is on another machine, and a short id of a shared record proves nothing. ResolveReceipt
// gives the full id only for a session working in this repository.
func TestSharedReceipts(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	full := history.SessionID(history.Codex, "shared-full")
	for native, value := range map[string]string{"shared-full": f.hello, "shared-short": short(f.hello)} {
		sid := history.SessionID(history.Codex, native)
		res, err := f.ix.ImportShared(ctx, "transcripts/2026/11/"+sid+".ndjson", "blob-"+native, sid,
			sharedRecord(t, native, "~/elsewhere/repo", value))
		if err != nil || res.Action != "imported" {
			t.Fatalf("%s: %+v %v", native, res, err)
		}
	}
	b := f.blamer(t, f.ix)
	cr, err := b.Commit(ctx, f.hello)
	if err != nil || cr.Outcome != Proven || len(cr.Sessions) != 1 || cr.Sessions[0] != full ||
		cr.Evidence[0].Kind != KindReceipt || !strings.HasPrefix(cr.Evidence[0].Excerpt, "[main "+short(f.hello)+"]") {
		t.Errorf("commit: %+v %v", cr, err)
	}
	if got, ok := b.ResolveReceipt(ctx, f.repo, short(f.hello)); !ok || got != f.hello {
		t.Errorf("ResolveReceipt in the repository: %q %v", got, ok)
	}
	for _, tc := range [][2]string{{t.TempDir(), short(f.hello)}, {f.repo, "0000000"}, {f.repo, "--all"}, {"", short(f.hello)}} {
		if got, ok := b.ResolveReceipt(ctx, tc[0], tc[1]); ok {
			t.Errorf("ResolveReceipt(%q, %q) = %q", tc[0], tc[1], got)
		}
	}
}
