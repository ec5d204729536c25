package store

import "strings"

// isLitter reports whether a name in .context/ is a file that operating systems and editors leave beside
// the files they open, which a hand-edit scan ignores as a .gitignore would (docs/format.md "Litter in .context/"):
// macOS Finder's .DS_Store and its ._NAME resource forks, Windows' Thumbs.db and desktop.ini, vim's swap
// files (.NAME.swp, .swo, ... .swa) and backups (NAME~), emacs' lock (.#NAME) and auto-save (#NAME#)
// files. None is a store path: keys and file names of ctx never take these shapes.
func isLitter(name string) bool {
	switch name {
	case ".DS_Store", "Thumbs.db", "desktop.ini":
		return true
	}
	if strings.HasPrefix(name, "._") || strings.HasPrefix(name, ".#") || strings.HasSuffix(name, "~") {
		return true
	}
	if len(name) > 2 && name[0] == '#' && name[len(name)-1] == '#' {
		return true
	}
	// vim: .NAME.swp, then .swo, .swn, ... down to .swa as more sessions open the file.
	if strings.HasPrefix(name, ".") && len(name) > 4 {
		ext := name[len(name)-4:]
		if ext[0] == '.' && ext[1] == 's' && ext[2] == 'w' && ext[3] >= 'a' && ext[3] <= 'p' {
			return true
		}
	}
	return false
}
