package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/merge"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

var decisionName = lazyre.New(`^\d{4,}-[^/]+\.md$`)

// ValidateFile checks a file of the checked-out tree before `ctx commit` records it (docs/format.md): the
// path must be one of the layout's, with valid keys and names (LayoutPath); JSON records must parse as
// JSON objects, and those ctx reads must pass RecordProblem (their fields' types); .ndjson logs must hold one JSON object a line; markdown must be UTF-8 text whose front
// matter, when it has a "---" block, parses as a YAML mapping. A file that fails would break every
// reader on every clone once pushed, so it is refused (the error wraps ErrInvalid and names the file).
func ValidateFile(p string, b []byte) error {
	kind, err := layoutPath(p)
	if err != nil {
		return err
	}
	if parts := strings.Split(p, "/"); parts[0] == "skills" {
		// A reserved skill name is readable (LayoutPath), but ctx does not record a new one.
		if _, err := ValidSkillName(parts[1]); err != nil {
			return invalidf("%s: %v", p, err)
		}
	}
	switch kind {
	case layoutJSON:
		if err := validJSONObject(p, b); err != nil {
			return err
		}
		// A record of a kind ctx reads must read: a hand edit that breaks state.json would stop every
		// reader and every write of the state (docs/format.md "Records").
		if reason := RecordProblem(p, b); reason != "" {
			return invalidf("%s: a malformed record: %s (docs/format.md \"Records\"; fix the file and run ctx commit again)", p, reason)
		}
		// The team pulse fields are validated on every write (docs/format.md "Activity"), a hand edit's too.
		if recordKindOf(p) == activityRecord {
			if reason := activityPulseProblem(b); reason != "" {
				return invalidf("%s: %s (docs/format.md \"Activity\"; fix the file and run ctx commit again)", p, reason)
			}
		}
		return nil
	case layoutMarkdown:
		return markdown(p, b)
	case layoutNDJSON:
		return ndjson(p, b)
	}
	return nil // a skill's own scripts and resources
}

// layoutKind is what a file of the layout holds, for ValidateFile's content check.
type layoutKind int

const (
	layoutJSON layoutKind = iota + 1
	layoutMarkdown
	layoutNDJSON
	layoutResource // a skill's own script or resource: any bytes
)

// LayoutPath checks that the slash path p of a file is one of the store layout's (docs/format.md):
// every name passes checkPath (git fsck's rules for tree entry names), and the place is a layout place
// with valid keys and names — manifest.json, state.json, knowledge/<key>.md, conventions/<key>.md,
// decisions/NNNN-<slug>.md, history/<id>.json, history/YYYY/MM/<id>.json, conflicts/<id>.json, activity/<member>/...json,
// skills/<name>/..., transcripts/YYYY/MM/<session id>.ndjson. The error wraps ErrInvalid and names the path.
func LayoutPath(p string) error {
	_, err := layoutPath(p)
	return err
}

