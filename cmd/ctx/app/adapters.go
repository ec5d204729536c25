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

// newAdaptersCmd is `ctx adapters`: the public context written where each agent already looks (its
// instruction file's managed block, Cursor rules, skills folders, its session hook), and read back
// (docs/adapters.md).
func newAdaptersCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "adapters",
		Usage: "keep agents' own files (CLAUDE.md, AGENTS.md, GEMINI.md, Cursor rules, skills folders) in step with the context branch",
		Subcommands: []*cli.Command{
			newAdaptersListCmd(e),
			newAdaptersExportCmd(e),
			newAdaptersRemoveCmd(e),
			newAdaptersImportCmd(e),
			newAdaptersStatusCmd(e),
			newAdaptersBriefCmd(e),
			newAgentHooksCmd(e),
			newAdaptersEnableCmd(e, true),
			newAdaptersEnableCmd(e, false),
		},
	}, "Writes the public context into the files coding agents read by themselves: a managed block in their\n"+
		"instruction file (CLAUDE.md, AGENTS.md, GEMINI.md, .github/copilot-instructions.md), Cursor rules and\n"+
		"skills folders; never private or ephemeral entries, never a file ctx did not write. The clients\n"+
		"enabled here are refreshed after ctx pull and in git's checkout and merge hooks. See docs/adapters.md.",
		[]string{"ctx adapters export --client claude-code --dry-run", "ctx adapters enable claude-code", "ctx adapters status"},
		adaptersExits)
}

// adaptersExits are the exit codes of the adapters commands that read the store.
var adaptersExits = []exit{{ExitUsage, "usage error, or an unknown client"}, {ExitNoStore, ""}}

// clientFlag is the --client of the adapters commands.
func clientFlag() *cli.StringSliceFlag {
	return &cli.StringSliceFlag{Name: "client", Usage: "only `CLIENT` (repeatable; default: every client): " + strings.Join(adapters.ClientNames(), ", ")}
}

// dryRunFlag is the --dry-run of the adapters commands.
func dryRunFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print what would change (a diff), write nothing"}
}

// noArgs is a parse step: a usage error with usage when the command line has arguments.
func noArgs(c *cli.Context, usage string) error {
	if c.NArg() > 0 {
		return usagef("usage: %s", usage)
	}
	return nil
}

// adaptersListOptions are the flags of ctx adapters list.
type adaptersListOptions struct{ JSON bool }

func newAdaptersListCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "list",
		Usage: "the clients, the files ctx writes for each, and which are enabled for refresh",
		Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (adaptersListOptions, error) {
			return adaptersListOptions{JSON: c.Bool("json")}, noArgs(c, "ctx adapters list [--json]")
		}, runAdaptersList),
	}, "Lists each client ctx writes files for: its instruction file, its Cursor rules folder, its skills\n"+
		"folder, and whether this work tree refreshes it (ctx adapters enable).",
		[]string{"ctx adapters list", "ctx adapters list --json"},
		exits(ExitUsage, ExitNoStore))
}

func runAdaptersList(ctx context.Context, e *env, o adaptersListOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	opts, err := adapters.OptionsFor(ctx, s)
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
	if o.JSON {
		return printJSON(e.stdout, rows)
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "CLIENT\tENABLED\tINSTRUCTIONS\tRULES\tSKILLS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%t\t%s\t%s\t%s\n", r.Name, r.Enabled, dash(r.Instructions), dash(r.Rules), dash(r.Skills))
	}
	return tw.Flush()
}

// adaptersExportOptions are the flags of ctx adapters export.
type adaptersExportOptions struct {
	Clients  []string // none: every client
	DryRun   bool
	MaxBytes int // 0: adapters.DefaultMaxBlock
}

func newAdaptersExportCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "export",
		Usage: "write the public context into the clients' files (never private or ephemeral entries; never a file ctx did not write)",
		Flags: []cli.Flag{clientFlag(), dryRunFlag(),
			&cli.IntFlag{Name: "max-bytes", Usage: "bound each managed block and Cursor rule to `N` bytes (at least 2048)", DefaultText: "16384"}},
		Action: action(e, func(c *cli.Context) (adaptersExportOptions, error) {
			return adaptersExportOptions{Clients: c.StringSlice("client"), DryRun: c.Bool("dry-run"), MaxBytes: c.Int("max-bytes")},
				noArgs(c, "ctx adapters export [--client CLIENT]... [--dry-run] [--max-bytes N]")
		}, runAdaptersExport),
	}, "Writes the public context into each client's files: the managed block of its instruction file (the\n"+
		"user's text around it kept), Cursor rules and skill folders. A file ctx did not write, or one the user\n"+
		"changed since, is left as it is and reported. --dry-run prints the diff and writes nothing.",
		[]string{"ctx adapters export --dry-run", "ctx adapters export --client claude-code --client cursor", "ctx adapters export --max-bytes 8192"},
		[]exit{{ExitUsage, "usage error, an unknown client, or a bound below 2048"}, {ExitNoStore, ""},
			{ExitFailure, "failure, or files left as they are (edited by hand, not written by ctx)"}})
}

func runAdaptersExport(ctx context.Context, e *env, o adaptersExportOptions) error {
	_, opts, content, err := adaptersSetup(ctx, e)
	if err != nil {
		return err
	}
	opts.MaxBlock = o.MaxBytes
	pl, err := adapters.PlanExport(ctx, opts, content, o.Clients...)
	if err != nil {
		return err
	}
	return applyOrShow(ctx, e, pl, o.DryRun)
}

// adaptersRemoveOptions are the flags of ctx adapters remove.
type adaptersRemoveOptions struct {
	Clients []string // none: every client
	DryRun  bool
}

func newAdaptersRemoveCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "remove",
		Usage: "take out everything ctx wrote for the clients (the managed block, its rules and skill files), giving the files back as they were; never a file of the user's",
		Flags: []cli.Flag{clientFlag(), dryRunFlag()},
		Action: action(e, func(c *cli.Context) (adaptersRemoveOptions, error) {
			return adaptersRemoveOptions{Clients: c.StringSlice("client"), DryRun: c.Bool("dry-run")},
				noArgs(c, "ctx adapters remove [--client CLIENT]... [--dry-run]")
		}, runAdaptersRemove),
	}, "Takes the managed block out of each client's instruction file (deleting a file ctx created when\n"+
		"nothing else is left) and deletes ctx's Cursor rules and skill files, while they are as ctx wrote\n"+
		"them: after an export, a remove gives the work tree back byte for byte.",
		[]string{"ctx adapters remove --dry-run", "ctx adapters remove --client cursor"},
		[]exit{{ExitUsage, "usage error, or an unknown client"}, {ExitNoStore, ""},
			{ExitFailure, "failure, or files left as they are (changed since ctx wrote them)"}})
}

func runAdaptersRemove(ctx context.Context, e *env, o adaptersRemoveOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	opts, err := adapters.OptionsFor(ctx, s)
	if err != nil {
		return err
	}
	pl, err := adapters.PlanRemove(ctx, opts, o.Clients...)
	if err != nil {
		return err
	}
	return applyOrShow(ctx, e, pl, o.DryRun)
}

// adaptersImportOptions are the flags of ctx adapters import.
type adaptersImportOptions struct {
	Clients     []string // none: every client
	DryRun      bool
	JSON        bool
	AllowSecret bool // the global --allow-secret: import files named like secrets without asking
}

func newAdaptersImportCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "import",
		Usage: "import the clients' own files (never ctx's managed block, its rules, the skills it wrote, or .context/)",
		Flags: []cli.Flag{clientFlag(), dryRunFlag(), jsonFlag},
		Action: action(e, func(c *cli.Context) (adaptersImportOptions, error) {
			return adaptersImportOptions{Clients: c.StringSlice("client"), DryRun: c.Bool("dry-run"), JSON: c.Bool("json"),
				AllowSecret: c.Bool("allow-secret")}, noArgs(c, "ctx adapters import [--client CLIENT]... [--dry-run]")
		}, runAdaptersImport),
	}, "Imports, as public entries in one commit, what the clients' own files hold: their instruction files,\n"+
		"Cursor rules and skills folders, without ctx's managed block, its rules and the skills it wrote, so\n"+
		"an export followed by an import changes nothing.",
		[]string{"ctx adapters import --dry-run", "ctx adapters import --client claude-code --json"},
		[]exit{{ExitUsage, "usage error, an unknown client, or files named like secrets refused"}, {ExitNoStore, ""}})
}

