package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ctx-dev/ctx/adapters"
	"github.com/ctx-dev/ctx/importer"
	ctxmcp "github.com/ctx-dev/ctx/mcp"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func init() {
	registry = append(registry, adaptersCommand)
	afterPull = refreshAdapters
	agentHooks = runAgentHooks
	statusExtra = adaptersStatusLines
}

// adaptersStatusLines prints, in ctx status, each enabled client whose files are not in step, naming
// the files a refresh left because git tracks them.
func adaptersStatusLines(c *cli.Context, s *store.Store) {
	opts, err := adapters.OptionsFor(c.Context, s)
	if err != nil {
		return
	}
	rec, err := adapters.ReadRecord(opts)
	if err != nil || len(rec.Enabled) == 0 {
		return
	}
	content, err := adapters.Load(c.Context, s)
	if err != nil {
		return
	}
	st, err := adapters.Status(c.Context, opts, content, rec.Enabled...)
	if err != nil {
		fmt.Fprintf(c.App.Writer, "adapters: %v\n", err)
		return
	}
	for _, cs := range st {
		if cs.State == adapters.InStep {
			continue
		}
		var tracked []string
		for _, f := range cs.Files {
			if f.Tracked && f.State != adapters.InStep {
				tracked = append(tracked, f.Path)
			}
		}
		line := fmt.Sprintf("adapters: %s: %s (ctx adapters status)", cs.Client, cs.State)
		if len(tracked) > 0 && !rec.TrackedOK {
			line += fmt.Sprintf("; left by refresh, git tracks %s: ctx adapters export, or ctx adapters enable %s --tracked ok", strings.Join(tracked, ", "), cs.Client)
		}
		fmt.Fprintln(c.App.Writer, line)
	}
}

