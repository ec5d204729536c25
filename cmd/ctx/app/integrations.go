package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctx-dev/ctx/integrations"
	"github.com/urfave/cli/v2"
)

// integrationsOptions are the arguments of ctx integrations install|remove|status mcp.
type integrationsOptions struct {
	Verb    string   // install, remove, status
	Clients []string // none: install picks (defaultClients), remove and status take every client
	Scope   integrations.Scope
	Name    string // the server entry's name
	Command string // install: the ctx executable the clients run
	Force   bool
	JSON    bool
}

// newIntegrationsCmd is `ctx integrations install|remove|status mcp`: ctx's MCP server in the
// configuration files of coding agents (package integrations knows each client's file); and `... hooks`:
// ctx's SessionStart and SessionEnd hooks in their settings, as ctx adapters hooks (adapters.go).
func newIntegrationsCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "integrations",
		Usage: "register ctx mcp serve in coding agents' MCP configuration (mcp), or ctx's session hooks in their settings (hooks)",
		Subcommands: []*cli.Command{
			newIntegrationsVerbCmd(e, "install", "add ctx's MCP server to the clients' config files",
				"Adds an entry that runs `ctx mcp serve --agent <client>` to each client's MCP configuration, keeping the\n"+
					"rest of the file. Without --client: Claude Code, and every other client whose folder or file is in\n"+
					"the project. An entry of the same name that differs is left alone unless --force."),
			newIntegrationsVerbCmd(e, "remove", "remove ctx's MCP server entry (an absent entry is success)",
				"Removes ctx's entry from each client's MCP configuration (every client without --client); an entry of\n"+
					"the same name that ctx did not write is left alone unless --force."),
			newIntegrationsVerbCmd(e, "status", "show which clients have ctx's MCP server",
				"Shows, for each client, whether its MCP configuration holds ctx's entry and where the file is."),
		},
	}, "Registers ctx's MCP server (ctx mcp serve) with coding agents: "+strings.Join(clientNames, ", ")+",\n"+
		"in the project's files (--scope project) or in your home (--scope user). With hooks in place of mcp:\n"+
		"ctx's SessionStart and SessionEnd hooks in the agent's settings (claude-code, gemini), as ctx adapters\n"+
		"hooks does.",
		[]string{"ctx integrations install mcp", "ctx integrations install mcp --client cursor --client vscode", "ctx integrations status mcp --json",
			"ctx integrations install hooks --client claude-code --scope project"},
		[]exit{{ExitUsage, "usage error, an unknown client, or a scope the client does not have"}, {ExitNoStore, "hooks: not a git repository"}})
}

// clientNames are the clients --client takes.
var clientNames = []string{"claude-code", "cursor", "vscode", "codex", "gemini", "windsurf", "opencode"}

func newIntegrationsVerbCmd(e *env, verb, usage, description string) *cli.Command {
	install := verb == "install"
	flags := []cli.Flag{
		&cli.StringSliceFlag{Name: "client", Usage: "client `NAME` (repeatable): " + strings.Join(clientNames, ", ")},
		&cli.StringFlag{Name: "scope", Value: "project", Usage: "project (files in this repository) or user (files in your home)"},
		&cli.StringFlag{Name: "name", Value: integrations.DefaultServerName, Usage: "server entry `NAME`"},
		jsonFlag,
	}
	if install {
		flags = append(flags, &cli.StringFlag{Name: "command", Value: "ctx", Usage: "the ctx `EXECUTABLE` the client runs (a name is looked up on PATH)"})
	}
	flags = append(flags, &cli.BoolFlag{Name: "force", Usage: "replace or remove a different entry of the same name"})
	mcpAction := action(e, func(c *cli.Context) (integrationsOptions, error) {
		if c.NArg() != 1 || c.Args().Get(0) != "mcp" {
			return integrationsOptions{}, usagef("usage: ctx integrations %s mcp|hooks [--client NAME] [--scope project|user]", verb)
		}
		o := integrationsOptions{Verb: verb, Clients: c.StringSlice("client"), Scope: integrations.Scope(c.String("scope")),
			Name: c.String("name"), Force: c.Bool("force"), JSON: c.Bool("json")}
		if install {
			o.Command = c.String("command")
		}
		return o, nil
	}, runIntegrations)
	return withHelp(&cli.Command{
		Name:      verb,
		Usage:     usage,
		ArgsUsage: "mcp|hooks",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			if c.NArg() == 1 && c.Args().Get(0) == "hooks" {
				// The agents' session hooks (adapters.go).
				return action(e, integrationsHooksParse(verb), runAgentHooks)(c)
			}
			return mcpAction(c)
		},
	}, description+"\nWith hooks: ctx's SessionStart and SessionEnd hooks in the settings of --client (claude-code,\n"+
		"the default, or gemini), as ctx adapters hooks "+verb+" does.",
		[]string{"ctx integrations " + verb + " mcp", "ctx integrations " + verb + " mcp --client cursor --scope user",
			"ctx integrations " + verb + " hooks --client gemini"},
		[]exit{{ExitUsage, "usage error, an unknown client, or a scope the client does not have"}, {ExitNoStore, "hooks: not a git repository"}})
}

func runIntegrations(ctx context.Context, e *env, o integrationsOptions) error {
	project, err := e.projectDir(ctx)
	if err != nil {
		return err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("home directory: %w", err)
	}
	var res []integrations.Result
	switch o.Verb {
	case "install":
		clients := o.Clients
		if len(clients) == 0 {
			clients = defaultClients(project, o.Scope)
		}
		srv := integrations.Server{Name: o.Name, Command: o.Command} // args: mcp serve --agent <client>
		res, err = integrations.Install(ctx, project, home, clients, o.Scope, srv, o.Force)
	case "remove":
		res, err = integrations.Remove(ctx, project, home, o.Clients, o.Scope, o.Name, o.Force)
	default:
		res, err = integrations.Status(ctx, project, home, o.Clients, o.Scope, o.Name)
	}
	if o.JSON {
		if perr := printJSON(e.stdout, res); perr != nil {
			return perr
		}
	} else {
		for _, r := range res {
			fmt.Fprintf(e.stdout, "%-12s %-10s %s", r.Client, r.Action, r.Path)
			if r.Message != "" {
				fmt.Fprintf(e.stdout, " (%s)", r.Message)
			}
			fmt.Fprintln(e.stdout)
		}
	}
	if errors.Is(err, integrations.ErrUnknownClient) || errors.Is(err, integrations.ErrUnsupportedScope) {
		return usagef("%v", err)
	}
	return err
}

// projectDir is the worktree root of the repository ctx runs in, else the current directory.
func (e *env) projectDir(ctx context.Context) (string, error) {
	if s, err := e.open(ctx); err == nil && s.WorkTree() != "" {
		return s.WorkTree(), nil
	}
	if e.dir != "" {
		return filepath.Abs(e.dir)
	}
	return os.Getwd()
}

// defaultClients picks the clients for an install without --client: Claude Code always (project .mcp.json
// or ~/.claude.json), plus every other client whose project folder (.cursor, .vscode, .gemini, .codex) or
// config file already exists.
func defaultClients(project string, scope integrations.Scope) []string {
	out := []string{integrations.ClientClaudeCode}
	if scope == "user" {
		return out
	}
	for _, cm := range [][2]string{{"codex", ".codex"}, {"cursor", ".cursor"}, {"gemini", ".gemini"}, {"opencode", "opencode.json"}, {"vscode", ".vscode"}} {
		if _, err := os.Stat(filepath.Join(project, cm[1])); err == nil {
			out = append(out, cm[0])
		}
	}
	return out
}
