package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Source formats (docs/history.md "Sources").
const (
	FormatClaude      = "claude_jsonl"
	FormatCodex       = "codex_jsonl"
	FormatCodexZstd   = "codex_jsonl_zst"
	FormatGeminiJSON  = "gemini_json"
	FormatGeminiJSONL = "gemini_jsonl"
	FormatOpenCode    = "opencode_storage"
	FormatOpenCodeDB  = "opencode_sqlite"
	FormatCursor      = "cursor_jsonl"
	FormatCopilot     = "copilot_jsonl"
	maxWalkDepth      = 12
)

// maxDiscoveredFiles bounds the files a walk of one root visits (docs/limits.md); a root with more fails
// discovery (DiscoveryError).
var maxDiscoveredFiles = 200_000

// SetDiscoveryBound sets the per-root file bound of discovery to n and returns what restores it: for the
// tests of other packages (a real bound hit needs 200,000 files). Not safe while a discovery runs.
func SetDiscoveryBound(n int) (restore func()) {
	old := maxDiscoveredFiles
	maxDiscoveredFiles = n
	return func() { maxDiscoveredFiles = old }
}

// formatProvider is the provider whose sources are of format, "" for none (a shared session's).
func formatProvider(format string) Provider {
	switch format {
	case FormatClaude:
		return ClaudeCode
	case FormatCodex, FormatCodexZstd:
		return Codex
	case FormatGeminiJSON, FormatGeminiJSONL:
		return GeminiCLI
	case FormatOpenCode, FormatOpenCodeDB:
		return OpenCode
	case FormatCursor:
		return Cursor
	case FormatCopilot:
		return CopilotCLI
	}
	return ""
}

// appendOnly reports whether a format is an append-only log that can be read from an offset.
func appendOnly(format string) bool {
	switch format {
	case FormatClaude, FormatCodex, FormatGeminiJSONL, FormatCursor, FormatCopilot:
		return true
	}
	return false
}

// Source is one importable file (or, for OpenCode, one session file and the message and part files
// beside it).
type Source struct {
	Provider Provider `json:"provider"`
	Format   string   `json:"format"`
	Path     string   `json:"path"` // absolute
	// Session is the provider's session id when Path holds many sessions (OpenCode's database).
	Session string `json:"session,omitempty"`
	// ParentNative is the provider's id of the parent session when the layout says so (Claude's
	// <session>/subagents/agent-<id>.jsonl).
	ParentNative string `json:"parent_native_id,omitempty"`
	// stat is the file's lstat as discovery found it (known false: not read; statUnchanged reads it).
	stat fileStat
	// explicit: found under a root the user named (--path, a configured root), where a file of another
	// provider's format is not made a session ("foreign", docs/history.md "Providers and discovery").
	explicit bool
	// listErr: why discovery could not list the sessions of this OpenCode database, the import's error for
	// it (a listing again at import may succeed, and cannot say it).
	listErr string
}

// fileStat is a source's lstat: size, mtime and ctime (Unix nanoseconds), inode (ctime and inode on Linux
// only, 0 elsewhere), whether it is a regular file, whether it could be read (ok) and whether it was read
// at all (known).
type fileStat struct {
	size, mtime, ctime, ino int64
	regular, ok, known      bool
}

// key identifies a source in the index: its path, plus the session for a multi-session database.
func (s Source) key() string {
	if s.Session != "" {
		return s.Path + "#" + s.Session
	}
	return s.Path
}

// Root is a provider's history root on this machine.
type Root struct {
	Provider Provider `json:"provider"`
	Path     string   `json:"path"`
	EnvVar   string   `json:"env_var"`  // the provider's own override variable
	FromEnv  bool     `json:"from_env"` // the root came from EnvVar, not the default
	Exists   bool     `json:"exists"`
}

// Env gives the environment and home directory that discovery resolves roots against; nil fields mean
// the process's own (os.Getenv, os.UserHomeDir).
type Env struct {
	Getenv func(string) string
	Home   string
}

