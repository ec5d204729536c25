package app

import (
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
// SIGINT/SIGTERM (c.Context), letting the requests in flight finish.
func serveMCPHTTP(c *cli.Context, s *store.Store) error {
	addr := c.String("http")
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--http %q: not host:port", addr)
	}
	if host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	cert, key := c.String("tls-cert"), c.String("tls-key")
	if (cert == "") != (key == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if err := ctxmcp.CheckListenAddr(addr, c.Bool("allow-remote"), cert != "", c.Bool("insecure")); err != nil {
		return usagef("%v", err)
	}
	ts := tokens.Open(s.LocalDir())
	list, err := ts.List(c.Context)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp serve --http: %w", err)
	}
	scheme := "http"
	if cert != "" {
		scheme = "https"
	}
	fmt.Fprintf(c.App.ErrWriter, "ctx mcp: serving %s://%s%s (%d tokens; add one with ctx team token add)\n",
		scheme, ln.Addr(), ctxmcp.HTTPPath, len(list))
	x := ctxmcp.NewServer(s, ctxmcp.Options{Agent: c.String("agent"), Session: c.String("session"), Version: Version,
		Stderr: c.App.ErrWriter})
	return x.ServeHTTP(c.Context, ln, ctxmcp.HTTPOptions{Tokens: ts, AllowedOrigins: c.StringSlice("allow-origin"),
		TLSCert: cert, TLSKey: key})
}
