// Package lean is what ctx's lean programs share (the front `ctx` and `ctx-search`,
// docs/architecture.md "The lean front"): finding and running the full program `ctx-full` beside them,
// and telling whether output needs ctx-full's sanitizer. It imports the standard library only: every
// package it links is paid for at the start of every `ctx` process.
package lean

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"unicode/utf8"
)

// FullName is the file name of the full program, looked for in the folder of the running executable.
const FullName = "ctx-full"

// Beside returns the path of the program name in the folder of this executable (symbolic links
// resolved, so that a link to ctx on the PATH finds ctx-full next to the real file; ".exe" added on
// Windows). It refuses a file that is this very executable (a copy of a lean program under that name
// would exec itself forever) and one that does not exist (the os.Stat error).
func Beside(name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this executable: %w", err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	path := filepath.Join(filepath.Dir(self), name)
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if me, err := os.Stat(self); err == nil && os.SameFile(fi, me) {
		return "", errors.New(path + " is this program, not the full one")
	}
	return path, nil
}

// RunFull runs ctx-full with args (args[0] is the program name it sees) and this process's streams
// and environment, and returns the exit code to leave with. On Unix it replaces this process (execve:
// same pid, arguments, environment and descriptors, so signals, exit codes and git's hook timeouts see
// one process) and returns only when ctx-full cannot be run: then it says so on stderr and returns 1.
func RunFull(args []string) int {
	path, err := Beside(FullName)
	if err == nil {
		var code int
		if code, err = run(path, args); err == nil {
			return code
		}
	}
	fmt.Fprintf(os.Stderr, "ctx: cannot run the full ctx program: %v (ctx is programs side by side, ctx, %s and ctx-search: "+
		"install them with make install; docs/architecture.md \"The lean front\")\n", err, FullName)
	return 1
}

// Printable reports whether ctx-full's output sanitizer (cmd/ctx/app's sanitizer) would write b
// unchanged: valid UTF-8 with no control character but tab, newline and the CR of a CRLF, no DEL, no C1
// character and no bidirectional override or isolate. A lean program hands output that is not printable
// to ctx-full, which escapes it.
func Printable(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		if c == '\r' {
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
				continue
			}
			return false
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			return false
		}
		i += n
	}
	return true
}
