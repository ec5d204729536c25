package app

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// ctx remote never prints the password or token of a remote's URL (text and --json), as the pre-push
// hook's messages do not (store.RedactURL); an ssh login, part of the address, is kept.
func TestRemoteRedactsCredentials(t *testing.T) {
	dir := testenv.NewRepo(t)
	testenv.Git(t, dir, "remote", "add", "origin", "https://alice:S3cret@git.example.com/team/x.git")
	testenv.Git(t, dir, "remote", "add", "up", "ssh://git@git.example.com/team/x.git")
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Run(context.Background(), append([]string{"ctx", "-C", dir}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb}); code != ExitOK {
			t.Fatalf("ctx %v: exit %d: %s", args, code, errb.String())
		}
		return out.String() + errb.String()
	}
	for _, args := range [][]string{{"remote"}, {"remote", "--json"}} {
		out := run(args...)
		if strings.Contains(out, "S3cret") || strings.Contains(out, "alice") || !strings.Contains(out, "git.example.com/team/x.git") {
			t.Errorf("ctx %v:\n%s", args, out)
		}
	}
	if out := run("remote", "--remote", "up"); !strings.Contains(out, "ssh://git@git.example.com/team/x.git") {
		t.Errorf("ctx remote --remote up lost the ssh login:\n%s", out)
	}
}
