// Package textproc holds the text helpers of the history importer: identifier splitting for the search
// body, commit receipts, apply_patch file lists and exit codes found in tool output.
package textproc

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// Clean returns s as valid UTF-8 without NUL bytes: invalid sequences and NULs become U+FFFD, as the
// other control characters of a shared record do, so that the words on both sides of a NUL stay two
// words (U+FFFD separates tokens in the full-text index).
func Clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}

// SplitIdentifiers returns the lower-cased parts of the camelCase and digit-joined identifiers in s,
// space-separated, so that "parseSessionMeta" is also found by "session". Identifiers that are one part
// already are not repeated (the full-text tokenizer sees them in the body). Snake case and path segments
// need nothing here: the tokenizer splits on '_', '/', '.' and '-' itself.
func SplitIdentifiers(s string) string {
	b := AppendSplitIdentifiers(nil, s)
	if len(b) == 0 {
		return ""
	}
	return string(b[:len(b)-1])
}

// AppendSplitIdentifiers appends SplitIdentifiers(s) to dst, each part followed by one space (so the
// parts of several strings can be gathered in one buffer; the caller drops the last space).
func AppendSplitIdentifiers(dst []byte, s string) []byte {
	// Bytes, not runes: a word is a run of ASCII letters and digits, and every byte of a multi-byte
	// UTF-8 sequence is ≥ 0x80, a separator as its rune is. One pass finds the words and the classes
	// of their bytes; only a word of two classes or more can have a camelParts boundary (lower→upper,
	// letter↔digit, the last capital of a run before a lower-case letter: "HTTPServer").
	n := len(s)
	for i := 0; i < n; {
		if wordClass[s[i]] == 0 {
			i++
			continue
		}
		start := i
		var mask byte // the classes seen: a word of one class (most) has no boundary
		for ; i < n; i++ {
			c := wordClass[s[i]]
			if c == 0 {
				break
			}
			mask |= c
		}
		if w := i - start; w >= 4 && w <= 256 && mask&(mask-1) != 0 && hasCamelSplit(s[start:i]) {
			dst = appendCamelParts(dst, s[start:i])
		}
	}
	return dst
}

// hasCamelSplit reports whether camelParts would split the ASCII word w (camelSplitAt's boundaries).
func hasCamelSplit(w string) bool {
	for i := 1; i < len(w); i++ {
		if camelSplitAt(w, i) {
			return true
		}
	}
	return false
}

// appendCamelParts appends camelParts(word), lower-cased, each followed by a space, without allocating
// the parts.
func appendCamelParts(dst []byte, word string) []byte {
	last := 0
	for i := 1; i <= len(word); i++ {
		if i < len(word) && !camelSplitAt(word, i) {
			continue
		}
		for j := last; j < i; j++ {
			c := word[j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
		dst = append(dst, ' ')
		last = i
	}
	return dst
}

// Classes of the bytes of a word (0: not in a word), one bit each: lower, upper, digit.
const (
	clLower = 1
	clUpper = 2
	clDigit = 4
)

var wordClass = func() (t [256]byte) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clDigit
	}
	return t
}()

// camelSplitAt reports whether camelParts splits w before byte i (0 < i < len(w)).
func camelSplitAt(w string, i int) bool {
	a, b := charClass(w[i-1]), charClass(w[i])
	return (a == 1 && b == 2) || (a == 3) != (b == 3) || (a == 2 && b == 2 && i+1 < len(w) && charClass(w[i+1]) == 1)
}

func charClass(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return 1
	case c >= 'A' && c <= 'Z':
		return 2
	default:
		return 3
	}
}

// camelParts splits an ASCII word at lower→upper, letter↔digit and ACRONYMWord boundaries.
func camelParts(w string) []string {
	var parts []string
	last := 0
	class := charClass
	for i := 1; i < len(w); i++ {
		a, b := class(w[i-1]), class(w[i])
		split := (a == 1 && b == 2) || (a == 3) != (b == 3)
		if !split && a == 2 && b == 2 && i+1 < len(w) && class(w[i+1]) == 1 {
			split = true // "HTTPServer" → "HTTP", "Server"
		}
		if split {
			parts = append(parts, w[last:i])
			last = i
		}
	}
	return append(parts, w[last:])
}

var (
	gitCommitRe = lazyre.New(`(?:^|[\s;&|(]|\x60|")git(?:\s+-[cC]\s+\S+)*\s+(?:commit|cherry-pick|revert)(?:\s|$|")`)
	receiptRe   = lazyre.New(`(?m)^\[[^\]\n]*?([0-9a-f]{7,40})\] `)
	cellRe      = lazyre.New(`(?m)^Script running with cell ID ([A-Za-z0-9_.:-]{1,128})\s*$`)
	exitRe      = lazyre.New(`(?m)(?:^Process exited with code|^Exit Code:|^exit_code:|\bexit=)\s*(-?\d+)`)
)