func runAdaptersImport(ctx context.Context, e *env, o adaptersImportOptions) error {
	s, opts, _, err := adaptersSetup(ctx, e)
	if err != nil {
		return err
	}
	files, err := s.WorkTreeFiles(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "ctx: warning: %v: files git ignores are not recognised\n", err)
		files = nil
	}
	plan, err := adapters.ImportPlan(ctx, opts, files, o.Clients...)
	if err != nil {
		return err
	}
	printPlanWarnings(e.stderr, plan)
	if o.DryRun {
		if o.JSON {
			return printJSON(e.stdout, plan.Items)
		}
		for _, it := range plan.Items {
			fmt.Fprintf(e.stdout, "%s\t%s\t<- %s\n", it.Kind, planName(it), portablePath(opts.Root, it.Source))
		}
		fmt.Fprintf(e.stdout, "dry run: %s, nothing written\n", plural(len(plan.Items), "item", "items"))
		return nil
	}
	if plan, err = checkSecrets(e, importOptions{AllowSecret: o.AllowSecret}, plan); err != nil {
		return err
	}
	if len(plan.Items) == 0 {
		fmt.Fprintln(e.stdout, "nothing to import")
		return nil
	}
	op := store.Op{Name: "import", Key: "adapters", Summary: fmt.Sprintf("import %d item(s) from the agents' files", len(plan.Items))}
	res, err := s.ApplyReport(ctx, op, importer.Batch(plan, store.Public))
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(e.stdout, map[string]any{"items": len(plan.Items), "results": res.Items, "changed": res.Committed != nil && res.Changed()})
	}
	printApplied(e.stdout, e.stderr, plan, res)
	return nil
}

// adaptersStatusOptions are the flags of ctx adapters status.
type adaptersStatusOptions struct {
	Clients []string // none: every client
	JSON    bool
}

func newAdaptersStatusCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "status",
		Usage: "per client: in-step, stale, missing or hand-edited, and each file's state",
		Flags: []cli.Flag{clientFlag(), jsonFlag},
		Action: action(e, func(c *cli.Context) (adaptersStatusOptions, error) {
			return adaptersStatusOptions{Clients: c.StringSlice("client"), JSON: c.Bool("json")},
				noArgs(c, "ctx adapters status [--client CLIENT]... [--json]")
		}, runAdaptersStatus),
	}, "Compares each client's files with what an export would write (writing nothing) and says, per client\n"+
		"and per file, whether it is in step, stale, missing or edited by hand, and which files git tracks.",
		[]string{"ctx adapters status", "ctx adapters status --client claude-code --json"},
		adaptersExits)
}

func runAdaptersStatus(ctx context.Context, e *env, o adaptersStatusOptions) error {
	_, opts, content, err := adaptersSetup(ctx, e)
	if err != nil {
		return err
	}
	st, err := adapters.Status(ctx, opts, content, o.Clients...)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(e.stdout, st)
	}
	for _, cs := range st {
		on := ""
		if cs.Enabled {
			on = " (enabled)"
		}
		fmt.Fprintf(e.stdout, "%s%s: %s\n", cs.Client, on, cs.State)
		for _, f := range cs.Files {
			extra := ""
			if f.Tracked && f.State != adapters.InStep {
				extra = " (tracked by git: a refresh leaves it; ctx adapters export, or enable --tracked ok)"
			}
			if f.Detail != "" {
				extra += ": " + f.Detail
			}
			fmt.Fprintf(e.stdout, "  %-11s %s%s\n", f.State, f.Path, extra)
		}
	}
	return nil
}

// adaptersBriefOptions are the flags of ctx adapters brief.
type adaptersBriefOptions struct {
	MaxBytes int    // at least 1024
	Format   string // text or gemini
}

func newAdaptersBriefCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "brief",
		Usage: "print the brief public context (the onboarding text, bounded): what ctx's SessionStart hook in an agent's settings shows",
		Flags: []cli.Flag{&cli.IntFlag{Name: "max-bytes", Value: adapters.DefaultMaxBlock, Usage: "bound the text to `N` bytes"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, or gemini: the JSON Gemini CLI's SessionStart hook reads ({\"hookSpecificOutput\":{\"additionalContext\":...}})"}},
		Action: action(e, func(c *cli.Context) (adaptersBriefOptions, error) {
			o := adaptersBriefOptions{MaxBytes: c.Int("max-bytes"), Format: c.String("format")}
			if c.NArg() > 0 || o.MaxBytes < 1024 || o.Format != "text" && o.Format != "gemini" {
				return adaptersBriefOptions{}, usagef("usage: ctx adapters brief [--max-bytes N (at least 1024)] [--format text|gemini]")
			}
			return o, nil
		}, runAdaptersBrief),
	}, "Prints the public context as the onboarding text, bounded: what ctx's SessionStart hook in an agent's\n"+
		"settings shows at the start of a session (ctx adapters hooks install). Where there is no context\n"+
		"store it prints nothing and succeeds, so that an agent's start never fails for it.",
		[]string{"ctx adapters brief", "ctx adapters brief --format gemini --max-bytes 4096"},
		[]exit{{ExitUsage, ""}, {ExitNoStore, "not a git repository (without ctx init, it prints nothing and succeeds)"}})
}

func runAdaptersBrief(ctx context.Context, e *env, o adaptersBriefOptions) error {
	text := ""
	s, err := e.openInit(ctx)
	switch {
	case errors.Is(err, store.ErrNotInitialized):
		// No context here: an agent's start must not fail for it.
	case err != nil:
		return err
	default:
		if _, text, err = ctxmcp.Onboarding(ctx, s, o.MaxBytes); err != nil {
			return err
		}
	}
	if o.Format == "gemini" {
		out := map[string]any{}
		if text != "" {
			out["hookSpecificOutput"] = map[string]any{"additionalContext": text}
		}
		return printJSON(e.stdout, out)
	}
	_, err = fmt.Fprint(e.stdout, text)
	return err
}

// adaptersEnableOptions are the arguments of ctx adapters enable and disable.
type adaptersEnableOptions struct {
	Enable  bool
	Clients []string
	Tracked string // enable: "ok", "no", or "" to leave the setting as it is
}

func newAdaptersEnableCmd(e *env, on bool) *cli.Command {
	name, usage, description := "enable",
		"refresh these clients' files after ctx pull and in git's checkout and merge hooks (this work tree only)",
		"Enables CLIENT... for refresh in this work tree: after ctx pull and in git's checkout and merge hooks,\n"+
			"their files are exported again. A file git tracks is left as it is (and ctx status says so) unless\n"+
			"--tracked ok. The project's setting in the manifest on the context branch, adapters.<client>.enabled\n"+
			"(context://manifest), is set to true as well: one commit when it changes."
	var flags []cli.Flag
	if on {
		flags = []cli.Flag{&cli.StringFlag{Name: "tracked", Usage: "`ok`: a refresh may change files git tracks; no: it leaves them (default)"}}
	} else {
		name, usage, description = "disable",
			"stop refreshing these clients' files (the files stay; ctx adapters status still reports them)",
			"Stops refreshing CLIENT...'s files; the files stay (ctx adapters remove takes them out). The project's\n"+
				"setting in the manifest, adapters.<client>.enabled, is set to false: one commit when it changes."
	}
	return withHelp(&cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "CLIENT...",
		Flags:     flags,
		Action: action(e, func(c *cli.Context) (adaptersEnableOptions, error) {
			if c.NArg() == 0 {
				return adaptersEnableOptions{}, usagef("usage: ctx adapters %s CLIENT... (clients: %s)", name, strings.Join(adapters.ClientNames(), ", "))
			}
			o := adaptersEnableOptions{Enable: on, Clients: c.Args().Slice(), Tracked: c.String("tracked")}
			if o.Tracked != "" && o.Tracked != "ok" && o.Tracked != "no" {
				return adaptersEnableOptions{}, usagef("--tracked takes ok or no")
			}
			return o, nil
		}, runAdaptersEnable),
	}, description,
		[]string{"ctx adapters " + name + " claude-code cursor", "ctx adapters enable claude-code --tracked ok"},
		adaptersExits)
}

