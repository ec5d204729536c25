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
	} {
		if got := lastLines(c.in, nil); got != c.want {
			t.Errorf("lastLines(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
