package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/store"
	"github.com/urfave/cli/v2"
)

// skippedNote is the end of the importer's warning for a file that is no context file; more than
// maxSkipped of them are summed up in one line.
const (
	skippedNote = "not a decision, skill, knowledge or convention file; skipped"
	maxSkipped  = 20
)

// importOptions are the arguments of ctx import.
type importOptions struct {
	Paths       []string
	DryRun      bool
	Scope       store.Scope
	ScopeName   string // as given ("" for the default, public)
	AllowSecret bool   // import files named like secrets without asking
	JSON        bool
}

func newImportCmd(e *env) *cli.Command {
	return withHelp(&cli.Command{
		Name: "import",
		Usage: "import ADR folders, SKILL.md folders, agent instruction files and contributing guides (one commit; " +
			"never .context/, ctx's own export, files git ignores or links out of the tree; a PATH that does not exist is a usage error, exit 2)",
		ArgsUsage: "PATH...",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "show the plan, write nothing"},
			&cli.StringFlag{Name: "scope", Usage: "scope of the imported entries: public (default), private or ephemeral"},
			&cli.BoolFlag{Name: "allow-secret", Usage: "import files named like secrets (.env, id_rsa, *.pem, credentials*, ...) without asking"},
			jsonFlag,
		},
		Action: action(e, func(c *cli.Context) (importOptions, error) {
			if c.NArg() == 0 {
				return importOptions{}, usagef("usage: ctx import PATH... [--dry-run]")
			}
			sc, err := store.ParseScope(c.String("scope"))
			if err != nil {
				return importOptions{}, usagef("%v", err)
			}
			return importOptions{Paths: c.Args().Slice(), DryRun: c.Bool("dry-run"), Scope: sc, ScopeName: c.String("scope"),
				AllowSecret: c.Bool("allow-secret"), JSON: c.Bool("json")}, nil
		}, runImport),
	}, "Reads each PATH (a file or a folder, walked) and imports what it recognises, in one commit: ADRs\n"+
		"(decisions), SKILL.md folders (skills), agent instruction files such as AGENTS.md or CLAUDE.md\n"+
		"(knowledge) and contributing guides (conventions). Importing again updates what changed and adds\n"+
		"nothing twice. Files named like secrets are imported only with --allow-secret or a yes at a terminal.",
		[]string{"ctx import --dry-run .", "ctx import docs/adr .claude/skills AGENTS.md", "ctx import CONTRIBUTING.md --scope private --json"},
		[]exit{{ExitUsage, "usage error, a PATH that does not exist, or files named like secrets refused"}, {ExitNoStore, ""}})
}

func runImport(ctx context.Context, e *env, o importOptions) error {
	for _, p := range o.Paths {
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return usagef("cannot import %s: no such file or directory", p)
			}
			return fmt.Errorf("cannot import %s: %w", p, unwrapPath(err))
		}
	}
	s, err := e.open(ctx)
	var opts importer.Options
	switch {
	case err == nil:
		opts.Root = s.WorkTree()
		if opts.GitFiles, err = s.WorkTreeFiles(ctx); err != nil {
			// Without git the ignore rules cannot be read: .git/ and .context/ are still skipped.
			fmt.Fprintf(e.stderr, "ctx: warning: %v: files git ignores are not recognised\n", err)
			opts.GitFiles = nil
		}
	case !o.DryRun:
		return err
	}
	if s != nil {
		// ctx's own exported skills and rules are skipped before they take a key (docs/adapters.md "Import").
		if opts.Skip, err = skipAdapters(ctx, s); err != nil {
			return err
		}
	}
	// A dry run outside a repository shows the plan with paths relative to each folder given.
	plan, err := importer.ScanWith(ctx, opts, o.Paths...)
	if err != nil {
		return scanError{err}
	}
	if s != nil {
		// Never ctx's own output: its managed blocks, Cursor rules and skills (docs/adapters.md "Import").
		if plan, err = cleanAdapters(ctx, s, plan); err != nil {
			return err
		}
	}
	printPlanWarnings(e.stderr, plan)
	if o.DryRun {
		if o.JSON {
			return printJSON(e.stdout, plan.Items)
		}
		tw := table(e.stdout)
		for _, it := range plan.Items {
			secret := ""
			if it.Secret != "" {
				secret = "\t(looks like a secret: " + it.Secret + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t<- %s%s\n", it.Kind, planName(it), it.Source, secret)
		}
		tw.Flush()
		fmt.Fprintf(e.stdout, "dry run: %s, nothing written\n", plural(len(plan.Items), "item", "items"))
		return nil
	}
	if plan, err = checkSecrets(e, o, plan); err != nil {
		return err
	}
	if len(plan.Items) == 0 {
		fmt.Fprintln(e.stdout, "nothing to import: no decision, skill, knowledge or convention file found (see the warnings)")
		return nil
	}
	if ok, err := s.Initialized(ctx); err != nil {
		return err
	} else if !ok {
		return store.ErrNotInitialized
	}
	names := make([]string, 0, len(o.Paths))
	for _, p := range o.Paths {
		names = append(names, portablePath(opts.Root, p))
	}
	op := store.Op{Name: "import", Key: strings.Join(names, ","),
		Summary: fmt.Sprintf("import %d item(s) from %s", len(plan.Items), strings.Join(names, ", "))}
	res, err := s.ApplyReport(ctx, op, importer.Batch(plan, o.Scope))
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(e.stdout, map[string]any{"items": len(plan.Items), "results": res.Items,
			"decisions": res.Decisions, "changed": res.Committed != nil && res.Changed()})
	}
	printApplied(e.stdout, e.stderr, plan, res)
	return nil
}

