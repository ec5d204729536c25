package frontmeta

import "testing"

// TestSetKeepsOrderAndUnknownKeys: a parsed mapping keeps its keys' order, comments and unknown keys; a
// set key keeps its place, a new one is appended; an RFC 3339 time is quoted (yaml.v3's rule), as every
// entry's updated_at is written.
func TestSetKeepsOrderAndUnknownKeys(t *testing.T) {
	m, err := Parse([]byte("title: \"A: b\"\n# note\nauthor: x\ntags: [a, b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	m.Set("author", "N <n@x>")
	m.Set("updated_at", "2027-01-15T08:00:00Z")
	got := string(Join(m, []byte("body\n")))
	want := "---\ntitle: \"A: b\"\n# note\nauthor: N <n@x>\ntags: [a, b]\nupdated_at: \"2027-01-15T08:00:00Z\"\n---\nbody\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := Parse([]byte("- a list\n")); err == nil {
		t.Fatal("a list parsed as front matter")
	}
}