// adaptersCommand is `ctx adapters`: the public context written where each agent already looks (its
// instruction file's managed block, Cursor rules, skills folders), and read back (docs/adapters.md).
func adaptersCommand() *cli.Command {
	clientFlag := &cli.StringSliceFlag{Name: "client", Usage: "only `CLIENT` (repeatable; default: every client): " + strings.Join(adapters.ClientNames(), ", ")}
	dryRun := &cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print what would change (a diff), write nothing"}
	return &cli.Command{
		Name:  "adapters",
		Usage: "keep agents' own files (CLAUDE.md, AGENTS.md, GEMINI.md, Cursor rules, skills folders) in step with the context branch",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "the clients, the files ctx writes for each, and which are enabled for refresh",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usagef("usage: ctx adapters list [--json]")
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					opts, err := adapters.OptionsFor(c.Context, s)
					if err != nil {
						return err
					}
					rec, err := adapters.ReadRecord(opts)
					if err != nil {
						return err
					}
					type row struct {
						adapters.Client
						Enabled bool `json:"enabled"`
					}
					var rows []row
					for _, cl := range adapters.Clients {
						rows = append(rows, row{Client: cl, Enabled: slices.Contains(rec.Enabled, cl.Name)})
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, rows)
					}
					tw := table(c.App.Writer)
					fmt.Fprintln(tw, "CLIENT\tENABLED\tINSTRUCTIONS\tRULES\tSKILLS")
					for _, r := range rows {
						fmt.Fprintf(tw, "%s\t%t\t%s\t%s\t%s\n", r.Name, r.Enabled, dash(r.Instructions), dash(r.Rules), dash(r.Skills))
					}
					return tw.Flush()
				},
			},
			{
				Name:  "export",
				Usage: "write the public context into the clients' files (never private or ephemeral entries; never a file ctx did not write)",
				Flags: []cli.Flag{clientFlag, dryRun,
					&cli.IntFlag{Name: "max-bytes", Usage: "bound each managed block and Cursor rule to `N` bytes (default 16384, at least 2048)"}},
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usagef("usage: ctx adapters export [--client CLIENT]... [--dry-run] [--max-bytes N]")
					}
					_, opts, c2, err := adaptersSetup(c)
					if err != nil {
						return err
					}
					opts.MaxBlock = c.Int("max-bytes")
					pl, err := adapters.PlanExport(c.Context, opts, c2, c.StringSlice("client")...)
					if err != nil {
						return adapterUsage(err)
					}
					return applyOrShow(c, pl)
				},
			},
			{
				Name:  "remove",
				Usage: "take out everything ctx wrote for the clients (the managed block, its rules and skill files), giving the files back as they were; never a file of the user's",
				Flags: []cli.Flag{clientFlag, dryRun},
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usagef("usage: ctx adapters remove [--client CLIENT]... [--dry-run]")
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					opts, err := adapters.OptionsFor(c.Context, s)
					if err != nil {
						return err
					}
					pl, err := adapters.PlanRemove(c.Context, opts, c.StringSlice("client")...)
					if err != nil {
						return adapterUsage(err)
					}
					return applyOrShow(c, pl)
				},
			},
			{
				Name:  "import",
				Usage: "import the clients' own files (never ctx's managed block, its rules, the skills it wrote, or .context/)",
				Flags: []cli.Flag{clientFlag, dryRun, jsonFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usagef("usage: ctx adapters import [--client CLIENT]... [--dry-run]")
					}
					s, opts, _, err := adaptersSetup(c)
					if err != nil {
						return err
					}
					files, err := s.Repo.WorkTreeFiles(c.Context)
					if err != nil {
						fmt.Fprintf(c.App.ErrWriter, "ctx: warning: %v: files git ignores are not recognised\n", err)
						files = nil
					}
					plan, err := adapters.ImportPlan(c.Context, opts, files, c.StringSlice("client")...)
					if err != nil {
						return adapterUsage(err)
					}
					printPlanWarnings(c.App.ErrWriter, plan)
					if c.Bool("dry-run") {
						if c.Bool("json") {
							return printJSON(c.App.Writer, plan.Items)
						}
						for _, it := range plan.Items {
							fmt.Fprintf(c.App.Writer, "%s\t%s\t<- %s\n", it.Kind, planName(it), portablePath(opts.Root, it.Source))
						}
						fmt.Fprintf(c.App.Writer, "dry run: %s, nothing written\n", plural(len(plan.Items), "item", "items"))
						return nil
					}
					if plan, err = checkSecrets(c, plan); err != nil {
						return err
					}
					if len(plan.Items) == 0 {
						fmt.Fprintln(c.App.Writer, "nothing to import")
						return nil
					}
					op := store.Op{Name: "import", Key: "adapters", Summary: fmt.Sprintf("import %d item(s) from the agents' files", len(plan.Items))}
					res, err := s.ApplyReport(c.Context, op, importer.Batch(plan, store.Public))
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, map[string]any{"items": len(plan.Items), "results": res.Items, "changed": res.Committed != nil && res.Changed()})
					}
					printApplied(c.App.Writer, c.App.ErrWriter, plan, res)
					return nil
				},
			},
			{
				Name:  "status",
				Usage: "per client: in-step, stale, missing or hand-edited, and each file's state",
				Flags: []cli.Flag{clientFlag, jsonFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usagef("usage: ctx adapters status [--client CLIENT]... [--json]")
					}
					_, opts, c2, err := adaptersSetup(c)
					if err != nil {
						return err
					}
					st, err := adapters.Status(c.Context, opts, c2, c.StringSlice("client")...)
					if err != nil {
						return adapterUsage(err)
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, st)
					}
					for _, cs := range st {
						on := ""
						if cs.Enabled {
							on = " (enabled)"
						}
						fmt.Fprintf(c.App.Writer, "%s%s: %s\n", cs.Client, on, cs.State)
						for _, f := range cs.Files {
							extra := ""
							if f.Tracked && f.State != adapters.InStep {
								extra = " (tracked by git: a refresh leaves it; ctx adapters export, or enable --tracked ok)"
							}
							if f.Detail != "" {
								extra += ": " + f.Detail
							}
							fmt.Fprintf(c.App.Writer, "  %-11s %s%s\n", f.State, f.Path, extra)
						}
					}
					return nil
				},
			},
			{
				Name:  "brief",
				Usage: "print the brief public context (the onboarding text, bounded): what the agents' SessionStart hook shows",
				Flags: []cli.Flag{&cli.IntFlag{Name: "max-bytes", Value: adapters.DefaultMaxBlock, Usage: "bound the text to `N` bytes"},
					&cli.StringFlag{Name: "format", Value: "text", Usage: "text, or gemini: the JSON Gemini CLI's SessionStart hook reads ({\"hookSpecificOutput\":{\"additionalContext\":...}})"}},
				Action: func(c *cli.Context) error {
					format := c.String("format")
					if c.NArg() > 0 || c.Int("max-bytes") < 1024 || format != "text" && format != "gemini" {
						return usagef("usage: ctx adapters brief [--max-bytes N (at least 1024)] [--format text|gemini]")
					}
					text := ""
					s, err := openInit(c)
					switch {
					case errors.Is(err, store.ErrNotInitialized):
						// No context here: an agent's start must not fail for it.
					case err != nil:
						return err
					default:
						if _, text, err = ctxmcp.Onboarding(c.Context, s, c.Int("max-bytes")); err != nil {
							return err
						}
					}
					if format == "gemini" {
						out := map[string]any{}
						if text != "" {
							out["hookSpecificOutput"] = map[string]any{"additionalContext": text}
						}
						return printJSON(c.App.Writer, out)
					}
					_, err = fmt.Fprint(c.App.Writer, text)
					return err
				},
			},
			agentHooksCommand(),
			{
				Name:      "enable",
				Usage:     "refresh these clients' files after ctx pull and in git's checkout and merge hooks (this work tree only)",
				ArgsUsage: "CLIENT...",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "tracked", Usage: "`ok`: a refresh may change files git tracks; no: it leaves them (default)"}},
				Action: func(c *cli.Context) error {
					return setAdapters(c, true)
				},
			},
			{
				Name:      "disable",
				Usage:     "stop refreshing these clients' files (the files stay; ctx adapters status still reports them)",
				ArgsUsage: "CLIENT...",
				Action: func(c *cli.Context) error {
					return setAdapters(c, false)
				},
			},
		},
	}
}

