package adapters

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Client is a coding agent and the places in a repository where it reads context by itself, without
// MCP. Paths are slash-separated and relative to the work tree's root. Where each place is documented:
// docs/adapters.md ("Clients").
type Client struct {
	// Name is the client's name on the command line (--client).
	Name string `json:"name"`
	// Instructions is the instruction file that gets ctx's managed block ("" for none).
	Instructions string `json:"instructions,omitempty"`
	// Rules is the folder of Cursor rules ctx writes ctx-*.mdc files into ("" for none).
	Rules string `json:"rules,omitempty"`
	// Skills is the folder of skill folders (<Skills>/<name>/SKILL.md) the client loads.
	Skills string `json:"skills,omitempty"`
}

// ManifestName is the client's key in manifest.json's adapters (docs/format.md "Records"): its name with
// '_' for '-', claude_code for claude-code, as docs/format.md "Records" shows it.
func (c Client) ManifestName() string { return strings.ReplaceAll(c.Name, "-", "_") }

// Clients are the supported clients, in the order status and list show them. Several clients may share
// a place (Codex, OpenCode and the generic one all read AGENTS.md): the place is written once, with the
// same content, and a client counts as enabled for it when any of them is.
var Clients = []Client{
	{Name: "claude-code", Instructions: "CLAUDE.md", Skills: ".claude/skills"},
	{Name: "codex", Instructions: "AGENTS.md", Skills: ".agents/skills"},
	{Name: "cursor", Rules: ".cursor/rules", Skills: ".cursor/skills"},
	{Name: "gemini", Instructions: "GEMINI.md", Skills: ".gemini/skills"},
	{Name: "opencode", Instructions: "AGENTS.md", Skills: ".opencode/skills"},
	{Name: "copilot", Instructions: ".github/copilot-instructions.md", Skills: ".github/skills"},
	{Name: "agents", Instructions: "AGENTS.md", Skills: ".agents/skills"},
}

// ErrBadArgument is matched (errors.Is) by the errors for an argument the caller got wrong: an unknown
// client, a block bound below the minimum, a client without session hooks, a hook scope the client does
// not have. A command line reports them as usage errors.
var ErrBadArgument = errors.New("adapters: bad argument")

// argError is an error of a bad argument: its own message, matching ErrBadArgument.
type argError struct{ msg string }

func (e *argError) Error() string        { return e.msg }
func (e *argError) Is(target error) bool { return target == ErrBadArgument }

// badArgument is an argError with a formatted message.
func badArgument(format string, a ...any) error { return &argError{fmt.Sprintf(format, a...)} }

// ClientNames lists the names of Clients.
func ClientNames() []string {
	out := make([]string, len(Clients))
	for i, c := range Clients {
		out[i] = c.Name
	}
	return out
}

// Lookup returns the clients of names, in the order of Clients; no names means every client. An unknown
// name is an error naming the known ones (ErrBadArgument).
func Lookup(names ...string) ([]Client, error) {
	if len(names) == 0 {
		return slices.Clone(Clients), nil
	}
	want := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(ClientNames(), n) {
			return nil, badArgument("unknown client %q: use one of %s", n, strings.Join(ClientNames(), ", "))
		}
		want[n] = true
	}
	var out []Client
	for _, c := range Clients {
		if want[c.Name] {
			out = append(out, c)
		}
	}
	return out, nil
}
