package searchsock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Supported reports whether this platform has the search server (Linux: SO_PEERCRED).
const Supported = true

// maxSunPath is the longest socket path connect and bind take (sun_path less its NUL).
const maxSunPath = 107

// BuildID identifies the program file at path as a server and a client compare it: its device, inode,
// size and modification time. A program replaced by a new build (make install, a rename over it) has
// another ID, so a server of the old build no longer answers the new front.
func BuildID(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", fmt.Errorf("build id of %s: %w", path, err)
	}
	return fmt.Sprintf("%x:%x:%x:%x.%x", uint64(st.Dev), uint64(st.Ino), st.Size, int64(st.Mtim.Sec), int64(st.Mtim.Nsec)), nil //nolint:unconvert // Dev and Ino differ in type across platforms
}

// Dial sends r to the server of the history index in dir and returns the output it answered. Before it
// connects it checks that dir is a folder of this user's with no access for others and that the socket
// is a socket of this user's with no access for others; after, that the peer is a process of this
// user's (SO_PEERCRED). Each read and write waits at most timeout. Any failure, a hand-over or another
// build is an error (ErrNoServer, wrapped): the caller runs the one-shot path, and nothing was printed.
func Dial(dir string, r Request, timeout time.Duration) ([]byte, error) {
	path := filepath.Join(dir, Name)
	if len(path) > maxSunPath {
		return nil, fmt.Errorf("%w: socket path too long", ErrNoServer)
	}
	uid := uint32(os.Getuid()) //nolint:gosec // a uid
	if err := checkOwned(dir, unix.S_IFDIR, uid, 0o077); err != nil {
		return nil, err
	}
	if err := checkOwned(path, unix.S_IFSOCK, uid, 0o077); err != nil {
		return nil, err
	}
	req, err := r.Encode()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoServer, err)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: socket: %w", ErrNoServer, err)
	}
	defer unix.Close(fd)
	if err := setTimeouts(fd, timeout); err != nil {
		return nil, err
	}
	if err := retry(func() error { return unix.Connect(fd, &unix.SockaddrUnix{Name: path}) }); err != nil {
		return nil, fmt.Errorf("%w: connect: %w", ErrNoServer, err)
	}
	if err := CheckPeer(fd); err != nil {
		return nil, err
	}
	if err := WriteAll(fd, req); err != nil {
		return nil, fmt.Errorf("%w: write: %w", ErrNoServer, err)
	}
	ans, err := readAll(fd, MaxAnswer+1)
	if err != nil {
		return nil, fmt.Errorf("%w: read: %w", ErrNoServer, err)
	}
	switch {
	case len(ans) == 0:
		return nil, fmt.Errorf("%w: empty answer", ErrNoServer)
	case len(ans) > MaxAnswer:
		return nil, fmt.Errorf("%w: answer too long", ErrNoServer)
	case ans[0] == Answer:
		return ans[1:], nil
	case ans[0] == OtherBuild:
		return nil, fmt.Errorf("%w: a server of another build", ErrNoServer)
	default:
		return nil, fmt.Errorf("%w: handed over", ErrNoServer)
	}
}

// checkOwned checks that path (not followed) is of type typ, owned by uid, with none of the mode bits
// in deny.
func checkOwned(path string, typ, uid, deny uint32) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrNoServer, err)
	}
	if st.Mode&unix.S_IFMT != typ || st.Uid != uid || st.Mode&deny != 0 {
		return fmt.Errorf("%w: %s is not this user's alone (mode %o, uid %d)", ErrNoServer, path, st.Mode, st.Uid)
	}
	return nil
}

// CheckPeer checks that the process at the other end of the connected socket fd runs as this user.
func CheckPeer(fd int) error {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return fmt.Errorf("%w: peer credentials: %w", ErrNoServer, err)
	}
	if cred.Uid != uint32(os.Getuid()) { //nolint:gosec // a uid
		return fmt.Errorf("%w: the peer runs as uid %d", ErrNoServer, cred.Uid)
	}
	return nil
}

func setTimeouts(fd int, d time.Duration) error {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	for _, opt := range []int{unix.SO_RCVTIMEO, unix.SO_SNDTIMEO} {
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, opt, &tv); err != nil {
			return fmt.Errorf("%w: socket timeout: %w", ErrNoServer, err)
		}
	}
	return nil
}

// retry runs f again while it fails with EINTR.
func retry(f func() error) error {
	for {
		if err := f(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// WriteAll writes b to fd whole.
func WriteAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// readAll reads fd to its end, at most max bytes (then it stops: the caller sees len == max).
func readAll(fd, max int) ([]byte, error) {
	b := make([]byte, 0, 64<<10)
	for len(b) < max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):min(cap(b), max)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		b = b[:len(b)+n]
	}
	return b, nil
}

// readFull reads exactly len(b) bytes.
func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("short request")
		}
		b = b[n:]
	}
	return nil
}

// ReadRequest reads one request from the connected socket fd: Magic, a length up to MaxRequest, the body.
func ReadRequest(fd int) (Request, error) {
	head := make([]byte, len(Magic)+4)
	if err := readFull(fd, head); err != nil {
		return Request{}, fmt.Errorf("search request: %w", err)
	}
	if string(head[:len(Magic)]) != Magic {
		return Request{}, errors.New("search request: not this protocol")
	}
	n := binary.BigEndian.Uint32(head[len(Magic):])
	if n > MaxRequest {
		return Request{}, errors.New("search request: too long")
	}
	body := make([]byte, n)
	if err := readFull(fd, body); err != nil {
		return Request{}, fmt.Errorf("search request: %w", err)
	}
	return ParseBody(body)
}

