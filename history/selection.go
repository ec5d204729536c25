package history

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// SourceDir is a root a search selects (a configured root, docs/history.md "Configured roots"): the
// sessions of Provider whose source file is inside the directory Dir. A root is {provider, path}: another
// provider's sessions in its folder are not its (a codex root configured on a Claude Code
// folder counted and selected the Claude sessions).
type SourceDir struct {
	Provider Provider
	Dir      string
}

// sourceDirsWhere appends to where and args the condition that a session is of one of dirs: of its
// provider, its source file inside its directory. Empty dirs add nothing.
func sourceDirsWhere(where []string, args []any, dirs []SourceDir) ([]string, []any) {
	if len(dirs) == 0 {
		return where, args
	}
	var or []string
	for _, sd := range dirs {
		d := filepath.Clean(sd.Dir) + string(filepath.Separator)
		or = append(or, "(s.provider = ? AND substr(s.source_path, 1, ?) = ?)")
		args = append(args, string(sd.Provider), utf8.RuneCountInString(d), d) // SQLite substr counts characters
	}
	return append(where, "("+strings.Join(or, " OR ")+")"), args
}

// SessionsUnder counts the indexed sessions of provider whose source file is inside dir.
func (ix *Index) SessionsUnder(ctx context.Context, provider Provider, dir string) (_ int, err error) {
	defer ix.noteDamaged(&err)
	where, args := sourceDirsWhere(nil, nil, []SourceDir{{provider, dir}})
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions s WHERE `+strings.Join(where, " AND "), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}
