package app

import (
	"context"
	"fmt"
	"sort"

	ctxmcp "github.com/ctx-dev/ctx/mcp"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func newMCPCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:        "mcp",
		Usage:       "Model Context Protocol server for agents",
		Subcommands: []*cli.Command{newMCPServeCmd(e), newMCPUsageCmd(e)},
	}, "The MCP server agents use to read and write the context (README.md lists its resources and tools).",
		[]string{"ctx mcp serve --agent claude-code", "ctx integrations install mcp   # register it with your coding agents"},
		[]exit{{ExitNoStore, "not a git repository"}})
}

// mcpServeOptions are the flags of ctx mcp serve (the agent and session are the global flags); HTTP is
// empty for stdio.
type mcpServeOptions struct {
	HTTP           string   // --http ADDR
	AllowRemote    bool     // --allow-remote
	Insecure       bool     // --insecure
	TLSCert        string   // --tls-cert FILE
	TLSKey         string   // --tls-key FILE
	AllowedOrigins []string // --allow-origin, repeatable
}

func newMCPServeCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "serve",
		Usage: "serve context:// resources and write tools over stdio (newline-delimited JSON-RPC), or over HTTP with --http",
		Flags: mcpHTTPFlags(),
		Action: action(e, func(c *cli.Context) (mcpServeOptions, error) {
			o := mcpServeOptions{HTTP: c.String("http"), AllowRemote: c.Bool("allow-remote"), Insecure: c.Bool("insecure"),
				TLSCert: c.String("tls-cert"), TLSKey: c.String("tls-key"), AllowedOrigins: c.StringSlice("allow-origin")}
			if c.IsSet("http") && o.HTTP == "" {
				return o, usagef("--http takes an address (host:port, or :port for 127.0.0.1)")
			}
			if o.HTTP == "" && (o.AllowRemote || o.Insecure || o.TLSCert != "" || o.TLSKey != "" || len(o.AllowedOrigins) > 0) {
				return o, usagef("--allow-remote, --insecure, --tls-cert, --tls-key and --allow-origin go with --http")
			}
			return o, nil
		}, runMCPServe),
	}, "Serves the context:// resources, the tools that write the context and the onboarding prompt over\n"+
		"standard input and output (newline-delimited JSON-RPC) until the client closes its input. Writes are\n"+
		"recorded with --agent (or the client's name) and --session as Ctx-Agent and Ctx-Session.\n\n"+
		"With --http ADDR it serves the same over MCP Streamable HTTP at /mcp instead, until SIGINT or SIGTERM;\n"+
		"every request needs a bearer token of `ctx team token add`, whose member and agent author its writes\n"+
		"(docs/http.md). A non-loopback address needs --allow-remote and TLS (--tls-cert, --tls-key) or --insecure.",
		[]string{"ctx mcp serve", "ctx mcp serve --agent cursor --session s-42", "ctx mcp serve --http :8765",
			"ctx mcp serve --http 0.0.0.0:8443 --allow-remote --tls-cert cert.pem --tls-key key.pem"},
		[]exit{{ExitOK, "the client closed the connection, or the HTTP server was stopped"}, {ExitUsage, "a bad address, or an address refused without --allow-remote and TLS"}, {ExitNoStore, "not a git repository"}})
}

func runMCPServe(ctx context.Context, e *env, o mcpServeOptions) error {
	e.goGitReads = true // a long-running server keeps go-git with its caches
	e.signalStops = true
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	normalGC() // a long-running server: the collector's defaults, then its own limit
	ctxmcp.LimitMemory()
	if o.HTTP != "" {
		return serveMCPHTTP(ctx, e, s, o)
	}
	return ctxmcp.ServeStdio(ctx, s, e.stdin, e.rawOut, ctxmcp.Options{
		Agent: e.actor.Agent, Session: e.actor.Session, Version: Version, Stderr: e.stderr,
	})
}

// mcpUsageOptions are the flags of ctx mcp usage.
type mcpUsageOptions struct{ JSON bool }

func newMCPUsageCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "usage",
		Usage: "show the local usage counts of this clone's MCP servers (tool calls and response bytes)",
		Flags: []cli.Flag{jsonFlag, formatFlag},
		Action: action(e, func(c *cli.Context) (mcpUsageOptions, error) {
			js, err := jsonOrFormat(c)
			return mcpUsageOptions{JSON: js}, err
		}, runMCPUsage),
	}, "Shows how many tools/call requests the stdio MCP servers of this clone answered, per tool, and the\n"+
		"serialized bytes of those responses (the JSON-RPC line with its newline: bytes, not tokens), as kept in\n"+
		"<git common dir>/ctx/mcp-usage.json. Nothing of a call's arguments or results is kept, and nothing\n"+
		"is sent anywhere. ctx status --json and the MCP status tool report only its compact state\n"+
		"(local_usage: enabled, state, definition and retention versions, error); CTX_MCP_USAGE=off stops the\n"+
		"counting. It only reads.",
		[]string{"ctx mcp usage", "ctx mcp usage --json"},
		[]exit{{ExitNoStore, "not a git repository"}})
}

func runMCPUsage(ctx context.Context, e *env, o mcpUsageOptions) error {
	wd, err := e.workDir()
	if err != nil {
		return err
	}
	common, err := store.CommonDir(ctx, wd)
	if err != nil {
		return err
	}
	r := ctxmcp.LocalUsage(common, false)
	if o.JSON {
		return printJSON(e.stdout, r)
	}
	w := e.stdout
	fmt.Fprintf(w, "local usage: %s", r.State)
	if r.Error != "" {
		fmt.Fprintf(w, " (%s)", r.Error)
	}
	fmt.Fprintf(w, "\n%d tool calls, %d response bytes", r.Calls, r.ResponseBytes)
	if r.UpdatedAt != "" {
		fmt.Fprintf(w, ", updated %s", r.UpdatedAt)
	}
	fmt.Fprintln(w)
	names := make([]string, 0, len(r.ByTool))
	for n := range r.ByTool {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-28s %8d calls %12d bytes\n", n, r.ByTool[n].Calls, r.ByTool[n].ResponseBytes)
	}
	return nil
}
