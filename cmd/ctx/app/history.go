package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/history"
	"github.com/urfave/cli/v2"
)

func init() { registry = append(registry, historyCommand) }

// historyCommand is `ctx history sources|import|search|show`: the coding agents' local transcripts,
// imported into a local index (docs/history.md).
func historyCommand() *cli.Command {
	indexFlag := &cli.StringFlag{Name: "index", Usage: "the index `DIR` (default: <git common dir>/ctx/history)"}
	return &cli.Command{
		Name:  "history",
		Usage: "import and search the coding agents' local session history (docs/history.md)",
		Subcommands: []*cli.Command{
			{
				Name:  "sources",
				Usage: "list each provider's history root and how many sessions it holds",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					type row struct {
						history.Root
						Sources int    `json:"sources"`
						Error   string `json:"error,omitempty"`
					}
					var rows []row
					for _, r := range history.Roots(history.Env{}) {
						x := row{Root: r}
						if r.Exists {
							srcs, err := history.Discover(c.Context, r.Provider, r.Path, false)
							if err != nil {
								x.Error = err.Error()
							}
							x.Sources = len(srcs)
						}
						rows = append(rows, x)
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, rows)
					}
					tw := table(c.App.Writer)
					fmt.Fprintln(tw, "PROVIDER\tSOURCES\tROOT")
					for _, r := range rows {
						root := r.Path
						if !r.Exists {
							root += " (missing)"
						}
						if r.FromEnv {
							root += " ($" + r.EnvVar + ")"
						}
						if r.Error != "" {
							root += " error: " + r.Error
						}
						fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Provider, r.Sources, root)
					}
					return tw.Flush()
				},
			},
			{
				Name:  "import",
				Usage: "import every discovered source, or --provider P --path DIR (a moved or copied root)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "provider", Usage: "only `PROVIDER` (claude-code, codex, gemini-cli, opencode, cursor, copilot-cli)"},
					&cli.StringFlag{Name: "path", Usage: "import the provider's history from `DIR` instead of its root (needs --provider)"},
					indexFlag, jsonFlag,
				},
				Action: historyImport,
			},
			{
				Name:      "search",
				Usage:     "search the imported history: best hit per root session first",
				ArgsUsage: "QUERY",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "provider", Usage: "only `PROVIDER` (repeatable)"},
					&cli.StringFlag{Name: "scope", Value: history.ScopeAll, Usage: "content scope: all, transcript, calls, outputs"},
					&cli.StringFlag{Name: "type", Usage: "only events of `TYPE` (message, summary, tool_call, tool_output, reasoning, notice)"},
					&cli.StringFlag{Name: "since", Usage: "events at or after `TIME` (RFC 3339 or YYYY-MM-DD)"},
					&cli.StringFlag{Name: "until", Usage: "events before `TIME`"},
					&cli.StringFlag{Name: "file", Usage: "events that touched `PATH` (a prefix when it ends in /)"},
					&cli.StringFlag{Name: "in-session", Usage: "only the session `ID`"},
					&cli.StringFlag{Name: "repo", Usage: "sessions whose cwd is inside `DIR`"},
					&cli.BoolFlag{Name: "primary-only", Usage: "leave out subagent sessions"},
					&cli.BoolFlag{Name: "events", Usage: "plain event hits, without grouping by root session"},
					&cli.IntFlag{Name: "limit", Value: 20, Usage: "at most `N` hits (1-500)"},
					indexFlag, jsonFlag,
				},
				Action: historySearch,
			},
			{
				Name:  "show",
				Usage: "print a session (show session ID) or an event (show event ID)",
				Subcommands: []*cli.Command{
					{
						Name:      "session",
						ArgsUsage: "ID",
						Usage:     "print a session's complete event stream (ID: a ctx session id or a prefix of 8+ hex digits)",
						Flags: []cli.Flag{
							&cli.IntFlag{Name: "max-events", Usage: "stop after `N` events"},
							indexFlag,
							&cli.BoolFlag{Name: "json", Usage: "print JSON lines: the session, then one event per line"},
						},
						Action: historyShowSession,
					},
					{
						Name:      "event",
						ArgsUsage: "ID",
						Usage:     "print an event, with --window N events around it",
						Flags:     []cli.Flag{&cli.IntFlag{Name: "window", Usage: "`N` events before and after"}, indexFlag, jsonFlag},
						Action:    historyShowEvent,
					},
				},
			},
		},
	}
}

