package app

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ctx-dev/ctx/store"
)

// remoteOptions are the flags of ctx remote.
type remoteOptions struct {
	Remote string // "": the configured one, else origin
	JSON   bool
}

func newRemoteCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "remote",
		Usage: "show the remote and refspecs ctx uses",
		Flags: []cli.Flag{remoteFlag, jsonFlag},
		Action: action(e, func(c *cli.Context) (remoteOptions, error) {
			return remoteOptions{Remote: c.String("remote"), JSON: c.Bool("json")}, nil
		}, runRemote),
	}, "Shows the remote ctx pull and push use (ctx config remote, else origin), its URL, and the refspecs\n"+
		"of the fetch and the push: the context branch, and the machine refs (refs/ctx/machines/*; this\n"+
		"machine pushes its own, see docs/sync.md).",
		[]string{"ctx remote", "ctx remote --remote upstream --json"},
		[]exit{{ExitNoStore, "not a git repository"}})
}

func runRemote(ctx context.Context, e *env, o remoteOptions) error {
	s, err := e.open(ctx)
	if err != nil {
		return err
	}
	name := o.Remote
	if name == "" {
		name = s.RemoteName(ctx)
	}
	url := ""
	if remotes, err := s.Remotes(ctx); err == nil {
		for _, r := range remotes {
			if r.Name == name {
				url = store.RedactURL(r.URL) // no password or token on the screen or in a log
			}
		}
	}
	info := map[string]string{"remote": name, "url": url, "branch": s.BranchRef()}
	if name != "" {
		info["fetch_refspec"] = s.FetchRefspec(name)
		info["push_refspec"] = s.PushRefspec()
		info["tracking_ref"] = s.TrackingRef(name)
		info["machines_fetch_refspec"] = s.MachinesFetchRefspec(name)
		if ref, err := s.MachineRef(); err == nil {
			info["machine_ref"] = ref
			info["machine_push_refspec"] = s.BranchRef() + ":" + ref
		}
	}
	if o.JSON {
		return printJSON(e.stdout, info)
	}
	if name == "" {
		fmt.Fprintln(e.stdout, "no remote: add one with git remote add origin <url>")
		return nil
	}
	fmt.Fprintf(e.stdout, "remote: %s %s\nfetch:  %s\n        %s\npush:   %s\n        %s\n", name, url, info["fetch_refspec"],
		info["machines_fetch_refspec"], info["push_refspec"], info["machine_push_refspec"])
	return nil
}
