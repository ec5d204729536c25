// Command ctx is a git-native context store for coding agents: knowledge, conventions, decisions, state,
// sessions, skills and team activity kept as commits on a context branch of your repository, synced with
// `ctx push` / `ctx pull`, served to agents by `ctx mcp serve`.
package main

import (
	"os"

	"github.com/ctx-dev/ctx/cmd/ctx/app"
)

func main() { os.Exit(app.Main()) }
