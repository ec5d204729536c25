package store

import "testing"

// TestURLSecretRule: what ctx prints of a remote's URL (RedactURL) and what manifest.json records of it
// (portableURL) drop its secret by one rule: an ssh URL keeps its login and loses a password, any other
// URL loses its user information; portableURL also drops what names this machine.
func TestURLSecretRule(t *testing.T) {
	for _, c := range []struct{ in, redacted, portable string }{
		{"https://user:token@example.com/x.git", "https://example.com/x.git", "https://example.com/x.git"},
		{"https://TOKEN@example.com/x.git", "https://example.com/x.git", "https://example.com/x.git"},
		{"ssh://git@example.com/x.git", "ssh://git@example.com/x.git", "ssh://git@example.com/x.git"},
		{"SSH://git:pw@example.com/x.git", "ssh://git@example.com/x.git", "ssh://git@example.com/x.git"},
		{"git+ssh://me:pw@example.com/x", "git+ssh://me@example.com/x", "git+ssh://me@example.com/x"},
		{"https://example.com/x.git", "https://example.com/x.git", "https://example.com/x.git"},
		{"git@example.com:team/x.git", "git@example.com:team/x.git", "git@example.com:team/x.git"},
		{"file:///srv/x.git", "file:///srv/x.git", ""},
		{"/srv/x.git", "/srv/x.git", ""},
	} {
		if got := RedactURL(c.in); got != c.redacted {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.redacted)
		}
		if got := portableURL(c.in); got != c.portable {
			t.Errorf("portableURL(%q) = %q, want %q", c.in, got, c.portable)
		}
	}
}