// openHistory opens the index of --index, else of the repository of -C (or the current directory).
func openHistory(c *cli.Context) (*history.Index, error) {
	dir := c.String("index")
	if dir == "" {
		wd := c.String("C")
		if wd == "" {
			var err error
			if wd, err = os.Getwd(); err != nil {
				return nil, err
			}
		}
		repo, err := gitstore.Open(c.Context, wd)
		if err != nil {
			return nil, err
		}
		dir = history.DefaultDir(repo.CommonDir())
	}
	return history.Open(c.Context, dir)
}

func historyImport(c *cli.Context) error {
	prov, path := c.String("provider"), c.String("path")
	var only history.Provider
	if prov != "" {
		p, ok := history.ParseProvider(prov)
		if !ok {
			return usagef("unknown provider %q (claude-code, codex, gemini-cli, opencode, cursor, copilot-cli)", prov)
		}
		only = p
	}
	if path != "" && only == "" {
		return usagef("--path needs --provider")
	}
	var srcs []history.Source
	if path != "" {
		s, err := history.Discover(c.Context, only, path, true)
		if err != nil {
			return err
		}
		srcs = s
	} else {
		for _, r := range history.Roots(history.Env{}) {
			if (only != "" && r.Provider != only) || !r.Exists {
				continue
			}
			s, err := history.Discover(c.Context, r.Provider, r.Path, false)
			if err != nil {
				fmt.Fprintf(c.App.ErrWriter, "ctx: warning: %v\n", err)
				continue
			}
			srcs = append(srcs, s...)
		}
	}
	ix, err := openHistory(c)
	if err != nil {
		return err
	}
	defer ix.Close()
	st, err := ix.ImportProgress(c.Context, srcs, progressBar(len(srcs)))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, st)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "%d sources: %d imported, %d appended, %d unchanged, %d failed; %d events added\n",
		st.Sources, st.Imported, st.Appended, st.Unchanged, st.Failed, st.Events)
	if st.BadLines > 0 {
		fmt.Fprintf(w, "%d bad lines skipped\n", st.BadLines)
	}
	if len(st.Unknown) > 0 {
		n := 0
		for _, v := range st.Unknown {
			n += v
		}
		fmt.Fprintf(w, "%d records of %d unknown types skipped\n", n, len(st.Unknown))
	}
	for _, r := range st.Results {
		if r.Action == "failed" {
			fmt.Fprintf(c.App.ErrWriter, "ctx: warning: %s: %s\n", r.Source.Path, r.Err)
		}
	}
	return nil
}

func parseWhen(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("invalid time %q (RFC 3339 or YYYY-MM-DD)", s)
}

func historySearch(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("usage: ctx history search QUERY [flags]")
	}
	q := history.Query{
		Text: strings.Join(c.Args().Slice(), " "), Scope: c.String("scope"), EventType: history.EventType(c.String("type")),
		File: c.String("file"), SessionID: c.String("in-session"), Repo: c.String("repo"),
		PrimaryOnly: c.Bool("primary-only"), Dense: c.Bool("events"), Limit: c.Int("limit"),
	}
	if c.Int("limit") < 1 {
		return usagef("--limit must be between 1 and 500")
	}
	for _, p := range c.StringSlice("provider") {
		pp, ok := history.ParseProvider(p)
		if !ok {
			return usagef("unknown provider %q", p)
		}
		q.Providers = append(q.Providers, pp)
	}
	var err error
	if q.Since, err = parseWhen(c.String("since")); err != nil {
		return err
	}
	if q.Until, err = parseWhen(c.String("until")); err != nil {
		return err
	}
	ix, err := openHistory(c)
	if err != nil {
		return err
	}
	defer ix.Close()
	if q.SessionID != "" {
		s, err := ix.Session(c.Context, q.SessionID)
		if err != nil {
			return historyErr(err)
		}
		q.SessionID = s.ID
	}
	res, err := ix.Search(c.Context, q)
	if errors.Is(err, history.ErrBadQuery) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, res)
	}
	w := c.App.Writer
	if res.Relaxed {
		fmt.Fprintln(w, "(no event has every word: hits match any word)")
	}
	for _, h := range res.Hits {
		when := ""
		if !h.Event.At.IsZero() {
			when = h.Event.At.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "%.2f  %s  %s %s  %s  %s", h.Score, when, h.Session.Provider, h.Session.NativeID, h.Event.Type, h.Event.ID)
		if h.More > 0 {
			fmt.Fprintf(w, "  (+%d in this session tree)", h.More)
		}
		fmt.Fprintf(w, "\n    %s\n", h.Snippet)
	}
	if len(res.Hits) == 0 {
		fmt.Fprintln(w, "no hits")
	}
	return nil
}

