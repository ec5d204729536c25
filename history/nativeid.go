package history

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// MaxNativeID is the longest provider session id (a Codex session_meta.id, a Claude sessionId, ...) the
// index keeps as it is, in bytes. A transcript is outside input: a 200 KB id was stored, and printed in
// every search hit. A longer id is kept as its first bytes, "…" and the SHA-256 of the whole id in hex
// (boundNativeID): as deterministic as the id, so every machine derives the same ctx session id from the
// same transcript (docs/history.md "Sessions").
const MaxNativeID = 256

// nativeIDHead is how many bytes of an over-long native id boundNativeID keeps before the hash.
const nativeIDHead = 128

// boundNativeID returns id when it is at most MaxNativeID bytes, else its first nativeIDHead bytes (cut
// at a rune boundary), "…" and the hex SHA-256 of id: at most 195 bytes.
func boundNativeID(id string) string {
	if len(id) <= MaxNativeID {
		return id
	}
	cut := nativeIDHead
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	sum := sha256.Sum256([]byte(id))
	return id[:cut] + "…" + hex.EncodeToString(sum[:])
}
