// Package tokens keeps the bearer tokens of ctx's MCP HTTP server (docs/http.md): who each token
// speaks for (a team member and an agent), whether it may write, and when it expires. Only a token's
// SHA-256 is stored, in <git common dir>/ctx/tokens.json (the repository's private directory: never on
// the context branch, never pushed); the token itself is shown once, when it is made.
//
// A token reads "ctx_<id>_<secret>": id is 12 hex digits that name the token in lists and logs (not a
// secret), secret 32 random bytes in base64url. Verify looks the record up by id and compares the hash
// in constant time.
package tokens

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/gofrs/flock"
)

// FileName is the token file's name in the repository's private ctx directory.
const FileName = "tokens.json"

// Errors of Verify. Each is a reason to answer 401; none says more to the caller than "unauthorized".
var (
	ErrMalformed = errors.New("token: malformed")
	ErrUnknown   = errors.New("token: unknown or revoked")
	ErrExpired   = errors.New("token: expired")
)

// ErrNotFound is Revoke's error when nothing matches.
var ErrNotFound = errors.New("token: no token matches")

// Token is one stored token: everything but the token itself.
type Token struct {
	ID       string     `json:"id"`                // 12 hex digits, the token's public name
	Member   string     `json:"member"`            // the team member it speaks for: the commits' author name
	Email    string     `json:"email,omitempty"`   // the author e-mail of its commits ("" is none)
	Agent    string     `json:"agent,omitempty"`   // the Ctx-Agent of its writes; "" is the client's own name
	ReadOnly bool       `json:"read_only"`         // no write tools
	Created  time.Time  `json:"created"`           // UTC
	Expires  *time.Time `json:"expires,omitempty"` // UTC; nil never expires
	Hash     string     `json:"sha256"`            // hex SHA-256 of the whole token
}

// Expired reports whether t expired at now.
func (t Token) Expired(now time.Time) bool { return t.Expires != nil && !now.Before(*t.Expires) }

// Spec is what Add makes a token for.
type Spec struct {
	Member   string
	Email    string
	Agent    string
	ReadOnly bool
	TTL      time.Duration // 0: never expires
}

// Store is the token file of one repository. Its methods are safe for concurrent use, also across
// processes (writes hold an flock on the file's lock file and replace the file atomically).
type Store struct {
	path string

	mu    sync.Mutex
	stamp string // size and modification time of the file when cache was read
	cache []Token
	now   func() time.Time
}

// Open returns the token store in dir (the repository's <git common dir>/ctx). The file need not exist.
func Open(dir string) *Store {
	return &Store{path: filepath.Join(dir, FileName), now: time.Now}
}

// Path is the token file's path.
func (s *Store) Path() string { return s.path }

var (
	tokenRE = lazyre.New(`^ctx_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$`)
	idRE    = lazyre.New(`^[0-9a-f]{12}$`)
)

// Add makes a token for sp, stores its hash and returns the token (to be shown once) with its record.
func (s *Store) Add(ctx context.Context, sp Spec) (string, Token, error) {
	if strings.TrimSpace(sp.Member) == "" {
		return "", Token{}, errors.New("token: member must not be blank")
	}
	if strings.ContainsAny(sp.Member+sp.Email, "<>\n\r\x00") {
		return "", Token{}, errors.New("token: member and e-mail must not contain '<', '>' or control characters")
	}
	if sp.TTL < 0 {
		return "", Token{}, errors.New("token: expiry must be in the future")
	}
	var raw [9 + 32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", Token{}, fmt.Errorf("token: random: %w", err)
	}
	id := hex.EncodeToString(raw[:6])
	secret := "ctx_" + id + "_" + base64.RawURLEncoding.EncodeToString(raw[9:])
	now := s.now().UTC().Truncate(time.Second)
	t := Token{ID: id, Member: sp.Member, Email: sp.Email, Agent: sp.Agent, ReadOnly: sp.ReadOnly, Created: now,
		Hash: hashOf(secret)}
	if sp.TTL > 0 {
		e := now.Add(sp.TTL)
		t.Expires = &e
	}
	err := s.update(ctx, func(list []Token) ([]Token, error) { return append(list, t), nil })
	if err != nil {
		return "", Token{}, err
	}
	return secret, t, nil
}

