package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/store/secrets"
)

// ErrSecret is wrapped by the error of a public write refused because it would publish text that looks like
// a credential (a *SecretError). It also wraps ErrInvalid: nothing is written.
var ErrSecret = errors.New("looks like a secret")

// SecretError lists what a refused public write holds that looks like a secret, file by file, without
// the secrets themselves.
type SecretError struct {
	Findings []SecretFinding
}

// SecretFinding is one match of the detector (package secrets) in a file of a public write.
type SecretFinding struct {
	Path string
	secrets.Finding
}

func (e *SecretError) Error() string {
	var b strings.Builder
	b.WriteString("refused to publish what looks like a secret: ")
	for i, f := range e.Findings {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s line %d: %s (%s, rule %s)", f.Path, f.Line, f.Description, f.Redacted, f.Rule)
	}
	b.WriteString(". Public entries are pushed to every clone of the repository: remove it, keep the entry private (scope private), or allow it explicitly")
	return b.String()
}

// Is makes a SecretError match ErrSecret and ErrInvalid.
func (e *SecretError) Is(target error) bool { return target == ErrSecret || target == ErrInvalid }

type allowSecretKey struct{}

// AllowSecrets returns a context under which public writes are not checked for secrets (the CLI's
// --allow-secret, the MCP tools' allow_secret argument).
func AllowSecrets(ctx context.Context) context.Context {
	return context.WithValue(ctx, allowSecretKey{}, true)
}

func secretsAllowed(ctx context.Context) bool {
	ok, _ := ctx.Value(allowSecretKey{}).(bool)
	return ok
}

// checkSecrets refuses public changes that add text looking like a secret (package secrets): for each
// file written on the public ref, the findings not already in that file's current version, and those of
// msg, the message of the public commit (pushed with it: its summary and trailers), reported as the path
// "commit message". Private and ephemeral writes are never checked: they are not pushed
// (docs/security.md, "Secrets").
func checkSecrets(ctx context.Context, v *View, public []gitstore.Change, msg string) error {
	if len(public) == 0 {
		return nil
	}
	var found []SecretFinding
	for _, f := range secrets.New("", msg) {
		found = append(found, SecretFinding{Path: "commit message", Finding: f})
	}
	for _, c := range public {
		if c.Delete {
			continue
		}
		old, err := v.ReadIn(ctx, Public, c.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, f := range secrets.New(string(old), string(c.Data)) {
			found = append(found, SecretFinding{Path: c.Path, Finding: f})
		}
	}
	if len(found) > 0 {
		return &SecretError{Findings: found}
	}
	return nil
}
