package blame

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// blameLine is one line of `git blame --porcelain` output.
type blameLine struct {
	Commit string // full commit id
	Line   int    // line number in the blamed revision
	Text   string // the line's content, without its newline
}

// commitInfo is what porcelain output says about a commit the first time it names it.
type commitInfo struct {
	Author     string
	AuthorTime time.Time
	CommitTime time.Time
	Summary    string
	Boundary   bool
}

// parsePorcelain reads `git blame --porcelain` output (git-blame(1), "THE PORCELAIN FORMAT"): per line a
// header "<oid> <orig-line> <final-line> [<group-size>]", the commit's headers the first time the commit
// appears, and the line's content after a TAB.
func parsePorcelain(out string) ([]blameLine, map[string]*commitInfo, error) {
	var lines []blameLine
	infos := map[string]*commitInfo{}
	var cur *blameLine
	for raw := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(raw, "\t") {
			if cur == nil {
				return nil, nil, fmt.Errorf("blame output: content line without a header")
			}
			cur.Text = raw[1:]
			lines = append(lines, *cur)
			cur = nil
			continue
		}
		if raw == "" {
			continue
		}
		if cur == nil {
			f := strings.Fields(raw)
			if len(f) < 3 || !isHexID(f[0]) {
				return nil, nil, fmt.Errorf("blame output: unexpected line %q", clipText(raw, 80))
			}
			n, err := strconv.Atoi(f[2])
			if err != nil {
				return nil, nil, fmt.Errorf("blame output: bad line number in %q", clipText(raw, 80))
			}
			cur = &blameLine{Commit: f[0], Line: n}
			if infos[f[0]] == nil {
				infos[f[0]] = &commitInfo{}
			}
			continue
		}
		ci := infos[cur.Commit]
		key, val, _ := strings.Cut(raw, " ")
		switch key {
		case "author":
			ci.Author = val
		case "author-time":
			ci.AuthorTime = unixTime(val)
		case "committer-time":
			ci.CommitTime = unixTime(val)
		case "summary":
			ci.Summary = val
		case "boundary":
			ci.Boundary = true
		}
	}
	if cur != nil {
		return nil, nil, fmt.Errorf("blame output: header without content")
	}
	return lines, infos, nil
}

func unixTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

func isHexID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
