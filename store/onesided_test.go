package store_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// oneSidedFile is a file of a crafted side: content, or deleted; mode 100644 unless exec.
type oneSidedFile struct {
	data   string
	delete bool
	exec   bool
}

// craftMerge builds with git fast-import a repository whose ctx (ours) and theirs descend from base, each
// side's files applied on top of base's, and returns it with the two commits.
func craftMerge(t *testing.T, base, ours, theirs map[string]oneSidedFile) (dir string, oursH, theirsH gitstore.Hash) {
	t.Helper()
	dir = storetest.Repo(t)
	var in bytes.Buffer
	mark := 0
	commit := func(ref string, from int, files map[string]oneSidedFile) int {
		mark++
		fmt.Fprintf(&in, "commit %s\nmark :%d\ncommitter Test <test@example.com> 1767225600 +0000\ndata 4\nedit\n", ref, mark)
		if from > 0 {
			fmt.Fprintf(&in, "from :%d\n", from)
		}
		for p, f := range files {
			switch {
			case f.delete:
				fmt.Fprintf(&in, "D %s\n", p)
			default:
				mode := "100644"
				if f.exec {
					mode = "100755"
				}
				fmt.Fprintf(&in, "M %s inline %s\ndata %d\n%s\n", mode, p, len(f.data), f.data)
			}
		}
		return mark
	}
	b := commit("refs/heads/base", 0, base)
	commit("refs/heads/ctx", b, ours)
	commit("refs/heads/theirs", b, theirs)
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	return dir, gitstore.NewHash(testenv.Git(t, dir, "rev-parse", "ctx")), gitstore.NewHash(testenv.Git(t, dir, "rev-parse", "theirs"))
}

func kEntry(updated, body string) string {
	return "---\nauthor: T <t@example.com>\nagent: test\nupdated_at: " + updated + "\nprovenance: agent_generated\nscope: public\n---\n" + body
}

func adrEntry(n int, uid, title string) string {
	return fmt.Sprintf("---\nid: %d\nuid: %s\ntitle: %s\nstatus: accepted\ndate: 2026-01-0%dT00:00:00Z\nsupersedes: []\n---\n%s\n", n, uid, title, n, title)
}

