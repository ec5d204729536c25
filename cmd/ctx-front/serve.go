package main

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/internal/histsources"
	"github.com/ctx-dev/ctx/internal/lean"
)

// The shapes answered here, and nothing else (any other argument, flag or spelling goes to ctx-full):
//
//	ctx knowledge get KEY     ctx convention get KEY     (KEY: see plainKey)
//	ctx log                   ctx log -n N               (N: 0 or a decimal without leading zeros)
//	ctx hooks run post-checkout OLD NEW 1                (see postCheckout: its output is none)
//	ctx knowledge set KEY TEXT   ctx convention set KEY TEXT  (an existing public entry: see setEntry)
//
// serve returns the bytes ctx-full would write on standard output with exit 0, and ok; ok is false when
// anything differs from the happy path, and then nothing has been written.
func serve(args []string) (out []byte, ok bool) {
	// ctx-full checks --agent and --session (CTX_AGENT, CTX_SESSION) on every command, a read included:
	// a value that is not plainly a valid key is ctx-full's to refuse.
	for _, v := range []string{"CTX_AGENT", "CTX_SESSION"} {
		if s := os.Getenv(v); s != "" && !plainKey(s) {
			return nil, false
		}
	}
	switch {
	case len(args) == 3 && args[1] == "get" && (args[0] == "knowledge" || args[0] == "convention"):
		if !plainKey(args[2]) {
			return nil, false
		}
		s, ok := openStore()
		if !ok {
			return nil, false
		}
		defer s.close()
		return s.entry(kindDir[args[0]], args[2]+".md")
	case len(args) == 4 && args[1] == "set" && (args[0] == "knowledge" || args[0] == "convention"):
		return setEntry(args[0], args[2], args[3])
	case len(args) == 6 && args[0] == "hooks" && args[1] == "run" && args[2] == "post-checkout":
		return nil, postCheckout(args[3:])
	case len(args) == 1 && args[0] == "log":
		s, ok := openStore()
		if !ok {
			return nil, false
		}
		defer s.close()
		return s.log(0)
	case len(args) == 3 && args[0] == "log" && args[1] == "-n":
		n, ok := plainCount(args[2])
		if !ok {
			return nil, false
		}
		s, ok := openStore()
		if !ok {
			return nil, false
		}
		defer s.close()
		return s.log(n)
	}
	return nil, false
}

// kindDir is the folder of the context branch of each entry kind (store.KnowledgeKind, ConventionKind).
var kindDir = map[string]string{"knowledge": "knowledge", "convention": "conventions"}

// plainCount parses N of -n N the way ctx-full's flag parser reads it only when the spelling is
// unambiguous: "0" or a decimal without a sign or leading zeros, at most 9 digits (strconv.ParseInt
// with base 0 reads "010" as octal 8 and "0x10" as 16: those go to ctx-full).
func plainCount(s string) (int, bool) {
	if s == "0" {
		return 0, true
	}
	if len(s) == 0 || len(s) > 9 || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// windowsReserved are the names store.ValidKey refuses.
var windowsReserved = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true}

// plainKey accepts the keys that store.NormalizeKey returns unchanged and store.ValidKey accepts, in
// their ASCII subset: 1 to 128 bytes of a-z, 0-9, '-', '_', '.', not starting with '.' or '-', not
// ending with '.', no "..", not a Windows device name, and not "help" or "h", which ctx-full's command
// line reads as a request for the command's help. Every other key (letters of other scripts included)
// goes to ctx-full, which normalises and validates it.
func plainKey(k string) bool {
	if k == "help" || k == "h" || k == "" || len(k) > 128 || k[0] == '.' || k[0] == '-' || k[len(k)-1] == '.' || strings.Contains(k, "..") {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	base, _, _ := strings.Cut(k, ".")
	return !windowsReserved[base]
}

// store is the repository as ctx-full's store.Open would find it, read only.
type store struct {
	gitDir   string // the worktree's git dir
	workTree string // the work tree's root, "" in a bare repository
	common   string // the git common dir
	branch   string // the context branch's ref
	local    string // the local-only store (<common>/ctx/private.git), "" when it does not exist
	r        *objread.Reader
	// objs holds the commits and trees read in this process and the objects it wrote (keep), for read: a
	// write reads its tip's commit and trees, writes the new ones, and its refresh then reads both again.
	objs map[objread.Hash]heldObject
}

// heldObject is an object of store.objs: its type and content, never modified.
type heldObject struct {
	t    objread.Type
	data []byte
}

// read returns the type and content of object h (s.r.Read), from objs when it holds h; a commit or tree
// read from the repository is kept there. The content is shared: callers do not modify it.
func (s *store) read(h objread.Hash) (objread.Type, []byte, error) {
	if o, ok := s.objs[h]; ok {
		return o.t, o.data, nil
	}
	t, b, err := s.r.Read(h)
	if err == nil && (t == objread.Commit || t == objread.Tree) {
		s.keep(h, t, b)
	}
	return t, b, err
}

// keep records that object h, of type t, holds data (an object this process read or wrote): later reads
// of h return data.
func (s *store) keep(h objread.Hash, t objread.Type, data []byte) {
	if s.objs == nil {
		s.objs = make(map[objread.Hash]heldObject, 8)
	}
	s.objs[h] = heldObject{t: t, data: data}
}

// maxEntryBytes is the largest entry blob read here (ctx's own limit on an entry is 32 MiB); a larger
// one goes to ctx-full.
const maxEntryBytes = 64 << 20

// openStore finds the repository of the working directory and checks that ctx-full would read it as it
// is: a ctx config configBranch reads, no interrupted ref transaction (ctx-full
// completes it first, under the ctx lock), no private or ephemeral ref left in the repository by an older
// ctx (ctx-full moves them into the local store first).
func openStore() (*store, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, false
	}
	return openStoreIn(wd)
}

