package history

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// parseCodexLineTwoPass is parseCodexLine's fallback alone: the record, then its payload as its type
// reads it (the parser as it was before the one-pass decode).
func parseCodexLineTwoPass(b *builder, data []byte) error {
	var r codexRec
	if err := decodeRec(data, &r); err != nil {
		return err
	}
	return parseCodexRecord(b, r.Timestamp, r.Type, rawPayload(r.Payload))
}

// TestCodexOnePassSameAsTwoPass: every Codex rollout of the corpus (and of $CTX_BENCH_HISTORY) parses
// to the same events, counts and state in one pass as in two, and crafted records whose payload does
// not fit the one-pass shape still parse as they did.
func TestCodexOnePassSameAsTwoPass(t *testing.T) {
	dirs := []string{filepath.Join(corpusDir(t), "codex")}
	if h := os.Getenv("CTX_BENCH_HISTORY"); h != "" {
		dirs = append(dirs, filepath.Join(h, "codex"))
	}
	ctx := context.Background()
	files := 0
	for _, d := range dirs {
		srcs, err := Discover(ctx, Codex, d, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range srcs {
			if s.Format != FormatCodex {
				continue
			}
			parse := func(p lineParser) (*parseResult, parseState) {
				f, _, err := openRegular(s.Path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				var st parseState
				pr, err := parseJSONL(ctx, f, 0, &st, p)
				if err != nil {
					t.Fatal(err)
				}
				return pr, st
			}
			a, sa := parse(parseCodexLine)
			b, sb := parse(parseCodexLineTwoPass)
			if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(sa, sb) {
				t.Fatalf("%s: one pass and two passes differ", s.Path)
			}
			files++
		}
	}
	if files == 0 {
		t.Fatal("no Codex rollout compared")
	}
	for _, line := range []string{
		`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x","name":7}}`,
		`{"type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c","invocation":{"server":1}}}`,
		`{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":["no"]}}`,
		`{"type":"response_item"}`,
		`{"type":"response_item","payload":null}`,
		`{"type":"response_item","payload":"text"}`,
		`{"type":"response_item","payload":{"type":"message","role":"user","content":"hi","id":5}}`,
	} {
		var sa, sb parseState
		ba, bb := newBuilder(&sa), newBuilder(&sb)
		ea, eb := parseCodexLine(ba, []byte(line)), parseCodexLineTwoPass(bb, []byte(line))
		if (ea == nil) != (eb == nil) || !reflect.DeepEqual(ba.res, bb.res) || !reflect.DeepEqual(sa, sb) {
			t.Errorf("%s: one pass %v %+v, two passes %v %+v", line, ea, ba.res, eb, bb.res)
		}
	}
}
