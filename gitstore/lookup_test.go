package gitstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// A read of one path must not decode the big folder it goes through: it scans that tree's raw bytes.
func TestReadFileDoesNotDecodeFolder(t *testing.T) {
	dir := testenv.NewRepo(t)
	w := open(t, dir)
	var ch []gitstore.Change
	for i := 0; i < 500; i++ {
		ch = append(ch, put(fmt.Sprintf("knowledge/k%d.md", i), fmt.Sprintf("entry %d", i)))
	}
	ch = append(ch, put("manifest.json", "{}"))
	root := edit(t, w, gitstore.ZeroHash, ch...)
	commitTree(t, w, root)

	r := open(t, dir) // a fresh Repo: nothing decoded yet
	folder, err := r.PathHash(bg, root, "knowledge")
	if err != nil || folder.IsZero() {
		t.Fatalf("PathHash(knowledge) = %v, %v", folder, err)
	}
	got, err := r.ReadFile(bg, root, "knowledge/k321.md")
	if err != nil || string(got) != "entry 321" {
		t.Fatalf("ReadFile = %q, %v; want %q", got, err, "entry 321")
	}
	if r.TreeDecoded(folder) || r.TreeDecoded(root) {
		t.Errorf("ReadFile of one path decoded a whole tree (folder %v, root %v)", r.TreeDecoded(folder), r.TreeDecoded(root))
	}
	if _, err := r.ReadFile(bg, root, "knowledge/nope.md"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("ReadFile of a missing entry: %v, want ErrNotFound", err)
	}
	if _, err := r.ReadFile(bg, root, "manifest.json/x"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("ReadFile through a file: %v, want ErrNotFound", err)
	}
	// Once decoded (List), the same lookups answer from the decoded tree alike.
	if _, err := r.List(bg, root, "knowledge"); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadFile(bg, root, "knowledge/k7.md"); err != nil || string(got) != "entry 7" {
		t.Errorf("ReadFile after List = %q, %v", got, err)
	}
}

// scanTree reads every kind of entry C git writes exactly as git ls-tree lists it, and refuses a
// malformed tree instead of reading past it.
func TestScanTreeAgainstGit(t *testing.T) {
	dir := testenv.NewRepo(t)
	blob := strings.TrimSpace(testenv.Git(t, dir, "hash-object", "-w", "/dev/null"))
	empty := strings.TrimSpace(testenv.Git(t, dir, "mktree", "--missing"))
	listing := fmt.Sprintf("100644 blob %[1]s\ta.md\n100755 blob %[1]s\trun.sh\n120000 blob %[1]s\tlink\n"+
		"160000 commit 1111111111111111111111111111111111111111\tsub\n040000 tree %[2]s\tdir\n100644 blob %[1]s\tdir.md\n100644 blob %[1]s\tcafé.md\n",
		blob, empty)
	cmd := exec.Command("git", "mktree", "--missing")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(listing)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	tree := strings.TrimSpace(string(out))
	c := exec.Command("git", "-C", dir, "cat-file", "tree", tree)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	raw, err := c.Output() // byte for byte
	if err != nil {
		t.Fatalf("git cat-file tree %s: %v: %s", tree, err, stderr.String())
	}
	for _, line := range strings.Split(strings.Trim(testenv.Git(t, dir, "ls-tree", "-z", tree), "\x00\n"), "\x00") {
		meta, name, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		e, ok, err := gitstore.ScanTree(raw, name)
		if err != nil || !ok {
			t.Fatalf("ScanTree(%q) = %v, %v", name, ok, err)
		}
		if e.Name != name || e.Hash.String() != f[2] || fmt.Sprintf("%06o", uint32(e.Mode)) != f[0] || e.Dir != (f[1] == "tree") {
			t.Errorf("ScanTree(%q) = %+v; git ls-tree says %q", name, e, line)
		}
	}
	for _, name := range []string{"b.md", "dir/", "a", "caf"} {
		if _, ok, err := gitstore.ScanTree(raw, name); ok || err != nil {
			t.Errorf("ScanTree(%q) = %v, %v; want absent", name, ok, err)
		}
	}
	for _, bad := range [][]byte{
		raw[:len(raw)-1], // truncated object name
		append([]byte("10064x a\x00"), raw[9:]...), // not an octal mode
		raw[:8], // cut inside the first name: no NUL
		append([]byte(" a.md\x00"), make([]byte, 20)...), // no mode
	} {
		if _, _, err := gitstore.ScanTree(bad, "zzz"); err == nil {
			t.Errorf("ScanTree of a malformed tree %q: no error", bad)
		}
	}
}

