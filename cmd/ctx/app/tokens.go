package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/tokens"
	"github.com/urfave/cli/v2"
)

// newTeamTokenCmd is `ctx team token add|list|revoke`: the bearer tokens of `ctx mcp serve --http`
// (docs/http.md). Only their hashes are kept, in <git common dir>/ctx/tokens.json.
func newTeamTokenCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "token",
		Usage: "bearer tokens of the MCP HTTP server (ctx mcp serve --http)",
		Subcommands: []*cli.Command{
			newTeamTokenAddCmd(e),
			newTeamTokenListCmd(e),
			newTeamTokenRevokeCmd(e),
		},
	}, "A token speaks for one team member (the author of its writes) and optionally one agent (their\n"+
		"Ctx-Agent trailer). It is shown once, by add; only its SHA-256 is stored, in the repository's private\n"+
		"directory (<git common dir>/ctx/tokens.json), never on the context branch.",
		[]string{"ctx team token add \"Ada Lovelace\" --email ada@example.com --agent claude-code --expires 30d",
			"ctx team token add ci-bot --read-only", "ctx team token list", "ctx team token revoke 3f2a9c01b7d4"},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

// teamTokenAddOptions are the arguments and flags of ctx team token add.
type teamTokenAddOptions struct{ Spec tokens.Spec }

func newTeamTokenAddCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "add", Usage: "make a token for a member; prints it, alone, as the last line", ArgsUsage: "MEMBER",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "agent", Usage: "the agent `NAME` of the token's writes (Ctx-Agent); default: the client's own name"},
			&cli.StringFlag{Name: "email", Usage: "the author `E-MAIL` of the token's commits; required unless --read-only (git would record \"MEMBER <>\")"},
			&cli.StringFlag{Name: "expires", Usage: "lifetime `D`: 30d, 12h, 90m; default: never"},
			&cli.BoolFlag{Name: "read-only", Usage: "the token gets the read-only tools only"},
		},
		Action: action(e, func(c *cli.Context) (teamTokenAddOptions, error) {
			if c.NArg() != 1 {
				return teamTokenAddOptions{}, usagef("usage: ctx team token add MEMBER --email E-MAIL [--agent NAME] [--expires D] [--read-only]")
			}
			sp := tokens.Spec{Member: strings.TrimSpace(c.Args().First()), Email: c.String("email"),
				Agent: c.String("agent"), ReadOnly: c.Bool("read-only")}
			if strings.TrimSpace(sp.Email) == "" && !sp.ReadOnly {
				return teamTokenAddOptions{}, usagef("--email is required for a read-write token: it is the author e-mail of the token's commits (%s <E-MAIL>); a --read-only token makes no commits", sp.Member)
			}
			if sp.Agent != "" {
				if sp.Agent == "cli" {
					return teamTokenAddOptions{}, usagef("--agent cli: \"cli\" is the agent name of a person at the command line, not of a token's MCP client; name the client (e.g. claude-code) or leave --agent out to take the client's own name")
				}
				if err := store.ValidKey(sp.Agent); err != nil {
					return teamTokenAddOptions{}, usagef("--agent %q: not a valid agent name: %v", sp.Agent, err)
				}
			}
			if x := c.String("expires"); x != "" {
				d, err := parseLifetime(x)
				if err != nil {
					return teamTokenAddOptions{}, usagef("--expires %q: %v", x, err)
				}
				sp.TTL = d
			}
			return teamTokenAddOptions{Spec: sp}, nil
		}, runTeamTokenAdd),
	}, "Makes a token for the team member MEMBER and prints it, alone, as the last line of standard output\n"+
		"(a note about it goes to standard error). It is shown only this once.",
		[]string{"ctx team token add ada --email ada@example.com --agent claude-code --expires 30d", "TOKEN=$(ctx team token add ci-bot --read-only)"},
		exits(ExitUsage, ExitNoStore))
}