// List returns the stored tokens, oldest first.
func (s *Store) List(ctx context.Context) ([]Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return nil, err
	}
	return append([]Token(nil), s.cache...), nil
}

// Revoke deletes the token whose id is what, or every token of the member what, and returns the
// revoked records; ErrNotFound when none matches.
func (s *Store) Revoke(ctx context.Context, what string) ([]Token, error) {
	var gone []Token
	err := s.update(ctx, func(list []Token) ([]Token, error) {
		keep := list[:0]
		for _, t := range list {
			if t.ID == what || t.Member == what {
				gone = append(gone, t)
				continue
			}
			keep = append(keep, t)
		}
		if len(gone) == 0 {
			return nil, fmt.Errorf("%w %q (give a token id or a member)", ErrNotFound, what)
		}
		return keep, nil
	})
	return gone, err
}

// Verify returns the record of a presented token: ErrMalformed, ErrUnknown (also for a revoked one) or
// ErrExpired when it must be refused. The hash comparison takes constant time.
func (s *Store) Verify(ctx context.Context, token string) (Token, error) {
	m := tokenRE.Get().FindStringSubmatch(token)
	if m == nil {
		return Token{}, ErrMalformed
	}
	s.mu.Lock()
	err := s.refresh()
	list := s.cache
	s.mu.Unlock()
	if err != nil {
		return Token{}, err
	}
	want := hashOf(token)
	for _, t := range list {
		if t.ID != m[1] {
			continue
		}
		if subtle.ConstantTimeCompare([]byte(t.Hash), []byte(want)) != 1 {
			return Token{}, ErrUnknown
		}
		if t.Expired(s.now()) {
			return Token{}, ErrExpired
		}
		return t, nil
	}
	return Token{}, ErrUnknown
}

func hashOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// refresh rereads the file when it changed since the cache was read (so that a token revoked by another
// process is refused at once). The caller holds s.mu.
func (s *Store) refresh() error {
	fi, err := os.Stat(s.path)
	if errors.Is(err, os.ErrNotExist) {
		s.cache, s.stamp = nil, ""
		return nil
	}
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	stamp := fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
	if stamp == s.stamp {
		return nil
	}
	list, err := s.read()
	if err != nil {
		return err
	}
	s.cache, s.stamp = list, stamp
	return nil
}

// file is the token file's shape.
type file struct {
	Tokens []Token `json:"tokens"`
}

func (s *Store) read() ([]Token, error) {
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("token file %s: %w", s.path, err)
	}
	for _, t := range f.Tokens {
		if !idRE.Get().MatchString(t.ID) || len(t.Hash) != 64 {
			return nil, fmt.Errorf("token file %s: a record with a bad id or hash", s.path)
		}
	}
	sort.SliceStable(f.Tokens, func(i, j int) bool { return f.Tokens[i].Created.Before(f.Tokens[j].Created) })
	return f.Tokens, nil
}

// update changes the file under its lock: reads it, applies fn, writes the result atomically (a
// temporary file fsynced and renamed over it, mode 0600).
func (s *Store) update(ctx context.Context, fn func([]Token) ([]Token, error)) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	lk := flock.New(s.path + ".lock")
	ok, err := lk.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		return fmt.Errorf("token file: lock: %w", errors.Join(err, ctx.Err()))
	}
	defer func() { _ = lk.Unlock() }() // closing the lock file releases it even when Unlock fails
	list, err := s.read()
	if err != nil {
		return err
	}
	list, err = fn(list)
	if err != nil {
		return err
	}
	if list == nil {
		list = []Token{}
	}
	b, err := json.MarshalIndent(file{Tokens: list}, "", "  ")
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	if err := writeAtomic(s.path, append(b, '\n')); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	s.mu.Lock()
	s.stamp = "" // reread on next use
	s.mu.Unlock()
	return nil
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
