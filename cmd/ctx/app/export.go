package app

import (
	"context"
	"fmt"
	"math"

	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/internal/atomicfile"
	ctxmcp "github.com/ctx-dev/ctx/mcp"
	"github.com/urfave/cli/v2"
)

// exportOptions are the flags of ctx export.
type exportOptions struct {
	Output   string // "": standard output
	MaxBytes int    // 0: no limit
}

// newExportCmd is `ctx export`: the public context as one markdown document (what the
// context_onboarding prompt gives an agent over MCP), for agents and people without MCP: print it, or
// write it to a file such as AGENTS.md. Private and ephemeral entries are never exported.
func newExportCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "export",
		Usage: "print the public context as markdown (what the onboarding prompt shows), or write it to a file",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of standard output"},
			&cli.IntFlag{Name: "max-bytes", Usage: "cut each section to fit `N` bytes in all, with a visible marker (0 = no limit)"},
		},
		Action: action(e, func(c *cli.Context) (exportOptions, error) {
			if c.NArg() > 0 {
				return exportOptions{}, usagef("usage: ctx export [-o FILE] [--max-bytes N]")
			}
			if c.Int("max-bytes") < 0 {
				return exportOptions{}, usagef("--max-bytes takes a number >= 0")
			}
			return exportOptions{Output: c.String("output"), MaxBytes: c.Int("max-bytes")}, nil
		}, runExport),
	}, "Prints the public context (state, knowledge, conventions, decisions, skills) as one markdown\n"+
		"document, the text the MCP prompt context_onboarding gives an agent, for agents without MCP. Its first\n"+
		"line marks it as ctx's output, so ctx import never reads it back. Private and ephemeral entries are\n"+
		"never exported.",
		[]string{"ctx export", "ctx export -o AGENTS.md", "ctx export --max-bytes 8000"},
		exits(ExitUsage, ExitNoStore))
}

func runExport(ctx context.Context, e *env, o exportOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	// The first line marks the text as ctx's own output, so that ctx import never reads it back
	// (docs/format.md "Import").
	header := importer.ExportHeader
	limit := o.MaxBytes
	if limit == 0 {
		limit = math.MaxInt32
	} else if limit -= len(header); limit < 1 {
		return usagef("--max-bytes must leave room for the %d-byte first line", len(header))
	}
	_, text, err := ctxmcp.Onboarding(ctx, s, limit)
	if err != nil {
		return err
	}
	text = header + text
	out := o.Output
	if out == "" {
		_, err := fmt.Fprint(e.stdout, text)
		return err
	}
	if err := atomicfile.Write(out, []byte(text), 0o644); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(e.stderr, "ctx: wrote %s (%d bytes)\n", out, len(text))
	return nil
}
