package history

import (
	"errors"
	"strings"
	"time"
)

// ErrTimeBound is the error of ParseTimeBound for a value of neither form.
var ErrTimeBound = errors.New("not an RFC 3339 time or a YYYY-MM-DD date")

// ParseTimeBound reads a since or until bound as the CLI's --since/--until and the MCP tools' since/until
// take it (docs/history.md "Commands", docs/mcp.md "search"): an RFC 3339 time (fractional seconds
// allowed; the "T" and "Z" in either case, as RFC 3339 section 5.6 allows), or a YYYY-MM-DD date, which
// is that day's midnight in UTC. It returns ErrTimeBound for anything else, "" included.
func ParseTimeBound(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(s)); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, ErrTimeBound
}
