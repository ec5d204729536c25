package app

import (
	ctxmcp "github.com/ctx-dev/ctx/mcp"
	"github.com/urfave/cli/v2"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "Model Context Protocol server for agents",
		Subcommands: []*cli.Command{{
			Name:  "serve",
			Usage: "serve context:// resources and write tools over stdio (newline-delimited JSON-RPC), or over HTTP with --http",
			Flags: mcpHTTPFlags(),
			Action: func(c *cli.Context) error {
				s, err := open(c)
				if err != nil {
					return err
				}
				if c.IsSet("http") {
					return serveMCPHTTP(c, s)
				}
				return ctxmcp.ServeStdio(c.Context, s, c.App.Reader, rawOut(c), ctxmcp.Options{
					Agent: c.String("agent"), Session: c.String("session"), Version: Version, Stderr: c.App.ErrWriter,
				})
			},
		}},
	}
}
