package history

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// sourceDirsWhere appends to where and args the condition that a session's source file is inside one of
// dirs (each a directory; its source files are below it). Empty dirs add nothing.
func sourceDirsWhere(where []string, args []any, dirs []string) ([]string, []any) {
	if len(dirs) == 0 {
		return where, args
	}
	var or []string
	for _, d := range dirs {
		d = filepath.Clean(d) + string(filepath.Separator)
		or = append(or, "substr(s.source_path, 1, ?) = ?")
		args = append(args, utf8.RuneCountInString(d), d) // SQLite substr counts characters
	}
	return append(where, "("+strings.Join(or, " OR ")+")"), args
}

// SessionsUnder counts the indexed sessions whose source file is inside dir.
func (ix *Index) SessionsUnder(ctx context.Context, dir string) (_ int, err error) {
	defer ix.noteDamaged(&err)
	where, args := sourceDirsWhere(nil, nil, []string{dir})
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions s WHERE `+strings.Join(where, " AND "), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}
