package textproc

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSplitIdentifiers(t *testing.T) {
	for in, want := range map[string]string{
		"call parseSessionMeta now": "parse session meta",
		"HTTPServer v2Beta":         "http server v 2 beta",
		"plain words only":          "",
		"snake_case_is_tokenized":   "",
	} {
		if got := SplitIdentifiers(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestCommitReceiptsAndCommands(t *testing.T) {
	out := "[main abc1234] Add hello\n 1 file changed\n[feature/x (root-commit) 0123456789abcdef] init\n"
	if got := CommitReceipts(out); !reflect.DeepEqual(got, []string{"abc1234", "0123456789abcdef"}) {
		t.Errorf("receipts %v", got)
	}
	// A JSON-stringified exec result escapes its newlines.
	if got := CommitReceipts(`{"output": "done\n[main 89abcde] fixture\n"}`); !reflect.DeepEqual(got, []string{"89abcde"}) {
		t.Errorf("escaped receipts %v", got)
	}
	if RunningCell("Script running with cell ID cell-7\n") != "cell-7" || RunningCell("Script completed\n") != "" {
		t.Errorf("running cell")
	}
	if CommitReceipts("see [note 1234567] in text") != nil {
		// not at line start
		t.Errorf("receipt inside a line")
	}
	for cmd, want := range map[string]bool{
		"git add . && git commit -m 'x'": true,
		"git -C /r commit -am x":         true,
		"git commit --amend --no-edit":   true,
		"git cherry-pick 1a2b3c4":        true,
		"git revert --no-edit HEAD":      true,
		"echo git commitment":            false,
		"git status":                     false,
	} {
		if IsGitCommit(cmd) != want {
			t.Errorf("%q: %v", cmd, !want)
		}
	}
}

func TestPatchFilesAndExitCode(t *testing.T) {
	p := "*** Begin Patch\n*** Add File: a.go\n+x\n*** Update File: b.go\n*** Move to: c.go\n@@\n*** Delete File: d.go\n*** End Patch"
	want := []PatchFile{{"a.go", "create", ""}, {"c.go", "rename", "b.go"}, {"d.go", "delete", ""}}
	if got := PatchFiles(p); !reflect.DeepEqual(got, want) {
		t.Errorf("%+v", got)
	}
	if n, ok := ExitCode("Chunk ID: x\nProcess exited with code 2\nOutput:"); !ok || n != 2 {
		t.Errorf("%d %v", n, ok)
	}
	if _, ok := ExitCode("no code here"); ok {
		t.Error("found a code")
	}
	if Clean("a\xffb\x00c") != "a\uFFFDb\uFFFDc" { // a NUL separates words as U+FFFD (TestNULSeparatesWords)
		t.Errorf("%q", Clean("a\xffb\x00c"))
	}
}

// splitIdentifiersRef is SplitIdentifiers as first written (a rune loop, camelParts on every word): the
// faster one must give the same output.
func splitIdentifiersRef(s string) string {
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		word := s[start:end]
		start = -1
		if len(word) < 4 || len(word) > 256 {
			return
		}
		parts := camelParts(word)
		if len(parts) < 2 {
			return
		}
		for _, p := range parts {
			b.WriteString(strings.ToLower(p))
			b.WriteByte(' ')
		}
	}
	for i, r := range s {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
	return strings.TrimSpace(b.String())
}

func FuzzSplitIdentifiersSame(f *testing.F) {
	for _, s := range []string{"parseSessionMeta HTTPServer v2Beta Title ALLCAPS é日本語fooBar", "x9 ab1 utf8Decode", "\xffabcDef\x80", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := SplitIdentifiers(s), splitIdentifiersRef(s); got != want {
			t.Fatalf("SplitIdentifiers(%q) = %q, want %q", s, got, want)
		}
	})
}

func FuzzExitCodeSame(f *testing.F) {
	for _, s := range []string{"Process exited with code 3", "x\nExit Code: -1", "exit_code: 7", "ok exit=0", "exit = 2", "nothing"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := ExitCode(s)
		var wn int
		var wok bool
		if m := exitRe.Get().FindStringSubmatch(s); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil {
				wn, wok = v, true
			}
		}
		if n != wn || ok != wok {
			t.Fatalf("ExitCode(%q) = %d %v, want %d %v", s, n, ok, wn, wok)
		}
	})
}

// TestSplitCJK: a space between adjacent Han, Hiragana and Katakana characters (and ー, 々), nothing
// else changed: other text, a lone CJK character, invalid bytes.
func TestSplitCJK(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		"plain text, ünï": "plain text, ünï",
		"東":               "東",
		"東京都":             "東 京 都",
		"サーバーを再起動":        "サ ー バ ー を 再 起 動",
		"人々":              "人 々",
		"go 東京 test東京x":   "go 東 京 test東 京x",
		"\xff東京\xfe":      "\xff東 京\xfe",
		"한국어 텍스트":         "한국어 텍스트",
		"数据库migration迁移":  "数 据 库migration迁 移",
	} {
		if got := SplitCJK(in); got != want {
			t.Errorf("SplitCJK(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkSplitCJK: the cost SplitCJK adds to every search body: English text with typographic quotes
// and dashes (lead byte 0xE2, decoded), and Japanese text (split).
func BenchmarkSplitCJK(b *testing.B) {
	for name, s := range map[string]string{
		"english": strings.Repeat("The build “failed” — restart the server_name in parseSessionMeta and run it again. ", 50),
		"cjk":     strings.Repeat("東京都に住んでいます。サーバーを再起動しました。", 50),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				_ = SplitCJK(s)
			}
		})
	}
}
