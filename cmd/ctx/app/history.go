package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/mcp"
	"github.com/ctx-dev/ctx/mcp/searchpage"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// newHistoryCmd is `ctx history sources|import|search|show`: the coding agents' local transcripts,
// imported into a local index (docs/history.md).
func newHistoryCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "history",
		Usage: "import and search the coding agents' local session history (docs/history.md)",
		Subcommands: []*cli.Command{
			newHistorySourcesCmd(e),
			newHistoryImportCmd(e),
			newHistorySearchCmd(e),
			newHistoryShowCmd(e),
			newHistoryListCmd(e),
			newHistoryShareCmd(e),
			newHistoryServerCmd(e),
		},
	}, "Reads the transcripts that coding agents (Claude Code, Codex CLI, Gemini CLI, OpenCode, Cursor, Copilot CLI)\n"+
		"keep on this machine into a local index under the git common dir, and searches it. Nothing of it is on\n"+
		"the context branch or pushed, except a session you share with ctx history share (redacted, docs/blame.md);\n"+
		"the providers' files are never written (docs/history.md).",
		[]string{"ctx history sources", "ctx history import", "ctx history search flaky test --since 2026-11-01", "ctx history show session 3f2a9c1d"},
		historyExits)
}

// historyExits are the exit codes of the history commands that open the index.
var historyExits = []exit{
	{code: ExitUsage, when: "usage error: a bad flag, argument or value, a session or event ID prefix that matches several"},
	{code: ExitNotFound, when: "no session or event has that ID"},
	{code: ExitNoStore, when: "not a git repository (and no --index)"},
}

// historyIndexFlag is the --index flag of the commands that open the index.
func historyIndexFlag() cli.Flag {
	return &cli.StringFlag{Name: "index", Usage: "the index `DIR` (default: <git common dir>/ctx/history)"}
}

// historyProviders lists the providers' names for usage errors.
const historyProviders = "claude-code, codex, gemini-cli, opencode, cursor, copilot-cli"

// historySourcesOptions are the flags of ctx history sources.
type historySourcesOptions struct{ JSON bool }

func newHistorySourcesCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "sources",
		Usage: "list each provider's history root and the configured roots, and how many sessions each holds",
		Flags: []cli.Flag{jsonFlag, formatFlag},
		Subcommands: []*cli.Command{
			newHistorySourcesAddCmd(e),
			newHistorySourcesRemoveCmd(e),
		},
		Action: action(e, func(c *cli.Context) (historySourcesOptions, error) {
			js, err := jsonOrFormat(c) // --format json as ctx status takes it (docs/history.md)
			return historySourcesOptions{JSON: js}, err
		}, runHistorySources),
	}, "Lists each provider's one root (its override variable when set, else its default), then the roots\n"+
		"configured for this repository (ctx history sources add), whether each exists and how many sources\n"+
		"(sessions) discovery finds under it. It only stats and lists files. Each row's selection says how it\n"+
		"was selected: automatic, or configured with its root name and group.",
		[]string{"ctx history sources", "ctx history sources --json", "ctx sources --format json", "ctx history sources add --provider codex --path /backup/.codex --group backup",
			"ctx history sources remove codex-backup"},
		nil)
}

// sourceSelection is how a history root was selected: "automatic" (a provider's own root; Root and Group
// null) or "configured" (ctx history sources add; Root its name, Group its group or null).
type sourceSelection struct {
	Kind  string  `json:"kind"`
	Root  *string `json:"root"`
	Group *string `json:"group"`
}