// FilesAt reads many paths of one big folder from one scan of it, and answers exactly what git cat-file
// answers for each path: absent paths, folders and paths through a file are left out; duplicates are
// read once; the folder is not decoded.
func TestFilesAtAgainstGit(t *testing.T) {
	dir := testenv.NewRepo(t)
	w := open(t, dir)
	var ch []gitstore.Change
	for i := 0; i < 300; i++ {
		ch = append(ch, put(fmt.Sprintf("knowledge/k%03d.md", i), fmt.Sprintf("entry %d\n", i)))
	}
	ch = append(ch, put("knowledge/sub/inner.md", "inner\n"), put("decisions/0001-a.md", "decision\n"),
		put("a/b/c.md", "deep\n"), put("manifest.json", "{}\n"))
	root := edit(t, w, gitstore.ZeroHash, ch...)
	commitTree(t, w, root)

	var paths []string
	for i := 0; i < 300; i += 7 {
		paths = append(paths, fmt.Sprintf("knowledge/k%03d.md", i))
	}
	paths = append(paths, "knowledge/k007.md", "knowledge/k007.md", // twice
		"knowledge/nope.md", "nowhere/x.md", "knowledge/sub", "manifest.json/x", "a/b/c.md", "manifest.json",
		"decisions/0001-a.md", "knowledge/sub/inner.md", "knowledge/sub/none.md")
	want := map[string]string{}
	for _, p := range paths {
		cmd := exec.Command("git", "cat-file", "blob", root.String()+":"+p)
		cmd.Dir = dir
		if out, err := cmd.Output(); err == nil {
			want[p] = string(out)
		}
	}
	if len(want) != 300/7+1+4 { // every 7th entry, and a/b/c.md, manifest.json, the decision, inner.md
		t.Fatalf("git found %d of the paths", len(want))
	}
	r := open(t, dir) // nothing decoded yet
	folder, err := r.PathHash(bg, root, "knowledge")
	if err != nil {
		t.Fatal(err)
	}
	for _, decoded := range []bool{false, true} {
		if decoded {
			if _, err := r.List(bg, root, "knowledge"); err != nil {
				t.Fatal(err)
			}
		}
		got, err := r.FilesAt(bg, root, paths, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("decoded %v: FilesAt found %d paths, git %d", decoded, len(got), len(want))
		}
		for p, w := range want {
			if string(got[p]) != w {
				t.Errorf("decoded %v: FilesAt[%s] = %q, git says %q", decoded, p, got[p], w)
			}
		}
		if !decoded && r.TreeDecoded(folder) {
			t.Errorf("FilesAt decoded the 300-entry folder")
		}
	}
}

// FilesAtEach answers what FilesAt answers for each tree, reading a blob that two trees share once, and
// each map has its own bytes (a merge's sides are changed independently).
func TestFilesAtEachReadsSharedBlobsOnce(t *testing.T) {
	dir := testenv.NewRepo(t)
	w := open(t, dir)
	var ch []gitstore.Change
	for i := 0; i < 200; i++ {
		ch = append(ch, put(fmt.Sprintf("knowledge/k%03d.md", i), fmt.Sprintf("entry %d, long enough to be worth a pack entry of its own\n", i)))
	}
	ch = append(ch, put("decisions/0001-a.md", "decision\n"))
	base := edit(t, w, gitstore.ZeroHash, ch...)
	commitTree(t, w, base)
	ch = nil
	for i := 0; i < 200; i += 4 {
		ch = append(ch, put(fmt.Sprintf("knowledge/k%03d.md", i), fmt.Sprintf("entry %d, changed by ours\n", i)))
	}
	ours := edit(t, w, base, ch...)
	commitTree(t, w, ours)
	ch = nil
	for i := 0; i < 200; i += 5 {
		ch = append(ch, put(fmt.Sprintf("knowledge/k%03d.md", i), fmt.Sprintf("entry %d, changed by theirs\n", i)))
	}
	theirs := edit(t, w, base, ch...)
	commitTree(t, w, theirs)
	testenv.Git(t, dir, "repack", "-a", "-d", "-q")
	var paths []string
	for i := 0; i < 200; i += 2 {
		paths = append(paths, fmt.Sprintf("knowledge/k%03d.md", i))
	}
	roots := []gitstore.Hash{base, ours, theirs}
	// Inflations of small objects (the blobs, the small trees) by separate FilesAt calls, then by one
	// FilesAtEach, each on a newly opened repository reading in process.
	inflations := func(f func(r *gitstore.Repo) []map[string][]byte) ([]map[string][]byte, int) {
		r := open(t, dir)
		r.ReadInProcess()
		n := 0
		objread.OnInflate = func(size int64) {
			if size < 100 {
				n++
			}
		}
		defer func() { objread.OnInflate = nil }()
		return f(r), n
	}
	sep, nSep := inflations(func(r *gitstore.Repo) []map[string][]byte {
		var out []map[string][]byte
		for _, root := range roots {
			m, err := r.FilesAt(bg, root, paths, []string{"decisions"})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return out
	})
	each, nEach := inflations(func(r *gitstore.Repo) []map[string][]byte {
		out, err := r.FilesAtEach(bg, roots, paths, []string{"decisions"})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	for i := range roots {
		if len(each[i]) != len(sep[i]) || len(each[i]) != len(paths)+1 {
			t.Fatalf("tree %d: FilesAtEach found %d files, FilesAt %d, want %d", i, len(each[i]), len(sep[i]), len(paths)+1)
		}
		for p, b := range sep[i] {
			if !bytes.Equal(each[i][p], b) {
				t.Errorf("tree %d: FilesAtEach[%s] = %q, FilesAt %q", i, p, each[i][p], b)
			}
		}
	}
	distinct := map[string]bool{}
	for i := range roots {
		for _, b := range sep[i] {
			distinct[string(b)] = true
		}
	}
	// Both also inflate the same small trees (the decisions folder's): the difference is the blobs.
	if saved, want := nSep-nEach, 3*(len(paths)+1)-len(distinct); saved != want || want < len(paths) {
		t.Errorf("FilesAtEach inflated %d small objects fewer than three FilesAt calls (%d, %d), want %d fewer (%d distinct blobs)",
			saved, nSep, nEach, want, len(distinct))
	}
	// The same blob in two maps is two copies.
	p := "knowledge/k002.md" // changed by neither side
	each[0][p][0] ^= 0xff
	if each[1][p][0] == each[0][p][0] || each[2][p][0] == each[0][p][0] {
		t.Errorf("FilesAtEach's maps share the bytes of %s", p)
	}
}
