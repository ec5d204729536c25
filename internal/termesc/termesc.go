// Package termesc removes terminal escape sequences from text: what a terminal would act on rather than
// show. The secret scanner (store/secrets.Normalize) and the history index's search body (history
// searchBody) both read text as a terminal shows it. It imports internal/lazyre and the standard library
// only, so the search program (cmd/ctx-search) may link it.
package termesc

import (
	"strings"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// escape matches terminal escape sequences: CSI (colours, cursor moves: ESC [ ... final byte), OSC
// (window titles, links: ESC ] ... BEL or ESC \) and the two-byte escapes (ESC followed by one byte).
var escape = lazyre.New("\x1b(?:\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|[@-Z\\\\-_])")

// Strip returns s without its terminal escape sequences; s without an ESC byte is returned as it is.
func Strip(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	return escape.Get().ReplaceAllString(s, "")
}
