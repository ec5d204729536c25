package gitstore

import "testing"

// TestLastLines: git's error lines are kept in full and its advice after them is not cut: a failed fetch
// of a path that is no repository reads as git printed it, on one line.
func TestLastLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"fatal: '/x.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n",
			"fatal: '/x.git' does not appear to be a git repository / fatal: Could not read from remote repository. / Please make sure you have the correct access rights and the repository exists."},
		{"hint: a\nhint: b\nerror: failed to push some refs to 'x'\n", "error: failed to push some refs to 'x'"},
		{"remote: one\nremote: two\nremote: three\nremote: four\nremote: five\n", "remote: two / remote: three / remote: four / remote: five"},
		{"fatal: x\n1\n2\n3\n4\n5\n6\n", "fatal: x / 3 4 5 6"},
		// The ssh client's own line comes before git's fatal one: it is the reason, and is kept (fault: it
		// was dropped, leaving "Could not read from remote repository").
		{"ssh: connect to host 127.0.0.1 port 1: Connection refused\r\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n",
			"ssh: connect to host 127.0.0.1 port 1: Connection refused / fatal: Could not read from remote repository. / Please make sure you have the correct access rights and the repository exists."},
		{"Receiving objects:  50% (1/2)\rReceiving objects: 100% (2/2), done.\ngit@host: Permission denied (publickey).\nhint: x\nfatal: Could not read from remote repository.\n",
			"git@host: Permission denied (publickey). / fatal: Could not read from remote repository."},
		// A hostile server's escape sequences never reach the terminal.
		{"evil \x1b[2Jline\x07\nfatal: no\n", "evil ?[2Jline? / fatal: no"},
	} {
		if got := lastLines(c.in, nil); got != c.want {
			t.Errorf("lastLines(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
