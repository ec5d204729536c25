package app

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// normalizeArgs moves the flags of the leaf command in front of its positional arguments, so that
// `ctx convention set git -f FILE` works as users type it (urfave/cli v2 stops parsing flags at the first
// positional argument). "--" ends flag parsing as usual.
func normalizeArgs(a *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	i, path, flags := walkCommands(a, args)
	out := append([]string{}, args[:i]...)
	var fl, pos, global []string
	for ; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(arg) > 2 && arg[0] == '-' && arg[1] != '-' && isDigits(arg[2:]) && takesValue(flags, arg[:2]) {
			// A one-letter flag with its number joined (ctx log -n1, as git takes it): -n 1.
			fl = append(fl, arg[:2], arg[2:])
			continue
		}
		if strings.HasPrefix(arg, "-") && arg != "-" {
			// A global flag given after the command (ctx mcp serve --agent x) goes back to the front.
			// --help stays with the command it follows (ctx knowledge get k --help: get's help).
			dst := &fl
			if !isFlag(flags, arg) && isFlag(a.Flags, arg) && !isHelpFlag(arg) {
				dst = &global
			}
			*dst = append(*dst, arg)
			if takesValue(append(flags, a.Flags...), arg) && i+1 < len(args) {
				*dst = append(*dst, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, arg)
	}
	out = append(out[:1], append(global, out[1:]...)...)
	out = append(out, fl...)
	if slices.ContainsFunc(fl, isHelpFlag) && isLeaf(a, path) {
		// urfave/cli's help reads a positional argument as a subcommand to explain: a command's help
		// ignores its arguments instead, as git's does. Not for a command with subcommands (or the
		// application): there the argument is a subcommand name, and a misspelt one is an error.
		pos = nil
	}
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}

// walkCommands follows args (args[0] is the program) through flags and command names down to the deepest
// command named. It returns the index of the first argument after that command, the command names on the
// way ("ctx", "decision", "add") and the flags of the last command.
func walkCommands(a *cli.App, args []string) (int, []string, []cli.Flag) {
	path := []string{"ctx"}
	cmds, flags := a.Commands, a.Flags
	i := 1
	for i < len(args) {
		arg := args[i]
		if strings.HasPrefix(arg, "-") && arg != "-" && arg != "--" {
			if (takesValue(flags, arg) || takesValue(a.Flags, arg)) && i+1 < len(args) {
				i++
			}
			i++
			continue
		}
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(arg) {
				next = c
			}
		}
		if next == nil {
			break
		}
		path = append(path, next.Name)
		i++
		cmds, flags = next.Subcommands, next.Flags
		if len(cmds) == 0 {
			break
		}
	}
	return i, path, flags
}

// isLeaf reports whether path (as walkCommands returns it: "ctx", then command names) names a command
// without subcommands.
func isLeaf(a *cli.App, path []string) bool {
	if len(path) < 2 {
		return false
	}
	cmds := a.Commands
	var c *cli.Command
	for _, name := range path[1:] {
		c = nil
		for _, x := range cmds {
			if x.HasName(name) {
				c = x
			}
		}
		if c == nil {
			return false
		}
		cmds = c.Subcommands
	}
	return len(c.Subcommands) == 0
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// isHelpFlag reports whether arg asks for help (urfave/cli's --help, -h).
func isHelpFlag(arg string) bool { return arg == "--help" || arg == "-h" || arg == "-help" }

// isFlag reports whether arg names one of flags.
func isFlag(flags []cli.Flag, arg string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// takesValue reports whether a flag argument ("-f", "--file") needs the next argument as its value.
func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, ok := f.(*cli.BoolFlag); ok {
				return false
			}
			return true
		}
	}
	return false
}
