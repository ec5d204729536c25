package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// newEntryCmd is `ctx knowledge|convention set/get/list/scope/rm`: name is the command's name, k the
// kind of entry it manages.
func newEntryCmd(e *env, k store.Kind, name, usage string) *cli.Command {
	return withHelp(&cli.Command{
		Name:  name,
		Usage: usage,
		Subcommands: []*cli.Command{
			newEntrySetCmd(e, k, name),
			newEntryGetCmd(e, k, name),
			newEntryListCmd(e, k, name),
			newScopeCmd(e, name),
			newEntryRmCmd(e, k, name),
		},
	}, fmt.Sprintf("Markdown entries under %s/ of the context branch, one file per KEY, each in a scope:\n"+
		"public (pushed with ctx push), private or ephemeral (kept on this machine).", k.Dir),
		[]string{
			fmt.Sprintf("ctx %s set testing 'Run make test before pushing.'", name),
			fmt.Sprintf("ctx %s set testing -f TESTING.md", name),
			fmt.Sprintf("ctx %s list --json", name),
		},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

// content is where a command's text comes from: the TEXT argument, -f FILE ("-": standard input), or
// standard input when neither is given.
type content struct {
	Text    string
	HasText bool
	File    string
}

// contentOf reads the TEXT argument at index i and -f; both is a usage error.
func contentOf(c *cli.Context, i int) (content, error) {
	in := content{Text: c.Args().Get(i), HasText: c.NArg() > i, File: c.String("file")}
	if in.HasText && in.File != "" {
		return content{}, usagef("give the content either as TEXT or with -f FILE, not both")
	}
	return in, nil
}

// read returns the content: the TEXT argument, or the file or standard input through readInput (at most
// maxInputBytes; a SIGINT stops a blocked read).
func (in content) read(ctx context.Context, stdin io.Reader) (string, error) {
	switch {
	case in.HasText:
		return in.Text, nil
	case in.File == "-" || in.File == "":
		b, err := readInput(ctx, stdin, "standard input")
		return string(b), err
	}
	b, err := readInputFile(ctx, in.File)
	return string(b), err
}

// entrySetOptions are the arguments of ctx knowledge|convention set.
type entrySetOptions struct {
	Kind       store.Kind
	Name       string // the command: knowledge or convention
	Key        string
	Content    content
	Scope      store.Scope // "" keeps the entry's scope (public for a new one)
	Provenance string
}

func newEntrySetCmd(e *env, k store.Kind, name string) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "set",
		Usage:     "write an entry: TEXT, or -f FILE, or standard input",
		ArgsUsage: "KEY [TEXT]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the content from `FILE` (- for stdin)"},
			&cli.StringFlag{Name: "scope", Usage: "public (pushed), private or ephemeral (never pushed)"},
			&cli.StringFlag{Name: "provenance", Usage: "agent_generated, from_approved_context, owner_approved or owner_instruction"},
		},
		Action: action(e, func(c *cli.Context) (entrySetOptions, error) {
			if c.NArg() < 1 || c.NArg() > 2 {
				return entrySetOptions{}, usagef("usage: ctx %s set KEY [TEXT] [-f FILE]", name)
			}
			in, err := contentOf(c, 1)
			if err != nil {
				return entrySetOptions{}, err
			}
			o := entrySetOptions{Kind: k, Name: name, Key: c.Args().Get(0), Content: in, Provenance: c.String("provenance")}
			if c.IsSet("scope") {
				if o.Scope, err = store.ParseScope(c.String("scope")); err != nil {
					return entrySetOptions{}, usagef("%v", err)
				}
			}
			return o, nil
		}, runEntrySet),
	}, "Writes the entry KEY (a file name without .md: letters, digits, '-', '_', '.') in one commit; the\n"+
		"same content again makes no commit. Text that looks like a secret is refused in the public scope.\n"+
		"The file on the branch ends in a newline; a FILE's (or standard input's) own final newline ends its\n"+
		"last line and is not part of the content, as with $(cat FILE).",
		[]string{
			fmt.Sprintf("ctx %s set architecture 'Hexagonal; one binary.'", name),
			fmt.Sprintf("ctx %s set onboarding -f docs/onboarding.md --scope private", name),
			fmt.Sprintf("echo 'Read README first.' | ctx %s set readme", name),
		},
		[]exit{{ExitUsage, "usage error, or an invalid key, scope or provenance"}, {ExitNoStore, ""}})
}

func runEntrySet(ctx context.Context, e *env, o entrySetOptions) error {
	text, err := o.Content.read(ctx, e.stdin)
	if err != nil {
		return err
	}
	if !o.Content.HasText {
		// A file (or standard input) is text whose final newline ends its last line, as $(cat f) drops
		// it: the entry's file then holds the file's bytes (docs/format.md "Knowledge and conventions").
		text = strings.TrimSuffix(text, "\n")
	}
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	res, err := s.SetEntry(ctx, o.Kind, store.SetEntry{Key: o.Key, Content: text, Scope: o.Scope, Provenance: o.Provenance})
	if err != nil {
		return err
	}
	commitLine(e.stdout, o.Name+" "+o.Key, res)
	return nil
}