func runHistorySources(ctx context.Context, e *env, o historySourcesOptions) error {
	if o.JSON {
		// The MCP sources tool's object (docs/mcp.md "History read tools"): one shape for both.
		s, err := e.open(ctx)
		switch {
		case errors.Is(err, store.ErrNotRepository):
			s = nil // outside a repository: the providers' roots only
		case err != nil:
			return err
		}
		r, err := mcp.SourcesReport(ctx, s, mcp.Options{})
		if err != nil {
			return err
		}
		return printJSON(e.stdout, r)
	}
	type row struct {
		history.Root
		Sources   int             `json:"sources"`
		Error     string          `json:"error,omitempty"`
		Selection sourceSelection `json:"selection"`
	}
	var rows []row
	for _, r := range history.Roots(history.Env{}) {
		x := row{Root: r, Selection: sourceSelection{Kind: "automatic"}}
		if r.Exists {
			srcs, err := history.Discover(ctx, r.Provider, r.Path, false)
			if err != nil {
				x.Error = err.Error()
			}
			x.Sources = len(srcs)
		}
		rows = append(rows, x)
	}
	conf, err := configuredSources(ctx, e)
	if err != nil {
		return err
	}
	for _, h := range conf {
		x := row{Root: history.Root{Provider: history.Provider(h.Provider), Path: h.Path},
			Selection: sourceSelection{Kind: "configured", Root: &h.Root}}
		if h.Group != "" {
			x.Selection.Group = &h.Group
		}
		if fi, err := os.Stat(h.Path); err == nil && fi.IsDir() {
			x.Exists = true
			srcs, err := history.Discover(ctx, x.Provider, h.Path, true)
			if err != nil {
				x.Error = err.Error()
			}
			x.Sources = len(srcs)
		}
		rows = append(rows, x)
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "PROVIDER\tSOURCES\tSELECTION\tROOT")
	for _, r := range rows {
		root := oneCell(r.Path) // a root of the environment may hold a newline (CLAUDE_CONFIG_DIR)
		if !r.Exists {
			root += " (missing)"
		}
		if r.FromEnv {
			root += " ($" + r.EnvVar + ")"
		}
		if r.Error != "" {
			root += " error: " + oneCell(r.Error)
		}
		sel := r.Selection.Kind
		if r.Selection.Root != nil {
			sel += " " + *r.Selection.Root
		}
		if r.Selection.Group != nil {
			sel += " (group " + *r.Selection.Group + ")"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", r.Provider, r.Sources, sel, root)
	}
	return tw.Flush()
}

// historyImportOptions are the flags of ctx history import: Provider is empty for every provider; Path,
// set only with Provider, is a moved or copied root to import instead of the provider's own. HookInput
// (with Provider, without Path) imports only the session named by the agent hook's JSON on standard
// input; Quiet prints nothing but errors and warnings.
type historyImportOptions struct {
	Provider  history.Provider
	Path      string
	Index     string
	JSON      bool
	HookInput bool
	Quiet     bool
}

// maxHookInput bounds the agent hook's JSON read from standard input, in bytes.
const maxHookInput = 1 << 20

func newHistoryImportCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "import",
		Usage: "import every discovered source, or --provider P --path DIR (a moved or copied root)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "provider", Usage: "only `PROVIDER` (" + historyProviders + ")"},
			&cli.StringFlag{Name: "path", Usage: "import the provider's history from `DIR` instead of its root (needs --provider)"},
			&cli.BoolFlag{Name: "hook-input", Usage: "import only the session whose transcript_path the agent's session hook passes as JSON on standard input (needs --provider)"},
			&cli.BoolFlag{Name: "quiet", Usage: "print nothing on success (no counts, no progress bar)"},
			historyIndexFlag(), jsonFlag,
		},
		Action: action(e, parseHistoryImport, runHistoryImport),
	}, "Imports the sources discovered under every provider's root (or only --provider's), or every file of\n"+
		"--provider's format under --path, into the index. Import is incremental: an unchanged source is not\n"+
		"read again, a grown log only has its new lines parsed. A root that cannot be listed is a warning; a\n"+
		"source that fails is counted and named in a warning, the others import.\n"+
		"With --hook-input, ctx reads the JSON a session hook gets on standard input (Claude Code's and Gemini\n"+
		"CLI's SessionEnd: session_id, transcript_path, ...) and imports only that session (and its subagents'\n"+
		"files), provided discovery finds its transcript under --provider's root; anything else is an error\n"+
		"and nothing is imported. ctx's SessionEnd hook (ctx adapters hooks install) runs it with --quiet.",
		[]string{"ctx history import", "ctx history import --provider codex", "ctx history import --provider claude-code --path /backup/.claude/projects --json",
			"ctx history import --provider claude-code --hook-input --quiet < hook.json"},
		historyExits)
}

func parseHistoryImport(c *cli.Context) (historyImportOptions, error) {
	o := historyImportOptions{Path: c.String("path"), Index: c.String("index"), JSON: c.Bool("json"), HookInput: c.Bool("hook-input"), Quiet: c.Bool("quiet")}
	if prov := c.String("provider"); prov != "" {
		p, ok := history.ParseProvider(prov)
		if !ok {
			return historyImportOptions{}, usagef("unknown provider %q (%s)", prov, historyProviders)
		}
		o.Provider = p
	}
	if o.Path != "" && o.Provider == "" {
		return historyImportOptions{}, usagef("--path needs --provider")
	}
	if o.HookInput && (o.Provider == "" || o.Path != "") {
		return historyImportOptions{}, usagef("--hook-input needs --provider and takes no --path")
	}
	if o.Quiet && o.JSON {
		return historyImportOptions{}, usagef("--quiet and --json exclude each other")
	}
	return o, nil
}

// hookSources keeps of srcs (the provider's discovered sources) the session an agent's session hook
// names in its JSON on in (transcript_path; Claude Code and Gemini CLI pass it to every hook), and the
// files of its subagents (<session>/subagents/ beside a Claude transcript). The path from the hook is
// only compared with what discovery found, never opened itself. Errors: input that is not such JSON, a
// transcript that is not among srcs.
func hookSources(in io.Reader, p history.Provider, srcs []history.Source) ([]history.Source, error) {
	var hook struct {
		SessionID      string `json:"session_id"`
		TranscriptPath string `json:"transcript_path"`
	}
	if err := json.NewDecoder(io.LimitReader(in, maxHookInput)).Decode(&hook); err != nil {
		return nil, fmt.Errorf("--hook-input: the hook's JSON on standard input: %w", err)
	}
	tp := hook.TranscriptPath
	if tp == "" || !filepath.IsAbs(tp) {
		return nil, fmt.Errorf("--hook-input: transcript_path %q is not an absolute path", tp)
	}
	tp = filepath.Clean(tp)
	found := false
	for _, s := range srcs {
		found = found || s.Path == tp
	}
	if !found {
		// The agent may name the file through another spelling of the root's folders (a symbolic link
		// such as macOS's /var → /private/var): the discovered file that is the same file is taken.
		if real, err := filepath.EvalSymlinks(tp); err == nil {
			for _, s := range srcs {
				if filepath.Base(s.Path) != filepath.Base(tp) {
					continue
				}
				if r, err := filepath.EvalSymlinks(s.Path); err == nil && r == real {
					tp, found = s.Path, true
					break
				}
			}
		}
	}
	sub := strings.TrimSuffix(tp, filepath.Ext(tp)) + string(filepath.Separator) + "subagents" + string(filepath.Separator)
	var out []history.Source
	for _, s := range srcs {
		if s.Path == tp || p == history.ClaudeCode && strings.HasPrefix(s.Path, sub) {
			out = append(out, s)
		}
	}
	if !found {
		return nil, fmt.Errorf("--hook-input: transcript_path %q is not a %s session under its root; nothing imported", tp, p)
	}
	return out, nil
}

