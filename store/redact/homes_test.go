package redact

import "testing"

// A home that is not under /home, /Users or /root ($HOME=/srv/ci/agent) is replaced where it starts a
// path, not in the middle of a longer path nor as the prefix of another name; /root still is.
func TestStringHomesRedactsGivenHomes(t *testing.T) {
	text := "cd /srv/ci/agent/proj && ls /srv/ci/agent\nnot /srv/ci/agent2 nor /x/srv/ci/agent/y; passwd /root/.cache"
	got, reds := StringHomes(text, []string{"/srv/ci/agent/", "relative", "/"})
	want := "cd ~/proj && ls ~\nnot /srv/ci/agent2 nor /x/srv/ci/agent/y; passwd ~/.cache"
	if got != want {
		t.Errorf("StringHomes:\n got %q\nwant %q", got, want)
	}
	if len(reds) != 3 || reds[0].Rule != "home-dir" || reds[2].Line != 2 {
		t.Errorf("redactions: %+v", reds)
	}
	if got, _ := String(text); got == want {
		t.Errorf("String (no homes given) redacted /srv/ci/agent")
	}
}
