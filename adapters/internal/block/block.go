// Package block finds, writes and removes ctx's managed block inside a user's markdown file (CLAUDE.md,
// AGENTS.md, GEMINI.md, .github/copilot-instructions.md), keeping every byte outside the block exactly as
// it was. The rules are in docs/adapters.md ("The managed block").
//
// A block is the lines from a begin marker to an end marker, both included:
//
//	<!-- ctx:begin sha256=<64 hex> -->
//	...body...
//	<!-- ctx:end -->
//
// The begin marker carries the SHA-256 of the body with its line endings read as "\n", so that a block
// someone edited by hand is told from one ctx wrote, whatever line endings the file uses. A file holds at
// most one block. A begin marker without an end marker (or the reverse), two blocks, a marker with a
// checksum that is not 64 hex digits, or a body that does not match its checksum are errors: ctx never
// guesses where its block stops or what an edited block should become.
package block

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Marker text. BeginPrefix starts the first line of a block, End is its last line.
const (
	BeginPrefix = "<!-- ctx:begin"
	End         = "<!-- ctx:end -->"
)

// bom is the UTF-8 byte order mark some editors put at the start of a file.
const bom = "\ufeff"

// ErrBroken is wrapped by the error for a file whose markers do not make one whole block (a begin without
// an end, an end without a begin, two blocks, a malformed begin marker).
var ErrBroken = errors.New("ctx's managed block is broken")

// ErrHandEdited is wrapped by the error for a block whose body is not what its checksum says: someone
// edited it by hand.
var ErrHandEdited = errors.New("ctx's managed block was edited by hand (move your text outside the ctx markers, or delete the block with its markers, then export again)")

// Span is where a block lies in a file: content[Start:End] is the block from the first byte of its begin
// line to the end of its end line (its line ending included when it has one).
type Span struct {
	Start, End int
	// Body is the text between the marker lines, line endings as in the file.
	Body []byte
	// Sum is the checksum written in the begin marker (64 lowercase hex digits).
	Sum string
	// EOL is the line ending of the begin marker's line: the one the block was written with.
	EOL string
}

// line is one line of a file: content[start:end] including its line ending.
type line struct{ start, end int }

func lines(b []byte) []line {
	var out []line
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			out = append(out, line{i, len(b)})
			break
		}
		out = append(out, line{i, i + j + 1})
		i += j + 1
	}
	return out
}

// text is a line without its line ending (and without a BOM when it is the file's first line).
func text(b []byte, l line) string {
	s := string(b[l.start:l.end])
	s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
	return strings.TrimPrefix(s, bom)
}

// Find returns the block of content, nil when there is none. Errors wrap ErrBroken or ErrHandEdited and
// name the line (1-based).
func Find(content []byte) (*Span, error) {
	spans, err := findAll(content)
	if err != nil {
		return nil, err
	}
	switch len(spans) {
	case 0:
		return nil, nil
	case 1:
		return &spans[0], nil
	}
	ls := lines(content)
	return nil, fmt.Errorf("line %d: a second block (the first ends at line %d); keep one: %w",
		lineOf(ls, spans[1].Start)+1, lineOf(ls, spans[0].End-1)+1, ErrBroken)
}

// findAll returns every block of content, each checked as Find checks one.
func findAll(content []byte) ([]Span, error) {
	ls := lines(content)
	var spans []Span
	begin := -1
	for i, l := range ls {
		t := strings.TrimSpace(text(content, l))
		switch {
		case strings.HasPrefix(t, BeginPrefix):
			if begin >= 0 {
				return nil, fmt.Errorf("line %d: a second begin marker inside the block opened at line %d: %w", i+1, begin+1, ErrBroken)
			}
			begin = i
		case t == End:
			if begin < 0 {
				return nil, fmt.Errorf("line %d: end marker %q without a begin marker before it (was the start of the block deleted?): %w", i+1, End, ErrBroken)
			}
			sum, err := parseBegin(strings.TrimSpace(text(content, ls[begin])))
			if err != nil {
				return nil, fmt.Errorf("line %d: %v: %w", begin+1, err, ErrBroken)
			}
			sp := Span{Start: ls[begin].start, End: l.end, Body: content[ls[begin].end:l.start], Sum: sum, EOL: "\n"}
			if bytes.HasSuffix(content[ls[begin].start:ls[begin].end], []byte("\r\n")) {
				sp.EOL = "\r\n"
			}
			// A BOM before the begin marker on the first line belongs to the file, not to the block.
			if sp.Start == 0 && bytes.HasPrefix(content, []byte(bom)) {
				sp.Start = len(bom)
			}
			if Sum(sp.Body) != sp.Sum {
				return nil, fmt.Errorf("line %d: the text between the markers is not what ctx wrote: %w", begin+1, ErrHandEdited)
			}
			spans = append(spans, sp)
			begin = -1
		}
	}
	if begin >= 0 {
		return nil, fmt.Errorf("line %d: begin marker without the end marker %q (was the end of the block deleted?): %w", begin+1, End, ErrBroken)
	}
	return spans, nil
}

func lineOf(ls []line, off int) int {
	for i, l := range ls {
		if off >= l.start && off < l.end {
			return i
		}
	}
	return len(ls) - 1
}

