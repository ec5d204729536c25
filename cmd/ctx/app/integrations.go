package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctx-dev/ctx/integrations"
	"github.com/urfave/cli/v2"
)

func init() { registry = append(registry, integrationsCommand) }

// agentHooks is set by adapters.go: `ctx integrations install|remove|status hooks`.
var agentHooks func(c *cli.Context, verb string) error

// integrationsCommand is `ctx integrations install|remove|status mcp` (seed 004).
func integrationsCommand() *cli.Command {
	flags := func(install bool) []cli.Flag {
		f := []cli.Flag{
			&cli.StringSliceFlag{Name: "client", Usage: "client `NAME` (repeatable): claude-code, cursor, vscode, codex, gemini, windsurf, opencode"},
			&cli.StringFlag{Name: "scope", Value: "project", Usage: "project (files in this repository) or user (files in your home)"},
			&cli.StringFlag{Name: "name", Value: integrations.DefaultServerName, Usage: "server entry `NAME`"},
			jsonFlag,
		}
		if install {
			f = append(f, &cli.StringFlag{Name: "command", Value: "ctx", Usage: "the ctx `EXECUTABLE` the client runs (a name is looked up on PATH)"})
		}
		return append(f, &cli.BoolFlag{Name: "force", Usage: "replace or remove a different entry of the same name"})
	}
	verb := func(name, usage string, install bool, run func(c *cli.Context, project, home string, clients []string, scope integrations.Scope) ([]integrations.Result, error)) *cli.Command {
		return &cli.Command{
			Name:      name,
			Usage:     usage,
			ArgsUsage: "mcp",
			Flags:     flags(install),
			Action: func(c *cli.Context) error {
				if c.NArg() == 1 && c.Args().Get(0) == "hooks" && agentHooks != nil {
					return agentHooks(c, name) // the agents' session hooks (adapters.go)
				}
				if c.NArg() != 1 || c.Args().Get(0) != "mcp" {
					return usagef("usage: ctx integrations %s mcp [--client NAME] [--scope project|user]", name)
				}
				project, err := projectDir(c)
				if err != nil {
					return err
				}
				home, err := os.UserHomeDir()
				if err != nil {
					return fmt.Errorf("home directory: %w", err)
				}
				scope := integrations.Scope(c.String("scope"))
				clients := c.StringSlice("client")
				res, err := run(c, project, home, clients, scope)
				if c.Bool("json") {
					if perr := printJSON(c.App.Writer, res); perr != nil {
						return perr
					}
				} else {
					for _, r := range res {
						fmt.Fprintf(c.App.Writer, "%-12s %-10s %s", r.Client, r.Action, r.Path)
						if r.Message != "" {
							fmt.Fprintf(c.App.Writer, " (%s)", r.Message)
						}
						fmt.Fprintln(c.App.Writer)
					}
				}
				if errors.Is(err, integrations.ErrUnknownClient) || errors.Is(err, integrations.ErrUnsupportedScope) {
					return usagef("%v", err)
				}
				return err
			},
		}
	}
	return &cli.Command{
		Name:  "integrations",
		Usage: "register ctx mcp serve in coding agents' MCP configuration",
		Subcommands: []*cli.Command{
			verb("install", "add ctx's MCP server to the clients' config files", true, func(c *cli.Context, project, home string, clients []string, scope integrations.Scope) ([]integrations.Result, error) {
				if len(clients) == 0 {
					clients = defaultClients(project, scope)
				}
				srv := integrations.Server{Name: c.String("name"), Command: c.String("command")} // args: mcp serve --agent <client>
				return integrations.Install(c.Context, project, home, clients, scope, srv, c.Bool("force"))
			}),
			verb("remove", "remove ctx's MCP server entry (an absent entry is success)", false, func(c *cli.Context, project, home string, clients []string, scope integrations.Scope) ([]integrations.Result, error) {
				return integrations.Remove(c.Context, project, home, clients, scope, c.String("name"), c.Bool("force"))
			}),
			verb("status", "show which clients have ctx's MCP server", false, func(c *cli.Context, project, home string, clients []string, scope integrations.Scope) ([]integrations.Result, error) {
				return integrations.Status(c.Context, project, home, clients, scope, c.String("name"))
			}),
		},
	}
}

// projectDir is the worktree root of the repository ctx runs in, else the current directory.
func projectDir(c *cli.Context) (string, error) {
	if s, err := open(c); err == nil && s.Repo.WorkTree() != "" {
		return s.Repo.WorkTree(), nil
	}
	if d := c.String("C"); d != "" {
		return filepath.Abs(d)
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
