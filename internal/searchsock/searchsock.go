// Package searchsock is the wire between the lean front and a warm search server (ctx-search's server
// mode, docs/architecture.md "The search server"): the socket's place, the request and the answer, and
// the checks both ends make of the other (the socket file's owner and mode, the peer's uid, the build).
// It imports the standard library and golang.org/x/sys/unix only, so the front links nothing more for it.
//
// One request per connection. The client writes Magic, then a 4-byte big-endian length and that many
// bytes of NUL-separated fields: the build ID of the ctx-search program the client would run (BuildID),
// the fingerprint of the context refs' tips ("-" without a context branch) and the command line
// (ARGV0 ARG...), then reads the answer to the end of the stream: one status byte (Answer, HandOver,
// OtherBuild) and, after Answer, the bytes ctx would print on standard output with exit status 0.
package searchsock

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

// Name is the socket's file name in the history index's folder (mode 0700; the socket 0600).
const Name = "search.sock"

// LockName is the server's lock file beside the socket: the running server holds an exclusive flock on
// it for its whole life and keeps its pid in it.
const LockName = "search.lock"

// LogName is the server's log beside the socket: when it started and why it stopped (rewritten by
// `ctx history server start`, appended to by an automatic start).
const LogName = "search.log"

// Magic opens every request: the protocol and its version.
const Magic = "ctx-search/1\n"

// MaxRequest is the largest request body (bytes) a server reads; a longer one is refused.
const MaxRequest = 64 << 10

// MaxAnswer is the largest answer (bytes) a client reads; a longer one is dropped and the client runs the
// search itself.
const MaxAnswer = 64 << 20

// The answer's status bytes.
const (
	Answer     byte = 'O' // the output follows, exit status 0
	HandOver   byte = 'H' // the server does not answer this one: run the one-shot path
	OtherBuild byte = 'V' // the client's build ID is not the server's
)

// ErrNoServer is Dial's error when no usable server listens (no socket, a dead one, a socket of another
// owner or mode, another build, a hand-over): the caller runs the one-shot path.
var ErrNoServer = errors.New("no search server")

// Request is one search request.
type Request struct {
	Build string   // BuildID of the client's ctx-search
	FP    string   // fingerprint of the context refs' tips, "-" without a context branch
	Args  []string // the command line (ARGV0 ARG...)
}

// Encode is r on the wire: Magic, the length, the fields. A field holding NUL, or a body over
// MaxRequest, is an error.
func (r Request) Encode() ([]byte, error) {
	fields := append([]string{r.Build, r.FP}, r.Args...)
	n := 0
	for _, f := range fields {
		if strings.IndexByte(f, 0) >= 0 {
			return nil, errors.New("search request: a field holds NUL")
		}
		n += len(f) + 1
	}
	if n > MaxRequest {
		return nil, errors.New("search request: too long")
	}
	b := make([]byte, 0, len(Magic)+4+n)
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint32(b, uint32(n)) //nolint:gosec // n <= MaxRequest
	for _, f := range fields {
		b = append(b, f...)
		b = append(b, 0)
	}
	return b, nil
}

// ParseBody reads a request's body (the bytes after Magic and the length): at least the build ID, the
// fingerprint and ARGV0, each ended by NUL.
func ParseBody(body []byte) (Request, error) {
	if len(body) == 0 || body[len(body)-1] != 0 {
		return Request{}, errors.New("search request: malformed body")
	}
	f := strings.Split(string(body[:len(body)-1]), "\x00")
	if len(f) < 3 {
		return Request{}, errors.New("search request: too few fields")
	}
	return Request{Build: f[0], FP: f[1], Args: f[2:]}, nil
}

// ReadPID is the pid the server wrote in its lock file in dir, 0 when there is none.
func ReadPID(dir string) int {
	b, err := os.ReadFile(dir + string(os.PathSeparator) + LockName)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// AutoName is the marker of automatic start in the index folder (`ctx history server enable` writes it,
// `disable` removes it): when a search finds no server listening and this is a regular file of this
// user's, the front starts the server (AutoStart) and answers that search itself.
const AutoName = "search.auto"

// StartingName is the stamp of a start in progress beside the socket: the front that creates it (O_EXCL)
// is the one that starts the server, and the server removes it once it listens. A stamp older than
// StartingFresh is a start that failed and may be tried again.
const StartingName = "search.starting"

// StartingFresh is how long a start stamp (StartingName) keeps other fronts from starting a server: the
// time `ctx history server start` waits for a server to listen.
const StartingFresh = 30 * time.Second

// AutoOffEnv is the environment variable that, set to "0" in the front's environment, turns the
// automatic start off whatever the marker says (tests, CI, benchmarks of the one-shot path).
const AutoOffEnv = "CTX_SEARCH_SERVER_AUTO"