// IsGitCommit reports whether a shell command line runs `git commit`, `git cherry-pick` or `git revert`
// (also inside compound lines): the commands whose output prints a "[branch abc1234] subject" receipt.
func IsGitCommit(cmd string) bool {
	// Every match holds "git": most commands do not, and the expression costs more than the look.
	return strings.Contains(cmd, "git") && gitCommitRe.Get().MatchString(cmd)
}

// CommitReceipts returns the abbreviated commit ids of `git commit` receipts in output, lines like
// "[main abc1234] subject" or "[main (root-commit) abc1234] subject".
// Output that a tool printed as a JSON string (a Codex exec cell's JSON.stringify) has its newlines
// escaped as "\n": those are read as line breaks too.
func CommitReceipts(output string) []string {
	var out []string
	add := func(s string) {
		for _, m := range receiptRe.Get().FindAllStringSubmatch(s, 8) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	add(output)
	if strings.Contains(output, `\n`) {
		add(strings.ReplaceAll(output, `\n`, "\n"))
	}
	return out
}

// RunningCell returns the cell id of a Codex exec cell still running ("Script running with cell ID X"),
// whose output a later `wait` call prints; "" otherwise.
func RunningCell(output string) string {
	if m := cellRe.Get().FindStringSubmatch(output); m != nil {
		return m[1]
	}
	return ""
}

// ExitCode returns the exit code stated in tool output ("Process exited with code N", "Exit Code: N").
func ExitCode(output string) (int, bool) {
	// The regular expression is slow over long outputs: look for its literals first.
	if !strings.Contains(output, "exited with code") && !strings.Contains(output, "Exit Code:") &&
		!strings.Contains(output, "exit_code:") && !strings.Contains(output, "exit=") {
		return 0, false
	}
	m := exitRe.Get().FindStringSubmatch(output)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, false
	}
	return n, true
}

// PatchFile is a file named in an apply_patch envelope.
type PatchFile struct {
	Path, Op, OldPath string // Op: create, modify, delete, rename
}

// PatchFiles lists the files of an apply_patch envelope ("*** Add File: p", "*** Update File: p",
// "*** Delete File: p", "*** Move to: q").
func PatchFiles(patch string) []PatchFile {
	var out []PatchFile
	for line := range strings.SplitSeq(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "*** Add File: "):
			out = append(out, PatchFile{Path: strings.TrimPrefix(line, "*** Add File: "), Op: "create"})
		case strings.HasPrefix(line, "*** Update File: "):
			out = append(out, PatchFile{Path: strings.TrimPrefix(line, "*** Update File: "), Op: "modify"})
		case strings.HasPrefix(line, "*** Delete File: "):
			out = append(out, PatchFile{Path: strings.TrimPrefix(line, "*** Delete File: "), Op: "delete"})
		case strings.HasPrefix(line, "*** Move to: ") && len(out) > 0:
			last := &out[len(out)-1]
			last.OldPath, last.Path, last.Op = last.Path, strings.TrimPrefix(line, "*** Move to: "), "rename"
		}
	}
	return out
}

// SplitCJK returns s with a space between every two adjacent characters of the scripts written without
// spaces between words (Han, Hiragana, Katakana, and the marks ー and 々 that continue them), so that the
// full-text tokenizer (unicode61, which ends a token only at a separator) indexes each such character as
// a token: a word inside a run ("東京" in "東京都に住む") is then found as the phrase of its characters
// (docs/history.md "Search"). The search body and each query word go through it alike. Other text, and
// text without such characters, is returned as it is.
func SplitCJK(s string) string {
	// Every such character is encoded from lead byte 0xE2 on (U+2E80 and above): the bytes below it are
	// skipped without decoding.
	var b []byte // nil until a space is inserted
	last := 0    // s[:last] is in b
	prev := false
	for i := 0; i < len(s); {
		if s[i] < 0xE2 {
			prev = false
			i++
			// ASCII eight bytes at a time (most of a body): none has its high bit set.
			for i+8 <= len(s) && binary.LittleEndian.Uint64([]byte(s[i:i+8]))&0x8080808080808080 == 0 {
				i += 8
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		cjk := isCJK(r)
		if cjk && prev {
			if b == nil {
				b = make([]byte, 0, len(s)+len(s)/3)
			}
			b = append(append(b, s[last:i]...), ' ')
			last = i
		}
		prev = cjk
		i += n
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// isCJK reports whether r is of a script SplitCJK splits.
func isCJK(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	return r == 0x30FC || r == 0x3005 || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}