// openStoreIn is openStore for the repository of the directory wd.
func openStoreIn(wd string) (*store, bool) {
	gitDir, workTree, err := objread.Discover(wd)
	if err != nil {
		return nil, false
	}
	common := objread.CommonDir(gitDir)
	ctxDir := filepath.Join(common, "ctx")
	if _, err := os.Lstat(filepath.Join(ctxDir, "transaction.json")); !errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	branch, ok := configBranch(filepath.Join(ctxDir, "config.json"))
	if !ok {
		return nil, false
	}
	legacy, err := objread.ReadRefs(common, refPrivate, refEphemeral) // one read of packed-refs for both
	if err != nil || !legacy[0].IsZero() || !legacy[1].IsZero() {
		return nil, false
	}
	s := &store{gitDir: gitDir, workTree: workTree, common: common, branch: "refs/heads/" + branch}
	dirs := []string{filepath.Join(common, "objects")}
	if local := filepath.Join(ctxDir, "private.git"); objread.IsGitDir(local) {
		s.local = local
		dirs = append(dirs, filepath.Join(local, "objects"))
	}
	s.r = objread.NewReader(maxEntryBytes, dirs...)
	return s, true
}

func (s *store) close() { s.r.Close() }

// The refs of the private and ephemeral scopes (store.RefPrivate, RefEphemeral).
const (
	refPrivate   = "refs/ctx/private"
	refEphemeral = "refs/ctx/ephemeral"
)

// tip is the commit of a scope's ref: the private and ephemeral refs live in the local store.
func (s *store) tip(ref string) (objread.Hash, bool) {
	dir := s.common
	if ref != s.branch {
		if s.local == "" {
			return objread.Hash{}, true
		}
		dir = s.local
	}
	h, err := objread.ReadRef(dir, ref)
	return h, err == nil
}

// entry is ctx-full's `ctx <kind> get KEY` (store.View.GetEntry, then store.EntryBody of the content):
// the first scope of ephemeral, private, public whose tree holds dir/name as a regular file.
func (s *store) entry(dir, name string) ([]byte, bool) {
	pub, ok := s.tip(s.branch)
	if !ok || pub.IsZero() {
		return nil, false // not initialised: ctx-full says so
	}
	for _, ref := range []string{refEphemeral, refPrivate, s.branch} {
		tip := pub // the public tip read above: the branch's ref is read once
		if ref != s.branch {
			if tip, ok = s.tip(ref); !ok {
				return nil, false
			}
		}
		if tip.IsZero() {
			continue
		}
		c, ok := s.commit(tip)
		if !ok {
			return nil, false
		}
		d, found, ok := s.lookup(c.tree, dir)
		if !ok {
			return nil, false
		}
		if !found {
			continue
		}
		if !d.Dir {
			return nil, false
		}
		e, found, ok := s.lookup(d.Hash, name)
		if !ok {
			return nil, false
		}
		if !found {
			continue
		}
		if e.Mode != objread.ModeRegular && e.Mode != objread.ModeExecutable {
			return nil, false
		}
		t, b, err := s.read(e.Hash)
		if err != nil || t != objread.Blob {
			return nil, false
		}
		// store.ParseEntry: the body after the front matter, less one final newline; then EntryBody.
		_, _, _, body, _ := splitFrontMatter(b)
		out := append(bytes.TrimSuffix(body, []byte("\n")), '\n')
		return out, lean.Printable(out)
	}
	return nil, false // in no scope: ctx-full prints the not-found error
}

