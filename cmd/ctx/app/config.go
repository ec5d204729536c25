package app

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// configKeys are the settings of ctx config, in the order they are printed.
var configKeys = []string{"branch", "remote", "sync.push-with-git", "sync.timeout"}

// runConfig prints all settings, one, or sets one: `ctx config sync.push-with-git true`. With --json the
// settings print as one JSON object (one setting: its JSON value); sync.timeout prints as a Go duration
// ("30s") and is set as one ("5s", "2m") or as a number of seconds ("30"), like --timeout.
func runConfig(c *cli.Context, s *store.Store) error {
	cfg := s.Config()
	get := map[string]func() any{
		"branch":             func() any { return cfg.Branch },
		"remote":             func() any { return cfg.Remote },
		"sync.push-with-git": func() any { return cfg.PushWithGit },
		"sync.timeout": func() any {
			if cfg.TimeoutSecs <= 0 {
				return store.DefaultTimeout.String()
			}
			return (time.Duration(cfg.TimeoutSecs) * time.Second).String()
		},
	}
	switch c.NArg() {
	case 0:
		if c.Bool("json") {
			m := map[string]any{}
			for _, k := range configKeys {
				m[k] = get[k]()
			}
			return printJSON(c.App.Writer, m)
		}
		for _, k := range configKeys {
			fmt.Fprintf(c.App.Writer, "%s=%v\n", k, get[k]())
		}
		return nil
	case 1:
		f, ok := get[c.Args().Get(0)]
		if !ok {
			return usagef("unknown setting %q (known: branch, remote, sync.push-with-git, sync.timeout)", c.Args().Get(0))
		}
		if c.Bool("json") {
			return printJSON(c.App.Writer, f())
		}
		fmt.Fprintln(c.App.Writer, f())
		return nil
	case 2:
		if c.Bool("json") {
			return usagef("--json prints settings: give KEY VALUE without it to set one")
		}
	default:
		return usagef("usage: ctx config [--json] [KEY [VALUE]]")
	}
	key, val := c.Args().Get(0), c.Args().Get(1)
	switch key {
	case "branch":
		return usagef("the branch is chosen at ctx init --branch")
	case "remote":
		// Saved and then used by every sync: refused now when git must never see it (an option, a command
		// transport); "" unsets it.
		if val != "" {
			if err := s.CheckRemote(val, store.RemoteFromUser); err != nil {
				return err
			}
		}
		cfg.Remote = val
	case "sync.push-with-git":
		b, err := strconv.ParseBool(val)
		if err != nil {
			return usagef("sync.push-with-git takes true or false")
		}
		cfg.PushWithGit = b
	case "sync.timeout":
		n, err := parseSeconds(val)
		if err != nil {
			return err
		}
		cfg.TimeoutSecs = n
	default:
		return usagef("unknown setting %q (known: branch, remote, sync.push-with-git, sync.timeout)", key)
	}
	if err := s.SetConfig(cfg); err != nil {
		return err
	}
	if onConfigChanged != nil {
		return onConfigChanged(c, s, key)
	}
	return nil
}

// parseSeconds reads sync.timeout: a Go duration ("5s", "1m30s") or a plain number of seconds ("30"), at
// least one second; a fraction of a second is dropped, as --timeout does.
func parseSeconds(val string) (int, error) {
	bad := usagef("sync.timeout takes a duration of at least 1s, e.g. 30s, 2m or 45 (seconds), got %q", val)
	if n, err := strconv.Atoi(val); err == nil {
		if n < 1 {
			return 0, bad
		}
		return n, nil
	}
	d, err := time.ParseDuration(val)
	if err != nil || d < time.Second {
		return 0, bad
	}
	return int(d / time.Second), nil
}

// onConfigChanged lets hooks.go install the pre-push hook when sync.push-with-git is turned on.
var onConfigChanged func(c *cli.Context, s *store.Store, key string) error
