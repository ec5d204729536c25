// Package tipsfp is the fingerprint of the context refs' tips (docs/history.md "The store's search
// copy"): what the MCP cursors of the history tools are bound to and what the store's search copy
// records as the state it was made at (meta.fp). store.HistoryTips computes it from the refs go-git
// reads, and the lean front from the refs it reads itself, with this one function, so that ctx-search can
// tell a current copy without go-git. It imports the standard library only.
package tipsfp

import (
	"crypto/sha256"
	"encoding/hex"
)

// Of is the fingerprint of the tips of the ephemeral, private and public refs, each 40 lower-case hex
// digits (forty zeros for a ref that does not exist): the first 24 hex digits of the SHA-256 of
// "ephemeral E\nprivate P\npublic U\n".
func Of(ephemeral, private, public string) string {
	h := sha256.New()
	for _, l := range [][2]string{{"ephemeral", ephemeral}, {"private", private}, {"public", public}} {
		h.Write([]byte(l[0] + " " + l[1] + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}