// parseBegin reads the checksum of a begin marker line "<!-- ctx:begin sha256=<hex> -->".
func parseBegin(t string) (string, error) {
	rest, ok := strings.CutPrefix(t, BeginPrefix+" sha256=")
	if !ok {
		return "", fmt.Errorf("begin marker %q has no sha256=", t)
	}
	sum, ok := strings.CutSuffix(rest, " -->")
	if !ok || len(sum) != 64 {
		return "", fmt.Errorf("begin marker %q is malformed", t)
	}
	if _, err := hex.DecodeString(sum); err != nil || strings.ToLower(sum) != sum {
		return "", fmt.Errorf("begin marker %q is malformed", t)
	}
	return sum, nil
}

// Sum is the checksum of a block body: the SHA-256 (lowercase hex) of the body with its line endings
// read as "\n" (every "\r" just before a "\n" dropped).
func Sum(body []byte) string {
	s := sha256.Sum256(lf(body))
	return hex.EncodeToString(s[:])
}

// lf drops every "\r" that comes just before a "\n" ("\r\r\n" too).
func lf(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\r' {
			j := i
			for j < len(b) && b[j] == '\r' {
				j++
			}
			if j < len(b) && b[j] == '\n' {
				i = j - 1
				continue
			}
		}
		out = append(out, b[i])
	}
	return out
}

// EOL returns the line ending a file uses: "\r\n" when its first line ends in "\r\n", else "\n".
func EOL(content []byte) string {
	if i := bytes.IndexByte(content, '\n'); i > 0 && content[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// Render returns a whole block for body (lines ending in "\n" or "\r\n"; a missing final newline is
// added) with line endings eol, ending with eol.
func Render(body, eol string) []byte {
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	body = string(lf([]byte(body))) // text with CRLF of its own (an imported CRLF file) gets the file's EOL
	body = escapeMarkers(body)
	var b strings.Builder
	b.WriteString(BeginPrefix + " sha256=" + Sum([]byte(body)) + " -->\n")
	b.WriteString(body)
	b.WriteString(End + "\n")
	out := b.String()
	if eol != "\n" {
		out = strings.ReplaceAll(out, "\n", eol)
	}
	return []byte(out)
}

// escapeMarkers puts a backslash before every line of body that a reader of the file would take for a
// marker (its trimmed text starts with "<!-- ctx:"): text of a teammate's entry can then neither end the
// block early nor open a second one. Markdown shows such a line as the literal text.
func escapeMarkers(body string) string {
	if !strings.Contains(body, "<!-- ctx:") {
		return body
	}
	ls := strings.SplitAfter(body, "\n")
	for i, l := range ls {
		if t := strings.TrimLeft(l, " \t"); strings.HasPrefix(t, "<!-- ctx:") {
			ls[i] = l[:len(l)-len(t)] + "\\" + t
		}
	}
	return strings.Join(ls, "")
}

// Put returns content with its block's body set to body (lines ending in "\n"), and whether that
// changed anything. The block keeps its place and its line endings; a new block takes the file's (EOL); a file without a block gets
// it at the end, after a blank line (after a line ending when the file does not end with one: then the
// block's own last line has none, so that Remove gives the file back byte for byte). A BOM stays first.
// Errors are Find's: nothing is changed in a file whose block is broken or was edited by hand.
func Put(content []byte, body string) ([]byte, bool, error) {
	sp, err := Find(content)
	if err != nil {
		return nil, false, err
	}
	eol := EOL(content)
	if sp != nil {
		eol = sp.EOL // the block keeps the line endings it was written with (or converted to, with the file)
	}
	blk := Render(body, eol)
	if sp != nil {
		old := content[sp.Start:sp.End]
		if !bytes.HasSuffix(old, []byte("\n")) {
			blk = bytes.TrimSuffix(blk, []byte(eol))
		}
		if bytes.Equal(old, blk) {
			return content, false, nil
		}
		out := make([]byte, 0, len(content)-len(old)+len(blk))
		out = append(append(append(out, content[:sp.Start]...), blk...), content[sp.End:]...)
		return out, true, nil
	}
	user := bytes.TrimPrefix(content, []byte(bom))
	out := append([]byte{}, content...)
	switch {
	case len(user) == 0:
		out = append(out, blk...)
	case bytes.HasSuffix(user, []byte("\n")):
		out = append(append(out, eol...), blk...)
	default:
		out = append(append(out, eol...), bytes.TrimSuffix(blk, []byte(eol))...)
	}
	return out, true, nil
}

// Remove returns content without its block and the one line ending just before it (the separator Put
// added), and whether there was a block. Put then Remove gives back the original bytes. Errors are
// Find's.
func Remove(content []byte) ([]byte, bool, error) {
	sp, err := Find(content)
	if err != nil || sp == nil {
		return content, false, err
	}
	return cut(content, []Span{*sp}), true, nil
}

// RemoveAll is Remove for a text made of several files, each of which may hold a block (an import of a
// CLAUDE.md with the files its "@path" lines import appended): every block goes, each checked as Find
// checks one.
func RemoveAll(content []byte) ([]byte, bool, error) {
	spans, err := findAll(content)
	if err != nil || len(spans) == 0 {
		return content, false, err
	}
	return cut(content, spans), true, nil
}

// cut removes spans (in order, not overlapping) and the line ending just before each, when it is the
// block's own (the separator Put wrote).
func cut(content []byte, spans []Span) []byte {
	out := make([]byte, 0, len(content))
	prev := 0
	for _, sp := range spans {
		start := sp.Start
		if bytes.HasSuffix(content[prev:start], []byte(sp.EOL)) {
			start -= len(sp.EOL)
		}
		out = append(out, content[prev:start]...)
		prev = sp.End
	}
	return append(out, content[prev:]...)
}
