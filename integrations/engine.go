package integrations

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"

	"github.com/ctx-dev/ctx/internal/atomicfile"
)

// document is a parsed config file that can be edited in place.
type document interface {
	// value is the whole file decoded to JSON-like values.
	value() map[string]any
	// set returns the file content with entry stored under name.
	set(name string, entry object) ([]byte, error)
	// remove returns the file content without the entry called name, and
	// whether what is left holds nothing worth keeping (so the file can be
	// deleted).
	remove(name string) (out []byte, empty bool, err error)
}

// parse parses a config file of the client's format. Errors wrap ErrInvalid.
func (c *Client) parse(src []byte) (document, error) {
	var (
		d   document
		err error
	)
	if c.Format == "toml" {
		d, err = parseTOML(c.Key, src)
	} else {
		d, err = parseJSON(c.Key, src, c.Format == "jsonc")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if v, ok := d.value()[c.Key]; ok {
		if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf("%w: %q is not a table of servers", ErrInvalid, c.Key)
		}
	}
	return d, nil
}

// lookupEntry returns the decoded entry called name.
func (c *Client) lookupEntry(d document, name string) (any, bool) {
	servers, _ := d.value()[c.Key].(map[string]any)
	e, ok := servers[name]
	return e, ok
}

// configFile is a config file as read from disk.
type configFile struct {
	path    string // the file to write: path with symlinks resolved
	src     []byte
	existed bool
	perm    fs.FileMode
}

func readConfig(path string, scope Scope) (*configFile, error) {
	real := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		real, err = filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", path, err)
		}
	}
	f := &configFile{path: real, perm: defaultPerm(scope)}
	src, err := os.ReadFile(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f.src, f.existed, f.perm = src, true, fi.Mode().Perm()
	return f, nil
}