func runAdaptersEnable(ctx context.Context, e *env, o adaptersEnableOptions) error {
	s, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	clients, err := adapters.Lookup(o.Clients...)
	if err != nil {
		return err
	}
	// The manifest is read before anything changes: one whose adapters does not decode (pushed by
	// another clone) stops the command with this work tree's record as it was, not half done.
	if _, err := v.ReadManifest(ctx); err != nil {
		return fmt.Errorf("nothing changed: %w", err)
	}
	opts, err := adapters.OptionsFor(ctx, s)
	if err != nil {
		return err
	}
	rec, err := adapters.SetEnabled(opts, o.Enable, o.Clients...)
	if err != nil {
		return err
	}
	if o.Tracked != "" {
		if err := adapters.SetTrackedOK(opts, o.Tracked == "ok"); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "enabled: %s\n", dash(strings.Join(rec.Enabled, ", ")))
	// The project's setting in manifest.json (adapters.<client>.enabled, docs/format.md "Records"; what
	// context://manifest serves), one commit when it changes; this work tree's record above is what
	// refreshes its files.
	set := map[string]bool{}
	var names []string
	for _, c := range clients {
		set[c.ManifestName()] = o.Enable
		names = append(names, c.ManifestName())
	}
	res, err := s.SetAdapters(ctx, set)
	if err != nil {
		// Something changed the branch since the check above: say what was done and what was not.
		return fmt.Errorf("this work tree's record was changed (enabled: %s), the project's setting in %s was not: %w",
			dash(strings.Join(rec.Enabled, ", ")), store.ManifestPath, err)
	}
	commitLine(e.stdout, "manifest adapters "+strings.Join(names, ", "), res)
	return nil
}

// agentHooksOptions are the arguments of ctx adapters hooks install|remove|status, and of ctx
// integrations install|remove|status hooks.
type agentHooksOptions struct {
	Verb   string // install, remove, status
	Client string // claude-code or gemini
	Scope  adapters.HookScope
}

// agentHooksFlags are the flags of ctx adapters hooks install|remove|status.
func agentHooksFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "client", Value: "claude-code", Usage: "client `NAME`: claude-code or gemini"},
		&cli.StringFlag{Name: "scope", Usage: "claude-code: local (.claude/settings.local.json, this clone; the default) or project (.claude/settings.json, shared); gemini: project (.gemini/settings.json)"},
	}
}

// agentHooksExits are the exit codes of the agent hook commands.
var agentHooksExits = []exit{{ExitUsage, "usage error, a client without session hooks, or a scope it does not have"}, {ExitNoStore, "not a git repository"}}

// newAgentHooksCmd is `ctx adapters hooks install|remove|status`: ctx's SessionStart and SessionEnd hooks
// in an agent's settings file (docs/adapters.md "Agent hooks"). `ctx integrations install hooks` runs the
// same.
func newAgentHooksCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "hooks",
		Usage: "the agents' own session hooks: SessionStart prints the brief public context, SessionEnd imports the finished " +
			"session into the local history index (keeps the user's hooks; remove restores the file)",
		Subcommands: []*cli.Command{
			newAgentHooksVerbCmd(e, "install", "add ctx's SessionStart and SessionEnd hooks to the client's settings file",
				"Adds a SessionStart hook running ctx adapters brief and a SessionEnd hook running ctx history import\n"+
					"--hook-input --quiet to the client's settings file (created when missing), keeping every other byte\n"+
					"of it. An event that already has ctx's hook keeps it; installing again changes nothing."),
			newAgentHooksVerbCmd(e, "remove", "remove them (the file byte for byte as before, while nobody changed it since)",
				"Removes ctx's SessionStart and SessionEnd hooks: the settings file is given back byte for byte as it\n"+
					"was before the install (deleted if ctx created it) while nobody changed it since; else only ctx's\n"+
					"entries go."),
			newAgentHooksVerbCmd(e, "status", "say whether they are installed",
				"Says whether the client's settings file holds ctx's hooks (installed: both, partial: some, as after an\n"+
					"install by an older ctx; install adds the rest), which events have them, and where the file is."),
		},
	}, "ctx's hooks in a coding agent's own settings (Claude Code, Gemini CLI): SessionStart prints the brief\n"+
		"public context (ctx adapters brief) when a session starts; SessionEnd imports the session that ended\n"+
		"into the local agent-history index (ctx history import --hook-input; docs/history.md), printing\n"+
		"nothing. Neither can fail or hold up the agent. The user's settings and hooks are kept.",
		[]string{"ctx adapters hooks install", "ctx adapters hooks install --client gemini", "ctx adapters hooks status --scope project"},
		agentHooksExits)
}

