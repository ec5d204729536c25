package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"

	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/internal/atomicfile"
	ctxmcp "github.com/ctx-dev/ctx/mcp"
	"github.com/urfave/cli/v2"
)

// exportOptions are the flags of ctx export.
type exportOptions struct {
	Output   string // "": standard output
	MaxBytes int    // 0: no limit
	Force    bool   // replace an existing file that is not an earlier ctx export
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
			&cli.BoolFlag{Name: "force", Usage: "with -o: replace FILE even when it is not an earlier ctx export (its text is lost)"},
		},
		Action: action(e, func(c *cli.Context) (exportOptions, error) {
			if c.NArg() > 0 {
				return exportOptions{}, usagef("usage: ctx export [-o FILE] [--max-bytes N]")
			}
			if c.Int("max-bytes") < 0 {
				return exportOptions{}, usagef("--max-bytes takes a number >= 0")
			}
			if c.Bool("force") && c.String("output") == "" {
				return exportOptions{}, usagef("--force goes with -o FILE")
			}
			return exportOptions{Output: c.String("output"), MaxBytes: c.Int("max-bytes"), Force: c.Bool("force")}, nil
		}, runExport),
	}, "Prints the public context (state, knowledge, conventions, decisions, skills) as one markdown\n"+
		"document, the text the MCP prompt context_onboarding gives an agent, for agents without MCP. Its first\n"+
		"line marks it as ctx's output, so ctx import never reads it back. Private and ephemeral entries are\n"+
		"never exported. With -o it replaces FILE only when FILE does not exist or is an earlier ctx export\n"+
		"(its first line says so); any other file is kept and the command fails, unless --force. To keep\n"+
		"a hand-written AGENTS.md or CLAUDE.md and add the context to it, use ctx adapters (a managed block).",
		[]string{"ctx export", "ctx export -o CONTEXT.md", "ctx export --max-bytes 8000", "ctx adapters enable agents   # AGENTS.md keeps its own text"},
		[]exit{{ExitUsage, "a bad flag, or -o FILE exists and is not an earlier ctx export (use --force)"}, {ExitNoStore, ""}})
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
	if !o.Force {
		if err := checkReplace(out); err != nil {
			return err
		}
	}
	if err := atomicfile.Write(out, []byte(text), 0o644); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(e.stderr, "ctx: wrote %s (%d bytes)\n", out, len(text))
	return nil
}

// checkReplace refuses to replace the file out unless it is missing or an earlier ctx export (its first
// line is importer.ExportHeader): a user's own file is never overwritten without --force.
func checkReplace(out string) error {
	f, err := os.Open(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	first := make([]byte, len(importer.ExportMarker))
	n, _ := io.ReadFull(f, first)
	if string(first[:n]) == importer.ExportMarker {
		return nil
	}
	return usagef("%s exists and is not an earlier ctx export: not replaced (ctx export -o %s --force replaces it; ctx adapters keeps its text and adds a managed block)", out, out)
}