// lookup finds name in tree h; ok is false when the tree cannot be read here.
func (s *store) lookup(h objread.Hash, name string) (e objread.Entry, found, ok bool) {
	if _, held := s.objs[h]; !held {
		e, found, handled, err := s.r.TreeEntry(h, name)
		if handled {
			return e, found, err == nil
		}
	}
	t, raw, err := s.read(h)
	if err != nil || t != objread.Tree {
		return e, false, false
	}
	e, found, err = objread.FindTreeEntry(raw, name)
	return e, found, err == nil
}

// commit is what ctx log shows of a commit.
type commit struct {
	hash      objread.Hash
	tree      objread.Hash
	parents   []objread.Hash
	author    string // "Name <email>"
	authored  time.Time
	committed time.Time
	message   string
}

// commit reads and parses commit h. Only the canonical form is accepted: tree, parents, author,
// committer, a blank line, the message; any other header (encoding, gpgsig, mergetag) or an identity
// line go-git would read differently goes to ctx-full.
func (s *store) commit(h objread.Hash) (*commit, bool) {
	t, b, err := s.read(h)
	if err != nil || t != objread.Commit {
		return nil, false
	}
	c := &commit{hash: h}
	line := func(key string) ([]byte, bool) {
		i := bytes.IndexByte(b, '\n')
		if i < 0 || !bytes.HasPrefix(b, []byte(key+" ")) {
			return nil, false
		}
		v := b[len(key)+1 : i]
		b = b[i+1:]
		return v, true
	}
	hash := func(v []byte) (objread.Hash, bool) {
		var h objread.Hash
		if len(v) != 40 {
			return h, false
		}
		for i := 0; i < 20; i++ {
			x, err := strconv.ParseUint(string(v[2*i:2*i+2]), 16, 8)
			if err != nil {
				return h, false
			}
			h[i] = byte(x)
		}
		return h, true
	}
	v, ok := line("tree")
	if !ok {
		return nil, false
	}
	if c.tree, ok = hash(v); !ok {
		return nil, false
	}
	for bytes.HasPrefix(b, []byte("parent ")) {
		v, _ := line("parent")
		p, ok := hash(v)
		if !ok {
			return nil, false
		}
		c.parents = append(c.parents, p)
	}
	a, ok := line("author")
	if !ok {
		return nil, false
	}
	name, email, when, ok := signature(a)
	if !ok {
		return nil, false
	}
	c.author, c.authored = name+" <"+email+">", when
	cm, ok := line("committer")
	if !ok {
		return nil, false
	}
	if _, _, c.committed, ok = signature(cm); !ok {
		return nil, false
	}
	if len(b) == 0 || b[0] != '\n' {
		return nil, false
	}
	c.message = string(b[1:])
	return c, true
}

// signature reads "Name <email> seconds +zzzz" as go-git's Signature.Decode does, only when the line has
// exactly that shape.
func signature(b []byte) (name, email string, when time.Time, ok bool) {
	open, close := bytes.LastIndexByte(b, '<'), bytes.LastIndexByte(b, '>')
	if open < 0 || close < open || close+2 >= len(b) || b[close+1] != ' ' {
		return "", "", time.Time{}, false
	}
	name, email = string(bytes.Trim(b[:open], " ")), string(b[open+1:close])
	ts, tz, found := bytes.Cut(b[close+2:], []byte(" "))
	if !found || len(tz) != 5 || (tz[0] != '+' && tz[0] != '-') {
		return "", "", time.Time{}, false
	}
	sec, err := strconv.ParseInt(string(ts), 10, 64)
	if err != nil {
		return "", "", time.Time{}, false
	}
	return name, email, time.Unix(sec, 0).UTC(), true
}

// log is ctx-full's `ctx log [-n N]` without a path (store.Store.Log, gitstore.Repo.LogAll): every
// commit reachable from the branch, newest committer time first (ties: the greater hash first), at most
// n (0: all), in its text form.
func (s *store) log(n int) ([]byte, bool) {
	tip, ok := s.tip(s.branch)
	if !ok || tip.IsZero() {
		return nil, false
	}
	c, ok := s.commit(tip)
	if !ok {
		return nil, false
	}
	seen := map[objread.Hash]bool{tip: true}
	q := &queue{c}
	var out bytes.Buffer
	for shown := 0; q.Len() > 0 && (n == 0 || shown < n); shown++ {
		c := heap.Pop(q).(*commit)
		for _, p := range c.parents {
			// Every parent is read, as ctx-full does: one it cannot read is its error to report.
			pc, ok := s.commit(p)
			if !ok {
				return nil, false
			}
			if !seen[p] {
				seen[p] = true
				heap.Push(q, pc)
			}
		}
		t := objread.Trailers(c.message)
		summary, _, _ := strings.Cut(c.message, "\n")
		fmt.Fprintf(&out, "%s %s %-16s %-24s agent=%s session=%s machine=%s\n    %s  (%s)\n",
			c.hash.String()[:12], c.authored.Format(time.RFC3339), t["Ctx-Op"], t["Ctx-Key"], t["Ctx-Agent"],
			t["Ctx-Session"], t["Ctx-Machine"], summary, c.author)
		if r := t["Ctx-Renumbered"]; r != "" {
			fmt.Fprintf(&out, "    decisions renumbered: %s\n", r)
		}
		for _, r := range objread.TrailerValues(c.message, "Ctx-Renamed") {
			fmt.Fprintf(&out, "    renamed: %s\n", r)
		}
	}
	return out.Bytes(), lean.Printable(out.Bytes())
}

