package app

import (
	"fmt"
	"strconv"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// runConfig prints all settings, one, or sets one: `ctx config sync.push-with-git true`.
func runConfig(c *cli.Context, s *store.Store) error {
	get := map[string]func() string{
		"branch":             func() string { return s.Cfg.Branch },
		"remote":             func() string { return s.Cfg.Remote },
		"sync.push-with-git": func() string { return strconv.FormatBool(s.Cfg.PushWithGit) },
		"sync.timeout":       func() string { return strconv.Itoa(s.Cfg.TimeoutSecs) },
	}
	order := []string{"branch", "remote", "sync.push-with-git", "sync.timeout"}
	switch c.NArg() {
	case 0:
		for _, k := range order {
			fmt.Fprintf(c.App.Writer, "%s=%s\n", k, get[k]())
		}
		return nil
	case 1:
		f, ok := get[c.Args().Get(0)]
		if !ok {
			return usagef("unknown setting %q (known: branch, remote, sync.push-with-git, sync.timeout)", c.Args().Get(0))
		}
		fmt.Fprintln(c.App.Writer, f())
		return nil
	case 2:
	default:
		return usagef("usage: ctx config [KEY [VALUE]]")
	}
	key, val := c.Args().Get(0), c.Args().Get(1)
	switch key {
	case "branch":
		return usagef("the branch is chosen at ctx init --branch")
	case "remote":
		s.Cfg.Remote = val
	case "sync.push-with-git":
		b, err := strconv.ParseBool(val)
		if err != nil {
			return usagef("sync.push-with-git takes true or false")
		}
		s.Cfg.PushWithGit = b
	case "sync.timeout":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return usagef("sync.timeout takes a number of seconds >= 1")
		}
		s.Cfg.TimeoutSecs = n
	default:
		return usagef("unknown setting %q", key)
	}
	if err := s.SaveConfig(); err != nil {
		return err
	}
	if onConfigChanged != nil {
		return onConfigChanged(c, s, key)
	}
	return nil
}

// onConfigChanged lets hooks.go install the pre-push hook when sync.push-with-git is turned on.
var onConfigChanged func(c *cli.Context, s *store.Store, key string) error