func install(c *Client, path, homeDir string, scope Scope, srv Server, force bool) (Result, error) {
	r := Result{Path: path}
	f, err := readConfig(path, scope)
	if err != nil {
		r.Action, r.Message = ActionInvalid, err.Error()
		return r, err
	}
	doc, err := c.parse(f.src)
	if err != nil {
		r.Action, r.Message = ActionInvalid, err.Error()+"; left untouched"
		return r, fmt.Errorf("%s: %w", path, err)
	}
	entry := c.entry(srv)
	want := normalize(entry)
	old, found := c.lookupEntry(doc, srv.Name)
	if found {
		if reflect.DeepEqual(normalize(old), want) {
			r.Action, r.Message = ActionUnchanged, fmt.Sprintf("MCP server %q already registered", srv.Name)
			return r, nil
		}
		if !force {
			r.Action = ActionConflict
			r.Message = fmt.Sprintf("a different MCP server named %q exists; left untouched (use --force to replace it)", srv.Name)
			return r, fmt.Errorf("%s: server %q: %w", path, srv.Name, ErrConflict)
		}
	}
	out, err := doc.set(srv.Name, entry)
	if err == nil {
		err = verify(c, out, doc, srv.Name, want)
	}
	if err != nil {
		r.Action, r.Message = ActionConflict, err.Error()+"; left untouched"
		if !errors.Is(err, ErrConflict) {
			r.Action = ActionInvalid
		}
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if err := writeAtomic(f.path, out, f.perm, scope); err != nil {
		r.Action, r.Message = ActionInvalid, err.Error()
		return r, err
	}
	noteInstall(homeDir, srv.Name, f, out)
	if found {
		r.Action, r.Message = ActionUpdated, fmt.Sprintf("replaced MCP server %q", srv.Name)
	} else {
		r.Action, r.Message = ActionAdded, fmt.Sprintf("registered MCP server %q", srv.Name)
	}
	return r, nil
}

func remove(c *Client, path, homeDir, name string, force bool) (Result, error) {
	r := Result{Path: path}
	f, err := readConfig(path, ScopeProject)
	if err != nil {
		r.Action, r.Message = ActionInvalid, err.Error()
		return r, err
	}
	if !f.existed {
		r.Action, r.Message = ActionAbsent, "no config file"
		return r, nil
	}
	doc, err := c.parse(f.src)
	if err != nil {
		r.Action, r.Message = ActionInvalid, err.Error()+"; left untouched"
		return r, fmt.Errorf("%s: %w", path, err)
	}
	old, found := c.lookupEntry(doc, name)
	if !found {
		r.Action, r.Message = ActionAbsent, fmt.Sprintf("no MCP server %q", name)
		return r, nil
	}
	if !c.isCtxEntry(old) && !force {
		r.Action = ActionConflict
		r.Message = fmt.Sprintf("MCP server %q does not run `ctx mcp serve`; left untouched (use --force to remove it)", name)
		return r, fmt.Errorf("%s: server %q: %w", path, name, ErrConflict)
	}
	out, empty, err := doc.remove(name)
	if err == nil {
		err = verify(c, out, doc, name, nil)
	}
	if err != nil {
		r.Action, r.Message = ActionConflict, err.Error()+"; left untouched"
		if !errors.Is(err, ErrConflict) {
			r.Action = ActionInvalid
		}
		return r, fmt.Errorf("%s: %w", path, err)
	}
	// What Install found there comes back (receipt.go): no file when Install created it, the user's bytes
	// when the file is still exactly what Install wrote.
	rc := readReceipt(homeDir, f.path, name)
	unchanged := rc != nil && rc.After == sha(f.src)
	switch {
	case unchanged && !rc.Existed, rc != nil && !rc.Existed && empty:
		if err := os.Remove(f.path); err != nil {
			r.Action, r.Message = ActionInvalid, err.Error()
			return r, fmt.Errorf("remove %s: %w", path, err)
		}
		dropReceipt(homeDir, f.path, name)
		r.Action, r.Message = ActionRemoved, fmt.Sprintf("removed MCP server %q and the file ctx had created", name)
		return r, nil
	case unchanged:
		out = rc.Before
	}
	if err := writeAtomic(f.path, out, f.perm, ScopeProject); err != nil {
		r.Action, r.Message = ActionInvalid, err.Error()
		return r, err
	}
	dropReceipt(homeDir, f.path, name)
	r.Action, r.Message = ActionRemoved, fmt.Sprintf("removed MCP server %q", name)
	if unchanged {
		r.Message += "; the file is back as it was before ctx installed it"
	}
	return r, nil
}

func status(c *Client, path, name string) (Result, error) {
	r := Result{Path: path}
	f, err := readConfig(path, ScopeProject)
	if err != nil {
		r.Action, r.Message = ActionInvalid, err.Error()
		return r, err
	}
	if !f.existed {
		r.Action, r.Message = ActionAbsent, "no config file"
		return r, nil
	}
	doc, err := c.parse(f.src)
	if err != nil {
		r.Action, r.Message = ActionInvalid, err.Error()
		return r, fmt.Errorf("%s: %w", path, err)
	}
	old, found := c.lookupEntry(doc, name)
	switch {
	case !found:
		r.Action, r.Message = ActionAbsent, fmt.Sprintf("no MCP server %q", name)
	case c.isCtxEntry(old):
		r.Action, r.Message = ActionInstalled, fmt.Sprintf("MCP server %q runs `ctx mcp serve`", name)
	default:
		r.Action, r.Message = ActionConflict, fmt.Sprintf("MCP server %q does not run `ctx mcp serve`", name)
	}
	return r, nil
}

// verify re-parses the edited content and checks that, compared with the
// original document, exactly the entry called name changed: it now equals
// want, or is gone when want is nil. It guards the in-place text edits.
func verify(c *Client, out []byte, before document, name string, want any) error {
	after, err := c.parse(out)
	if err != nil {
		return fmt.Errorf("edited config does not parse (bug): %w", err)
	}
	exp, _ := normalize(before.value()).(map[string]any)
	if exp == nil {
		exp = map[string]any{}
	}
	servers, _ := exp[c.Key].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
		exp[c.Key] = servers
	}
	if want == nil {
		delete(servers, name)
	} else {
		servers[name] = want
	}
	got, _ := normalize(after.value()).(map[string]any)
	if got == nil {
		got = map[string]any{}
	}
	for _, m := range []map[string]any{exp, got} {
		if s, ok := m[c.Key].(map[string]any); ok && len(s) == 0 {
			delete(m, c.Key)
		}
	}
	if !reflect.DeepEqual(exp, got) {
		return errors.New("in-place edit would change more than the server entry; edit the file by hand")
	}
	return nil
}

// normalize converts v to plain JSON values (map[string]any, []any, string,
// float64, bool, nil) so that entries from any format compare equal.
func normalize(v any) any {
	b, err := marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return out
}

// writeAtomic makes path's folder (0700 for a user-scope file, else 0755) and replaces path with
// data through atomicfile.Write (mode exactly perm).
func writeAtomic(path string, data []byte, perm fs.FileMode, scope Scope) error {
	dir := filepath.Dir(path)
	dirPerm := fs.FileMode(0o755)
	if scope == ScopeUser {
		dirPerm = 0o700
	}
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return atomicfile.Write(path, data, perm)
}

// field is one key of an ordered object.
type field struct {
	Key string
	Val any
}

// object is a JSON object that keeps its key order when marshalled.
type object []field

// MarshalJSON implements json.Marshaler.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := marshal(f.Val)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshal is compact json.Marshal without HTML escaping.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