// printPlanWarnings prints what the importer guessed or skipped; more than maxSkipped files that are no
// context files are summed up in one line.
func printPlanWarnings(w io.Writer, plan importer.Plan) {
	for _, it := range plan.Items {
		for _, warn := range it.Warnings {
			fmt.Fprintf(w, "ctx: warning: %s: %s\n", it.Source, warn)
		}
	}
	skipped := 0
	for _, warn := range plan.Warnings {
		if strings.HasSuffix(warn, skippedNote) {
			skipped++
		}
	}
	for _, warn := range plan.Warnings {
		if skipped > maxSkipped && strings.HasSuffix(warn, skippedNote) {
			continue
		}
		fmt.Fprintf(w, "ctx: warning: %s\n", warn)
	}
	if skipped > maxSkipped {
		fmt.Fprintf(w, "ctx: %d files are no decision, skill, knowledge or convention file; skipped (ctx import --dry-run --json lists what is imported)\n", skipped)
	}
}

// checkSecrets keeps the items named like secrets only with --allow-secret, or when the user says yes at
// a terminal; without a terminal they are refused (a usage error naming them, nothing written).
func checkSecrets(e *env, o importOptions, plan importer.Plan) (importer.Plan, error) {
	if o.AllowSecret {
		return plan, nil
	}
	var secret []importer.Item
	for _, it := range plan.Items {
		if it.Secret != "" {
			secret = append(secret, it)
		}
	}
	if len(secret) == 0 {
		return plan, nil
	}
	if f, ok := e.stdin.(*os.File); ok && isTerminal(f) {
		in := bufio.NewReader(f)
		keep := plan.Items[:0:0]
		for _, it := range plan.Items {
			if it.Secret != "" {
				fmt.Fprintf(e.stderr, "ctx: %s looks like a secret (%s). Import it into the %s scope? [y/N] ",
					it.Source, it.Secret, scopeWord(o))
				line, _ := in.ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
					fmt.Fprintf(e.stderr, "ctx: %s not imported\n", it.Source)
					continue
				}
			}
			keep = append(keep, it)
		}
		plan.Items = keep
		return plan, nil
	}
	var lines []string
	for _, it := range secret {
		lines = append(lines, fmt.Sprintf("%s (%s)", it.Source, it.Secret))
	}
	return plan, usagef("nothing imported: %s like a secret:\n  %s\nimport with --allow-secret if they hold none, or leave them out",
		plural(len(secret), "file looks", "files look"), strings.Join(lines, "\n  "))
}

func scopeWord(o importOptions) string {
	if s := o.ScopeName; s != "" {
		return s
	}
	return "public"
}

