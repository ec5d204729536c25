package app

import (
	"context"

	ctxmcp "github.com/ctx-dev/ctx/mcp"
	"github.com/urfave/cli/v2"
)

func newMCPCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:        "mcp",
		Usage:       "Model Context Protocol server for agents",
		Subcommands: []*cli.Command{newMCPServeCmd(e)},
	}, "The MCP server agents use to read and write the context (README.md lists its resources and tools).",
		[]string{"ctx mcp serve --agent claude-code", "ctx integrations install mcp   # register it with your coding agents"},
		[]exit{{ExitNoStore, "not a git repository"}})
}

// mcpServeOptions are the flags of ctx mcp serve (the agent and session are the global flags).
type mcpServeOptions struct{}

func newMCPServeCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "serve",
		Usage: "serve context:// resources and write tools over stdio (newline-delimited JSON-RPC)",
		Action: action(e, func(*cli.Context) (mcpServeOptions, error) {
			return mcpServeOptions{}, nil
		}, runMCPServe),
	}, "Serves the context:// resources, the tools that write the context and the onboarding prompt over\n"+
		"standard input and output (newline-delimited JSON-RPC) until the client closes its input. Writes are\n"+
		"recorded with --agent (or the client's name) and --session as Ctx-Agent and Ctx-Session.",
		[]string{"ctx mcp serve", "ctx mcp serve --agent cursor --session s-42"},
		[]exit{{ExitOK, "the client closed the connection"}, {ExitNoStore, "not a git repository"}})
}

func runMCPServe(ctx context.Context, e *env, _ mcpServeOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	return ctxmcp.ServeStdio(ctx, s, e.stdin, e.rawOut, ctxmcp.Options{
		Agent: e.actor.Agent, Session: e.actor.Session, Version: Version, Stderr: e.stderr,
	})
}
