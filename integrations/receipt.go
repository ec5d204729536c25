package integrations

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
)

// Receipts: what a config file held before Install first changed it, so that Remove can give the user
// back exactly that file (or no file, when Install created it).
//
// Install records, per config file and server name it writes, a receipt in
// <homeDir>/.local/state/ctx/integrations/<first 16 hex of sha256(path NUL name)>.json: whether the file
// existed, its bytes then, and the sha256 of what Install wrote. Remove of that name restores those bytes
// (or deletes the file Install created) only while the file is still byte for byte what Install wrote; once
// the user (or another tool, or an Install of another name) changed it, Remove deletes only the entry, and
// deletes the file only when Install had created it and nothing else is left. Without a receipt (a file
// installed by an older ctx, or the state folder removed) Remove deletes only the entry, never the file.

// receipt is the state Install keeps about one config file.
type receipt struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Existed bool   `json:"existed"`
	// Before is the file's content before the first Install (absent when it did not exist).
	Before []byte `json:"before,omitempty"`
	// After is the sha256 (hex) of the content the last Install wrote.
	After string `json:"after"`
}

func receiptPath(homeDir, path, name string) string {
	sum := sha256.Sum256([]byte(path + "\x00" + name))
	return filepath.Join(homeDir, ".local", "state", "ctx", "integrations", hex.EncodeToString(sum[:8])+".json")
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// readReceipt returns the receipt of path, nil when there is none (or it is unreadable: then the file is
// treated as the user's).
func readReceipt(homeDir, path, name string) *receipt {
	if homeDir == "" {
		return nil
	}
	b, err := os.ReadFile(receiptPath(homeDir, path, name))
	if err != nil {
		return nil
	}
	var r receipt
	if json.Unmarshal(b, &r) != nil || r.Path != path || r.Name != name {
		return nil
	}
	return &r
}

// noteInstall updates the receipt of path after Install wrote out over f (what the file was before this
// Install). A receipt whose After still matches f keeps its Before (several installs, one original);
// otherwise the receipt starts again from f. Failures are ignored: without a receipt Remove keeps the file.
func noteInstall(homeDir, name string, f *configFile, out []byte) {
	if homeDir == "" {
		return
	}
	r := readReceipt(homeDir, f.path, name)
	if r == nil || !f.existed || r.After != sha(f.src) {
		r = &receipt{Path: f.path, Name: name, Existed: f.existed}
		if f.existed {
			r.Before = f.src
		}
	}
	r.After = sha(out)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return
	}
	_ = writeAtomic(receiptPath(homeDir, f.path, name), append(b, '\n'), 0o600, ScopeUser)
}

// dropReceipt removes the receipt of path.
func dropReceipt(homeDir, path, name string) {
	if homeDir == "" {
		return
	}
	_ = os.Remove(receiptPath(homeDir, path, name)) // a receipt left behind only makes a later Remove more careful
}