// Listener is a server's listening socket in an index folder, and the lock that makes it the folder's
// only server.
type Listener struct {
	fd   int
	lock *os.File
	path string
	file unix.Stat_t // the socket file as bound (Ours)
}

// bindName is the name Listen binds its socket under before it renames it to Name: as long as Name, so
// that a path that fits sun_path fits both.
const bindName = "search.bind"

// ErrRunning is Listen's error when another server holds the folder's lock.
var ErrRunning = errors.New("a search server already runs for this index")

// Listen takes dir's server lock (ErrRunning when another process holds it), writes this process's pid
// into it, removes a socket left by a server that died, and binds and listens on a new socket of mode
// 0600, which appears under Name only once it listens (bound as bindName, then renamed). dir must be a folder of this user's with no access for others. accept waits at most tick for a
// connection (Accept then returns unix.EAGAIN), so that the caller can check its state between them.
func Listen(dir string, tick time.Duration) (*Listener, error) {
	path := filepath.Join(dir, Name)
	if len(path) > maxSunPath {
		return nil, fmt.Errorf("search server: socket path %s too long (over %d bytes)", path, maxSunPath)
	}
	uid := uint32(os.Getuid()) //nolint:gosec // a uid
	if err := checkOwned(dir, unix.S_IFDIR, uid, 0o077); err != nil {
		return nil, fmt.Errorf("search server: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("search server: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil { //nolint:gosec // a descriptor
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("search server: lock: %w", err)
	}
	l := &Listener{fd: -1, lock: lock, path: path}
	fail := func(err error) (*Listener, error) {
		l.Close()
		return nil, fmt.Errorf("search server: %w", err)
	}
	if err := lock.Truncate(0); err != nil {
		return fail(err)
	}
	if _, err := lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return fail(err)
	}
	var st unix.Stat_t
	switch err := unix.Lstat(path, &st); {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK:
		if err := os.Remove(path); err != nil { // a dead server's: we hold the lock
			return fail(err)
		}
	case err == nil:
		return fail(fmt.Errorf("%s is not a socket", path))
	case !errors.Is(err, unix.ENOENT):
		return fail(err)
	}
	// Bound under another name and renamed into place once it listens: a client (or `start`, which waits
	// for the socket file) never finds a socket that refuses connections.
	tmp := filepath.Join(dir, bindName)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	if l.fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		return fail(err)
	}
	old := unix.Umask(0o177)
	err = unix.Bind(l.fd, &unix.SockaddrUnix{Name: tmp})
	unix.Umask(old)
	if err != nil {
		return fail(fmt.Errorf("bind %s: %w", tmp, err))
	}
	if err := unix.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := unix.Listen(l.fd, 64); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := unix.Lstat(path, &l.file); err != nil {
		return fail(err)
	}
	tv := unix.NsecToTimeval(tick.Nanoseconds())
	if err := unix.SetsockoptTimeval(l.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fail(err)
	}
	return l, nil
}

// Accept waits for a connection (at most the tick given to Listen: unix.EAGAIN) and returns it with
// timeout set on its reads and writes; the caller closes it (unix.Close).
func (l *Listener) Accept(timeout time.Duration) (int, error) {
	fd, _, err := unix.Accept4(l.fd, unix.SOCK_CLOEXEC)
	if err != nil {
		return -1, err
	}
	if err := setTimeouts(fd, timeout); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// Ours reports whether the socket file is still the one this listener bound: a server whose socket was
// removed (`ctx history server stop`, rm) or replaced stops.
func (l *Listener) Ours() bool {
	var st unix.Stat_t
	return unix.Lstat(l.path, &st) == nil && st.Dev == l.file.Dev && st.Ino == l.file.Ino
}

// StopName is the name `ctx history server stop` (Stop) renames the server's socket to: the server finds
// its socket gone from Name, as when it is removed, and can tell from this name who stopped it (Stopped).
const StopName = "search.stopped"

// Stop asks the server of the index in dir to stop: it renames the socket file (Name) to StopName, which
// makes no client find it and the server exit within a tick. A socket that is not there is no error.
func Stop(dir string) error {
	if err := os.Rename(filepath.Join(dir, Name), filepath.Join(dir, StopName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Stopped reports whether this listener's socket file was renamed to StopName (Stop), not removed or
// replaced by anything else.
func (l *Listener) Stopped() bool {
	var st unix.Stat_t
	return unix.Lstat(filepath.Join(filepath.Dir(l.path), StopName), &st) == nil && st.Dev == l.file.Dev && st.Ino == l.file.Ino
}

// Close removes the socket file when it is still this listener's (under Name, or under StopName), closes
// the socket and releases the lock.
func (l *Listener) Close() {
	if l.fd >= 0 {
		if l.Ours() {
			os.Remove(l.path)
		}
		if l.Stopped() {
			os.Remove(filepath.Join(filepath.Dir(l.path), StopName))
		}
		unix.Close(l.fd)
		l.fd = -1
	}
	if l.lock != nil {
		l.lock.Close()
		l.lock = nil
	}
}

// Running reports whether a server holds dir's lock (it runs, or is starting or stopping).
func Running(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil { //nolint:gosec // a descriptor
		return true
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN) //nolint:gosec,errcheck // released at close anyway
	return false
}