// queue is a max-heap of commits by committer time (ties: by hash), as gitstore's allQueue.
type queue []*commit

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	a, b := q[i].committed, q[j].committed
	if a.Equal(b) {
		return bytes.Compare(q[i].hash[:], q[j].hash[:]) > 0
	}
	return a.After(b)
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*commit)) }
func (q *queue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// splitFrontMatter is merge.SplitFrontMatter: a block opened by a "---" line (after an optional UTF-8
// BOM) and closed by the next "---" line (CRLF or LF); body is what follows, the whole input without one.
func splitFrontMatter(b []byte) (open, block, close, body []byte, ok bool) {
	const bom = "\xef\xbb\xbf"
	start := 0
	if bytes.HasPrefix(b, []byte(bom)) {
		start = len(bom)
	}
	rest := b[start:]
	switch {
	case bytes.HasPrefix(rest, []byte("---\n")):
		start += 4
	case bytes.HasPrefix(rest, []byte("---\r\n")):
		start += 5
	default:
		return nil, nil, nil, b, false
	}
	for p := start; p <= len(b); {
		end := len(b)
		if i := bytes.IndexByte(b[p:], '\n'); i >= 0 {
			end = p + i + 1
		}
		line := bytes.TrimSuffix(bytes.TrimSuffix(b[p:end], []byte("\n")), []byte("\r"))
		if string(line) == "---" {
			return b[:start], b[start:p], b[p:end], b[end:], true
		}
		if end == len(b) {
			break
		}
		p = end
	}
	return nil, nil, nil, b, false
}

// configKeys are the settings of <git common dir>/ctx/config.json (store.Config) that do not change what
// a read or a search shows, with their JSON types ('h': the configured history roots, which ctx-full
// validates on open, read by historySources).
var configKeys = map[string]byte{"branch": '"', "remote": '"', "agent": '"', "history.share": '"',
	"sync.push-with-git": 'b', "sync.timeout": 'n', "history.sources": 'h'}

// sourceKeys are the fields of a configured history root (histsources.Source), all strings.
var sourceKeys = map[string]bool{"root": true, "provider": true, "path": true, "group": true}

// historySources reports whether v, the config's "history.sources", is a list of configured roots
// ctx-full reads without error (histsources.Check, as store.readConfig checks them): null or an array
// of objects of sourceKeys spelled exactly, each a string (encoding/json would also match "Root", ignore
// an unknown key and read null as ""; such a config goes to ctx-full).
func historySources(v json.RawMessage) bool {
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		return false
	}
	hs := make([]histsources.Source, 0, len(list))
	for _, m := range list {
		var h histsources.Source
		for k, raw := range m {
			if !sourceKeys[k] || len(raw) == 0 || raw[0] != '"' {
				return false
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return false
			}
			switch k {
			case "root":
				h.Root = s
			case "provider":
				h.Provider = s
			case "path":
				h.Path = s
			case "group":
				h.Group = s
			}
		}
		hs = append(hs, h)
	}
	return histsources.Check(hs) == nil
}

// configBranch reads the context branch from the ctx config at path as store.readConfig does ("ctx"
// when the file does not exist), only when the file is one ctx-full reads without error or question: a
// JSON object of configKeys spelled exactly (encoding/json would also match "Branch"), each of its type,
// and a branch of lower-case ASCII letters, digits, '-' and '_' in '/'-separated parts (a valid branch
// name whatever git's other rules).
func configBranch(path string) (string, bool) {
	b, err := objread.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "ctx", true
	}
	if err != nil {
		return "", false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return "", false
	}
	branch := "ctx"
	for k, v := range m {
		typ, known := configKeys[k]
		if !known {
			return "", false
		}
		var err error
		switch typ {
		case '"':
			var s string
			err = json.Unmarshal(v, &s)
			if k == "branch" && s != "" {
				branch = s
			}
		case 'b':
			var x bool
			err = json.Unmarshal(v, &x)
		case 'n':
			var x int
			err = json.Unmarshal(v, &x)
		case 'h':
			if !historySources(v) {
				return "", false
			}
		}
		if err != nil {
			return "", false
		}
	}
	for _, part := range strings.Split(branch, "/") {
		if part == "" || part[0] == '-' {
			return "", false
		}
		for i := 0; i < len(part); i++ {
			if c := part[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return branch, true
}
