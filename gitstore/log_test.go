package gitstore_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// historyRepo builds refs/heads/ctx with a first-parent history touching knowledge/, decisions/ and
// state.json, with a side branch refs/heads/side merged in (so first-parent matters), and returns the repo.
func historyRepo(t *testing.T) (string, *gitstore.Repo) {
	t.Helper()
	dir := testenv.NewRepo(t)
	r := open(t, dir)
	set(t, r, pub, "init", map[string]string{"manifest.json": "{}"})
	for i := 0; i < 12; i++ {
		files := map[string]string{}
		switch i % 3 {
		case 0:
			files["knowledge/a.md"] = "a" + strconv.Itoa(i)
		case 1:
			files["decisions/000"+strconv.Itoa(i%10)+"-x.md"] = "d" + strconv.Itoa(i)
		case 2:
			files["state.json"] = "{\"n\":" + strconv.Itoa(i) + "}"
		}
		if i == 7 {
			files["knowledge/b.md"] = "b"
		}
		set(t, r, pub, fmt.Sprintf("w%d", i), files)
	}
	// A side branch from the current tip touching knowledge/, then a merge into ctx.
	tip, _ := r.Resolve(bg, pub)
	if err := r.UpdateRef(bg, "refs/heads/side", gitstore.ZeroHash, tip, "side"); err != nil {
		t.Fatal(err)
	}
	set(t, r, "refs/heads/side", "side 1", map[string]string{"knowledge/side.md": "s"})
	set(t, r, "refs/heads/side", "side 2", map[string]string{"decisions/0099-side.md": "s"})
	set(t, r, pub, "main after fork", map[string]string{"state.json": "{}"})
	side, _ := r.Resolve(bg, "refs/heads/side")
	if _, err := r.Transact(bg, []string{pub}, func(tips map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		st, _ := r.TreeOf(bg, side)
		merged := edit(t, r, tips[pub].Tree, put("knowledge/side.md", "s"), put("decisions/0099-side.md", "s"))
		_ = st
		return map[string]*gitstore.Write{pub: {Tree: &merged, ExtraParents: []gitstore.Hash{side}, Message: "merge side"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	set(t, r, pub, "last", map[string]string{"knowledge/a.md": "last"})
	// A commit that deletes a path.
	if _, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
		return map[string]*gitstore.Write{pub: {Changes: []gitstore.Change{del("knowledge/b.md")}, Message: "delete b"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return dir, r
}

func hashes(cs []gitstore.Hash) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.String())
	}
	return strings.Join(s, "\n")
}

func TestLog(t *testing.T) {
	dir, r := historyRepo(t)
	tip, _ := r.Resolve(bg, pub)
	for _, path := range []string{"", "knowledge", "knowledge/a.md", "knowledge/b.md", "decisions", "state.json", "manifest.json", "nope", "knowledge/side.md"} {
		args := []string{"log", "--format=%H", "--first-parent", pub}
		if path != "" {
			args = append(args, "--", path)
		}
		want := testenv.Git(t, dir, args...)
		cs, err := r.Log(bg, tip, 0, path)
		if err != nil {
			t.Fatal(err)
		}
		var got []gitstore.Hash
		for _, c := range cs {
			got = append(got, c.Hash)
		}
		if hashes(got) != want {
			t.Errorf("Log(path=%q):\n%s\ngit log:\n%s", path, hashes(got), want)
		}
		// With a limit.
		cs, err = r.Log(bg, tip, 2, path)
		if err != nil {
			t.Fatal(err)
		}
		wantN := strings.Split(want, "\n")
		if want == "" {
			wantN = nil
		}
		if len(wantN) > 2 {
			wantN = wantN[:2]
		}
		if len(cs) != len(wantN) {
			t.Errorf("Log(n=2, path=%q) = %d commits, want %d", path, len(cs), len(wantN))
		}
	}
	if cs, err := r.Log(bg, gitstore.ZeroHash, 0, ""); err != nil || len(cs) != 0 {
		t.Fatalf("Log(zero) = %d, %v", len(cs), err)
	}
}

func TestMergeBaseAndCounts(t *testing.T) {
	dir, r := historyRepo(t)
	// Diverge: a and b from a common point, plus b merging an older commit (criss-cross-ish).
	tip, _ := r.Resolve(bg, pub)
	for _, ref := range []string{"refs/heads/a", "refs/heads/b"} {
		if err := r.UpdateRef(bg, ref, gitstore.ZeroHash, tip, "fork"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		set(t, r, "refs/heads/a", "a", map[string]string{fmt.Sprintf("a%d", i): "a"})
	}
	for i := 0; i < 5; i++ {
		set(t, r, "refs/heads/b", "b", map[string]string{fmt.Sprintf("b%d", i): "b"})
	}
	// Criss-cross: a merges b~2, b merges a~1.
	crossMerge := func(into, from string) {
		fromH := hash(t, testenv.Git(t, dir, "rev-parse", from))
		if _, err := r.Transact(bg, []string{into}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
			return map[string]*gitstore.Write{into: {ExtraParents: []gitstore.Hash{fromH}, Message: "merge " + from}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	unrelated := hash(t, testenv.Git(t, dir, "commit-tree", "-m", "orphan", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"))
	testenv.Git(t, dir, "update-ref", "refs/heads/orphan", unrelated.String())

	check := func(label string) {
		t.Helper()
		pairs := [][2]string{{"refs/heads/a", "refs/heads/b"}, {"refs/heads/b", "refs/heads/a"}, {"refs/heads/a", pub},
			{pub, "refs/heads/a"}, {"refs/heads/side", "refs/heads/b"}, {"refs/heads/a", "refs/heads/a"}, {"main", "refs/heads/a"}, {"refs/heads/orphan", "refs/heads/a"}}
		for _, p := range pairs {
			a := hash(t, testenv.Git(t, dir, "rev-parse", p[0]))
			b := hash(t, testenv.Git(t, dir, "rev-parse", p[1]))
			mb, err := r.MergeBase(bg, a, b)
			if err != nil {
				t.Fatal(err)
			}
			wantAll, _ := testenv.GitErr(dir, "merge-base", "--all", p[0], p[1]) // empty (exit 1): none
			if wantAll == "" {
				if !mb.IsZero() {
					t.Errorf("%s: MergeBase(%s, %s) = %s, git: none", label, p[0], p[1], mb)
				}
			} else if !strings.Contains(wantAll, mb.String()) {
				t.Errorf("%s: MergeBase(%s, %s) = %s, not among git merge-base --all:\n%s", label, p[0], p[1], mb, wantAll)
			} else if one, _ := testenv.GitErr(dir, "merge-base", p[0], p[1]); one != mb.String() {
				t.Logf("%s: MergeBase(%s, %s) = %s, git merge-base picks %s (both are best bases)", label, p[0], p[1], mb, one)
			}
			n, err := r.CountAhead(bg, a, b)
			if err != nil {
				t.Fatal(err)
			}
			want := testenv.Git(t, dir, "rev-list", "--count", p[0], "^"+p[1])
			if strconv.Itoa(n) != want {
				t.Errorf("%s: CountAhead(%s, %s) = %d, git rev-list --count = %s", label, p[0], p[1], n, want)
			}
			anc, err := r.IsAncestor(bg, a, b)
			if err != nil {
				t.Fatal(err)
			}
			_, gerr := testenv.GitErr(dir, "merge-base", "--is-ancestor", p[0], p[1])
			if anc != (gerr == nil) {
				t.Errorf("%s: IsAncestor(%s, %s) = %v, git says %v", label, p[0], p[1], anc, gerr == nil)
			}
		}
	}
	check("diverged")
	crossMerge("refs/heads/a", "refs/heads/b~2")
	crossMerge("refs/heads/b", "refs/heads/a~1")
	check("criss-cross")
	// Zero hashes.
	if n, _ := r.CountAhead(bg, gitstore.ZeroHash, tip); n != 0 {
		t.Error("CountAhead(zero, x) != 0")
	}
	if n, _ := r.CountAhead(bg, tip, gitstore.ZeroHash); strconv.Itoa(n) != testenv.Git(t, dir, "rev-list", "--count", pub) {
		t.Error("CountAhead(x, zero) != all commits")
	}
	if mb, _ := r.MergeBase(bg, tip, gitstore.ZeroHash); !mb.IsZero() {
		t.Error("MergeBase(x, zero) != zero")
	}
}
