package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/history"
	"github.com/urfave/cli/v2"
)

// newHistoryListCmd is `ctx history list events`: the index's events in time order, filtered.
func newHistoryListCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:        "list",
		Usage:       "list imported records: ctx history list events [filters]",
		Subcommands: []*cli.Command{newHistoryListEventsCmd(e)},
	}, "Lists records of the agent-history index (docs/history.md). `events` is the one kind listed.",
		[]string{"ctx history list events --provider codex --type tool_call", "ctx history list events --session 3f2a9c1d --json"},
		historyExits)
}

// historyListEventsOptions are the flags of ctx history list events: the index's query (its SessionID
// possibly a prefix, resolved by runHistoryListEvents) and how many events at most (0: all).
type historyListEventsOptions struct {
	Query history.EventQuery
	Max   int
	Index string
	JSON  bool
}

// listPage is how many events one read of the index returns while listing.
const listPage = 1000

func newHistoryListEventsCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "events",
		Usage: "list the imported events in time order, filtered (JSON Lines with --json)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "only the session `ID` (a unique prefix of at least 8 hex digits)"},
			&cli.StringSliceFlag{Name: "provider", Usage: "only `PROVIDER` (repeatable)"},
			&cli.StringSliceFlag{Name: "type", Usage: "only events of `TYPE` (repeatable: message, summary, tool_call, tool_output, reasoning, notice)"},
			&cli.StringFlag{Name: "role", Usage: "only events of `ROLE` (user, assistant, system, developer, tool)"},
			&cli.StringFlag{Name: "file", Usage: "events that touched `PATH` (a prefix when it ends in /; a relative PATH is taken from the current directory)"},
			&cli.StringFlag{Name: "repo", Usage: "sessions whose cwd is inside `DIR`"},
			&cli.StringFlag{Name: "since", Usage: "events at or after `TIME` (RFC 3339 or YYYY-MM-DD)"},
			&cli.StringFlag{Name: "until", Usage: "events before `TIME`"},
			&cli.StringFlag{Name: "order", Value: "asc", Usage: "`ORDER`: asc (oldest first; events without a time first) or desc"},
			&cli.IntFlag{Name: "limit", Usage: "at most `N` events (0: all)"},
			historyIndexFlag(), jsonFlag,
		},
		Action: action(e, parseHistoryListEvents, withHistoryErr(runHistoryListEvents)),
	}, "Prints the events of the index that match every filter, ordered by time then import order, as a\n"+
		"stream: one line per event (time, provider, type, role, event ID and the start of its text), or with\n"+
		"--json one JSON object per line (the normalised event of docs/history.md plus provider), then the\n"+
		"completion record {kind: \"completion\", complete, truncated, returned, limit, generation}. The MCP tool\n"+
		"query_events pages the same listing.",
		[]string{"ctx history list events --provider codex --type tool_call --since 2026-11-01",
			"ctx history list events --session 3f2a9c1d --json", "ctx history list events --file store/ --order desc --limit 20"},
		historyExits)
}

func parseHistoryListEvents(c *cli.Context) (historyListEventsOptions, error) {
	o := historyListEventsOptions{Index: c.String("index"), JSON: c.Bool("json"), Max: c.Int("limit")}
	if c.NArg() > 0 {
		return o, usagef("usage: ctx history list events [flags] (no arguments)")
	}
	q := history.EventQuery{SessionID: c.String("session"), Role: c.String("role"), File: c.String("file"), Repo: c.String("repo")}
	switch q.Role {
	case "", "user", "assistant", "system", "developer", "tool": // query_events' enum (mcp/schemas)
	default:
		return o, usagef("unknown role %q (user, assistant, system, developer, tool)", q.Role)
	}
	for _, p := range c.StringSlice("provider") {
		pp, ok := history.ParseProvider(p)
		if !ok {
			return o, usagef("unknown provider %q (%s)", p, historyProviders)
		}
		q.Providers = append(q.Providers, pp)
	}
	for _, t := range c.StringSlice("type") {
		switch tt := history.EventType(t); tt {
		case history.Message, history.Summary, history.Reasoning, history.ToolCall, history.ToolOutput, history.Notice:
			q.Types = append(q.Types, tt)
		default:
			return o, usagef("unknown event type %q", t)
		}
	}
	switch c.String("order") {
	case "asc":
	case "desc":
		q.Desc = true
	default:
		return o, usagef("--order is asc or desc")
	}
	if o.Max < 0 {
		return o, usagef("--limit must not be negative")
	}
	var err error
	if q.Since, err = parseWhen(c.String("since")); err != nil {
		return o, err
	}
	if q.Until, err = parseWhen(c.String("until")); err != nil {
		return o, err
	}
	o.Query = q
	return o, nil
}