// entryGetOptions are the arguments of ctx knowledge|convention get.
type entryGetOptions struct {
	Kind store.Kind
	Key  string
	JSON bool
	Raw  bool // the bytes as stored, not through the sanitizer
}

func newEntryGetCmd(e *env, k store.Kind, name string) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "get",
		Usage:     "print an entry's content",
		ArgsUsage: "KEY",
		Flags:     []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "raw", Usage: "print the content's bytes as they are, control characters included"}},
		Action: action(e, func(c *cli.Context) (entryGetOptions, error) {
			if c.NArg() != 1 {
				return entryGetOptions{}, usagef("usage: ctx %s get KEY", name)
			}
			if c.Bool("raw") && c.Bool("json") {
				return entryGetOptions{}, usagef("--raw and --json: give one")
			}
			return entryGetOptions{Kind: k, Key: c.Args().Get(0), JSON: c.Bool("json"), Raw: c.Bool("raw")}, nil
		}, runEntryGet),
	}, "Prints the content of the entry KEY, whatever its scope, and a newline (the body of its file). Control\n"+
		"characters that could drive a terminal (escape sequences, bidirectional overrides) are shown as \\uXXXX,\n"+
		"as in all of ctx's output (docs/security.md \"Input hygiene\"); --raw prints the bytes as stored, for a\n"+
		"file or a program (ctx "+name+" get KEY --raw > f, then set KEY -f f, gives the same content back);\n"+
		"--json gives the content exactly, with its key, scope and front matter.",
		[]string{fmt.Sprintf("ctx %s get architecture", name), fmt.Sprintf("ctx %s get architecture --raw > architecture.md", name), fmt.Sprintf("ctx %s get architecture --json", name)},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runEntryGet(ctx context.Context, e *env, o entryGetOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	en, err := v.GetEntry(ctx, o.Kind, o.Key)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(e.stdout, en)
	}
	// The body as the entry's file holds it: the content and one newline (store.EntryBody), on a terminal
	// and in a pipe alike. With --raw its bytes go out as they are, as git show prints a blob: `ctx
	// knowledge get K --raw > f` then `set K -f f` (which drops one final newline) gives the same content
	// back; without it, control characters are escaped (sanitizer).
	w := e.stdout
	if o.Raw {
		w = e.rawOut
	}
	_, err = w.Write(store.EntryBody(en.Content))
	return err
}

// entryListOptions are the arguments of ctx knowledge|convention list.
type entryListOptions struct {
	Kind store.Kind
	JSON bool
}

func newEntryListCmd(e *env, k store.Kind, name string) *cli.Command {
	return withHelp(&cli.Command{
		Name:  "list",
		Usage: "list the entries of every scope",
		Flags: []cli.Flag{jsonFlag},
		Action: action(e, func(c *cli.Context) (entryListOptions, error) {
			return entryListOptions{Kind: k, JSON: c.Bool("json")}, nil
		}, runEntryList),
	}, "Lists the entries of the public, private and ephemeral scopes: key, scope and first line.",
		[]string{fmt.Sprintf("ctx %s list", name), fmt.Sprintf("ctx %s list --json", name)},
		exits(ExitNoStore))
}

// listHeadBytes is how much of each entry ctx knowledge|convention list reads: the front matter and the
// first lines (64 KiB).
const listHeadBytes = 64 << 10

func runEntryList(ctx context.Context, e *env, o entryListOptions) error {
	_, v, err := e.view(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		list, err := v.ListEntries(ctx, o.Kind)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, list)
	}
	// The table shows one line of each entry: the beginning of each is enough, however large the entries
	// a teammate pushed (docs/limits.md "What the CLI reads").
	list, err := v.ListEntryHeads(ctx, o.Kind, listHeadBytes)
	if err != nil {
		return err
	}
	tw := table(e.stdout)
	for _, en := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", en.Key, en.Scope, firstLine(en.Content))
	}
	return tw.Flush()
}

// entryRmOptions are the arguments of ctx knowledge|convention rm.
type entryRmOptions struct {
	Kind store.Kind
	Name string
	Key  string
}

func newEntryRmCmd(e *env, k store.Kind, name string) *cli.Command {
	return withHelp(&cli.Command{
		Name:      "rm",
		Usage:     "remove an entry",
		ArgsUsage: "KEY",
		Action: action(e, func(c *cli.Context) (entryRmOptions, error) {
			if c.NArg() != 1 {
				return entryRmOptions{}, usagef("usage: ctx %s rm KEY", name)
			}
			return entryRmOptions{Kind: k, Name: name, Key: c.Args().Get(0)}, nil
		}, runEntryRm),
	}, "Removes the entry KEY in one commit (it stays in the branch's history).",
		[]string{fmt.Sprintf("ctx %s rm architecture", name)},
		exits(ExitUsage, ExitNotFound, ExitNoStore))
}

func runEntryRm(ctx context.Context, e *env, o entryRmOptions) error {
	s, err := e.openInit(ctx)
	if err != nil {
		return err
	}
	res, err := s.RemoveEntry(ctx, o.Kind, o.Key)
	if err != nil {
		return err
	}
	commitLine(e.stdout, "removed "+o.Name+" "+o.Key, res)
	return nil
}
