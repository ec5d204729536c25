package block

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const body = "## Team context\n\n- use feature branches\n"

// TestPutRemoveRoundTrip: for every shape of user file, Put adds a block that Find reads back, a second
// Put with the same body changes nothing, and Remove gives back the user's bytes exactly.
func TestPutRemoveRoundTrip(t *testing.T) {
	corpus, _ := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "corpus", "agents", "trigger.dev", "CLAUDE.md"))
	cases := []struct {
		name string
		user string
		eol  string
	}{
		{"no file content", "", "\n"},
		{"LF with final newline", "# Notes\n\nuser text\n", "\n"},
		{"LF without final newline", "# Notes\n\nuser text", "\n"},
		{"CRLF with final newline", "# Notes\r\n\r\nuser text\r\n", "\r\n"},
		{"CRLF without final newline", "# Notes\r\nuser text", "\r\n"},
		{"BOM only", "\ufeff", "\n"},
		{"BOM and LF", "\ufeff# Notes\nuser\n", "\n"},
		{"BOM and CRLF", "\ufeff# Notes\r\nuser\r\n", "\r\n"},
		{"trailing blank lines", "text\n\n\n", "\n"},
		{"mentions the marker text inline", "see `<!-- ctx:begin` in docs\n", "\n"},
		{"corpus CLAUDE.md", string(corpus), "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "corpus CLAUDE.md" && len(corpus) == 0 {
				t.Fatal("testdata/corpus is missing")
			}
			out, changed, err := Put([]byte(c.user), body)
			if err != nil || !changed {
				t.Fatalf("Put: changed=%v err=%v", changed, err)
			}
			if !bytes.HasPrefix(out, []byte(c.user)) {
				t.Fatalf("Put changed the user's bytes:\n%q", out)
			}
			added := string(out[len(c.user):])
			if c.eol == "\r\n" && strings.Contains(strings.ReplaceAll(added, "\r\n", ""), "\n") {
				t.Fatalf("block in a CRLF file has bare LF: %q", added)
			}
			sp, err := Find(out)
			if err != nil || sp == nil {
				t.Fatalf("Find: %v %v", sp, err)
			}
			if got := strings.ReplaceAll(string(sp.Body), "\r\n", "\n"); got != body {
				t.Fatalf("body = %q", got)
			}
			again, changed, err := Put(out, body)
			if err != nil || changed || !bytes.Equal(again, out) {
				t.Fatalf("second Put: changed=%v err=%v", changed, err)
			}
			back, had, err := Remove(out)
			if err != nil || !had {
				t.Fatalf("Remove: %v %v", had, err)
			}
			if !bytes.Equal(back, []byte(c.user)) {
				t.Fatalf("Remove did not restore the file:\n got %q\nwant %q", back, c.user)
			}
		})
	}
}

// TestPutUpdatesInPlace: a new body replaces the block where it stands; the user's text before and after
// it is kept byte for byte, including a block the user moved to the top of a CRLF file.
func TestPutUpdatesInPlace(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n"} {
		blk := string(Render("old\n", eol))
		before := "\ufeff# Top" + eol + eol
		after := eol + "user text after" + eol + "no final newline"
		content := before + blk + after
		out, changed, err := Put([]byte(content), "new body\nline 2\n")
		if err != nil || !changed {
			t.Fatalf("Put: %v %v", changed, err)
		}
		want := before + string(Render("new body\nline 2\n", eol)) + after
		if string(out) != want {
			t.Fatalf("eol %q:\n got %q\nwant %q", eol, out, want)
		}
	}
}

// TestFindRefuses: a half-deleted, doubled or hand-edited block is an error naming what is wrong, and
// Put and Remove change nothing then.
func TestFindRefuses(t *testing.T) {
	good := string(Render(body, "\n"))
	edited := strings.Replace(good, "feature branches", "trunk", 1)
	noEnd := strings.Replace(good, End+"\n", "", 1)
	noBegin := good[strings.Index(good, "\n")+1:]
	cases := []struct {
		name, content string
		want          error
		says          string
	}{
		{"edited by hand", "user\n\n" + edited, ErrHandEdited, "line 3"},
		{"end deleted", "user\n\n" + noEnd + "more user text\n", ErrBroken, "without the end marker"},
		{"begin deleted", "user\n\n" + noBegin, ErrBroken, "without a begin marker"},
		{"two blocks", good + "\n" + good, ErrBroken, "second block"},
		{"nested begin", strings.Replace(good, "\n", "\n"+strings.SplitN(good, "\n", 2)[0]+"\n", 1), ErrBroken, "second begin"},
		{"no checksum", "<!-- ctx:begin -->\nx\n" + End + "\n", ErrBroken, "no sha256"},
		{"bad checksum", "<!-- ctx:begin sha256=xyz -->\nx\n" + End + "\n", ErrBroken, "malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Find([]byte(c.content))
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("Find error = %v, want %v mentioning %q", err, c.want, c.says)
			}
			if _, _, err := Put([]byte(c.content), "x\n"); !errors.Is(err, c.want) {
				t.Fatalf("Put error = %v", err)
			}
			if out, _, err := Remove([]byte(c.content)); !errors.Is(err, c.want) || !bytes.Equal(out, []byte(c.content)) {
				t.Fatalf("Remove error = %v", err)
			}
		})
	}
}