// runHistoryImport imports; an index found damaged (history.IsDamaged) is removed and rebuilt from the
// transcripts once, with a warning (it only caches them: docs/history.md "A damaged index").
func runHistoryImport(ctx context.Context, e *env, o historyImportOptions) error {
	var err error
	// A read that met a damaged page left a note (history.NoteDamaged): the index is checked
	// (PRAGMA quick_check) and, damaged, rebuilt below; with no note nothing is read.
	if dir, derr := e.historyDir(ctx, o.Index); derr == nil {
		err = history.CheckNoted(ctx, dir)
	}
	if err == nil {
		err = importHistory(ctx, e, o)
	}
	if !history.IsDamaged(err) || o.HookInput { // the hook's input is read: no second run
		return historyErr(err)
	}
	dir, derr := e.historyDir(ctx, o.Index)
	if derr != nil {
		return historyErr(err)
	}
	fmt.Fprintf(e.stderr, "ctx: warning: the agent history index in %s is damaged (%v): rebuilding it from the transcripts (sessions imported with --path come back with ctx history import --provider P --path DIR)\n", dir, err)
	if rerr := history.RemoveIndex(dir); rerr != nil {
		return fmt.Errorf("remove the damaged agent history index: %w", rerr)
	}
	return historyErr(importHistory(ctx, e, o))
}