// portablePath is how an import argument is named in a commit message: relative to the work tree root
// when inside it ("." for the root), else its base name; never an absolute, machine-local path.
func portablePath(root, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Base(p)
	}
	if root != "" {
		if rel, err := filepath.Rel(root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(abs)
}

// printApplied says what an import did: one line per updated item (what changed), a line per item left
// where it is, and the counts.
func printApplied(w, ew io.Writer, plan importer.Plan, res *store.Applied) {
	if res.Committed == nil || !res.Changed() {
		for _, it := range res.Items {
			if it.Note != "" {
				fmt.Fprintf(ew, "ctx: %s %s: %s\n", it.Kind, it.Key, it.Note)
			}
		}
		fmt.Fprintln(w, "nothing new to import: every item is already in the store")
		return
	}
	applied := map[string]store.AppliedItem{}
	for _, it := range res.Items {
		if it.Kind == "decision" {
			applied[it.Key] = it
		}
	}
	for _, d := range res.Decisions {
		for _, it := range plan.Items {
			if it.Kind != importer.KindDecision || it.Number <= 0 || it.Number == d.ID || it.Path != d.Source {
				continue
			}
			switch a := applied[strconv.Itoa(d.ID)]; {
			case a.Action == store.ActionAdded:
				fmt.Fprintf(ew, "ctx: warning: %s: number %d was taken, recorded as decision %d\n", it.Source, it.Number, d.ID)
			case a.Action == store.ActionUpdated && slices.ContainsFunc(a.Changes, func(c string) bool { return strings.HasPrefix(c, "source") }):
				// A renamed ADR whose number changed is the decision it was (docs/format.md "Import").
				fmt.Fprintf(ew, "ctx: note: %s (ADR %d) is decision %d renamed and renumbered: it keeps number %d (a decision's number never changes; other decisions and commits refer to it)\n",
					it.Source, it.Number, d.ID, d.ID)
			}
		}
	}
	type counts struct{ added, updated, unchanged int }
	byKind := map[string]*counts{}
	for _, it := range res.Items {
		c := byKind[it.Kind]
		if c == nil {
			c = &counts{}
			byKind[it.Kind] = c
		}
		switch it.Action {
		case store.ActionAdded:
			c.added++
		case store.ActionUpdated:
			c.updated++
			from := ""
			if it.Source != "" {
				from = " (" + it.Source + ")"
			}
			fmt.Fprintf(w, "updated %s %s%s: %s\n", it.Kind, it.Key, from, strings.Join(it.Changes, ", "))
		default:
			c.unchanged++
		}
		if it.Note != "" {
			fmt.Fprintf(ew, "ctx: %s %s: %s\n", it.Kind, it.Key, it.Note)
		}
	}
	var parts []string
	for _, k := range []struct{ kind, one, many string }{{"decision", "decision", "decisions"}, {"skill", "skill", "skills"},
		{"knowledge", "knowledge entry", "knowledge entries"}, {"convention", "convention", "conventions"}} {
		c := byKind[k.kind]
		if c == nil {
			c = &counts{}
		}
		part := plural(c.added, k.one, k.many)
		if c.updated > 0 {
			part += fmt.Sprintf(" (+%d updated)", c.updated)
		}
		parts = append(parts, part)
	}
	fmt.Fprintf(w, "imported %s\n", strings.Join(parts, ", "))
	commitLine(w, "import", res.Committed)
}

// scanError is an error of importer.Scan without its "importer: scan " prefix (the command says what it
// was doing); errors.Is and errors.As still see the error it wraps.
type scanError struct{ err error }

func (e scanError) Error() string {
	msg := e.err.Error()
	if rest, ok := strings.CutPrefix(msg, "importer: scan: "); ok {
		return "import: " + rest
	}
	if rest, ok := strings.CutPrefix(msg, "importer: scan "); ok {
		return "cannot import " + rest
	}
	return msg
}

func (e scanError) Unwrap() error { return e.err }

// unwrapPath drops the "stat PATH: " of an *fs.PathError, whose path the message gives already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func planName(it importer.Item) string {
	if it.Kind == importer.KindDecision {
		if it.Number > 0 {
			return fmt.Sprintf("%d. %s", it.Number, it.Title)
		}
		return it.Title
	}
	return it.Key
}
