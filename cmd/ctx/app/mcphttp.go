package app

import (
	"context"
	"fmt"
	"net"

	ctxmcp "github.com/ctx-dev/ctx/mcp"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/tokens"
	"github.com/urfave/cli/v2"
)

// mcpHTTPFlags are the flags of `ctx mcp serve --http` (docs/http.md).
func mcpHTTPFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "http", Usage: "serve MCP Streamable HTTP on `ADDR` (host:port; endpoint /mcp; \":8765\" is 127.0.0.1:8765) instead of stdio; every request needs a token of `ctx team token add`"},
		&cli.BoolFlag{Name: "allow-remote", Usage: "with --http: allow a non-loopback address (needs --tls-cert and --tls-key, or --insecure)"},
		&cli.BoolFlag{Name: "insecure", Usage: "with --allow-remote: serve plain HTTP to other machines (tokens travel in clear text)"},
		&cli.StringFlag{Name: "tls-cert", Usage: "with --http: TLS certificate `FILE` (PEM)"},
		&cli.StringFlag{Name: "tls-key", Usage: "with --http: TLS private key `FILE` (PEM)"},
		&cli.StringSliceFlag{Name: "allow-origin", Usage: "with --http: a browser `ORIGIN` (scheme://host[:port]) allowed besides the server's own; repeatable"},
	}
}

// serveMCPHTTP is `ctx mcp serve --http ADDR`: it checks the address, listens, and serves until
// SIGINT/SIGTERM (ctx), letting the requests in flight finish.
func serveMCPHTTP(ctx context.Context, e *env, s *store.Store, o mcpServeOptions) error {
	addr := o.HTTP
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--http %q: not host:port", addr)
	}
	if host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if err := ctxmcp.CheckListenAddr(addr, o.AllowRemote, o.TLSCert != "", o.Insecure); err != nil {
		return usagef("%v", err)
	}
	ts := tokens.Open(s.LocalDir())
	list, err := ts.List(ctx)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp serve --http: %w", err)
	}
	scheme := "http"
	if o.TLSCert != "" {
		scheme = "https"
	}
	tokensNote := plural(len(list), "token", "tokens")
	fmt.Fprintf(e.stderr, "ctx mcp: serving %s://%s%s (%s; add one with ctx team token add)\n",
		scheme, ln.Addr(), ctxmcp.HTTPPath, tokensNote)
	e.flush()
	x := ctxmcp.NewServer(s, ctxmcp.Options{Agent: e.actor.Agent, Session: e.actor.Session, Version: Version,
		Stderr: e.stderr})
	return x.ServeHTTP(ctx, ln, ctxmcp.HTTPOptions{Tokens: ts, AllowedOrigins: o.AllowedOrigins,
		TLSCert: o.TLSCert, TLSKey: o.TLSKey})
}
