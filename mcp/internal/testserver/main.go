// Command testserver is a minimal `ctx mcp serve` for tests that need a server binary before the CLI
// exists (mcp/node_test.go): it opens the context store of the repository in its working directory and
// serves MCP on stdin/stdout (newline-delimited JSON-RPC), logging to stderr.
//
// Usage: testserver [-agent NAME] [-session ID] [-history DIR]
//
// -history names the agent-history index the read tools serve (mcp.Options.HistoryDir).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ctx-dev/ctx/mcp"
	"github.com/ctx-dev/ctx/store"
)

func main() {
	agent := flag.String("agent", "", "agent name recorded in the commits (default: the client's clientInfo.name)")
	session := flag.String("session", "", "session id")
	hist := flag.String("history", "", "agent-history index directory (default: the repository's)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *agent, *session, *hist); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, agent, session, hist string) error {
	st, err := store.Open(ctx, ".", store.Actor{Agent: agent, Session: session})
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	mcp.LimitMemory()
	return mcp.ServeStdio(ctx, st, os.Stdin, os.Stdout, mcp.Options{Agent: agent, Session: session, Version: "test", Stderr: os.Stderr, HistoryDir: hist})
}