// adaptersSetup opens the store and reads its public context and the work tree's options.
func adaptersSetup(c *cli.Context) (*store.Store, adapters.Options, *adapters.Content, error) {
	s, err := openInit(c)
	if err != nil {
		return nil, adapters.Options{}, nil, err
	}
	opts, err := adapters.OptionsFor(c.Context, s)
	if err != nil {
		return nil, adapters.Options{}, nil, err
	}
	content, err := adapters.Load(c.Context, s)
	if err != nil {
		return nil, adapters.Options{}, nil, err
	}
	return s, opts, content, nil
}

// adapterUsage makes an unknown client or a bad bound a usage error.
func adapterUsage(err error) error {
	if err != nil && (strings.HasPrefix(err.Error(), "unknown client") || strings.Contains(err.Error(), "block bound")) {
		return usagef("%v", err)
	}
	return err
}

func setAdapters(c *cli.Context, on bool) error {
	if c.NArg() == 0 {
		return usagef("usage: ctx adapters %s CLIENT... (clients: %s)", c.Command.Name, strings.Join(adapters.ClientNames(), ", "))
	}
	tracked := c.String("tracked")
	if tracked != "" && tracked != "ok" && tracked != "no" {
		return usagef("--tracked takes ok or no")
	}
	s, err := openInit(c)
	if err != nil {
		return err
	}
	opts, err := adapters.OptionsFor(c.Context, s)
	if err != nil {
		return err
	}
	rec, err := adapters.SetEnabled(opts, on, c.Args().Slice()...)
	if err != nil {
		return adapterUsage(err)
	}
	if tracked != "" {
		if err := adapters.SetTrackedOK(opts, tracked == "ok"); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.App.Writer, "enabled: %s\n", dash(strings.Join(rec.Enabled, ", ")))
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// refreshAdapters re-exports the clients enabled in s's work tree (after ctx pull, and in git's hooks).
// Its problems are warnings: the pull or the git command succeeded.
func refreshAdapters(ctx context.Context, c *cli.Context, s *store.Store) {
	opts, err := adapters.OptionsFor(ctx, s)
	if err != nil {
		return // a bare repository: nothing to refresh
	}
	pl, err := adapters.Refresh(ctx, s, opts)
	if pl != nil {
		for _, ch := range pl.Changes {
			switch {
			case ch.Skipped:
				fmt.Fprintf(c.App.ErrWriter, "ctx: adapters: %s is tracked by git: left as it is (ctx adapters status; ctx adapters enable --tracked ok)\n", ch.Path)
			case ch.Action != adapters.Unchanged:
				fmt.Fprintf(c.App.ErrWriter, "ctx: adapters: %s %s\n", ch.Action, ch.Path)
			}
		}
	}
	if err != nil && !errors.Is(err, store.ErrNotInitialized) {
		fmt.Fprintf(c.App.ErrWriter, "ctx: warning: adapters refresh: %v\n", err)
	}
}

// cleanAdapters drops from a `ctx import` plan what ctx adapters export wrote (adapters.Clean).
func cleanAdapters(c *cli.Context, s *store.Store, plan importer.Plan) (importer.Plan, error) {
	opts, err := adapters.OptionsFor(c.Context, s)
	if err != nil {
		return plan, nil // a bare repository: no work tree, so no export of ctx's there
	}
	return adapters.Clean(opts, plan)
}

// agentHooksCommand is `ctx adapters hooks install|remove|status`: ctx's SessionStart hook in an agent's
// settings file (docs/adapters.md "Agent hooks"). `ctx integrations install hooks` runs the same.
func agentHooksCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "client", Value: "claude-code", Usage: "client `NAME`: claude-code or gemini"},
		&cli.StringFlag{Name: "scope", Usage: "claude-code: local (.claude/settings.local.json, this clone; the default) or project (.claude/settings.json, shared); gemini: project (.gemini/settings.json)"},
	}
	verb := func(name, usage string) *cli.Command {
		return &cli.Command{Name: name, Usage: usage, Flags: flags, Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("usage: ctx adapters hooks %s [--client claude-code|gemini] [--scope local|project]", name)
			}
			return runAgentHooks(c, name)
		}}
	}
	return &cli.Command{
		Name:  "hooks",
		Usage: "the agents' own session hooks: a SessionStart hook printing the brief public context (keeps the user's hooks; remove restores the file)",
		Subcommands: []*cli.Command{
			verb("install", "add ctx's SessionStart hook to the client's settings file"),
			verb("remove", "remove it (the file byte for byte as before, while nobody changed it since)"),
			verb("status", "say whether it is installed"),
		},
	}
}