// Roots returns each provider's one winning root: its override variable when set, else its default
// (docs/history.md "Discovery"). It only stats paths; it creates nothing.
func Roots(env Env) []Root {
	get := env.Getenv
	if get == nil {
		get = os.Getenv
	}
	home := env.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	var out []Root
	add := func(p Provider, envVar, fromEnv, def string) {
		r := Root{Provider: p, EnvVar: envVar}
		if fromEnv != "" {
			r.Path, r.FromEnv = fromEnv, true
		} else {
			r.Path = def
		}
		if r.Path != "" {
			if fi, err := os.Stat(r.Path); err == nil && fi.IsDir() {
				r.Exists = true
			}
		}
		out = append(out, r)
	}
	join := func(base string, elem ...string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, elem...)...)
	}
	add(ClaudeCode, "CLAUDE_CONFIG_DIR", join(get("CLAUDE_CONFIG_DIR"), "projects"), join(home, ".claude", "projects"))
	add(Codex, "CODEX_HOME", get("CODEX_HOME"), join(home, ".codex"))
	add(GeminiCLI, "GEMINI_CLI_HOME", join(get("GEMINI_CLI_HOME"), ".gemini", "tmp"), join(home, ".gemini", "tmp"))
	ocDef := join(home, ".local", "share", "opencode")
	if x := get("XDG_DATA_HOME"); x != "" {
		ocDef = filepath.Join(x, "opencode")
	}
	ocEnv := ""
	if db := get("OPENCODE_DB"); db != "" {
		ocEnv = filepath.Dir(db)
	}
	add(OpenCode, "OPENCODE_DB", ocEnv, ocDef)
	add(Cursor, "CURSOR_DATA_DIR", join(get("CURSOR_DATA_DIR"), "projects"), join(home, ".cursor", "projects"))
	add(CopilotCLI, "COPILOT_HOME", join(get("COPILOT_HOME"), "session-state"), join(home, ".copilot", "session-state"))
	return out
}

// Discover lists the sources under root for provider p. With explicit false, root is the provider's
// default layout and only its session files are taken; with explicit true (an `import --path` of a moved
// or copied root) every file with the provider's extension is. The walk is bounded (depth, file count),
// offline and read-only, and never follows a symbolic link: links inside root are skipped. A missing
// root yields no sources and no error.
func Discover(ctx context.Context, p Provider, root string, explicit bool) ([]Source, error) {
	return DiscoverCached(ctx, p, root, explicit, nil)
}