func newAgentHooksVerbCmd(e *env, verb, usage, description string) *cli.Command {
	return withHelp(&cli.Command{
		Name:  verb,
		Usage: usage,
		Flags: agentHooksFlags(),
		Action: action(e, func(c *cli.Context) (agentHooksOptions, error) {
			if c.NArg() > 0 {
				return agentHooksOptions{}, usagef("usage: ctx adapters hooks %s [--client claude-code|gemini] [--scope local|project]", verb)
			}
			return agentHooksOptions{Verb: verb, Client: c.String("client"), Scope: adapters.HookScope(c.String("scope"))}, nil
		}, runAgentHooks),
	}, description,
		[]string{"ctx adapters hooks " + verb, "ctx adapters hooks " + verb + " --client claude-code --scope project"},
		agentHooksExits)
}

// integrationsHooksParse maps `ctx integrations install|remove|status hooks` to the options of the
// agent hooks: --client is a list there (one client at a time here), --scope is the integrations' flag.
func integrationsHooksParse(verb string) func(c *cli.Context) (agentHooksOptions, error) {
	return func(c *cli.Context) (agentHooksOptions, error) {
		o := agentHooksOptions{Verb: verb, Client: "claude-code", Scope: adapters.HookScope(c.String("scope"))}
		switch cs := c.StringSlice("client"); {
		case len(cs) == 1:
			o.Client = cs[0]
		case len(cs) > 1:
			return agentHooksOptions{}, usagef("agent hooks: one --client at a time")
		}
		return o, nil
	}
}

