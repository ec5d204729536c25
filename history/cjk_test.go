package history

import (
	"context"
	"testing"

	"github.com/ctx-dev/ctx/history/internal/ftsrank"
)

// TestCJKWordInsideRun: text in scripts written without spaces (Chinese, Japanese) is one token per
// character in the search body (textproc.SplitCJK), and a query word of such characters is their phrase,
// so a word inside a run is found; the characters must be adjacent and in order; the body's length in
// tokens is still FTS5's own; other text searches as before.
func TestCJKWordInsideRun(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ix := openTestIndex(t)
	src := writeClaude(t, root, "-c", "s-cjk",
		rec("j1", "user", "/w", `"東京都に住んでいます。サーバーを再起動しました"`),
		rec("z1", "user", "/w", `"我们在北京测试数据库迁移"`),
		rec("e1", "user", "/w", `"restart the server in Tokyo"`))
	if _, err := ix.Import(ctx, []Source{src}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"東京": "j1#0", "住ん": "j1#0", "サーバー": "j1#0", "再起動": "j1#0", "東京都に住んでいます": "j1#0",
		"北京": "z1#0", "数据库": "z1#0", "迁移 北京": "z1#0", "Tokyo": "e1#0", "server": "e1#0",
		"京東": "", "北数": "", "東京 数据库": "",
	} {
		res, err := ix.Search(ctx, Query{Text: q, Dense: true})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == "" && len(res.Hits) != 0 && !res.Relaxed:
			t.Errorf("%q: %d hits, want none", q, len(res.Hits))
		case want != "" && (len(res.Hits) != 1 || res.Hits[0].Event.NativeKey != want || res.Relaxed):
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.Event.NativeKey)
			}
			t.Errorf("%q: hits %v (relaxed %v), want %s", q, got, res.Relaxed, want)
		}
	}
	rows, err := ix.db.Query(`SELECT e.native_key, e.fts_len, d.sz FROM events e JOIN ev_fts_docsize d ON d.id = ` + ftsRowidSQL("e"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var stored int
		var sz []byte
		if err := rows.Scan(&key, &stored, &sz); err != nil {
			t.Fatal(err)
		}
		if len(sz) != 1 || stored == ftsrank.LenUnknown || int(sz[0]) != stored {
			t.Errorf("%s: fts_len %d, FTS5 counted %v", key, stored, sz)
		}
	}
}
