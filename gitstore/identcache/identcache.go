// Package identcache is the identity cache of a repository, <git common dir>/ctx/identity.json: the
// author and committer identities git last gave, kept beside a digest of what they depend on (Stamp), so
// that a ctx process does not run `git var` twice per write (bench/README.md, "Fifth round"). It uses the
// standard library only, so that gitstore and the lean front (cmd/ctx-front, docs/architecture.md "The
// lean front") read and write one cache by one rule.
package identcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/internal/atomicfile"
	"github.com/ctx-dev/ctx/internal/plainfile"
)

// Ident is a name and an e-mail address as a commit header writes them.
type Ident struct{ Name, Email string }

// Valid reports whether id can be written in a commit header as it is: both parts non-empty, with no
// '<', '>', newline or NUL.
func (id Ident) Valid() bool {
	return id.Name != "" && id.Email != "" && !strings.ContainsAny(id.Name+id.Email, "<>\n\x00")
}

// Pair is one resolution of the author and the committer.
type Pair struct{ Author, Committer Ident }

// FileName is the cache's file name in <git common dir>/ctx.
const FileName = "identity.json"

// maxFileBytes is the largest cache file read (a larger one is not ctx's).
const maxFileBytes = 4096

// saved is the content of the cache file. Stamp is the SHA-256 of the Stamp string, so that the values of
// the environment it covers (GIT_CONFIG_PARAMETERS may hold a credential) are not written to disk.
type saved struct {
	Stamp          string `json:"stamp"`
	AuthorName     string `json:"author_name"`
	AuthorEmail    string `json:"author_email"`
	CommitterName  string `json:"committer_name"`
	CommitterEmail string `json:"committer_email"`
}

// Stamp names what an identity depends on: the repository (gitDir, the worktree's git dir; commonDir,
// the common dir), the environment git reads it from (GIT_*, HOME, XDG_CONFIG_HOME, EMAIL), the size and
// modification time of every config file git reads (so that `git config user.name X` is seen at once),
// and the user id. A config file that may include others is marked "\x00include" (Digest then refuses
// the stamp).
func Stamp(gitDir, commonDir string) string {
	var b strings.Builder
	b.WriteString(gitDir)
	env := os.Environ()
	sort.Strings(env)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME" || k == "EMAIL" {
			b.WriteString("\x00" + kv)
		}
	}
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	files := []string{filepath.Join(commonDir, "config"), filepath.Join(gitDir, "config.worktree"),
		os.Getenv("GIT_CONFIG_GLOBAL"), filepath.Join(home, ".gitconfig"), filepath.Join(xdg, "git", "config"),
		os.Getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig"}
	for _, f := range files {
		if f == "" {
			continue
		}
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "\x00%s:%d:%d", f, fi.Size(), fi.ModTime().UnixNano())
			// A config that includes others depends on files the stamp does not name: marked, so that
			// Digest does not carry it to another process.
			if fi.Size() < 1<<20 {
				if data, err := plainfile.ReadFile(f); err == nil && includes(data) {
					b.WriteString("\x00include")
				}
			}
		}
	}
	// The login's passwd entry is where git takes a name from when none is configured ($EMAIL set).
	fmt.Fprintf(&b, "\x00uid:%d", os.Getuid())
	return b.String()
}

// includes reports whether config text may include another file (include.path, includeIf.*.path; git
// matches section names without regard to case).
func includes(data []byte) bool {
	return bytes.Contains(bytes.ToLower(data), []byte("include"))
}

// Digest is the hex SHA-256 of a Stamp, or "" when the stamp cannot be trusted across processes: a
// config file it names includes others, whose changes the stamp does not see.
func Digest(stamp string) string {
	if strings.Contains(stamp, "\x00include") {
		return ""
	}
	sum := sha256.Sum256([]byte(stamp))
	return hex.EncodeToString(sum[:])
}

// Load returns the identities of the cache file at path when they were saved under stamp and are
// valid; ok is false otherwise (no file, another stamp, an untrusted stamp, a file that is not the
// cache's).
func Load(path, stamp string) (p Pair, ok bool) {
	d := Digest(stamp)
	if d == "" {
		return Pair{}, false
	}
	b, err := plainfile.ReadFile(path)
	if err != nil || len(b) > maxFileBytes {
		return Pair{}, false
	}
	var s saved
	if json.Unmarshal(b, &s) != nil || s.Stamp != d {
		return Pair{}, false
	}
	p = Pair{Author: Ident{Name: s.AuthorName, Email: s.AuthorEmail}, Committer: Ident{Name: s.CommitterName, Email: s.CommitterEmail}}
	if !p.Author.Valid() || !p.Committer.Valid() {
		return Pair{}, false
	}
	return p, true
}

// Save writes p under stamp into the cache file at path (atomically, not fsynced: a lost or stale file
// only makes the next process ask git). Nothing is written for an untrusted stamp; failures are ignored.
func Save(path, stamp string, p Pair) {
	d := Digest(stamp)
	if d == "" {
		return
	}
	b, err := json.Marshal(saved{Stamp: d, AuthorName: p.Author.Name, AuthorEmail: p.Author.Email,
		CommitterName: p.Committer.Name, CommitterEmail: p.Committer.Email})
	if err != nil {
		return
	}
	_ = atomicfile.WriteNoSync(path, b, 0o644)
}