// listedEvent is a line of ctx history list events --json.
type listedEvent struct {
	eventJSON
	Provider history.Provider `json:"provider"`
}

func runHistoryListEvents(ctx context.Context, e *env, o historyListEventsOptions) error {
	ix, err := e.openHistoryRead(ctx, o.Index)
	if err != nil {
		return err
	}
	defer ix.Close()
	q := o.Query
	if q.File, err = e.absFile(q.File); err != nil {
		return err
	}
	if q.Repo, err = e.absRepo(q.Repo); err != nil {
		return err
	}
	if q.SessionID != "" {
		s, err := ix.Session(ctx, q.SessionID)
		if err != nil {
			return historyErr(err)
		}
		q.SessionID = s.ID
	}
	gen, err := ix.Generation(ctx)
	if err != nil {
		return err
	}
	shown := 0
	for {
		q.Limit = listPage
		if o.Max > 0 {
			q.Limit = min(listPage, o.Max-shown)
		}
		evs, err := ix.ListEvents(ctx, q)
		if err != nil {
			return err
		}
		for _, le := range evs {
			if o.JSON {
				if err := printJSONLine(e.stdout, listedEvent{eventOf(le.Event), le.Provider}); err != nil {
					return err
				}
			} else {
				printListedEvent(e.stdout, le)
			}
		}
		shown += len(evs)
		if len(evs) > 0 {
			pos := evs[len(evs)-1].Pos
			q.After = &pos
		}
		if len(evs) < q.Limit || (o.Max > 0 && shown >= o.Max) {
			break
		}
	}
	if !o.JSON {
		return nil
	}
	// The stream ends with its completion record (docs/history.md "CLI").
	truncated := false
	if o.Max > 0 && shown >= o.Max {
		q.Limit = 1
		rest, err := ix.ListEvents(ctx, q)
		if err != nil {
			return err
		}
		truncated = len(rest) > 0
	}
	c := streamCompletion{Kind: "completion", Stream: "events", Complete: !truncated, Truncated: truncated,
		Returned: shown, Generation: gen}
	if o.Max > 0 {
		c.Limit = &o.Max
	}
	return printJSONLine(e.stdout, c)
}

// printListedEvent prints one event as one line: time ("-" when none), provider, type/role, tool, event
// ID and the first line of its text, cut at 120 bytes.
func printListedEvent(w io.Writer, le history.ListedEvent) {
	ev := le.Event
	when := "-"
	if !ev.At.IsZero() {
		when = ev.At.UTC().Format(time.RFC3339)
	}
	head := string(ev.Type)
	if ev.Role != "" {
		head += "/" + ev.Role
	}
	if ev.Tool != nil && ev.Tool.Name != "" {
		head += " " + ev.Tool.Name
	}
	text, _, _ := strings.Cut(strings.TrimSpace(ev.Text), "\n")
	if len(text) > 120 {
		text = strings.ToValidUTF8(text[:120], "") + "…"
	}
	fmt.Fprintf(w, "%s %s %s %s %s\n", when, le.Provider, oneCell(head), ev.ID, oneCell(text))
}