func importHistory(ctx context.Context, e *env, o historyImportOptions) error {
	defer lessGC(160 << 20)()
	var srcs []history.Source
	var walked []string // the roots walked whole: a source under one whose file is gone is forgotten
	var ix *history.Index
	var dirs *history.DirCache          // the directory listings of the last import (docs/history.md "Discovery")
	var failed []history.DiscoveryError // the roots whose walk failed (recorded in the index, reported, exit 1)
	var walkedOK []string               // the roots walked without an error (walked, unless --hook-input)
	openIndex := func() error {
		var err error
		if ix, err = e.openHistory(ctx, o.Index); err != nil {
			return err
		}
		dirs = ix.LoadDirCache(ctx)
		return nil
	}
	if o.Path != "" {
		// A root that is not there is a mistake of the command line, not an empty history (the import
		// would say "0 sources" and exit 0).
		// Nor one that is, or goes through, a symbolic link: discovery follows none (as sources add).
		if _, err := checkRootPath(o.Path); err != nil {
			return err
		}
		if err := openIndex(); err != nil {
			return err
		}
		defer ix.Close()
		s, err := history.DiscoverCached(ctx, o.Provider, o.Path, true, dirs)
		if err != nil {
			return err
		}
		srcs = s
		if abs, err := filepath.Abs(o.Path); err == nil {
			walked = append(walked, abs)
		}
	} else {
		// The roots configured for this repository (ctx history sources add), read before the index is
		// opened (a config error creates nothing).
		conf, err := configuredSources(ctx, e)
		if err != nil {
			return err
		}
		if err := openIndex(); err != nil {
			return err
		}
		defer ix.Close()
		// The providers' roots are walked at once (each walk is a run of system calls: most of a refresh
		// with nothing new), their sources kept in the roots' order.
		roots := history.Roots(history.Env{})
		found := make([][]history.Source, len(roots))
		errs := make([]error, len(roots))
		var wg sync.WaitGroup
		for i, r := range roots {
			if (o.Provider != "" && r.Provider != o.Provider) || !r.Exists {
				continue
			}
			wg.Go(func() { found[i], errs[i] = history.DiscoverCached(ctx, r.Provider, r.Path, false, dirs) })
		}
		wg.Wait()
		n := 0
		for _, f := range found {
			n += len(f)
		}
		srcs = make([]history.Source, 0, n)
		for i := range roots {
			if errs[i] != nil {
				failed = append(failed, history.DiscoveryError{Provider: roots[i].Provider, Root: roots[i].Path, Error: errs[i].Error()})
				continue
			}
			if (o.Provider == "" || roots[i].Provider == o.Provider) && roots[i].Exists {
				walked = append(walked, roots[i].Path)
			}
			srcs = append(srcs, found[i]...)
		}
		// The configured roots, of --provider only when given.
		for _, h := range conf {
			p := history.Provider(h.Provider)
			if _, ok := history.ParseProvider(h.Provider); !ok || (o.Provider != "" && p != o.Provider) {
				continue
			}
			if fi, err := os.Lstat(h.Path); err != nil || !fi.IsDir() {
				fmt.Fprintf(e.stderr, "ctx: warning: configured root %s: %s is not a directory\n", h.Root, h.Path)
				continue
			}
			s, err := history.DiscoverCached(ctx, p, h.Path, true, dirs)
			if err != nil {
				failed = append(failed, history.DiscoveryError{Provider: p, Root: h.Path, Error: err.Error()})
				continue
			}
			walked = append(walked, h.Path)
			srcs = append(srcs, s...)
		}
		srcs = uniqueSources(srcs)
		if o.Provider == "" && o.Index == "" {
			// Every root this repository's index is kept for was walked: the listings of one-off --path
			// roots, removed configured roots and roots that no longer exist are dropped (docs/history.md
			// "Discovery"). Another --index may serve several repositories, whose roots differ.
			dirs.ForgetOtherRoots()
		}
		if o.HookInput {
			s, err := hookSources(e.stdin, o.Provider, srcs)
			if err != nil {
				return err
			}
			srcs = s
			walkedOK = walked
			walked = nil // the hook names its sources: the roots were not imported whole
		}
	}
	var progress func(done, total int)
	if !o.Quiet {
		progress = progressBar(e.errTerm, len(srcs))
	}
	// One import at a time: another one waits here (docs/history.md "Concurrent imports").
	unlock, err := ix.LockImport(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	// The sources whose files were deleted leave the index first (their sessions keep their other
	// files'): the import then reads again the other files of those sessions, which may hold the same
	// records (docs/history.md "A session of several files").
	removed, err := ix.PruneMissingFound(ctx, walked, srcs)
	if err != nil {
		return err
	}
	st, err := ix.ImportProgress(ctx, srcs, progress)
	if err != nil {
		return err
	}
	st.Removed = removed
	if o.Path == "" {
		if walkedOK == nil {
			walkedOK = walked
		}
		// sources --json and MCP sources report them until an import walks the root again.
		if err := ix.RecordDiscovery(ctx, walkedOK, failed, o.Provider == "" && o.Index == ""); err != nil {
			fmt.Fprintf(e.stderr, "ctx: warning: %v\n", err)
		}
		st.DiscoveryErrors = failed
	}
	if o.Path != "" && st.Removed == 0 && st.Imported+st.Appended+st.Unchanged+st.Failed == 0 {
		// The wrong --provider for DIR: nothing of it is a session of the provider (docs/history.md
		// "Commands"); nothing was imported.
		what := "no file of its layout"
		if o.Provider == history.Codex {
			what += " (a file directly in DIR is taken only when named rollout-*.jsonl or rollout-*.jsonl.zst, docs/history.md \"Providers and discovery\")"
		}
		if st.Foreign > 0 {
			what = fmt.Sprintf("its %d files are of another format", st.Foreign)
		}
		return usagef("--path %s holds no %s sessions: %s (nothing imported; is --provider right?)", o.Path, o.Provider, what)
	}
	if err := ix.SaveDirCache(ctx, dirs); err != nil {
		fmt.Fprintf(e.stderr, "ctx: warning: %v\n", err) // the next import lists the directories again
	}
	if o.Provider == "" && o.Index == "" {
		// The sessions teammates shared on the context branch (docs/blame.md "Sharing").
		indexShared(ctx, e, ix)
	}
	if st.Foreign > 0 {
		fmt.Fprintf(e.stderr, "ctx: warning: %d files hold no records of their provider's format: not imported (the first: %s)\n",
			st.Foreign, oneCell(firstForeign(st.Results)))
	}
	if o.JSON {
		if err := printJSON(e.stdout, st); err != nil {
			return err
		}
		return importFailed(failed, st, "their error is in results[].error")
	}
	w := e.stdout
	if o.Quiet {
		w = io.Discard
	}
	fmt.Fprintf(w, "%d sources: %d imported, %d appended, %d unchanged, %d failed; %d events added\n",
		st.Sources, st.Imported, st.Appended, st.Unchanged, st.Failed, st.Events)
	if st.Removed > 0 {
		fmt.Fprintf(w, "%d sources removed (their files or sessions are gone)\n", st.Removed)
	}
	if st.Reread > 0 {
		fmt.Fprintf(w, "%d sources read again (another file of their session lost records they hold)\n", st.Reread)
	}
	if st.Conflicts > 0 {
		fmt.Fprintf(w, "%d records conflict: another file of their session holds them with other content (the indexed text is kept; ctx status counts them)\n", st.Conflicts)
	}
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
			fmt.Fprintf(e.stderr, "ctx: warning: %s\n", oneCell(sourceErr(r))) // a file name may hold a newline
		}
		if r.Truncated {
			fmt.Fprintf(e.stderr, "ctx: warning: %s: imported only in part: %s\n", oneCell(r.Source.Path), oneCell(r.Errors[len(r.Errors)-1]))
		}
	}
	return importFailed(failed, st, "warned above")
}

// sourceErr is the error of a failed source, naming its file once (most errors begin with it).
func sourceErr(r history.SourceResult) string {
	if strings.HasPrefix(r.Err, r.Source.Path) {
		return r.Err
	}
	return r.Source.Path + ": " + r.Err
}

// importFailed is the import's error when a root could not be walked (discoveryFailed) or a source
// failed: the others were imported, and the import exits 1, as git fetch of several remotes does when one
// fails (docs/history.md "Commands"); nil when everything was read.
// where says where their errors are (the warnings above, the --json report's results).
func importFailed(failed []history.DiscoveryError, st history.ImportStats, where string) error {
	if err := discoveryFailed(failed); err != nil {
		return err
	}
	if st.Failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d sources failed (%s); the others were imported", st.Failed, st.Sources, where)
}

// discoveryFailed is the import's error when a root could not be walked (a bound hit, an unreadable
// directory): the other roots were imported, but new and grown sessions under it were not, so the import
// exits 1 (docs/history.md "Discovery"); nil when every root was walked.
func discoveryFailed(failed []history.DiscoveryError) error {
	if len(failed) == 0 {
		return nil
	}
	msgs := make([]string, len(failed))
	for i, f := range failed {
		msgs[i] = oneCell(f.Error) // it names the root, which may hold a newline
	}
	return fmt.Errorf("%d roots could not be walked, their new sessions were not imported (the other roots were): %s",
		len(failed), strings.Join(msgs, "; "))
}