// runAgentHooks runs install, remove or status of ctx's agent hooks.
func runAgentHooks(ctx context.Context, e *env, o agentHooksOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	opts, err := adapters.OptionsFor(ctx, s)
	if err != nil {
		return err
	}
	client := o.Client
	if client == "" {
		client = "claude-code"
	}
	var p string
	var act adapters.HookAction
	switch o.Verb {
	case "install":
		p, act, err = adapters.InstallHooks(opts, client, o.Scope)
	case "remove":
		p, act, err = adapters.RemoveHooks(opts, client, o.Scope)
	default:
		var events []adapters.HookEventState
		if p, act, events, err = adapters.HookEvents(opts, client, o.Scope); err != nil {
			return err
		}
		var have, missing []string
		for _, ev := range events {
			if ev.Installed {
				have = append(have, ev.Event)
			} else {
				missing = append(missing, ev.Event)
			}
		}
		detail := ""
		switch {
		case len(have) > 0 && len(missing) > 0:
			detail = fmt.Sprintf(" (%s; not %s: ctx adapters hooks install adds it)", strings.Join(have, ", "), strings.Join(missing, ", "))
		case len(have) > 0:
			detail = " (" + strings.Join(have, ", ") + ")"
		}
		fmt.Fprintf(e.stdout, "%-12s %-10s %s%s\n", client, act, p, detail)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%-12s %-10s %s\n", client, act, p)
	return nil
}

// adaptersSetup opens the initialised store and reads its public context and the work tree's options.
func adaptersSetup(ctx context.Context, e *env) (*store.Store, adapters.Options, *adapters.Content, error) {
	s, err := e.openInit(ctx)
	if err != nil {
		return nil, adapters.Options{}, nil, err
	}
	opts, err := adapters.OptionsFor(ctx, s)
	if err != nil {
		return nil, adapters.Options{}, nil, err
	}
	content, err := adapters.Load(ctx, s)
	if err != nil {
		return nil, adapters.Options{}, nil, err
	}
	return s, opts, content, nil
}

// applyOrShow prints a plan's diff (dryRun) or applies it and lists what it wrote.
func applyOrShow(ctx context.Context, e *env, pl *adapters.Plan, dryRun bool) error {
	if dryRun {
		// The same problems, and the same exit status, as the export itself would have.
		fmt.Fprint(e.stdout, pl.Diff())
		fmt.Fprintf(e.stdout, "dry run: %s, nothing written\n", plural(len(pl.Pending()), "file would change", "files would change"))
		return pl.Err()
	}
	err := pl.Apply(ctx)
	for _, ch := range pl.Pending() {
		fmt.Fprintf(e.stdout, "%s %s\n", ch.Verb(), ch.Path)
	}
	if len(pl.Pending()) == 0 && err == nil {
		fmt.Fprintln(e.stdout, "nothing to change")
	}
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// refreshAdapters re-exports the clients enabled in s's work tree: after ctx pull and sync, and in git's
// hooks (docs/adapters.md "Refresh"). Its problems are warnings on standard error: the pull or the git
// command succeeded. notices also says which files it wrote (not in git's hooks, which are silent when all
// went well).
func refreshAdapters(ctx context.Context, e *env, s *store.Store, notices bool) {
	opts, err := adapters.OptionsFor(ctx, s)
	if err != nil {
		return // a bare repository: nothing to refresh
	}
	pl, err := adapters.Refresh(ctx, s, opts)
	if pl != nil {
		for _, ch := range pl.Changes {
			switch {
			case ch.Skipped:
				fmt.Fprintf(e.stderr, "ctx: adapters: %s is tracked by git: left as it is (ctx adapters status; ctx adapters enable --tracked ok)\n", ch.Path)
			case ch.Action != adapters.Unchanged && notices:
				fmt.Fprintf(e.stderr, "ctx: adapters: %s %s\n", ch.Verb(), ch.Path)
			}
		}
	}
	if err != nil && !errors.Is(err, store.ErrNotInitialized) {
		fmt.Fprintf(e.stderr, "ctx: warning: adapters refresh: %v\n", err)
	}
}

// adaptersStatusLines prints, in ctx status, each enabled client whose files are not in step, naming
// the files a refresh left because git tracks them.
func adaptersStatusLines(ctx context.Context, e *env, s *store.Store) {
	opts, err := adapters.OptionsFor(ctx, s)
	if err != nil {
		return
	}
	rec, err := adapters.ReadRecord(opts)
	if err != nil || len(rec.Enabled) == 0 {
		return
	}
	content, err := adapters.Load(ctx, s)
	if err != nil {
		return
	}
	st, err := adapters.Status(ctx, opts, content, rec.Enabled...)
	if err != nil {
		fmt.Fprintf(e.stdout, "adapters: %v\n", err)
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
		fmt.Fprintln(e.stdout, line)
	}
}

// skipAdapters is the importer.Options.Skip of a `ctx import` (adapters.SkipOwn); nil in a bare repository.
func skipAdapters(ctx context.Context, s *store.Store) (func(source, path string, content []byte) string, error) {
	opts, err := adapters.OptionsFor(ctx, s)
	if err != nil {
		return nil, nil // a bare repository: no work tree, so no export of ctx's there
	}
	return adapters.SkipOwn(opts)
}

// cleanAdapters drops from a `ctx import` plan what ctx adapters export wrote (adapters.Clean).
func cleanAdapters(ctx context.Context, s *store.Store, plan importer.Plan) (importer.Plan, error) {
	opts, err := adapters.OptionsFor(ctx, s)
	if err != nil {
		return plan, nil // a bare repository: no work tree, so no export of ctx's there
	}
	return adapters.Clean(opts, plan)
}
