package history

import (
	"context"
	"testing"
)

// TestWindowsPathFilters: a transcript written on Windows (cwd C:\Users\me\proj, an Edit of an absolute
// and of a relative path) is found by a file filter with either slash, by a folder prefix, and by a repo
// filter above its cwd; the relative path is joined to the Windows cwd (docs/history.md "Windows paths").
func TestWindowsPathFilters(t *testing.T) {
	root := t.TempDir()
	ix := openTestIndex(t)
	edit := func(uuid, path string) string {
		return `{"type":"assistant","uuid":"` + uuid + `","timestamp":"2026-02-01T10:00:00Z","cwd":"C:\\Users\\me\\proj","message":{"role":"assistant","content":[{"type":"tool_use","id":"t` + uuid + `","name":"Edit","input":{"file_path":"` + path + `","old_string":"a","new_string":"b"}}]}}`
	}
	src := writeClaude(t, root, "-w", "s-win", edit("1", `C:\\Users\\me\\proj\\src\\winfile.go`), edit("2", `src\\rel\\relwin.go`))
	ctx := context.Background()
	if _, err := ix.Import(ctx, []Source{src}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    EventQuery
		want int
	}{
		{EventQuery{File: `C:\Users\me\proj\src\winfile.go`}, 1},
		{EventQuery{File: `C:/Users/me/proj/src/winfile.go`}, 1},
		{EventQuery{File: `c:\Users\me\proj\.\src\x\..\winfile.go`}, 1},
		{EventQuery{File: `C:\Users\me\proj\src\rel\relwin.go`}, 1},
		{EventQuery{File: `C:\Users\me\proj\src\`}, 2},
		{EventQuery{File: `C:/Users/me/proj/`}, 2},
		{EventQuery{Repo: `C:\Users\me`}, 2},
		{EventQuery{Repo: `C:/Users/me/proj/`}, 2},
		{EventQuery{Repo: `C:\Users\m`}, 0},
		{EventQuery{File: `C:\Users\me\proj\src\other.go`}, 0},
	} {
		evs, err := ix.ListEvents(ctx, c.q)
		if err != nil || len(evs) != c.want {
			t.Errorf("%+v: %d events, want %d (%v)", c.q, len(evs), c.want, err)
		}
	}
	res, err := ix.Search(ctx, Query{Text: "Edit", File: `C:/Users/me/proj/src/winfile.go`})
	if err != nil || len(res.Hits) != 1 {
		t.Errorf("search by a Windows file: %+v %v", res.Hits, err)
	}
	for p, want := range map[string]bool{`C:\x`: true, `c:/x`: true, `\\srv\share`: true, `/x`: false, `C:x`: false, `src\a`: false, `//x`: false} {
		if WindowsAbs(p) != want {
			t.Errorf("WindowsAbs(%q) = %v", p, !want)
		}
	}
}
