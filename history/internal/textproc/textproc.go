// Package textproc holds the text helpers of the history importer: identifier splitting for the search
// body, commit receipts, apply_patch file lists and exit codes found in tool output.
package textproc

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// Clean returns s as valid UTF-8 without NUL bytes (invalid sequences become U+FFFD).
func Clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}

// SplitIdentifiers returns the lower-cased parts of the camelCase and digit-joined identifiers in s,
// space-separated, so that "parseSessionMeta" is also found by "session". Identifiers that are one part
// already are not repeated (the full-text tokenizer sees them in the body). Snake case and path segments
// need nothing here: the tokenizer splits on '_', '/', '.' and '-' itself.
func SplitIdentifiers(s string) string {
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		word := s[start:end]
		start = -1
		if len(word) < 4 || len(word) > 256 || !hasCamelSplit(word) {
			return
		}
		// camelParts's parts, lower-cased, without allocating them.
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
				b.WriteByte(c)
			}
			b.WriteByte(' ')
			last = i
		}
	}
	// Bytes, not runes: a word is a run of ASCII letters and digits, and every byte of a multi-byte
	// UTF-8 sequence is ≥ 0x80, a separator as its rune is.
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
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

// hasCamelSplit reports whether camelParts would split the ASCII word w, without allocating: most
// words split nowhere. The boundaries are camelParts's.
func hasCamelSplit(w string) bool {
	for i := 1; i < len(w); i++ {
		if camelSplitAt(w, i) {
			return true
		}
	}
	return false
}

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
func IsGitCommit(cmd string) bool { return gitCommitRe.Get().MatchString(cmd) }

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
