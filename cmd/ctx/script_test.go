package main_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the CLI acceptance tests in testdata/script/*.txtar with the built ctx binary and the
// real git CLI. Each script starts in an empty $WORK with a hermetic git configuration.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("PATH", filepath.Dir(ctxBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			for k, v := range map[string]string{
				"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Ada Lovelace", "GIT_AUTHOR_EMAIL": "ada@example.com",
				"GIT_COMMITTER_NAME": "Ada Lovelace", "GIT_COMMITTER_EMAIL": "ada@example.com", "CTX_MACHINE": "laptop",
				"GIT_TERMINAL_PROMPT": "0",
			} {
				env.Setenv(k, v)
			}
			env.Setenv("CORPUS", filepath.Join(mustAbs("../../testdata/corpus")))
			return nil
		},
	})
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return a
}
