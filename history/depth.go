package history

import (
	"bytes"
	"errors"

	"github.com/segmentio/encoding/json"
)

// maxJSONDepth is the deepest nesting of arrays and objects a transcript's JSON may have: the limit
// of Go's encoding/json (its maxNestingDepth), which docs/history.md "Bad lines" names. The decoder
// this package uses (segmentio/encoding/json) recurses without a bound, so a line of a few million
// "[" would overflow the goroutine stack and end the process; every decode of outside JSON goes
// through tooDeep first.
const maxJSONDepth = 10000

// errTooDeep is the error of a JSON value nested deeper than maxJSONDepth.
var errTooDeep = errors.New("JSON nested deeper than 10000 levels")

// tooDeep reports whether data, read as JSON, opens more than maxJSONDepth arrays or objects at once
// (brackets inside strings do not count). It does not validate: a malformed value that is not too deep
// is left to the decoder's error.
func tooDeep(data []byte) bool {
	if len(data) <= maxJSONDepth {
		return false // too short to open that many brackets: no line of a normal transcript is scanned
	}
	if bytes.Count(data, []byte{'['})+bytes.Count(data, []byte{'{'}) <= maxJSONDepth {
		return false // the common case: too few brackets in all to nest that deep
	}
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > maxJSONDepth {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// unmarshal is json.Unmarshal for outside JSON: errTooDeep for a value nested deeper than maxJSONDepth.
func unmarshal(data []byte, v any) error {
	if tooDeep(data) {
		return errTooDeep
	}
	return json.Unmarshal(data, v)
}

// validJSON is json.Valid for outside JSON: false for a value nested deeper than maxJSONDepth.
func validJSON(data []byte) bool {
	return !tooDeep(data) && json.Valid(data)
}
