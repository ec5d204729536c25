package app

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/tokens"
	"github.com/urfave/cli/v2"
)

// teamTokenCommand is `ctx team token add|list|revoke`: the bearer tokens of `ctx mcp serve --http`
// (docs/http.md). Only their hashes are kept, in <git common dir>/ctx/tokens.json.
func teamTokenCommand() *cli.Command {
	return &cli.Command{
		Name:  "token",
		Usage: "bearer tokens of the MCP HTTP server (ctx mcp serve --http)",
		Description: "A token speaks for one team member (the author of its writes) and optionally one agent " +
			"(their Ctx-Agent trailer). It is shown once, by add; only its SHA-256 is stored, in the repository's " +
			"private directory (<git common dir>/ctx/tokens.json), never on the context branch.\n\n" +
			"EXAMPLES:\n   ctx team token add \"Ada Lovelace\" --email ada@example.com --agent claude-code --expires 30d\n" +
			"   ctx team token add ci-bot --read-only\n   ctx team token list\n   ctx team token revoke 3f2a9c01b7d4\n\n" +
			"EXIT STATUS:\n   0 ok; 1 failure; 2 usage; 3 revoke matched no token.",
		Subcommands: []*cli.Command{
			{
				Name: "add", Usage: "make a token for a member; prints it, alone, as the last line", ArgsUsage: "MEMBER",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "agent", Usage: "the agent `NAME` of the token's writes (Ctx-Agent); default: the client's own name"},
					&cli.StringFlag{Name: "email", Usage: "the author `E-MAIL` of the token's commits"},
					&cli.StringFlag{Name: "expires", Usage: "lifetime `D`: 30d, 12h, 90m; default: never"},
					&cli.BoolFlag{Name: "read-only", Usage: "the token gets the read-only tools only"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx team token add MEMBER [--agent NAME] [--email E-MAIL] [--expires D] [--read-only]")
					}
					sp := tokens.Spec{Member: strings.TrimSpace(c.Args().First()), Email: c.String("email"),
						Agent: c.String("agent"), ReadOnly: c.Bool("read-only")}
					if sp.Agent != "" {
						if err := store.ValidKey(sp.Agent); err != nil || sp.Agent == "cli" {
							return usagef("--agent %q: not a valid agent name (lower-case letters, digits, '-', '_', '.')", sp.Agent)
						}
					}
					if e := c.String("expires"); e != "" {
						d, err := parseLifetime(e)
						if err != nil {
							return usagef("--expires %q: %v", e, err)
						}
						sp.TTL = d
					}
					s, err := open(c)
					if err != nil {
						return err
					}
					tok, t, err := tokens.Open(s.LocalDir()).Add(c.Context, sp)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.ErrWriter, "token %s for %s (%s, expires %s): shown once, store it now\n",
						t.ID, t.Member, access(t), expiry(t))
					fmt.Fprintln(c.App.Writer, tok)
					return nil
				},
			},
			{
				Name: "list", Usage: "list the tokens (never the tokens themselves)", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					s, err := open(c)
					if err != nil {
						return err
					}
					list, err := tokens.Open(s.LocalDir()).List(c.Context)
					if err != nil {
						return err
					}
					if list == nil {
						list = []tokens.Token{}
					}
					for i := range list {
						list[i].Hash = "" // not a secret, but nothing a reader needs
					}
					return printOut(c, list, func() {
						tw := table(c.App.Writer)
						fmt.Fprintln(tw, "ID\tMEMBER\tAGENT\tACCESS\tCREATED\tEXPIRES")
						for _, t := range list {
							agent := t.Agent
							if agent == "" {
								agent = "(client's)"
							}
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Member, agent, access(t),
								t.Created.Format(time.RFC3339), expiry(t))
						}
						tw.Flush()
					})
				},
			},
			{
				Name: "revoke", Usage: "revoke a token by id, or every token of a member", ArgsUsage: "MEMBER|TOKEN-ID",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("usage: ctx team token revoke MEMBER|TOKEN-ID")
					}
					s, err := open(c)
					if err != nil {
						return err
					}
					gone, err := tokens.Open(s.LocalDir()).Revoke(c.Context, c.Args().First())
					if errors.Is(err, tokens.ErrNotFound) {
						return &store.NotFoundError{Msg: err.Error()}
					}
					if err != nil {
						return err
					}
					for _, t := range gone {
						fmt.Fprintf(c.App.Writer, "revoked %s (%s)\n", t.ID, t.Member)
					}
					return nil
				},
			},
		},
	}
}

func access(t tokens.Token) string {
	if t.ReadOnly {
		return "read-only"
	}
	return "read-write"
}

func expiry(t tokens.Token) string {
	if t.Expires == nil {
		return "never"
	}
	return t.Expires.Format(time.RFC3339)
}

// parseLifetime reads a token lifetime: a whole number of days ("30d") or a Go duration ("12h", "90m").
func parseLifetime(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("not a number of days")
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("not a lifetime (30d, 12h, 90m)")
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return d, nil
}
