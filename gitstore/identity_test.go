package gitstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// noIdentityEnv clears the identity testenv sets, points HOME at an empty folder (no ~/.gitconfig) and
// unsets GIT_CONFIG_GLOBAL, so that git and gitstore read ~/.gitconfig and $XDG_CONFIG_HOME/git/config.
func noIdentityEnv(t *testing.T) {
	t.Helper()
	testenv.Unsetenv(t, "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL", "GIT_CONFIG_GLOBAL")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

func TestIdentityEnvWins(t *testing.T) {
	dir := testenv.NewRepo(t)
	testenv.Git(t, dir, "config", "user.name", "Repo Person")
	testenv.Git(t, dir, "config", "user.email", "repo@example.com")
	t.Setenv("GIT_AUTHOR_NAME", "Env Author")
	t.Setenv("GIT_AUTHOR_EMAIL", "env@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "Env Committer")
	t.Setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
	r := open(t, dir)
	sig, err := r.Identity(bg)
	if err != nil || sig.Name != "Env Author" || sig.Email != "env@example.com" || sig.When.IsZero() {
		t.Fatalf("Identity = %+v, %v", sig, err)
	}
	c, err := r.Committer(bg)
	if err != nil || c.Name != "Env Committer" || c.Email != "committer@example.com" {
		t.Fatalf("Committer = %+v, %v", c, err)
	}
	set(t, r, pub, "x", map[string]string{"a": "a"})
	if got := testenv.Git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", pub); got != "Env Author <env@example.com>|Env Committer <committer@example.com>" {
		t.Fatalf("commit identity %q", got)
	}
}

func TestIdentityRepoConfig(t *testing.T) {
	dir := testenv.NewRepo(t)
	noIdentityEnv(t)
	testenv.Git(t, dir, "config", "user.name", "Repo Person")
	testenv.Git(t, dir, "config", "user.email", "repo@example.com")
	r := open(t, dir)
	sig, err := r.Identity(bg)
	if err != nil || sig.Name != "Repo Person" || sig.Email != "repo@example.com" {
		t.Fatalf("Identity = %+v, %v", sig, err)
	}
	// The same as C git's idea of the author.
	if got := testenv.Git(t, dir, "var", "GIT_AUTHOR_IDENT"); len(got) < len("Repo Person <repo@example.com>") || got[:len("Repo Person <repo@example.com>")] != "Repo Person <repo@example.com>" {
		t.Fatalf("git var GIT_AUTHOR_IDENT = %q", got)
	}
	set(t, r, pub, "x", map[string]string{"a": "a"})
	if got := testenv.Git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", pub); got != "Repo Person <repo@example.com>|Repo Person <repo@example.com>" {
		t.Fatalf("commit identity %q", got)
	}
	// Only the email in the environment: the name still comes from the config.
	t.Setenv("GIT_AUTHOR_EMAIL", "env@example.com")
	if sig, _ := r.Identity(bg); sig.Name != "Repo Person" || sig.Email != "env@example.com" {
		t.Fatalf("mixed Identity = %+v", sig)
	}
}

func TestIdentityGlobalConfig(t *testing.T) {
	dir := testenv.NewRepo(t)
	noIdentityEnv(t)
	writeFile(t, filepath.Join(os.Getenv("HOME"), ".gitconfig"), "[user]\n\tname = Global Person\n\temail = global@example.com\n")
	r := open(t, dir)
	sig, err := r.Identity(bg)
	if err != nil || sig.Name != "Global Person" || sig.Email != "global@example.com" {
		t.Fatalf("Identity = %+v, %v", sig, err)
	}
	// The repository's config wins over the global one.
	testenv.Git(t, dir, "config", "user.name", "Repo Person")
	if sig, _ := r.Identity(bg); sig.Name != "Repo Person" || sig.Email != "global@example.com" {
		t.Fatalf("Identity = %+v", sig)
	}
}

