// Command ctx is a git-native context store for coding agents: knowledge, conventions, decisions, state,
// sessions, skills and team activity kept as commits on a context branch of your repository, synced with
// `ctx push` / `ctx pull`, served to agents by `ctx mcp serve`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ctx-dev/ctx/cmd/ctx/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Run(ctx, os.Args, app.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