// TestMergeOneSidedAsBefore: a merge that takes the paths changed on one side only by their tree entries
// writes the same tree, conflicts and notes as the merge that reads and merges every changed path, on
// crafted histories: one-sided edits, adds and deletes of entries, an entry moved on one side, a mode
// changed, edits of both sides that merge or conflict for each kind of file (markdown entry, JSON record,
// log, plain text), decisions added on both sides (renumbered), a rename followed by content (every path
// read then). merge's TestOneSidedAsTree covers the rules across paths (a conflict settled on both sides
// among them) over generated stores.
func TestMergeOneSidedAsBefore(t *testing.T) {
	body := "Line one.\nLine two.\nLine three.\nLine four.\nLine five.\n"
	base := map[string]oneSidedFile{
		"manifest.json":            {data: "{\n  \"version\": 1\n}\n"},
		"knowledge/edit-ours.md":   {data: kEntry("2026-01-01T00:00:00Z", body)},
		"knowledge/edit-theirs.md": {data: kEntry("2026-01-01T00:00:00Z", body)},
		"knowledge/del-ours.md":    {data: kEntry("2026-01-01T00:00:00Z", body)},
		"knowledge/del-theirs.md":  {data: kEntry("2026-01-01T00:00:00Z", body)},
		"knowledge/moved.md":       {data: kEntry("2026-01-01T00:00:00Z", "A moved entry.\n"+body)},
		"knowledge/both.md":        {data: kEntry("2026-01-01T00:00:00Z", body)},
		"knowledge/clash.md":       {data: kEntry("2026-01-01T00:00:00Z", body)},
		"knowledge/mode.md":        {data: kEntry("2026-01-01T00:00:00Z", body)},
		"knowledge/same.md":        {data: kEntry("2026-01-01T00:00:00Z", body)},
		"conventions/c.md":         {data: kEntry("2026-01-01T00:00:00Z", body)},
		"decisions/0001-first.md":  {data: adrEntry(1, "u1", "First")},
		"state.json":               {data: "{\n  \"a\": 1,\n  \"b\": 2\n}\n"},
		"history/s1.json":          {data: "{\n  \"id\": \"s1\",\n  \"title\": \"t\",\n  \"summary\": \"s\"\n}\n"},
		"skills/s/SKILL.md":        {data: "---\nname: s\ndescription: d\n---\n" + body},
		"skills/s/.usage.ndjson":   {data: `{"id":"a","timestamp":"2026-11-01T00:00:00Z"}` + "\n"},
		"skills/s/notes.txt":       {data: body},
	}
	ours := map[string]oneSidedFile{
		"knowledge/edit-ours.md":  {data: kEntry("2026-01-02T00:00:00Z", "Ours.\n"+body)},
		"knowledge/del-ours.md":   {delete: true},
		"knowledge/new-ours.md":   {data: kEntry("2026-01-02T00:00:00Z", "New on ours.\n")},
		"knowledge/both.md":       {data: kEntry("2026-01-02T00:00:00Z", "Line one by ours.\n"+body[10:])},
		"knowledge/clash.md":      {data: kEntry("2026-01-02T00:00:00Z", "Clash by ours.\n"+body[10:])},
		"knowledge/same.md":       {data: kEntry("2026-01-05T00:00:00Z", body+"Same on both.\n")},
		"conventions/c.md":        {data: kEntry("2026-01-02T00:00:00Z", "Ours.\n"+body)},
		"decisions/0002-ours.md":  {data: adrEntry(2, "u-ours", "Ours")},
		"state.json":              {data: "{\n  \"a\": 10,\n  \"b\": 2\n}\n"},
		"history/s1.json":         {data: "{\n  \"id\": \"s1\",\n  \"title\": \"ours\",\n  \"summary\": \"s\"\n}\n"},
		"skills/s/.usage.ndjson":  {data: `{"id":"a","timestamp":"2026-11-01T00:00:00Z"}` + "\n" + `{"id":"o","timestamp":"2026-11-02T00:00:00Z"}` + "\n"},
		"skills/s/notes.txt":      {data: "Ours first.\n" + body},
		"knowledge/moved.md":      {delete: true},
		"knowledge/moved-here.md": {data: kEntry("2026-01-01T00:00:00Z", "A moved entry.\n"+body)},
	}
	theirs := map[string]oneSidedFile{
		"knowledge/edit-theirs.md": {data: kEntry("2026-01-03T00:00:00Z", body+"Theirs.\n")},
		"knowledge/del-theirs.md":  {delete: true},
		"knowledge/new-theirs.md":  {data: kEntry("2026-01-03T00:00:00Z", "New on theirs.\n")},
		"knowledge/both.md":        {data: kEntry("2026-01-03T00:00:00Z", body[:len(body)-11]+"Line five by theirs.\n")},
		"knowledge/clash.md":       {data: kEntry("2026-01-03T00:00:00Z", "Clash by theirs.\n"+body[10:])},
		"knowledge/mode.md":        {data: kEntry("2026-01-01T00:00:00Z", body), exec: true},
		"knowledge/same.md":        {data: kEntry("2026-01-05T00:00:00Z", body+"Same on both.\n")},
		"conventions/c.md":         {data: kEntry("2026-01-03T00:00:00Z", body+"Theirs.\n")},
		"decisions/0002-theirs.md": {data: adrEntry(2, "u-theirs", "Theirs")},
		"state.json":               {data: "{\n  \"a\": 1,\n  \"b\": 20\n}\n"},
		"history/s1.json":          {data: "{\n  \"id\": \"s1\",\n  \"title\": \"t\",\n  \"summary\": \"theirs\"\n}\n"},
		"skills/s/.usage.ndjson":   {data: `{"id":"a","timestamp":"2026-11-01T00:00:00Z"}` + "\n" + `{"id":"t","timestamp":"2026-11-03T00:00:00Z"}` + "\n"},
		"skills/s/SKILL.md":        {data: "---\nname: s\ndescription: theirs\n---\n" + body},
		"skills/s/notes.txt":       {data: body + "Theirs last.\n"},
	}
	// The same histories with theirs also editing the entry ours moved: a rename to follow, so the merge
	// reads every changed path.
	renamed := map[string]oneSidedFile{"knowledge/moved.md": {data: kEntry("2026-01-04T00:00:00Z", "A moved entry.\n"+body+"Theirs edited it.\n")}}
	for p, f := range theirs {
		renamed[p] = f
	}
	cases := []struct {
		name               string
		base, ours, theirs map[string]oneSidedFile
		byName             bool // the merge takes one-sided paths by name
	}{
		{"one-sided changes beside merged ones", base, ours, theirs, true},
		{"a rename followed", base, ours, renamed, false},
		{"swapped sides", base, theirs, ours, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, oursH, theirsH := craftMerge(t, c.base, c.ours, c.theirs)
			s, err := store.Open(bg, dir, store.Actor{Agent: "test", Machine: "m"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			run := func(off bool) (tree string, res *store.PullResult) {
				defer store.SetOneSidedOff(off)()
				cur, err := s.GitRepo().Resolve(bg, s.BranchRef())
				if err != nil {
					t.Fatal(err)
				}
				if err := s.GitRepo().UpdateRef(bg, s.BranchRef(), cur, oursH, "test: reset"); err != nil {
					t.Fatal(err)
				}
				res, err = s.MergeCommit(bg, theirsH, store.PullOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return testenv.Git(t, dir, "rev-parse", "ctx^{tree}"), res
			}
			before := store.OneSidedTaken()
			newTree, newRes := run(false)
			taken := store.OneSidedTaken() - before
			oldTree, oldRes := run(true)
			if newTree != oldTree {
				t.Fatalf("merged trees differ:\n%s", testenv.Git(t, dir, "diff", "--stat", "--summary", oldTree, newTree))
			}
			if fmt.Sprint(newRes.Conflicts) != fmt.Sprint(oldRes.Conflicts) || fmt.Sprint(newRes.Notes) != fmt.Sprint(oldRes.Notes) {
				t.Fatalf("conflicts or notes differ:\nnew %v\n%v\nold %v\n%v", newRes.Conflicts, newRes.Notes, oldRes.Conflicts, oldRes.Notes)
			}
			if len(newRes.Conflicts) == 0 {
				t.Fatal("no conflict: the clash of both sides was not merged")
			}
			if c.byName != (taken > 0) {
				t.Fatalf("%d paths taken by name, want some: %v", taken, c.byName)
			}
		})
	}
}