// runAgentHooks runs install, remove or status of ctx's agent hook for the flags of c.
func runAgentHooks(c *cli.Context, verb string) error {
	s, err := open(c)
	if err != nil {
		return err
	}
	opts, err := adapters.OptionsFor(c.Context, s)
	if err != nil {
		return err
	}
	client, scope := c.String("client"), adapters.HookScope(c.String("scope"))
	if cs := c.StringSlice("client"); len(cs) == 1 {
		client = cs[0] // ctx integrations ... hooks: --client is a list there
	} else if len(cs) > 1 {
		return usagef("agent hooks: one --client at a time")
	}
	if client == "" {
		client = "claude-code"
	}
	var p string
	var act adapters.HookAction
	switch verb {
	case "install":
		p, act, err = adapters.InstallHooks(opts, client, scope)
	case "remove":
		p, act, err = adapters.RemoveHooks(opts, client, scope)
	default:
		p, act, err = adapters.HookStatus(opts, client, scope)
	}
	if err != nil {
		if strings.Contains(err.Error(), "unknown scope") || strings.Contains(err.Error(), "no documented session hooks") {
			return usagef("%v", err)
		}
		return err
	}
	fmt.Fprintf(c.App.Writer, "%-12s %-10s %s\n", client, act, p)
	return nil
}

// applyOrShow prints a plan's diff (--dry-run) or applies it and lists what it wrote.
func applyOrShow(c *cli.Context, pl *adapters.Plan) error {
	if c.Bool("dry-run") {
		fmt.Fprint(c.App.Writer, pl.Diff())
		for _, p := range pl.Problems {
			fmt.Fprintf(c.App.ErrWriter, "ctx: %v\n", p)
		}
		fmt.Fprintf(c.App.Writer, "dry run: %s, nothing written\n", plural(len(pl.Pending()), "file would change", "files would change"))
		return nil
	}
	err := pl.Apply(c.Context)
	for _, ch := range pl.Pending() {
		fmt.Fprintf(c.App.Writer, "%s %s\n", ch.Action, ch.Path)
	}
	if len(pl.Pending()) == 0 && err == nil {
		fmt.Fprintln(c.App.Writer, "nothing to change")
	}
	return err
}