func TestIdentityNone(t *testing.T) {
	dir := testenv.NewRepo(t)
	noIdentityEnv(t)
	r := open(t, dir)
	if _, err := r.Identity(bg); !errors.Is(err, gitstore.ErrNoIdentity) {
		t.Fatalf("Identity = %v, want ErrNoIdentity", err)
	}
	before := testenv.Git(t, dir, "for-each-ref")
	_, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		return map[string]*gitstore.Write{pub: {Changes: []gitstore.Change{put("a", "a")}, Message: "x"}}, nil
	})
	if !errors.Is(err, gitstore.ErrNoIdentity) {
		t.Fatalf("Transact without identity = %v, want ErrNoIdentity", err)
	}
	if after := testenv.Git(t, dir, "for-each-ref"); after != before {
		t.Fatal("refs changed")
	}
	// Only a name: still no identity.
	testenv.Git(t, dir, "config", "user.name", "Half")
	if _, err := r.Identity(bg); !errors.Is(err, gitstore.ErrNoIdentity) {
		t.Fatalf("Identity with no email = %v, want ErrNoIdentity", err)
	}
}

// identityOf checks r.Identity against want and against C git's own answer (git var GIT_AUTHOR_IDENT),
// and that a commit made by a transaction carries it.
func identityOf(t *testing.T, dir, want string) {
	t.Helper()
	r := open(t, dir)
	sig, err := r.Identity(bg)
	if err != nil {
		t.Fatalf("Identity: %v (want %s)", err, want)
	}
	if got := sig.Name + " <" + sig.Email + ">"; got != want {
		t.Fatalf("Identity = %s, want %s", got, want)
	}
	if got := testenv.Git(t, dir, "var", "GIT_AUTHOR_IDENT"); !strings.HasPrefix(got, want+" ") {
		t.Fatalf("the test is wrong: git itself says %q", got)
	}
	set(t, r, pub, "x", map[string]string{"a": want})
	if got := testenv.Git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", pub); got != want+"|"+want {
		t.Fatalf("commit identity %q, want %s", got, want)
	}
}

// TestIdentityAsGitResolvesIt: the identity is the one C git uses, wherever git finds it: a file named by
// GIT_CONFIG_GLOBAL (with no ~/.gitconfig, and over a stale one), include.path, and includeIf gitdir:.
func TestIdentityAsGitResolvesIt(t *testing.T) {
	t.Run("GIT_CONFIG_GLOBAL only", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		noIdentityEnv(t)
		global := filepath.Join(t.TempDir(), "gitconfig")
		writeFile(t, global, "[user]\n\tname = Env Global\n\temail = envglobal@example.com\n")
		t.Setenv("GIT_CONFIG_GLOBAL", global)
		identityOf(t, dir, "Env Global <envglobal@example.com>")
	})
	t.Run("GIT_CONFIG_GLOBAL over a stale ~/.gitconfig", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		noIdentityEnv(t)
		writeFile(t, filepath.Join(os.Getenv("HOME"), ".gitconfig"), "[user]\n\tname = Stale Person\n\temail = stale@example.com\n")
		global := filepath.Join(t.TempDir(), "gitconfig")
		writeFile(t, global, "[user]\n\tname = Env Global\n\temail = envglobal@example.com\n")
		t.Setenv("GIT_CONFIG_GLOBAL", global)
		identityOf(t, dir, "Env Global <envglobal@example.com>")
	})
	t.Run("include.path", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		noIdentityEnv(t)
		inc := filepath.Join(t.TempDir(), "identity.inc")
		writeFile(t, inc, "[user]\n\tname = Included Person\n\temail = included@example.com\n")
		writeFile(t, filepath.Join(os.Getenv("HOME"), ".gitconfig"), "[include]\n\tpath = "+inc+"\n")
		identityOf(t, dir, "Included Person <included@example.com>")
	})
	t.Run("includeIf gitdir", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		noIdentityEnv(t)
		work := filepath.Join(t.TempDir(), "work.inc")
		writeFile(t, work, "[user]\n\tname = Work Person\n\temail = work@example.com\n")
		writeFile(t, filepath.Join(os.Getenv("HOME"), ".gitconfig"),
			"[user]\n\tname = Home Person\n\temail = home@example.com\n[includeIf \"gitdir:"+filepath.Dir(dir)+"/\"]\n\tpath = "+work+"\n")
		identityOf(t, dir, "Work Person <work@example.com>")
		other := testenv.NewRepo(t) // another temporary folder: the condition does not hold there
		identityOf(t, other, "Home Person <home@example.com>")
	})
	t.Run("author config keys", func(t *testing.T) {
		dir := testenv.NewRepo(t)
		noIdentityEnv(t)
		writeFile(t, filepath.Join(os.Getenv("HOME"), ".gitconfig"), "[user]\n\tname = User Person\n\temail = user@example.com\n")
		testenv.Git(t, dir, "config", "author.email", "author@example.com")
		r := open(t, dir)
		if sig, err := r.Identity(bg); err != nil || sig.Email != "author@example.com" {
			t.Fatalf("Identity = %+v, %v", sig, err)
		}
		if sig, err := r.Committer(bg); err != nil || sig.Email != "user@example.com" {
			t.Fatalf("Committer = %+v, %v", sig, err)
		}
	})
}