func runTeamTokenAdd(ctx context.Context, e *env, o teamTokenAddOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	tok, t, err := tokens.Open(s.LocalDir()).Add(ctx, o.Spec)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "token %s for %s (%s, expires %s): shown once, store it now\n",
		t.ID, t.Member, access(t), expiry(t))
	fmt.Fprintln(e.stdout, tok)
	return nil
}

// teamTokenListOptions are the flags of ctx team token list.
type teamTokenListOptions struct{ JSON bool }

func newTeamTokenListCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "list", Usage: "list the tokens (never the tokens themselves)", Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (teamTokenListOptions, error) {
			return teamTokenListOptions{JSON: c.Bool("json")}, nil
		}, runTeamTokenList),
	}, "Lists the tokens: id, member, agent, access, when made and when they expire; never a token or its hash.",
		[]string{"ctx team token list", "ctx team token list --json"},
		exits(ExitNoStore))
}

func runTeamTokenList(ctx context.Context, e *env, o teamTokenListOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	list, err := tokens.Open(s.LocalDir()).List(ctx)
	if err != nil {
		return err
	}
	if list == nil {
		list = []tokens.Token{}
	}
	for i := range list {
		list[i].Hash = "" // not a secret, but nothing a reader needs
	}
	return e.printOut(o.JSON, list, func() {
		tw := table(e.stdout)
		fmt.Fprintln(tw, "ID\tMEMBER\tAGENT\tACCESS\tCREATED\tEXPIRES")
		for _, t := range list {
			agent := t.Agent
			if agent == "" {
				agent = "(client's)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", oneCell(t.ID), oneCell(t.Member), oneCell(agent), access(t),
				t.Created.Format(time.RFC3339), expiry(t))
		}
		tw.Flush()
	})
}

// teamTokenRevokeOptions are the arguments of ctx team token revoke: a member or a token id.
type teamTokenRevokeOptions struct{ Who string }

func newTeamTokenRevokeCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "revoke", Usage: "revoke a token by id, or every token of a member", ArgsUsage: "MEMBER|TOKEN-ID",
		Action: action(e, func(c *cli.Context) (teamTokenRevokeOptions, error) {
			if c.NArg() != 1 {
				return teamTokenRevokeOptions{}, usagef("usage: ctx team token revoke MEMBER|TOKEN-ID")
			}
			return teamTokenRevokeOptions{Who: c.Args().First()}, nil
		}, runTeamTokenRevoke),
	}, "Revokes the token with the id TOKEN-ID, or every token of MEMBER. A running server refuses it from its next request on.",
		[]string{"ctx team token revoke 3f2a9c01b7d4", "ctx team token revoke ada"},
		[]exit{{ExitUsage, ""}, {ExitNotFound, "no token matched"}, {ExitNoStore, ""}})
}

func runTeamTokenRevoke(ctx context.Context, e *env, o teamTokenRevokeOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	gone, err := tokens.Open(s.LocalDir()).Revoke(ctx, o.Who)
	if errors.Is(err, tokens.ErrNotFound) {
		return &store.NotFoundError{Msg: err.Error()}
	}
	if err != nil {
		return err
	}
	for _, t := range gone {
		fmt.Fprintf(e.stdout, "revoked %s (%s)\n", t.ID, t.Member)
	}
	return nil
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

// maxLifetimeDays bounds a token's lifetime (100 years): a longer one would overflow time.Duration
// (292 years) or the expiry's date, and a token meant never to expire is made without --expires.
const maxLifetimeDays = 36500

// parseLifetime reads a token lifetime: a whole number of days ("30d") or a Go duration ("12h", "90m"),
// positive and at most maxLifetimeDays days.
func parseLifetime(s string) (time.Duration, error) {
	tooLong := fmt.Errorf("too long: at most %dd (100 years); leave --expires out for a token that never expires", maxLifetimeDays)
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) && !strings.HasPrefix(n, "-") {
				return 0, tooLong
			}
			return 0, fmt.Errorf("not a number of days")
		}
		if days > maxLifetimeDays {
			return 0, tooLong
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("not a lifetime (30d, 12h, 90m)")
		}
		if d > maxLifetimeDays*24*time.Hour {
			return 0, tooLong
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return d, nil
}
