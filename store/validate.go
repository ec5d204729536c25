package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

var decisionName = regexp.MustCompile(`^\d{4,}-[^/]+\.md$`)

// ValidateFile checks a file of the checked-out tree before `ctx commit` records it (docs/format.md): the
// path must be one of the layout's, with valid keys and names (ValidKey); JSON records must parse as
// JSON objects; .ndjson logs must hold one JSON object a line; markdown must be UTF-8 text whose front
// matter, when it has a "---" block, parses as a YAML mapping. A file that fails would break every
// reader on every clone once pushed, so it is refused (the error wraps ErrInvalid and names the file).
func ValidateFile(p string, b []byte) error {
	bad := func(format string, a ...any) error {
		return invalidf("%s: %s", p, fmt.Sprintf(format, a...))
	}
	if err := checkPath(p); err != nil {
		return invalidf("%v", err)
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
		return validJSONObject(p, b)
	case len(parts) == 2 && (parts[0] == "knowledge" || parts[0] == "conventions"):
		if err := key(parts[1], ".md"); err != nil {
			return err
		}
		return markdown(p, b)
	case len(parts) == 2 && parts[0] == "decisions":
		if !decisionName.MatchString(parts[1]) {
			return bad("decision files are named NNNN-slug.md")
		}
		return markdown(p, b)
	case len(parts) == 3 && parts[0] == "history" && parts[1] == ".private":
		if err := key(parts[2], ".json"); err != nil {
			return err
		}
		return validJSONObject(p, b)
	case len(parts) == 2 && (parts[0] == "history" || parts[0] == ConflictsDir):
		if err := key(parts[1], ".json"); err != nil {
			return err
		}
		return validJSONObject(p, b)
	case len(parts) >= 2 && parts[0] == "activity":
		for _, seg := range parts[1 : len(parts)-1] {
			if err := ValidKey(seg); err != nil {
				return bad("%v", err)
			}
		}
		if !strings.HasSuffix(p, ".json") {
			return bad("activity entries are .json files")
		}
		return validJSONObject(p, b)
	case len(parts) >= 3 && parts[0] == "skills":
		if err := ValidKey(parts[1]); err != nil {
			return bad("skill name: %v", err)
		}
		switch name := parts[len(parts)-1]; {
		case len(parts) == 3 && name == "SKILL.md":
			return markdown(p, b)
		case len(parts) == 3 && (name == ".feedback.ndjson" || name == ".usage.ndjson"):
			return ndjson(p, b)
		case len(parts) == 4 && parts[2] == ".proposals":
			if err := key(name, ".json"); err != nil {
				return err
			}
			return validJSONObject(p, b)
		}
		return nil // a skill's own scripts and resources
	}
	return bad("not a path of the context store (knowledge/, conventions/, decisions/, history/, skills/, activity/, conflicts/, manifest.json, state.json)")
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
	if fm, _, ok := SplitFrontMatter(b); ok {
		if _, err := ParseMeta(fm); err != nil {
			return invalidf("%s: the front matter does not parse: %v", p, err)
		}
	}
	return nil
}