// TestIdentityEMAIL: as git, $EMAIL gives the address when no config does; nothing is guessed from the
// host name without it.
func TestIdentityEMAIL(t *testing.T) {
	dir := testenv.NewRepo(t)
	noIdentityEnv(t)
	testenv.Git(t, dir, "config", "user.name", "Env Mail")
	t.Setenv("EMAIL", "envmail@example.com")
	identityOf(t, dir, "Env Mail <envmail@example.com>")
	os.Unsetenv("EMAIL")
	if _, err := open(t, dir).Identity(bg); !errors.Is(err, gitstore.ErrNoIdentity) {
		t.Fatalf("without EMAIL: %v", err)
	}
}

// The identities git gave are kept in .git/ctx/identity.json for the next process, under a digest of
// what they depend on: a changed config or environment asks git again, a config that includes another
// file is never taken from the file, and the environment's values are not written out.
func TestIdentitySavedForTheNextProcess(t *testing.T) {
	dir := testenv.NewRepo(t)
	noIdentityEnv(t)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'http.extraheader'='Authorization: Bearer s3cr3t-t0ken'")
	testenv.Git(t, dir, "config", "user.name", "Repo Person")
	testenv.Git(t, dir, "config", "user.email", "repo@example.com")
	r := open(t, dir)
	if err := os.MkdirAll(r.CtxDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	ident := func(want string) {
		t.Helper()
		gitstore.ForgetIdentities()
		sig, err := open(t, dir).Identity(bg)
		if err != nil || sig.Name+" <"+sig.Email+">" != want {
			t.Fatalf("Identity = %+v, %v; want %s", sig, err, want)
		}
	}
	ident("Repo Person <repo@example.com>")
	saved, err := os.ReadFile(r.IdentityFile())
	if err != nil {
		t.Fatalf("identities not saved: %v", err)
	}
	if strings.Contains(string(saved), "s3cr3t") || strings.Contains(string(saved), os.Getenv("HOME")) {
		t.Fatalf("the environment written out: %s", saved)
	}
	// A new process takes the file (here edited, to tell it from git's answer).
	writeFile(t, r.IdentityFile(), strings.ReplaceAll(string(saved), "Repo Person", "Saved Person"))
	ident("Saved Person <repo@example.com>")
	// A name that cannot go in a commit header is not taken from the file.
	writeFile(t, r.IdentityFile(), strings.ReplaceAll(string(saved), "Repo Person", `Bad \u003e Person`))
	ident("Repo Person <repo@example.com>")
	// Another config, or another environment, asks git again.
	testenv.Git(t, dir, "config", "user.name", "Renamed Person")
	ident("Renamed Person <repo@example.com>")
	t.Setenv("GIT_AUTHOR_EMAIL", "env@example.com")
	ident("Renamed Person <env@example.com>")
	testenv.Unsetenv(t, "GIT_AUTHOR_EMAIL")
	// A config that includes another file: the included file's changes are seen by the next process.
	other := filepath.Join(t.TempDir(), "other.gitconfig")
	writeFile(t, other, "[user]\n\tname = Included A\n")
	testenv.Git(t, dir, "config", "--unset", "user.name")
	testenv.Git(t, dir, "config", "include.path", other)
	ident("Included A <repo@example.com>")
	writeFile(t, other, "[user]\n\tname = Included B\n")
	ident("Included B <repo@example.com>")
}