// firstForeign is the path of the first "foreign" source of rs, "" when none is.
func firstForeign(rs []history.SourceResult) string {
	for _, r := range rs {
		if r.Action == "foreign" {
			return r.Source.Path
		}
	}
	return ""
}

// lessGC runs the collector less often for a history command, unless GOGC or GOMEMLIMIT say otherwise:
// GOGC 400, and a soft memory limit of limit bytes when limit > 0. It returns what restores the previous
// settings. An import (limit 160 MiB): a refresh with nothing new allocates a few tens of MB and exits,
// collecting it four times less often saves a tenth of its CPU, and a first import's heap reaches the
// limit and is collected there, about where GOGC 100 would (docs/history.md "Limits"). A search (no
// limit): it allocates a row per scored event (up to 5,000) and lives a few tens of milliseconds; the
// default target's cycles cost it about 15 % of its CPU (bench/README.md "Agent history").
func lessGC(limit int64) (restore func()) {
	normalGC()
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gc := debug.SetGCPercent(400)
	mem := debug.SetMemoryLimit(-1)
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(mem)
	}
}

// uniqueSources drops the repeats of a source found under two roots (a configured root inside a
// provider's own), keeping the first.
func uniqueSources(srcs []history.Source) []history.Source {
	seen := map[[2]string]bool{}
	out := srcs[:0]
	for _, s := range srcs {
		k := [2]string{s.Path, s.Session}
		if !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

// historySearchOptions are the arguments of ctx history search: the query (its Text the words of the
// command line joined by spaces) and where the index is.
type historySearchOptions struct {
	Query   history.Query
	Index   string
	JSON    bool
	WithCtx bool     // --provider ctx given
	Names   []string // the --provider values as given
	Cursor  string   // --cursor: the next_cursor of an earlier --json answer to the same search
}

func newHistorySearchCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "search",
		Usage:     "search the imported history: best hit per root session first",
		ArgsUsage: "QUERY",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "provider", Usage: "only `PROVIDER` (repeatable)"},
			&cli.StringFlag{Name: "scope", Value: history.ScopeAll, Usage: "content scope: all, transcript, calls, outputs"},
			&cli.StringFlag{Name: "type", Usage: "only events of `TYPE` (message, summary, tool_call, tool_output, reasoning, notice)"},
			&cli.StringFlag{Name: "since", Usage: "events at or after `TIME` (RFC 3339 or YYYY-MM-DD)"},
			&cli.StringFlag{Name: "until", Usage: "events before `TIME`"},
			&cli.StringFlag{Name: "file", Usage: "events that touched `PATH` (a prefix when it ends in /; a relative PATH is taken from the current directory)"},
			&cli.StringFlag{Name: "in-session", Usage: "only the session `ID`"},
			&cli.StringFlag{Name: "repo", Usage: "sessions whose cwd is inside `DIR`"},
			&cli.BoolFlag{Name: "primary-only", Usage: "leave out subagent sessions"},
			&cli.BoolFlag{Name: "events", Usage: "plain event hits, without grouping by root session"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "at most `N` hits (1-500)"},
			&cli.StringFlag{Name: "cursor", Usage: "the next page: `CURSOR` is pagination.next_cursor of an earlier --json answer with the same query and flags"},
			historyIndexFlag(), jsonFlag,
		},
		Action: action(e, parseHistorySearch, withHistoryErr(runHistorySearch)),
	}, "Searches the imported events for the words of QUERY (events with every word; when none has them all,\n"+
		"events with any word, and the output says so), ranked by relevance. By default the best hit of each\n"+
		"root session comes first, with how many more hits its session tree holds. Each hit prints its score,\n"+
		"time, provider, native session id, event type and event ID (for ctx history show event) and a snippet.",
		[]string{"ctx history search flaky test", "ctx history search migration --provider codex --since 2026-11-01 --scope calls",
			"ctx history search \"go test\" --file store/ --events --limit 50 --json"},
		historyExits)
}

func parseHistorySearch(c *cli.Context) (historySearchOptions, error) {
	if c.NArg() == 0 {
		return historySearchOptions{}, usagef("usage: ctx history search QUERY [flags]")
	}
	q := history.Query{
		Text: strings.Join(c.Args().Slice(), " "), Scope: c.String("scope"), EventType: history.EventType(c.String("type")),
		File: c.String("file"), SessionID: c.String("in-session"), Repo: c.String("repo"),
		PrimaryOnly: c.Bool("primary-only"), Dense: c.Bool("events"), Limit: c.Int("limit"),
	}
	if strings.TrimSpace(q.Text) == "" {
		return historySearchOptions{}, usagef("the query is empty: give the words to search for")
	}
	if n := c.Int("limit"); n < 1 || n > 500 {
		return historySearchOptions{}, usagef("--limit must be between 1 and 500")
	}
	if c.IsSet("scope") && c.IsSet("type") {
		// as the MCP tool refuses content_scope with event_type (docs/mcp.md "search")
		return historySearchOptions{}, usagef("--type conflicts with --scope: give one of them")
	}
	withCtx := false
	for _, p := range c.StringSlice("provider") {
		if p == "ctx" {
			withCtx = true
			continue
		}
		pp, ok := history.ParseProvider(p)
		if !ok {
			return historySearchOptions{}, usagef("unknown provider %q", p)
		}
		q.Providers = append(q.Providers, pp)
	}
	var err error
	if q.Since, err = parseWhen(c.String("since")); err != nil {
		return historySearchOptions{}, err
	}
	if q.Until, err = parseWhen(c.String("until")); err != nil {
		return historySearchOptions{}, err
	}
	if withCtx && q.Dense {
		return historySearchOptions{}, usagef("--events lists the index's events only: it does not take --provider ctx")
	}
	if c.IsSet("cursor") && q.Dense {
		return historySearchOptions{}, usagef("--cursor pages the grouped search: it does not take --events")
	}
	return historySearchOptions{Query: q, Index: c.String("index"), JSON: c.Bool("json"), WithCtx: withCtx,
		Names: c.StringSlice("provider"), Cursor: c.String("cursor")}, nil
}