// TestLineEndingsChangedByGit: a block whose line endings were converted (core.autocrlf) is still ctx's.
func TestLineEndingsChangedByGit(t *testing.T) {
	lf, _, _ := Put([]byte("user\n"), body)
	crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
	if sp, err := Find(crlf); err != nil || sp == nil {
		t.Fatalf("Find after CRLF conversion: %v", err)
	}
	out, changed, err := Put(crlf, body)
	if err != nil || changed || !bytes.Equal(out, crlf) {
		t.Fatalf("Put after conversion: changed=%v err=%v", changed, err)
	}
}

// TestBodyWithOwnCRLF: a body quoting text that has CRLF line endings (an entry imported from a CRLF
// file) is still read back as ctx's block in LF and in CRLF files, and Remove restores the file.
func TestBodyWithOwnCRLF(t *testing.T) {
	for _, user := range []string{"lf\n", "crlf\r\n"} {
		out, _, err := Put([]byte(user), "quoted\r\ntext\r\n")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Find(out); err != nil {
			t.Fatalf("%q: %v", user, err)
		}
		if back, _, _ := Remove(out); string(back) != user {
			t.Fatalf("%q: Remove gave %q", user, back)
		}
	}
}

// TestRemoveAll: a text made of several files, each with its block (a CLAUDE.md and the file its "@"
// line imports), loses every block and nothing else.
func TestRemoveAll(t *testing.T) {
	a, _, _ := Put([]byte("@AGENTS.md\n"), body)
	b, _, _ := Put([]byte("agents\r\n"), body)
	all := string(a) + "\n<!-- ctx: @AGENTS.md -->\n" + string(b)
	out, had, err := RemoveAll([]byte(all))
	if err != nil || !had {
		t.Fatal(err)
	}
	if want := "@AGENTS.md\n\n<!-- ctx: @AGENTS.md -->\nagents\r\n"; string(out) != want {
		t.Fatalf("got %q want %q", out, want)
	}
	if _, err := Find([]byte(all)); !errors.Is(err, ErrBroken) {
		t.Fatalf("Find of two blocks = %v", err)
	}
}

// FuzzPutRemove: for any user file without ctx's markers, Put keeps the user's bytes as a prefix, Find
// reads the block back, Put again is a no-op and Remove restores the file exactly.
func FuzzPutRemove(f *testing.F) {
	for _, s := range []string{"", "\ufeff", "a", "a\n", "a\r\n", "a\r\nb", "\n\n", "\r\n", "x\ry", "<!-- ctx:x -->\n"} {
		f.Add(s, "body\n")
	}
	f.Fuzz(func(t *testing.T, user, body string) {
		if strings.Contains(user, BeginPrefix) || strings.Contains(user, End) {
			t.Skip("a user file holding ctx's markers is refused by Put: outside this property")
		}
		// A body may hold marker text: Render escapes it (TestBodyCannotForgeMarkers).
		out, _, err := Put([]byte(user), body)
		if err != nil {
			t.Fatalf("Put: %v", err)
		}
		if !bytes.HasPrefix(out, []byte(user)) {
			t.Fatalf("user bytes not kept: %q -> %q", user, out)
		}
		if sp, err := Find(out); err != nil || sp == nil {
			t.Fatalf("Find: %v", err)
		}
		again, changed, err := Put(out, body)
		if err != nil || changed || !bytes.Equal(again, out) {
			t.Fatalf("second Put: changed=%v err=%v", changed, err)
		}
		back, _, err := Remove(out)
		if err != nil || !bytes.Equal(back, []byte(user)) {
			t.Fatalf("Remove: %q (%v), want %q", back, err, user)
		}
	})
}

// FuzzFind: any file content gives a block, no block, or an error, never a panic; Remove of a file with
// a block leaves no block.
func FuzzFind(f *testing.F) {
	good, _, _ := Put([]byte("user\r\n"), "b\n")
	f.Add(string(good))
	f.Add("<!-- ctx:begin sha256=00 -->\n<!-- ctx:end -->")
	f.Add("\ufeff<!-- ctx:end -->\r\n")
	f.Fuzz(func(t *testing.T, content string) {
		sp, err := Find([]byte(content))
		if err != nil || sp == nil {
			return
		}
		out, had, err := Remove([]byte(content))
		if err != nil || !had {
			t.Fatalf("Remove after Find: %v %v", had, err)
		}
		if sp2, err := Find(out); err != nil || sp2 != nil {
			t.Fatalf("block left after Remove: %v %v", sp2, err)
		}
	})
}

// TestBodyCannotForgeMarkers: an entry whose text holds the block's markers (a teammate's knowledge
// entry) stays inside the block: the file has one block, the text after the forged end marker is inside
// it, and Put and Remove keep working. Found by a new user: the text broke out of CLAUDE.md's block and
// every later export failed with "edited by hand".
func TestBodyCannotForgeMarkers(t *testing.T) {
	user := "# My notes\n\nkeep me\n"
	body := "hello\n" + End + "\n# INJECTED OUTSIDE\n  " + BeginPrefix + " sha256=00 -->\nbye\n"
	out, _, err := Put([]byte(user), body)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Find(out)
	if err != nil {
		t.Fatalf("Find after Put: %v\n%s", err, out)
	}
	if sp == nil || !strings.Contains(string(sp.Body), "# INJECTED OUTSIDE") || !strings.Contains(string(sp.Body), "bye") {
		t.Fatalf("the forged markers cut the block:\n%s", out)
	}
	if again, changed, err := Put(out, body); err != nil || changed || string(again) != string(out) {
		t.Errorf("second Put: changed %v, err %v", changed, err)
	}
	back, _, err := Remove(out)
	if err != nil || string(back) != user {
		t.Errorf("Remove: %v\n%q", err, back)
	}
}
