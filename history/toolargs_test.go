package history

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	json "github.com/segmentio/encoding/json"
)

// finishFromMap is toolCallEvent as it was: the whole input decoded into a map.
func finishFromMap(e Event, input string) Event {
	var m map[string]any
	if len(input) > 0 && input[0] == '{' {
		_ = json.Unmarshal([]byte(input), &m)
	}
	return finishToolCall(e, m)
}

// TestToolArgsSameAsMap: every tool call of the corpus, and crafted inputs, give the same event from
// toolArgs's few members as from a map of the whole input.
func TestToolArgsSameAsMap(t *testing.T) {
	inputs := []string{
		`{"command":["bash","-lc","git commit -m x"],"workdir":"/w"}`,
		`{"command":7,"cmd":["ls","-la"],"cwd":"/c"}`,
		`{"Command":"rm -rf /","file_path":"/a.go"}`,
		`{"file_path":null,"filePath":"/b.go","path":"/c"}`,
		`{"cmd":"x","cmd":"y"}`,
		`{"input":"*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"}`,
		`{"argv":["go","test",1,null]}`,
		`{"path":{"nested":"no"},"absolute_path":"/d"}`,
		`{}`, `{"a":`, `[1,2]`,
	}
	ctx := context.Background()
	ix := &Index{}
	for _, p := range Providers {
		srcs, err := Discover(ctx, p, filepath.Join(corpusDir(t), string(p)), true)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range srcs {
			_, pd, err := ix.prepareFrom(ctx, s, nil)
			if err != nil || pd == nil {
				continue
			}
			for _, e := range pd.pr.Events {
				if e.Type == ToolCall && e.Tool != nil {
					inputs = append(inputs, e.Tool.Input)
				}
			}
		}
	}
	if len(inputs) < 100 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	for _, in := range inputs {
		for _, name := range []string{"Edit", "Read", "write_file", "exec_command", "shell"} {
			e := Event{Type: ToolCall, Tool: &Tool{Name: name, Input: in}}
			e2 := Event{Type: ToolCall, Tool: &Tool{Name: name, Input: in}}
			var m map[string]any
			if len(in) > 0 && in[0] == '{' {
				m = toolArgs(json.RawMessage(in))
			}
			got, want := finishToolCall(e, m), finishFromMap(e2, in)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %s: %+v, want %+v", name, in, got, want)
			}
		}
	}
}
