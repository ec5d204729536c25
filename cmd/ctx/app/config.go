package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/share"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// configKeys are the settings of ctx config, in the order they are printed.
var configKeys = []string{"branch", "history.share", "remote", "sync.push-with-git", "sync.timeout"}

// configOptions are the arguments of ctx config: no key prints every setting, a key prints it, a key and
// a value (Set) sets it.
type configOptions struct {
	Key, Value string
	HasKey     bool // a KEY was given (maybe "")
	Set        bool
	JSON       bool
}

func newConfigCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "config",
		Usage:     "show or set ctx's settings for this repository: branch (shown only: chosen at ctx init --branch), history.share (full/summaries), remote, sync.push-with-git (true/false), sync.timeout (a duration: 30s, 2m, or seconds)",
		ArgsUsage: "[KEY [VALUE]]",
		Flags:     []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (configOptions, error) {
			o := configOptions{Key: c.Args().Get(0), Value: c.Args().Get(1), HasKey: c.NArg() > 0, JSON: c.Bool("json")}
			switch c.NArg() {
			case 0, 1:
			case 2:
				o.Set = true
			default:
				return configOptions{}, usagef("usage: ctx config [--json] [KEY [VALUE]]")
			}
			return o, nil
		}, runConfig),
	}, "Prints every setting of this repository (.git/ctx/config.json), one, or sets one. With --json the\n"+
		"settings print as one JSON object (one setting: its JSON value). sync.timeout prints as a duration\n"+
		"(\"30s\") and is set as one (\"5s\", \"2m\") or as a number of seconds (\"30\"), like --timeout.\n"+
		"Turning sync.push-with-git on installs the pre-push hook, so that git push to the remote ctx syncs with\n"+
		"(remote, else origin) also pushes the context; a push elsewhere (a fork) or a dry run pushes none.\n"+
		"history.share = summaries limits ctx history share to a session's header and summary events.",
		[]string{"ctx config", "ctx config sync.timeout 2m", "ctx config history.share summaries", "ctx config sync.push-with-git true", "ctx config remote upstream", "ctx config --json"},
		[]exit{{ExitUsage, "usage error, an unknown setting, or a value it does not take"}, {ExitNoStore, "not a git repository"}})
}

// runConfig prints all settings, one, or sets one.
func runConfig(ctx context.Context, e *env, o configOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	cfg := s.Config()
	get := map[string]func() any{
		"branch": func() any { return cfg.Branch },
		"history.share": func() any {
			if cfg.HistoryShare == "" {
				return share.ShareFull
			}
			return cfg.HistoryShare
		},
		"remote":             func() any { return cfg.Remote },
		"sync.push-with-git": func() any { return cfg.PushWithGit },
		"sync.timeout": func() any {
			if cfg.TimeoutSecs <= 0 {
				return store.DefaultTimeout.String()
			}
			return (time.Duration(cfg.TimeoutSecs) * time.Second).String()
		},
	}
	switch {
	case !o.HasKey:
		if o.JSON {
			m := map[string]any{}
			for _, k := range configKeys {
				m[k] = get[k]()
			}
			return printJSON(e.stdout, m)
		}
		for _, k := range configKeys {
			fmt.Fprintf(e.stdout, "%s=%v\n", k, get[k]())
		}
		return nil
	case !o.Set:
		f, ok := get[o.Key]
		if !ok {
			return usagef("unknown setting %q (known: branch, history.share, remote, sync.push-with-git, sync.timeout)", o.Key)
		}
		if o.JSON {
			return printJSON(e.stdout, f())
		}
		fmt.Fprintln(e.stdout, f())
		return nil
	case o.JSON:
		return usagef("--json prints settings: give KEY VALUE without it to set one")
	}
	switch o.Key {
	case "branch":
		return usagef("the branch is chosen at ctx init --branch: to rename it, git branch -m %s NEW, then ctx init --branch NEW", cfg.Branch)
	case "remote":
		// Saved and then used by every sync: refused now when git must never see it (an option, a command
		// transport); "" unsets it.
		if o.Value != "" {
			if err := s.CheckRemote(o.Value, store.RemoteFromUser); err != nil {
				return err
			}
			if err := checkRemoteExists(ctx, s, o.Value); err != nil {
				return err
			}
		}
		cfg.Remote = o.Value
	case "history.share":
		if o.Value != share.ShareFull && o.Value != share.ShareSummaries {
			return usagef("history.share takes full or summaries")
		}
		cfg.HistoryShare = o.Value
	case "sync.push-with-git":
		b, err := strconv.ParseBool(o.Value)
		if err != nil {
			return usagef("sync.push-with-git takes true or false")
		}
		cfg.PushWithGit = b
	case "sync.timeout":
		n, err := parseSeconds(o.Value)
		if err != nil {
			return err
		}
		cfg.TimeoutSecs = n
	default:
		return usagef("unknown setting %q (known: branch, history.share, remote, sync.push-with-git, sync.timeout)", o.Key)
	}
	if err := s.SetConfig(cfg); err != nil {
		return err
	}
	if o.Key == "sync.push-with-git" {
		return pushHookChanged(ctx, e, s)
	}
	return nil
}

// parseSeconds reads sync.timeout: a Go duration ("5s", "1m30s") or a plain number of seconds ("30"), at
// least one second; a fraction of a second is dropped, as --timeout does.
func parseSeconds(val string) (int, error) {
	bad := usagef("sync.timeout takes a duration from 1s to %v, e.g. 30s, 2m or 45 (seconds), got %q", store.MaxTimeout, val)
	if n, err := strconv.ParseInt(val, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if err != nil || n < 1 || n > int64(store.MaxTimeout/time.Second) {
			return 0, bad
		}
		return int(n), nil
	}
	d, err := time.ParseDuration(val)
	if err != nil || d < time.Second || d > store.MaxTimeout {
		return 0, bad
	}
	return int(d / time.Second), nil
}

// checkRemoteExists refuses a saved remote that names nothing: a bare word (no "/", ":" or "\\") that is
// neither a remote configured in git nor an existing path, which every sync would refuse later
// (git would take it for a path). A URL or a path is saved as given (docs/security.md).
func checkRemoteExists(ctx context.Context, s *store.Store, remote string) error {
	if strings.ContainsAny(remote, "/:\\") {
		return nil
	}
	rs, err := s.Remotes(ctx)
	if err != nil {
		return err
	}
	names := make([]string, len(rs))
	for i, r := range rs {
		if r.Name == remote {
			return nil
		}
		names[i] = r.Name
	}
	if _, err := os.Stat(remote); err == nil {
		return nil
	}
	have := "this repository has no remote"
	if len(names) > 0 {
		have = "its remotes are " + strings.Join(names, ", ")
	}
	return usagef("no remote named %s in this repository (%s; git remote add %s URL adds one); a URL or a path is also taken", remote, have, remote)
}
