package app

import (
	"context"
	"fmt"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

func newSessionCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "session",
		Usage: "session history: one record per agent session",
		Subcommands: []*cli.Command{
			newSessionStartCmd(e),
			newSessionUpdateCmd(e),
			newSessionEndCmd(e),
			newSessionListCmd(e),
			newSessionShowCmd(e),
		},
	}, "One record per agent session (history/YYYY/MM/<id>.json): when it started and ended, the agent, a summary,\n"+
		"and the knowledge, decisions and skills it added or used. Export the id of ctx session start as\n"+
		"CTX_SESSION, so that every commit records it (Ctx-Session).",
		[]string{"ctx session start   # prints the new session's id", "export CTX_SESSION=$(ctx session start)",
			"ctx session update \"$CTX_SESSION\" --knowledge architecture", "ctx session end -m 'auth migrated'"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

// sessionListFlags are the flags that add to a session's lists.
func sessionListFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "knowledge", Usage: "knowledge `KEY` added in the session (repeatable)"},
		&cli.StringSliceFlag{Name: "decision", Usage: "decision `ID` added in the session (repeatable)"},
		&cli.StringSliceFlag{Name: "skill", Usage: "skill `NAME` used in the session (repeatable)"},
		&cli.StringFlag{Name: "summary", Aliases: []string{"m"}, Usage: "what happened"},
		jsonFlag,
	}
}

// sessionOptions are the arguments of ctx session start and update: the update (its ID may be "" for
// start: a new id) and, for update, Start (start the session when ID is unknown).
type sessionOptions struct {
	Update store.SessionUpdate // Agent is filled from the store's actor by the run function
	Start  bool
	JSON   bool
}

// sessionParse maps the flags of start and update.
func sessionParse(c *cli.Context) sessionOptions {
	return sessionOptions{JSON: c.Bool("json"), Start: c.Bool("start"), Update: store.SessionUpdate{ID: c.Args().Get(0), Summary: c.String("summary"),
		KnowledgeAdded: c.StringSlice("knowledge"), DecisionsAdded: c.StringSlice("decision"), SkillsUsed: c.StringSlice("skill")}}
}

func newSessionStartCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "start", Usage: "start a session (prints its id; export it as CTX_SESSION)", ArgsUsage: "[ID]", Flags: sessionListFlags(),
		Action: action(e, func(c *cli.Context) (sessionOptions, error) {
			return sessionParse(c), nil
		}, runSessionStart),
	}, "Starts a session record with ID (a new id without one) and prints the id.",
		[]string{"ctx session start", "ctx session start s-42 -m 'auth migration'", "export CTX_SESSION=$(ctx session start)"},
		exits(ExitUsage, ExitNoStore))
}

func runSessionStart(ctx context.Context, e *env, o sessionOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	u := o.Update
	u.Agent = s.Actor.Agent
	ss, _, err := s.StartSession(ctx, u)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, ss, func() { fmt.Fprintln(e.stdout, ss.ID) })
}

func newSessionUpdateCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "update", Usage: "update a started session: set the summary and add to the lists (ctx session start creates one)", ArgsUsage: "ID",
		Flags: append([]cli.Flag{&cli.BoolFlag{Name: "start", Usage: "start the session when ID is unknown, as the MCP tool context_append_session does"}}, sessionListFlags()...),
		Action: action(e, func(c *cli.Context) (sessionOptions, error) {
			if c.NArg() != 1 {
				return sessionOptions{}, usagef("usage: ctx session update ID [--summary S] [--knowledge K] ...")
			}
			return sessionParse(c), nil
		}, runSessionUpdate),
	}, "Sets the summary of a started session and adds to its lists of knowledge, decisions and skills. An\n"+
		"unknown ID is an error (exit 3) unless --start.",
		[]string{"ctx session update s-42 -m 'migrated two services' --knowledge auth", "ctx session update s-43 --start --skill review"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runSessionUpdate(ctx context.Context, e *env, o sessionOptions) error {
	s, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	// AppendSession would start a session it does not know: an unknown ID is a typo here, unless --start
	// says otherwise.
	if !o.Start {
		if _, err := v.GetSession(ctx, o.Update.ID); err != nil {
			return err
		}
	}
	u := o.Update
	u.Agent = s.Actor.Agent
	ss, res, err := s.AppendSession(ctx, u)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, ss, func() { commitLine(e.stdout, "session "+ss.ID, res) })
}

// sessionEndOptions are the arguments of ctx session end.
type sessionEndOptions struct {
	ID      string // the argument, else --session (CTX_SESSION)
	Summary string
}

func newSessionEndCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "end", Usage: "end a session", ArgsUsage: "ID", Flags: []cli.Flag{&cli.StringFlag{Name: "summary", Aliases: []string{"m"}}},
		Action: action(e, func(c *cli.Context) (sessionEndOptions, error) {
			id := c.Args().Get(0)
			if id == "" {
				id = c.String("session")
			}
			if id == "" {
				return sessionEndOptions{}, usagef("usage: ctx session end ID [--summary S]")
			}
			return sessionEndOptions{ID: id, Summary: c.String("summary")}, nil
		}, runSessionEnd),
	}, "Ends the session ID (without ID: the one of --session or CTX_SESSION), with a closing summary.",
		[]string{"ctx session end s-42 -m 'auth migrated'", "CTX_SESSION=s-42 ctx session end"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runSessionEnd(ctx context.Context, e *env, o sessionEndOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	_, res, err := s.EndSession(ctx, o.ID, o.Summary)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "session "+o.ID+" ended", res)
	return nil
}

// sessionListOptions are the flags of ctx session list.
type sessionListOptions struct{ JSON bool }

func newSessionListCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "list", Usage: "list sessions by start time", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (sessionListOptions, error) {
			return sessionListOptions{JSON: c.Bool("json")}, nil
		}, runSessionList),
	}, "Lists the sessions by start time: id, start, agent, end (open while running) and summary.",
		[]string{"ctx session list", "ctx session list --json"},
		exits(ExitNoStore))
}

func runSessionList(ctx context.Context, e *env, o sessionListOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	list, err := v.ListSessions(ctx)
	if err != nil {
		return err
	}
	return e.printOut(o.JSON, list, func() {
		tw := table(e.stdout)
		for _, ss := range list {
			ended := "open"
			if ss.Ended != nil {
				ended = *ss.Ended
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", oneCell(ss.ID), oneCell(ss.Started), oneCell(ss.Agent), oneCell(ended), firstLine(ss.Summary))
		}
		tw.Flush()
	})
}

// sessionShowOptions are the arguments of ctx session show.
type sessionShowOptions struct{ ID string }

func newSessionShowCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "show", Usage: "show a session", ArgsUsage: "ID", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (sessionShowOptions, error) {
			if c.NArg() != 1 {
				return sessionShowOptions{}, usagef("usage: ctx session show ID")
			}
			return sessionShowOptions{ID: c.Args().Get(0)}, nil
		}, runSessionShow),
	}, "Prints the session record ID as JSON.",
		[]string{"ctx session show s-42"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runSessionShow(ctx context.Context, e *env, o sessionShowOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	ss, err := v.GetSession(ctx, o.ID)
	if err != nil {
		return err
	}
	return printJSON(e.stdout, ss)
}
