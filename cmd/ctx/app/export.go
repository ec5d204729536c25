package app

import (
	"fmt"
	"math"

	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/internal/atomicfile"
	ctxmcp "github.com/ctx-dev/ctx/mcp"
	"github.com/urfave/cli/v2"
)

func init() { registry = append(registry, exportCommand) }

// exportCommand is `ctx export`: the public context as one markdown document (what the
// context_onboarding prompt gives an agent over MCP), for agents and people without MCP: print it, or
// write it to a file such as AGENTS.md. Private and ephemeral entries are never exported.
func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "print the public context as markdown (what the onboarding prompt shows), or write it to a file",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of standard output"},
			&cli.IntFlag{Name: "max-bytes", Usage: "cut each section to fit `N` bytes in all, with a visible marker (0 = no limit)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("usage: ctx export [-o FILE] [--max-bytes N]")
			}
			if c.Int("max-bytes") < 0 {
				return usagef("--max-bytes takes a number >= 0")
			}
			s, err := openInit(c)
			if err != nil {
				return err
			}
			// The first line marks the text as ctx's own output, so that ctx import never reads it back
			// (docs/format.md "Import").
			header := importer.ExportHeader
			limit := c.Int("max-bytes")
			if limit == 0 {
				limit = math.MaxInt32
			} else if limit -= len(header); limit < 1 {
				return usagef("--max-bytes must leave room for the %d-byte first line", len(header))
			}
			_, text, err := ctxmcp.Onboarding(c.Context, s, limit)
			if err != nil {
				return err
			}
			text = header + text
			out := c.String("output")
			if out == "" {
				_, err := fmt.Fprint(c.App.Writer, text)
				return err
			}
			if err := atomicfile.Write(out, []byte(text), 0o644); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			fmt.Fprintf(c.App.ErrWriter, "ctx: wrote %s (%d bytes)\n", out, len(text))
			return nil
		},
	}
}