// historyErr maps the index's not-found errors to ctx's exit codes.
func historyErr(err error) error {
	if errors.Is(err, history.ErrNotFound) || errors.Is(err, history.ErrAmbiguous) {
		return usagef("%v", err)
	}
	return err
}

func historyShowSession(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("usage: ctx history show session ID")
	}
	ix, err := openHistory(c)
	if err != nil {
		return err
	}
	defer ix.Close()
	s, err := ix.Session(c.Context, c.Args().First())
	if err != nil {
		return historyErr(err)
	}
	w := c.App.Writer
	if c.Bool("json") {
		if err := printJSONLine(w, s); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "session %s\nprovider %s, native id %s\nsource %s\n", s.ID, s.Provider, s.NativeID, s.SourcePath)
		if s.ParentID != "" {
			fmt.Fprintf(w, "parent %s, root %s\n", s.ParentID, s.RootID)
		}
		if s.CWD != "" {
			fmt.Fprintf(w, "cwd %s\n", s.CWD)
		}
		fmt.Fprintf(w, "%d events\n\n", s.EventCount)
	}
	max := c.Int("max-events")
	var after int64
	shown := 0
	for {
		page := 500
		if max > 0 {
			page = min(page, max-shown)
			if page <= 0 {
				break
			}
		}
		evs, err := ix.Events(c.Context, s.ID, after, page)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if c.Bool("json") {
				if err := printJSONLine(w, e); err != nil {
					return err
				}
			} else {
				printEvent(w, e)
			}
			after = e.Seq
		}
		shown += len(evs)
		if len(evs) < page {
			break
		}
	}
	return nil
}

func historyShowEvent(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("usage: ctx history show event ID [--window N]")
	}
	ix, err := openHistory(c)
	if err != nil {
		return err
	}
	defer ix.Close()
	e, around, err := ix.Event(c.Context, c.Args().First(), c.Int("window"))
	if err != nil {
		return historyErr(err)
	}
	if c.Bool("json") {
		return printJSON(c.App.Writer, map[string]any{"event": e, "window": around})
	}
	if len(around) == 0 {
		around = []history.Event{e}
	}
	for _, x := range around {
		if x.ID == e.ID {
			fmt.Fprint(c.App.Writer, "> ")
		}
		printEvent(c.App.Writer, x)
	}
	return nil
}

func printEvent(w io.Writer, e history.Event) {
	when := "-"
	if !e.At.IsZero() {
		when = e.At.Format(time.RFC3339)
	}
	head := string(e.Type)
	if e.Role != "" {
		head += "/" + e.Role
	}
	if e.Tool != nil && e.Tool.Name != "" {
		head += " " + e.Tool.Name
	}
	fmt.Fprintf(w, "#%d %s %s %s\n", e.Seq, when, head, e.ID)
	text := e.Text
	if len(text) > 4000 {
		text = text[:4000] + "…"
	}
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
}

func printJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// progressBar returns a progress callback that draws a one-line bar on the standard error when it is a
// terminal and the import is long enough to need one (at least 200 sources), else nil. It writes to the
// terminal directly: the sanitized writer would escape the carriage return, and the text is ctx's own.
func progressBar(total int) func(done, total int) {
	w := os.Stderr
	fi, err := os.Stderr.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 || total < 200 {
		return nil
	}
	last := -1
	return func(done, total int) {
		pct := done * 100 / total
		if pct == last && done != total {
			return
		}
		last = pct
		const width = 30
		n := pct * width / 100
		fmt.Fprintf(w, "\rimporting %s%s %3d%% (%d/%d sources)", strings.Repeat("#", n), strings.Repeat(".", width-n), pct, done, total)
		if done == total {
			fmt.Fprintln(w)
		}
	}
}
