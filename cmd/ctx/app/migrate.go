package app

import (
	"context"
	"fmt"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// migrateOptions are the flags of ctx migrate.
type migrateOptions struct{ JSON bool }

func newMigrateCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "migrate",
		Usage: "move the store to the date-sharded layout (history/YYYY/MM/, skill logs by month) in one commit",
		Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (migrateOptions, error) {
			return migrateOptions{JSON: c.Bool("json")}, nil
		}, runMigrate),
	}, "Moves every session record history/<id>.json to history/YYYY/MM/<id>.json (the month it started),\n"+
		"splits every skill's .usage.ndjson and .feedback.ndjson into month files .usage/YYYY-MM.ndjson and\n"+
		".feedback/YYYY-MM.ndjson, and records \"layout\": 2 in manifest.json: one commit on each context ref\n"+
		"that holds old-layout files. From then on writes go to the new places. ctx never migrates on its own:\n"+
		"teammates whose ctx predates the layout refuse to pull the new paths, so migrate when the team has\n"+
		"upgraded. A teammate's flat-layout writes still merge: the merge takes history/<id>.json and\n"+
		"history/YYYY/MM/<id>.json as one session (docs/format.md \"Layout for growth\", docs/merge.md).\n"+
		"Running it again changes nothing.",
		[]string{"ctx migrate", "ctx migrate && ctx push", "ctx migrate --json"},
		[]exit{{ExitOK, "migrated, or nothing to migrate"}, {ExitFailure, ""}, {ExitNoStore, ""}})
}

func runMigrate(ctx context.Context, e *env, o migrateOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	rep, err := s.Migrate(ctx)
	if err != nil {
		return err
	}
	w := e.stdout
	if o.JSON {
		kept := rep.Kept
		if kept == nil {
			kept = []string{}
		}
		commits := map[store.Scope]string{}
		if rep.Committed != nil {
			for sc, h := range rep.Committed.Commits {
				commits[sc] = h.String()
			}
		}
		return printJSON(w, map[string]any{"layout": store.LayoutSharded, "sessions": rep.Sessions, "logs": rep.Logs,
			"kept": kept, "commits": commits})
	}
	fmt.Fprintf(w, "moved %d session record(s) to history/YYYY/MM/, split %d skill log(s) by month\n", rep.Sessions, rep.Logs)
	for _, k := range rep.Kept {
		fmt.Fprintf(w, "  kept %s\n", k)
	}
	commitLine(w, "migrate", rep.Committed)
	if rep.Committed != nil && rep.Committed.Changed() {
		fmt.Fprintln(w, "publish it with ctx push; teammates need a ctx that reads layout 2 to pull it")
	}
	return nil
}
