package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ctx-dev/ctx/integrations"
	"github.com/urfave/cli/v2"
)

// docTopics are the pages ctx docs show prints, by name.
var docTopics = []string{"mcp-integrations"}

func newDocsCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:        "docs",
		Usage:       "print reference pages built into ctx (ctx docs show mcp-integrations)",
		Subcommands: []*cli.Command{newDocsShowCmd(e)},
	}, "Prints reference pages generated from ctx's own tables, so they match the binary that prints them.",
		[]string{"ctx docs show mcp-integrations"},
		[]exit{{ExitUsage, "usage error: an unknown page"}})
}

// docsShowOptions name the page to print.
type docsShowOptions struct {
	Topic string
	JSON  bool
}

func newDocsShowCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "show",
		Usage:     "print a reference page: " + strings.Join(docTopics, ", "),
		ArgsUsage: "PAGE",
		Flags:     []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (docsShowOptions, error) {
			if c.NArg() != 1 || !slices.Contains(docTopics, c.Args().First()) {
				return docsShowOptions{}, usagef("usage: ctx docs show PAGE (one of: %s)", strings.Join(docTopics, ", "))
			}
			return docsShowOptions{Topic: c.Args().First(), JSON: c.Bool("json")}, nil
		}, runDocsShow),
	}, "mcp-integrations: the MCP clients ctx integrations registers ctx mcp serve with, each client's\n"+
		"config file per scope (P is the project directory, ~ your home), the key of its server table, its\n"+
		"format and documentation, and the snippet to paste by hand: the file ctx integrations install mcp\n"+
		"writes when none exists. Generated from the table the integrations code installs from.",
		[]string{"ctx docs show mcp-integrations", "ctx docs show mcp-integrations --json"},
		[]exit{{ExitUsage, "usage error: an unknown page"}})
}

// integrationRow is one client of the mcp-integrations page.
type integrationRow struct {
	Client  string            `json:"client"`
	Paths   map[string]string `json:"config_paths"` // scope → file
	Key     string            `json:"key"`
	Format  string            `json:"format"`
	Docs    string            `json:"docs"`
	Snippet string            `json:"snippet"`
	// EnvVar moves the user-scope file (UserEnv is the file then), as the client does; "" when none.
	EnvVar  string `json:"env_var,omitempty"`
	UserEnv string `json:"user_config_with_env,omitempty"`
}

// mcpIntegrations builds the page's rows from integrations.Table, with project directory "P" and home "~".
func mcpIntegrations() ([]integrationRow, error) {
	var rows []integrationRow
	for _, c := range integrations.Table() {
		r := integrationRow{Client: c.Name, Paths: map[string]string{}, Key: c.Key, Format: c.Format, Docs: c.Docs, EnvVar: c.EnvVar}
		if c.EnvVar != "" {
			p, err := integrations.ConfigPathEnv(c.Name, "P", "~", integrations.ScopeUser, func(k string) string { return "$" + k })
			if err != nil {
				return nil, err
			}
			r.UserEnv = p
		}
		for _, sc := range c.Scopes {
			p, err := integrations.ConfigPath(c.Name, "P", "~", sc)
			if err != nil {
				return nil, err
			}
			r.Paths[string(sc)] = p
		}
		snip, err := integrations.Snippet(c.Name, integrations.Server{})
		if err != nil {
			return nil, err
		}
		r.Snippet = snip
		rows = append(rows, r)
	}
	return rows, nil
}

func runDocsShow(_ context.Context, e *env, o docsShowOptions) error {
	rows, err := mcpIntegrations()
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(e.stdout, rows)
	}
	w := e.stdout
	fmt.Fprintln(w, "# MCP integrations")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "`ctx integrations install mcp [--client NAME]... [--scope project|user]` registers `ctx mcp serve` (stdio)")
	fmt.Fprintln(w, "with these clients; `status` and `remove` report and undo it. P is the project directory, ~ your home.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| client | project config | user config | key | format | docs |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		user := cell(r.Paths["user"])
		if r.UserEnv != "" {
			user += fmt.Sprintf(" (%s when %s is set)", cell(r.UserEnv), r.EnvVar)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.Client, cell(r.Paths["project"]), user, r.Key, r.Format, r.Docs)
	}
	for _, r := range rows {
		lang := r.Format
		if lang == "jsonc" {
			lang = "json"
		}
		file := r.Paths["project"]
		if file == "" {
			file = r.Paths["user"]
		}
		fmt.Fprintf(w, "\n## %s\n\nBy hand: put this in %s (or merge its entry into the file's %q table):\n\n```%s\n%s\n```\n",
			r.Client, file, r.Key, lang, strings.TrimRight(r.Snippet, "\n"))
	}
	return nil
}

// cell is a table cell: "(none)" for a scope the client has no file for.
func cell(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
