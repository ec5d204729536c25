package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctx-dev/ctx/adapters"
	"github.com/ctx-dev/ctx/store"
)

// Exit codes of ctx (one place): 0 success, 1 failure, 2 usage error (a bad flag or argument, an unknown
// command, a value the store refuses as invalid: a key, a status, a rating, a scope...), 3 entry not found,
// 4 no context store (run ctx init), 5 a transfer with the remote failed or was refused, 130 interrupted.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitNotFound    = 3
	ExitNoStore     = 4
	ExitTransfer    = 5
	exitInterrupted = 130
)

// usageError marks a mistake in the command line (exit 2). Commands return it where they find the
// mistake; urfave/cli's own parse errors (an unknown flag, a bad flag value, an unknown command) are
// turned into one by the App's OnUsageError and CommandNotFound.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef is a usageError with a formatted message.
func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// ExitCode maps an error to ctx's exit code, by its type only (never its message).
func ExitCode(err error) int {
	var ue *usageError
	var nf *store.NotFoundError
	var te *store.TransferError
	var amb *store.AmbiguousError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ue), errors.As(err, &amb), errors.Is(err, store.ErrInvalidKey), errors.Is(err, store.ErrInvalid),
		errors.Is(err, store.ErrUnsafeRemote), errors.Is(err, adapters.ErrBadArgument):
		return ExitUsage
	case errors.As(err, &nf):
		return ExitNotFound
	case errors.Is(err, store.ErrNotInitialized), errors.Is(err, store.ErrNotRepository):
		return ExitNoStore
	case errors.As(err, &te), errors.Is(err, store.ErrRejected):
		// A remote that sent what ctx refuses (a refused pull, docs/security.md) is a failed transfer.
		return ExitTransfer
	}
	return ExitFailure
}
