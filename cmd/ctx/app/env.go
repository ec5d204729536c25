package app

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/ctx-dev/ctx/store"
)

// env is what a command runs with, in place of package globals: the IO streams, the global flags, the
// store (opened on first use, once) and the terminal that shows git's progress during transfers.
type env struct {
	// stdin is the standard input; stdout and stderr go through a sanitizer (see sanitizer), so that
	// text from the store cannot drive the terminal; rawOut is the standard output without it, for
	// protocols (ctx mcp serve writes JSON-RPC).
	stdin          io.Reader
	stdout, stderr io.Writer
	rawOut         io.Writer
	flushers       []*sanitizer

	// progress receives git's progress output during pull and push: a terminal, nil for none.
	progress *os.File
	// errTerm is the raw standard error when it is a terminal, else nil: for progress bars whose text is
	// ctx's own (ctx history import), which the sanitizer would break (it escapes the carriage return).
	errTerm *os.File

	// The global flags: -C DIR, --agent and --session (the actor), --allow-secret.
	dir         string
	actor       store.Actor
	allowSecret bool

	st *store.Store // opened by open
	// goGitReads keeps the store opened by open on go-git's object reads and caches: a long-running server.
	goGitReads bool

	// args are the command line's arguments as Run got them (ctx log tells "--" PATH from PATH).
	args []string

	// unknown is the usage error of an unknown command (urfave/cli reports it without an error).
	unknown error
	// signalStops: SIGINT or SIGTERM is this command's normal end, exit 0 (a server: docs/http.md
	// "Shutdown"); for every other command a signal is an interruption, exit 130 (Run).
	signalStops bool
	// capture, when set (tests), receives the options of the leaf command instead of running it.
	capture func(opts any)
}

// newEnv is the env of one run with the streams of io.
func newEnv(io IO) *env {
	out, errOut := newSanitizer(io.Out), newSanitizer(io.Err)
	return &env{
		stdin: io.In, stdout: out, stderr: errOut, rawOut: io.Out, flushers: []*sanitizer{out, errOut},
		// Progress goes to the standard error ctx writes, which is the sanitizer and so never a terminal
		// file: git's progress (and the remote's sideband text in it) is not shown until it can be passed
		// through the sanitizer.
		progress: terminal(errOut),
		errTerm:  terminal(io.Err),
	}
}

// flush writes what the sanitized streams hold back.
func (e *env) flush() {
	for _, s := range e.flushers {
		s.flush()
	}
}

// terminal is w when it is a terminal (a character device), else nil.
func terminal(w io.Writer) *os.File {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		return f
	}
	return nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// context is the context a command runs with: secrets allowed by --allow-secret, the progress terminal.
func (e *env) context(ctx context.Context) context.Context {
	if e.allowSecret {
		ctx = store.AllowSecrets(ctx)
	}
	if e.progress != nil {
		ctx = store.WithProgress(ctx, e.progress)
	}
	return ctx
}

// workDir is the directory ctx runs in: -C DIR, else the current one.
func (e *env) workDir() (string, error) {
	if e.dir != "" {
		// As git -C: a directory that is not there is the command line's mistake, said as such.
		if fi, err := os.Stat(e.dir); err != nil {
			return "", usagef("-C %s: %v", e.dir, errors.Unwrap(err))
		} else if !fi.IsDir() {
			return "", usagef("-C %s: not a directory", e.dir)
		}
		return e.dir, nil
	}
	return os.Getwd()
}

// open opens the store of the directory ctx runs in with the actor of the flags, once per run.
func (e *env) open(ctx context.Context) (*store.Store, error) {
	if e.st != nil {
		return e.st, nil
	}
	dir, err := e.workDir()
	if err != nil {
		return nil, err
	}
	s, err := store.Open(ctx, dir, e.actor)
	if err != nil {
		return nil, err
	}
	if !e.goGitReads {
		// A one-shot command reads a few objects of a possibly big pack (docs/architecture.md "Reads").
		s.ReadInProcess()
	}
	e.st = s
	return s, nil
}

// close closes the store open lets this run use, if any (its open packfiles).
func (e *env) close() {
	if e.st != nil {
		_ = e.st.Close()
	}
}

// openInit opens the store and requires the context branch (store.ErrNotInitialized without it).
func (e *env) openInit(ctx context.Context) (*store.Store, error) {
	s, err := e.open(ctx)
	if err != nil {
		return nil, err
	}
	ok, err := s.Initialized(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, store.ErrNotInitialized
	}
	return s, nil
}

// view opens the initialised store and a view of its refs.
func (e *env) view(ctx context.Context) (*store.Store, *store.View, error) {
	s, err := e.openInit(ctx)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.RefView(ctx)
	return s, v, err
}
