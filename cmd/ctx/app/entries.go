package app

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// entryCommand builds `ctx knowledge|convention set/get/list/rm`.
func entryCommand(k store.Kind, name, usage string) *cli.Command {
	return &cli.Command{
		Name:  name,
		Usage: usage,
		Subcommands: []*cli.Command{
			{
				Name:      "set",
				Usage:     "write an entry: TEXT, or -f FILE, or standard input",
				ArgsUsage: "KEY [TEXT]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the content from `FILE` (- for stdin)"},
					&cli.StringFlag{Name: "scope", Usage: "public (pushed), private or ephemeral (never pushed)"},
					&cli.StringFlag{Name: "provenance", Usage: "agent_generated, from_approved_context, owner_approved or owner_instruction"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() < 1 || c.NArg() > 2 {
						return usagef("usage: ctx %s set KEY [TEXT] [-f FILE]", name)
					}
					content, err := readContent(c, c.Args().Get(1), c.NArg() == 2)
					if err != nil {
						return err
					}
					var sc store.Scope
					if c.IsSet("scope") {
						if sc, err = store.ParseScope(c.String("scope")); err != nil {
							return usagef("%v", err)
						}
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					res, err := s.SetEntry(c.Context, k, store.SetEntry{Key: c.Args().Get(0), Content: content, Scope: sc, Provenance: c.String("provenance")})
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, name+" "+c.Args().Get(0), res)
					return nil
				},
			},
			{
				Name:      "get",
				Usage:     "print an entry's content",
				ArgsUsage: "KEY",
				Flags:     []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx %s get KEY", name)
					}
					_, v, err := viewOf(c)
					if err != nil {
						return err
					}
					e, err := v.GetEntry(c.Context, k, c.Args().Get(0))
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, e)
					}
					_, err = io.WriteString(c.App.Writer, e.Content)
					return err
				},
			},
			{
				Name:  "list",
				Usage: "list the entries of every scope",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					_, v, err := viewOf(c)
					if err != nil {
						return err
					}
					list, err := v.ListEntries(c.Context, k)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(c.App.Writer, list)
					}
					tw := table(c.App.Writer)
					for _, e := range list {
						fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Key, e.Scope, firstLine(e.Content))
					}
					return tw.Flush()
				},
			},
			scopeCommand(name),
			{
				Name:      "rm",
				Usage:     "remove an entry",
				ArgsUsage: "KEY",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx %s rm KEY", name)
					}
					s, err := openInit(c)
					if err != nil {
						return err
					}
					res, err := s.RemoveEntry(c.Context, k, c.Args().Get(0))
					if err != nil {
						return err
					}
					commitLine(c.App.Writer, "removed "+name+" "+c.Args().Get(0), res)
					return nil
				},
			},
		},
	}
}

// readContent returns the TEXT argument, the -f FILE (- = stdin), or standard input when neither is given.
func readContent(c *cli.Context, text string, hasText bool) (string, error) {
	file := c.String("file")
	switch {
	case hasText && file != "":
		return "", usagef("give the content either as TEXT or with -f FILE, not both")
	case hasText:
		return text, nil
	case file == "-" || file == "":
		b, err := io.ReadAll(c.App.Reader)
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		return string(b), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", file, err)
	}
	return string(b), nil
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && l != "---" {
			if r := []rune(l); len(r) > 80 {
				l = string(r[:77]) + "..."
			}
			return l
		}
	}
	return ""
}