// parseWhen reads a --since or --until value as history.ParseTimeBound does (RFC 3339 or YYYY-MM-DD, UTC
// midnight), as MCP's since/until; "" is no bound.
func parseWhen(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := history.ParseTimeBound(s)
	if err != nil {
		return time.Time{}, usagef("invalid time %q (RFC 3339 or YYYY-MM-DD)", s)
	}
	return t, nil
}

func runHistorySearch(ctx context.Context, e *env, o historySearchOptions) error {
	defer lessGC(0)()
	if !o.Query.Dense {
		if st, err := e.open(ctx); err == nil {
			return runUnifiedSearch(ctx, e, st, o)
		} else if o.WithCtx || o.Cursor != "" {
			return err
		}
	}
	q := o.Query
	ix, err := e.openHistoryRead(ctx, o.Index)
	if err != nil {
		return err
	}
	defer ix.Close()
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
	res, err := ix.Search(ctx, q)
	if errors.Is(err, history.ErrBadQuery) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(e.stdout, res)
	}
	w := e.stdout
	if res.Relaxed {
		fmt.Fprintln(w, "(no event has every word: hits match any word)")
	}
	if res.Window > 0 {
		fmt.Fprintf(w, "(more than %d events match: ranked the %d most recently imported; add words or filters to narrow)\n", res.Window, res.Window)
	}
	for _, h := range res.Hits {
		when := ""
		if !h.Event.At.IsZero() {
			when = h.Event.At.UTC().Format("2006-01-02 15:04Z") // UTC, and says so
		}
		fmt.Fprintf(w, "%s  %s  %s %s  %s  %s", searchpage.ScoreText(h.Score), when, h.Session.Provider, oneCell(h.Session.NativeID), h.Event.Type, h.Event.ID)
		if h.More > 0 {
			fmt.Fprintf(w, "  (+%d in this session tree)", h.More)
		}
		fmt.Fprintf(w, "\n    %s\n", oneCell(h.Snippet))
	}
	if len(res.Hits) == 0 {
		fmt.Fprintln(w, "no hits")
		if ss, err := ix.Sessions(ctx, "", 1); err == nil && len(ss) == 0 {
			fmt.Fprintln(e.stderr, "ctx: the history index holds no agent session yet: ctx history import reads your agents' transcripts (ctx history sources lists where)")
		}
	}
	return nil
}

func newHistoryShowCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "show",
		Usage: "print a session (show session ID) or an event (show event ID)",
		Subcommands: []*cli.Command{
			newHistoryShowSessionCmd(e),
			newHistoryShowEventCmd(e),
		},
	}, "Prints an imported session's events, or one event with the events around it.",
		[]string{"ctx history show session 3f2a9c1d", "ctx history show event 0b7c5e12-4d1a-8f3e-9a2b-6c8d0e1f2a3b --window 3"},
		historyExits)
}

// historyShowSessionOptions are the arguments of ctx history show session: the session ID (a ctx session
// id or a prefix of 8+ hex digits) and at most MaxEvents events (0: all).
type historyShowSessionOptions struct {
	ID        string
	MaxEvents int
	Index     string
	JSON      bool
}

func newHistoryShowSessionCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "session",
		ArgsUsage: "ID",
		Usage:     "print a session's complete event stream (ID: a ctx session id or a prefix of 8+ hex digits)",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "max-events", Usage: "stop after `N` events"},
			historyIndexFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print JSON lines: the session, one event per line, then the completion record"},
		},
		Action: action(e, func(c *cli.Context) (historyShowSessionOptions, error) {
			if c.NArg() != 1 {
				return historyShowSessionOptions{}, usagef("usage: ctx history show session ID")
			}
			if c.Int("max-events") < 0 {
				return historyShowSessionOptions{}, usagef("--max-events must not be negative")
			}
			return historyShowSessionOptions{ID: c.Args().First(), MaxEvents: c.Int("max-events"), Index: c.String("index"), JSON: c.Bool("json")}, nil
		}, withHistoryErr(runHistoryShowSession)),
	}, "Prints the session (its provider, native id, source file, parent and root, cwd and event count), then\n"+
		"its events in order: sequence number, time, type, role, tool and event ID, then the text (cut at 4000\n"+
		"bytes). With --json: the session, then one event a line, in full, then the completion record\n"+
		"{kind: \"completion\", complete, truncated, returned, max_events, generation, ...} (docs/history.md).",
		[]string{"ctx history show session 3f2a9c1d", "ctx history show session 3f2a9c1d --max-events 20 --json"},
		historyExits)
}