func layoutPath(p string) (layoutKind, error) {
	bad := func(format string, a ...any) error {
		return invalidf("%s: %s", p, fmt.Sprintf(format, a...))
	}
	if err := checkPath(p); err != nil {
		return 0, invalidf("%v", err)
	}
	parts := strings.Split(p, "/")
	key := func(name, suffix string) error {
		k, ok := strings.CutSuffix(name, suffix)
		if !ok {
			return bad("must end in %s", suffix)
		}
		if err := ValidKey(k); err != nil {
			return bad("%v", err)
		}
		return nil
	}
	switch {
	case p == ManifestPath || p == "state.json":
		return layoutJSON, nil
	case len(parts) == 2 && (parts[0] == "knowledge" || parts[0] == "conventions"):
		return layoutMarkdown, key(parts[1], ".md")
	case len(parts) == 2 && parts[0] == "decisions":
		if !decisionName.Get().MatchString(parts[1]) {
			return 0, bad("decision files are named NNNN-slug.md")
		}
		return layoutMarkdown, nil
	case len(parts) == 3 && parts[0] == "history" && parts[1] == ".private":
		return layoutJSON, key(parts[2], ".json")
	case len(parts) == 2 && (parts[0] == "history" || parts[0] == ConflictsDir):
		return layoutJSON, key(parts[1], ".json")
	case len(parts) == 4 && parts[0] == "history":
		// history/YYYY/MM/<id>.json (docs/format.md "Layout for growth").
		if !merge.IsYear(parts[1]) || !merge.IsMonth(parts[2]) {
			return 0, bad("session records are history/<id>.json or history/YYYY/MM/<id>.json (a year of four digits, a month 01 to 12)")
		}
		return layoutJSON, key(parts[3], ".json")
	case parts[0] == TranscriptsDir:
		return layoutNDJSON, transcriptLayout(p)
	case len(parts) >= 2 && parts[0] == "activity":
		for _, seg := range parts[1 : len(parts)-1] {
			if err := ValidKey(seg); err != nil {
				return 0, bad("%v", err)
			}
		}
		if !strings.HasSuffix(p, ".json") {
			return 0, bad("activity entries are .json files")
		}
		return layoutJSON, nil
	case len(parts) >= 3 && parts[0] == "skills":
		if err := ValidKey(parts[1]); err != nil {
			return 0, bad("skill name: %v", err)
		}
		switch name := parts[len(parts)-1]; {
		case len(parts) == 3 && name == "SKILL.md":
			return layoutMarkdown, nil
		case len(parts) == 3 && (name == ".feedback.ndjson" || name == ".usage.ndjson"):
			return layoutNDJSON, nil
		case len(parts) == 4 && (parts[2] == ".feedback" || parts[2] == ".usage"):
			if !merge.IsLogMonthFile(name) {
				return 0, bad("a skill's %s/ folder holds month files YYYY-MM.ndjson", parts[2])
			}
			return layoutNDJSON, nil
		case len(parts) == 4 && parts[2] == ".proposals":
			return layoutJSON, key(name, ".json")
		}
		return layoutResource, nil // a skill's own scripts and resources
	}
	return 0, bad("not a path of the context store (knowledge/, conventions/, decisions/, history/, skills/, activity/, conflicts/, transcripts/, manifest.json, state.json)")
}

func validJSONObject(p string, b []byte) error {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return invalidf("%s: not a JSON object: %v", p, err)
	}
	return nil
}

func ndjson(p string, b []byte) error {
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil {
			return invalidf("%s: line %d is not a JSON object: %v", p, i+1, err)
		}
	}
	return nil
}

func markdown(p string, b []byte) error {
	if !utf8.Valid(b) {
		return invalidf("%s: not UTF-8 text", p)
	}
	if strings.HasSuffix(p, "/SKILL.md") {
		// A SKILL.md is the user's file, stored byte for byte: every reader takes the same values from it
		// by ReadFrontMatter's rule, whatever its front matter looks like (LintFile says what it read).
		return nil
	}
	// Knowledge, conventions and decisions have front matter that ctx writes and rewrites: it must parse.
	if fm, _ := ReadFrontMatter(b); fm.Present && !fm.Valid {
		pr := fm.Problems[0]
		return invalidf("%s: line %d: the front matter does not parse: %s", p, pr.Line, pr.Msg)
	}
	return nil
}

// LintFile lists, as "path: line N: what", what the reading of a markdown file's front matter had to
// work around (invalid YAML, a repeated key, a block never closed): the values every reader takes from
// it are those ReadFrontMatter gives, and the user should know which. Nothing for other files.
func LintFile(p string, b []byte) []string {
	if !strings.HasSuffix(p, ".md") {
		return nil
	}
	fm, _ := ReadFrontMatter(b)
	var out []string
	for _, pr := range fm.Problems {
		out = append(out, fmt.Sprintf("%s: %s", p, pr))
	}
	if fm.Unclosed {
		out = append(out, fmt.Sprintf("%s: line 1: front matter opened with \"---\" but never closed; the whole file is the body", p))
	}
	return out
}
