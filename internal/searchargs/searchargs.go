// Package searchargs reads the command lines of `ctx search` and `ctx history search` that the search
// program answers without the full CLI (docs/architecture.md "The search program"): the lean front uses
// it to decide to run ctx-search, and ctx-search to read its request. It imports the standard library
// only, so the front links nothing more for it.
package searchargs

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Request is a search command line of the shapes Parse accepts.
type Request struct {
	Dir         string   // -C DIR, "" without
	Words       []string // the query's words, as given
	JSON        bool     // --json
	Limit       int      // --limit N (1 to 100), 20 without
	Scope       string   // --scope S, "all" without
	Providers   []string // --provider P (each an index provider, in order, no repeats)
	PrimaryOnly bool     // --primary-only
}

// Query is the query text as ctx-full reads it: the words joined by one space.
func (r Request) Query() string { return strings.Join(r.Words, " ") }

// Args is the MCP search tool's arguments ctx-full's `ctx history search` makes of r (cmd/ctx/app
// unifiedArgs) for its one page, as a JSON object: query, limit, content_scope, providers, primary_only.
func (r Request) Args() map[string]any {
	a := map[string]any{"query": r.Query(), "limit": r.Limit, "content_scope": r.Scope}
	if len(r.Providers) > 0 {
		ps := make([]any, len(r.Providers))
		for i, p := range r.Providers {
			ps[i] = p
		}
		a["providers"] = ps
	}
	if r.PrimaryOnly {
		a["primary_only"] = true
	}
	return a
}

// providers are the index's providers (history.Providers), the values --provider takes here: ctx (the
// context store) is ctx-full's.
var providers = map[string]bool{"claude-code": true, "codex": true, "gemini-cli": true, "opencode": true,
	"cursor": true, "copilot-cli": true}

var scopes = map[string]bool{"all": true, "transcript": true, "calls": true, "outputs": true}

// maxQueryRunes is the search tool's maxLength of query (its input schema).
const maxQueryRunes = 256

// Parse reads args (the command line after the program's name) when it is exactly one of
//
//	[-C DIR] search [FLAG]... WORD...
//	[-C DIR] history search [FLAG]... WORD...
//
// with FLAG one of --json, --limit N (N a plain decimal, 1 to 100: one page of the search tool),
// --scope all|transcript|calls|outputs, --provider P (an index provider, not repeated), --primary-only,
// and WORDs that do not start with '-' and are not "help" or "h", whose query is valid UTF-8, not blank
// and at most 256 characters. Anything else (another flag or spelling, a usage error, help) is ok false:
// ctx-full's to answer.
func Parse(args []string) (r Request, ok bool) {
	r = Request{Limit: 20, Scope: "all"}
	if len(args) >= 2 && args[0] == "-C" {
		if args[1] == "" {
			return r, false
		}
		r.Dir, args = args[1], args[2:]
	}
	switch {
	case len(args) >= 1 && args[0] == "search":
		args = args[1:]
	case len(args) >= 2 && args[0] == "history" && args[1] == "search":
		args = args[2:]
	default:
		return r, false
	}
	seen := map[string]bool{}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		f := args[0]
		if seen[f] && f != "--provider" {
			return r, false
		}
		seen[f] = true
		switch f {
		case "--json":
			r.JSON = true
			args = args[1:]
			continue
		case "--primary-only":
			r.PrimaryOnly = true
			args = args[1:]
			continue
		}
		if len(args) < 2 {
			return r, false
		}
		v := args[1]
		switch f {
		case "--limit":
			n, ok := plainCount(v)
			if !ok || n < 1 || n > 100 {
				return r, false
			}
			r.Limit = n
		case "--scope":
			if !scopes[v] {
				return r, false
			}
			r.Scope = v
		case "--provider":
			if !providers[v] {
				return r, false
			}
			for _, p := range r.Providers {
				if p == v {
					return r, false
				}
			}
			r.Providers = append(r.Providers, v)
		default:
			return r, false
		}
		args = args[2:]
	}
	if len(args) == 0 {
		return r, false
	}
	for _, w := range args {
		if strings.HasPrefix(w, "-") || w == "help" || w == "h" {
			return r, false
		}
	}
	r.Words = args
	q := r.Query()
	if !utf8.ValidString(q) || strings.TrimSpace(q) == "" || utf8.RuneCountInString(q) > maxQueryRunes {
		return r, false
	}
	return r, true
}

// plainCount is a decimal without a sign or leading zeros, at most 9 digits (ctx-full's flag parser reads
// "010" as octal and "0x10" as hexadecimal: those are its own).
func plainCount(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