func runHistoryShowSession(ctx context.Context, e *env, o historyShowSessionOptions) error {
	ix, err := e.openHistoryRead(ctx, o.Index)
	if err != nil {
		return err
	}
	defer ix.Close()
	s, err := ix.Session(ctx, o.ID)
	if errors.Is(err, history.ErrNotFound) {
		if ev, _, eerr := ix.Event(ctx, o.ID, 0); eerr == nil {
			return usagef("%s is an event of session %s, not a session: ctx history show event %s (or ctx history show session %s)", o.ID, ev.SessionID, o.ID, ev.SessionID)
		}
	}
	if err != nil {
		return historyErr(err)
	}
	w := e.stdout
	gen, err := ix.Generation(ctx)
	if err != nil {
		return historyErr(err)
	}
	if o.JSON {
		if err := printJSONLine(w, s); err != nil {
			return err
		}
	} else {
		// Every field from a transcript on one line (oneCell): a newline in a Codex session_meta.id or cwd
		// forged lines here.
		fmt.Fprintf(w, "session %s\nprovider %s, native id %s\nsource %s\n", s.ID, s.Provider, oneCell(s.NativeID), oneCell(s.SourcePath))
		if s.ParentID != "" {
			fmt.Fprintf(w, "parent %s, root %s\n", s.ParentID, s.RootID)
		}
		if s.CWD != "" {
			fmt.Fprintf(w, "cwd %s\n", oneCell(s.CWD))
		}
		fmt.Fprintf(w, "%d events\n\n", s.EventCount)
	}
	var after int64
	shown := 0
	for {
		page := 500
		if o.MaxEvents > 0 {
			page = min(page, o.MaxEvents-shown)
			if page <= 0 {
				break
			}
		}
		evs, err := ix.Events(ctx, s.ID, after, page)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if o.JSON {
				if err := printJSONLine(w, eventOf(ev)); err != nil {
					return err
				}
			} else {
				printEvent(w, ev)
			}
			after = ev.Seq
		}
		shown += len(evs)
		if len(evs) < page {
			break
		}
	}
	if !o.JSON {
		return nil
	}
	// The stream ends with its completion record (docs/history.md "CLI"): whether every event was
	// written, or --max-events stopped it with more to come.
	truncated := false
	if o.MaxEvents > 0 && shown >= o.MaxEvents {
		rest, err := ix.Events(ctx, s.ID, after, 1)
		if err != nil {
			return err
		}
		truncated = len(rest) > 0
	}
	c := streamCompletion{Kind: "completion", Stream: "session_events", Complete: !truncated, Truncated: truncated,
		Returned: shown, Generation: gen, CtxSessionID: s.ID}
	if o.MaxEvents > 0 {
		c.MaxEvents = &o.MaxEvents
	}
	return printJSONLine(w, c)
}

// streamCompletion is the last line of a JSON Lines stream of `ctx history show session --json` and
// `ctx history list events --json` (docs/history.md "CLI"): the stream's completion metadata instead of a
// cursor. Kind is always "completion", which no other line of the streams has.
type streamCompletion struct {
	Kind   string `json:"kind"`
	Stream string `json:"stream"` // session_events, events
	// Complete is true when every selected event was written; Truncated when --max-events (show session)
	// or --limit (list events) stopped the stream with more selected events left.
	Complete  bool `json:"complete"`
	Truncated bool `json:"truncated"`
	Returned  int  `json:"returned"`   // event lines written
	MaxEvents *int `json:"max_events"` // show session's --max-events (null: none)
	Limit     *int `json:"limit"`      // list events' --limit (null: none)
	// Generation is the index generation when the stream started (an import during the stream can add
	// events to it: they are written when they fall after the stream's position).
	Generation   int64  `json:"generation"`
	CtxSessionID string `json:"ctx_session_id,omitempty"`
}

// historyShowEventOptions are the arguments of ctx history show event: the event ID and how many events
// before and after it to print.
type historyShowEventOptions struct {
	ID     string
	Window int
	Index  string
	JSON   bool
}

func newHistoryShowEventCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "event",
		ArgsUsage: "ID",
		Usage:     "print an event, with --window N events around it",
		Flags:     []cli.Flag{&cli.IntFlag{Name: "window", Usage: "`N` events before and after (0-50)"}, historyIndexFlag(), jsonFlag},
		Action: action(e, func(c *cli.Context) (historyShowEventOptions, error) {
			if c.NArg() != 1 {
				return historyShowEventOptions{}, usagef("usage: ctx history show event ID [--window N]")
			}
			if w := c.Int("window"); w < 0 || w > 50 {
				// the MCP tool's bound (show_event's window, docs/mcp.md); -1 was taken as 0
				return historyShowEventOptions{}, usagef("--window must be between 0 and 50")
			}
			return historyShowEventOptions{ID: c.Args().First(), Window: c.Int("window"), Index: c.String("index"), JSON: c.Bool("json")}, nil
		}, withHistoryErr(runHistoryShowEvent)),
	}, "Prints the event ID (as ctx history search names it), with --window N the N events before and after it\n"+
		"in its session, the event itself marked with \">\".",
		[]string{"ctx history show event 0b7c5e12-4d1a-8f3e-9a2b-6c8d0e1f2a3b", "ctx history show event 0b7c5e12-4d1a-8f3e-9a2b-6c8d0e1f2a3b --window 3 --json"},
		historyExits)
}

func runHistoryShowEvent(ctx context.Context, e *env, o historyShowEventOptions) error {
	ix, err := e.openHistoryRead(ctx, o.Index)
	if err != nil {
		return err
	}
	defer ix.Close()
	ev, around, err := ix.Event(ctx, o.ID, o.Window)
	if err != nil {
		return historyErr(err)
	}
	if o.JSON {
		window := make([]eventJSON, len(around))
		for i, x := range around {
			window[i] = eventOf(x)
		}
		return printJSON(e.stdout, map[string]any{"event": eventOf(ev), "window": window})
	}
	if len(around) == 0 {
		around = []history.Event{ev}
	}
	for _, x := range around {
		if x.ID == ev.ID {
			fmt.Fprint(e.stdout, "> ")
		}
		printEvent(e.stdout, x)
	}
	return nil
}