// DiscoverCached is Discover reading the listings of unchanged directories from c (nil: none; see
// DirCache) and recording the others in it.
func DiscoverCached(ctx context.Context, p Provider, root string, explicit bool, c *DirCache) ([]Source, error) {
	fi, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("discover %s: %w", p, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("discover %s: %s is not a directory", p, root)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", p, err)
	}
	// A root that is itself a symbolic link (projects -> /elsewhere/projects) is the user's own layout: it
	// is resolved once, here, and the walk below it never follows a link (docs/history.md "Discovery").
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return nil, fmt.Errorf("discover %s: %w", p, err)
		}
	}
	var out []Source
	count := 0
	zst := map[string]bool{}
	for _, sub := range sessionDirs(p, explicit) {
		top := root
		if sub != "" {
			top = filepath.Join(root, sub)
			if _, err := os.Lstat(top); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		err = walk(ctx, top, c, func(path, rel string, st walkStat, ok bool) error {
			count++
			if count > maxDiscoveredFiles {
				return fmt.Errorf("more than %d files under %s", maxDiscoveredFiles, top)
			}
			if sub != "" {
				rel = sub + string(filepath.Separator) + rel
			}
			if s, isSource := classify(p, rel, explicit); isSource {
				s.Path = path
				s.stat = st.file(ok)
				if s.Format == FormatCodexZstd {
					zst[path] = true
				}
				out = append(out, s)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("discover %s under %s: %w", p, root, err)
		}
	}
	if p == OpenCode { // a database holds many sessions: one source each
		var expanded []Source
		for _, s := range out {
			if s.Format != FormatOpenCodeDB {
				expanded = append(expanded, s)
				continue
			}
			ss, err := openCodeDBSessions(ctx, s.Path)
			if err != nil {
				s.listErr = err.Error()
				expanded = append(expanded, s) // imported as a failed source that says why
				continue
			}
			expanded = append(expanded, ss...)
		}
		out = expanded
	}
	if len(zst) > 0 { // a raw rollout and its .zst copy are one session: the raw file wins
		have := map[string]bool{}
		for _, s := range out {
			have[s.Path] = true
		}
		kept := out[:0]
		for _, s := range out {
			if s.Format == FormatCodexZstd && have[strings.TrimSuffix(s.Path, ".zst")] {
				continue
			}
			kept = append(kept, s)
		}
		out = kept
	}
	for i := range out {
		out[i].explicit = explicit
	}
	return out, nil
}

// sessionDirs are the folders under a provider's root that discovery walks ("": the root whole). Codex's
// default root ($CODEX_HOME, ~/.codex) also holds the app's git worktrees (worktrees/<id>/<project>, often
// hundreds of thousands of files), its logs and caches: only sessions/ and archived_sessions/ hold
// rollouts, and only they are walked. An explicit root is walked whole.
func sessionDirs(p Provider, explicit bool) []string {
	if p == Codex && !explicit {
		return []string{"sessions", "archived_sessions"}
	}
	return []string{""}
}

// classify decides whether the file at rel (relative to the provider's root) is a session source.
func classify(p Provider, rel string, explicit bool) (Source, bool) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	name := parts[len(parts)-1]
	dir := func(i int) string { // the i-th parent directory name (1 = containing dir)
		if len(parts)-1-i < 0 {
			return ""
		}
		return parts[len(parts)-1-i]
	}
	s := Source{Provider: p}
	switch p {
	case ClaudeCode:
		if !strings.HasSuffix(name, ".jsonl") {
			return s, false
		}
		s.Format = FormatClaude
		if dir(1) == "subagents" && dir(2) != "" {
			s.ParentNative = nameID(dir(2)) // the parent's native id, from its file name (nativeFromPath)
		}
		return s, explicit || len(parts) >= 2
	case Codex:
		switch {
		case strings.HasSuffix(name, ".jsonl"):
			s.Format = FormatCodex
		case strings.HasSuffix(name, ".jsonl.zst"):
			s.Format = FormatCodexZstd
		default:
			return s, false
		}
		if explicit {
			return s, len(parts) >= 2 || strings.HasPrefix(name, "rollout-")
		}
		return s, (parts[0] == "sessions" || parts[0] == "archived_sessions") && len(parts) >= 2
	case GeminiCLI:
		switch {
		case strings.HasSuffix(name, ".jsonl"):
			s.Format = FormatGeminiJSONL
		case strings.HasSuffix(name, ".json"):
			s.Format = FormatGeminiJSON
		default:
			return s, false
		}
		return s, explicit || slicesContains(parts[:len(parts)-1], "chats")
	case OpenCode:
		if isOpenCodeDB(name) && (explicit || len(parts) == 1) {
			return Source{Provider: p, Format: FormatOpenCodeDB}, true
		}
		// <...>/session/<project>/<ses>.json
		return Source{Provider: p, Format: FormatOpenCode}, strings.HasSuffix(name, ".json") && dir(2) == "session"
	case Cursor:
		if !strings.HasSuffix(name, ".jsonl") {
			return s, false
		}
		s.Format = FormatCursor
		return s, explicit || slicesContains(parts[:len(parts)-1], "agent-transcripts")
	case CopilotCLI:
		if !strings.HasSuffix(name, ".jsonl") {
			return s, false
		}
		s.Format = FormatCopilot
		return s, explicit || name == "events.jsonl" || len(parts) == 1
	}
	return s, false
}

func slicesContains(ss []string, v string) bool {
	for _, s := range ss {
		if s == v {
			return true
		}
	}
	return false
}

// openRegular opens path for reading without following a final symbolic link and checks that what was
// opened is the regular file that was stat'ed (no swap between the two).
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := openNoFollow(path)
	if err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return nil, nil, err // "open PATH: reason" already
		}
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("open %s: not a regular file", path)
	}
	if li, err := os.Lstat(path); err != nil || !os.SameFile(li, fi) {
		f.Close()
		return nil, nil, fmt.Errorf("open %s: the file changed or is a symbolic link", path)
	}
	return f, fi, nil
}

// readRegular reads a regular file of at most max bytes.
func readRegular(path string, max int64) ([]byte, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fmt.Errorf("read %s: %d bytes, more than the %d allowed", path, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("read %s: more than %d bytes", path, max)
	}
	return data, nil
}
