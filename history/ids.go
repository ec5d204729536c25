package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Identity (docs/history.md "Identity"): ids are SHA-256 over a domain tag and length-prefixed fields,
// printed as a UUIDv8. They depend on the provider and the provider's own ids only, never on a path of
// this machine, so the same session imported on two machines has the same id and re-import is idempotent.

func deriveID(kind string, fields ...string) string {
	h := sha256.New()
	h.Write([]byte("ctx.history\x00v1\x00"))
	h.Write([]byte(kind))
	for _, f := range fields {
		var n [8]byte
		l := uint64(len(f))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(f))
	}
	sum := h.Sum(nil)
	var u [16]byte
	copy(u[:], sum[:16])
	u[6] = (u[6] & 0x0f) | 0x80 // version 8
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 4122 variant
	var out [36]byte
	hex.Encode(out[0:8], u[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], u[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], u[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], u[8:10])
	out[23] = '-'
	hex.Encode(out[24:], u[10:])
	return string(out[:])
}

// SessionID returns the ctx id of a provider's session: a UUIDv8 string derived from the provider and
// its native session id.
func SessionID(p Provider, nativeID string) string {
	return deriveID("session", string(p), nativeID)
}

// EventID returns the ctx id of an event: a UUIDv8 string derived from its session's ctx id and the
// event's native key.
func EventID(sessionID, nativeKey string) string {
	return deriveID("event", sessionID, nativeKey)
}

// DefaultDir is the index directory for a repository whose git common dir is commonDir:
// <commonDir>/ctx/history. It is local to this clone and never on the context branch.
func DefaultDir(commonDir string) string {
	return filepath.Join(commonDir, "ctx", "history")
}

// nameID is a file or directory name as it enters an id: a native session id taken from a file name
// (Claude, Cursor, Copilot's directory, a Codex rollout's name), the parent a Claude subagent's folder names, the
// file part of a line key (docs/history.md "Identity"). A name that is valid UTF-8 is its own id, as it
// always was. A name that is not (a byte of Latin-1, a hostile name) is escaped so that its id is valid UTF-8
// text that prints as it is stored, that `ctx history show session` takes back, and that names it alone:
// each backslash is doubled, and each byte of an invalid sequence, of a C0 or C1 control character and DEL
// is written \xHH (two upper-case hex digits), so different names give different ids and the name is the
// id with \\ and \xHH read back. A file name never holds "/" or NUL, so neither does its id.
func nameID(name string) string {
	if utf8.ValidString(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 8)
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case (r == utf8.RuneError && n == 1) || r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			for _, c := range []byte(name[i : i+n]) {
				fmt.Fprintf(&b, `\x%02X`, c)
			}
		default:
			b.WriteString(name[i : i+n])
		}
		i += n
	}
	return b.String()
}