// absFile is the --file filter as the index holds paths: a relative PATH is taken from the directory ctx
// runs in (-C, else the current one), as the agents' tools record the files they touch with absolute
// paths; a trailing "/" (a folder prefix) is kept. "" stays "".
func (e *env) absFile(p string) (string, error) {
	if p == "" || history.IsAbsPath(p) { // a Windows path is absolute too (docs/history.md "Windows paths")
		return p, nil
	}
	wd := e.dir // a path filter names files, not the repository: -C need not exist here
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(filepath.Join(wd, p))
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(p, "/") {
		abs += "/"
	}
	return abs, nil
}

// absRepo makes a --repo DIR given relative to the directory ctx runs in (-C, else the current
// directory) absolute and clean: the index compares the sessions' absolute cwds (--repo .
// matched nothing).
func (e *env) absRepo(p string) (string, error) {
	if p == "" || history.IsAbsPath(p) {
		return p, nil
	}
	abs, err := e.absFile(strings.TrimRight(p, "/"))
	if err != nil {
		return "", err
	}
	return filepath.Clean(abs), nil
}

// openHistory opens the index in dir, else (dir "") the one of the repository ctx runs in (-C, else the
// current directory). It finds the git common dir with store.CommonDir, which writes nothing to the
// repository (store.Open could).
func (e *env) openHistory(ctx context.Context, dir string) (*history.Index, error) {
	dir, err := e.historyDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	return history.Open(ctx, dir)
}

// openHistoryRead is openHistory for a command that reads the index and exits (search, show, list):
// history.OpenOneShot maps the whole index, which its reads page in with fewer system calls and
// page faults (bench/README.md "Seventh round"). An import keeps openHistory's bounded map.
func (e *env) openHistoryRead(ctx context.Context, dir string) (*history.Index, error) {
	dir, err := e.historyDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	return history.OpenOneShot(ctx, dir)
}

// historyDir is dir, else (dir "") the index directory of the repository ctx runs in.
func (e *env) historyDir(ctx context.Context, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	wd, err := e.workDir()
	if err != nil {
		return "", err
	}
	common, err := store.CommonDir(ctx, wd)
	if err != nil {
		return "", err
	}
	return history.DefaultDir(common), nil
}

// withHistoryErr is run with its error through historyErr: the history commands' errors say what they
// mean (not found, ambiguous, a damaged index and its remedy) whichever step returned them.
func withHistoryErr[O any](run func(context.Context, *env, O) error) func(context.Context, *env, O) error {
	return func(ctx context.Context, e *env, o O) error { return historyErr(run(ctx, e, o)) }
}

// historyErr maps the index's errors to ctx's exit codes: an id that matches nothing is not found (3, as
// for entries), a prefix that matches several or an id of no ctx id's form is a usage error (2: give more
// of it, or an id).
func historyErr(err error) error {
	switch {
	case errors.Is(err, history.ErrAmbiguous), errors.Is(err, history.ErrInvalidID):
		return usagef("%v", err)
	case errors.Is(err, history.ErrNotFound):
		return &store.NotFoundError{Msg: err.Error()}
	case errors.Is(err, history.ErrBadQuery):
		return usagef("%v", err)
	case history.IsDamaged(err):
		if strings.Contains(err.Error(), "the agent history index is damaged") {
			return err
		}
		return fmt.Errorf("%w: the agent history index is damaged; it only caches the transcripts: ctx history import rebuilds it (and ctx history import --provider P --path DIR the roots you imported with --path)", err)
	}
	return err
}

func printEvent(w io.Writer, ev history.Event) {
	when := "-"
	if !ev.At.IsZero() {
		when = ev.At.Format(time.RFC3339)
	}
	head := string(ev.Type)
	if ev.Role != "" {
		head += "/" + ev.Role
	}
	if ev.Tool != nil && ev.Tool.Name != "" {
		head += " " + ev.Tool.Name
	}
	fmt.Fprintf(w, "#%d %s %s %s\n", ev.Seq, when, oneCell(head), ev.ID)
	text := ev.Text
	if len(text) > 4000 {
		text = text[:4000] + "…"
	}
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
}

// eventJSON is an event as the CLI's JSON gives it (show session, show event, list events): its `at` in
// RFC 3339, UTC, with milliseconds, as MCP's tools give it and as the session's started_at and ended_at
// are (docs/history.md "Events"); absent when the event has no time.
type eventJSON struct {
	history.Event
	At string `json:"at,omitempty"` // over Event.At
}

func eventOf(e history.Event) eventJSON {
	out := eventJSON{Event: e}
	if !e.At.IsZero() {
		out.At = e.At.UTC().Format(searchpage.AtFormat)
	}
	return out
}

func printJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// progressBar returns a progress callback that draws a one-line bar on term, the standard error when it
// is a terminal (nil otherwise), when the import is long enough to need one (at least 200 sources), else
// nil. It writes to the terminal directly: the sanitized writer would escape the carriage return, and the
// text is ctx's own.
func progressBar(term *os.File, total int) func(done, total int) {
	if term == nil || total < 200 {
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
		fmt.Fprintf(term, "\rimporting %s%s %3d%% (%d/%d sources)", strings.Repeat("#", n), strings.Repeat(".", width-n), pct, done, total)
		if done == total {
			fmt.Fprintln(term)
		}
	}
}
