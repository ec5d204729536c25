package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// gitObject is one object as git cat-file gives it.
type gitObject struct {
	h    Hash
	typ  string
	data []byte
}

// allObjects is every object of the repository at dir, packed or loose, read by git cat-file.
func allObjects(t *testing.T, dir string) []gitObject {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var objs []gitObject
	rd := bufio.NewReader(bytes.NewReader(raw))
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("cat-file: %q", line)
		}
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(rd, data); err != nil {
			t.Fatal(err)
		}
		h, err := ParseHash(f[0])
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, gitObject{h, f[1], data[:n]})
	}
	return objs
}

// deltaObjects counts the objects stored as deltas in the packs of dir and the deepest chain
// (git verify-pack -v).
func deltaObjects(t *testing.T, dir string) (n, depth int) {
	t.Helper()
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	for _, idx := range idxs {
		for _, l := range strings.Split(testenv.Git(t, dir, "verify-pack", "-v", idx), "\n") {
			f := strings.Fields(l)
			// "<oid> <type> <size> <size-in-pack> <offset> <depth> <base-oid>"
			if len(f) == 7 && len(f[0]) == 40 {
				n++
				if d, _ := strconv.Atoi(f[5]); d > depth {
					depth = d
				}
			}
		}
	}
	return n, depth
}

// historyRepo makes a repository whose packs hold delta chains: 40 commits that each change a few of
// 200 entries of a folder and append to a longer file.
func historyRepo(t *testing.T) string {
	t.Helper()
	dir := testenv.NewRepo(t)
	var b strings.Builder
	b.WriteString("reset refs/heads/hist\n")
	long := ""
	for c := 0; c < 40; c++ {
		long += fmt.Sprintf("line %d of a file that grows with every commit, so its versions delta well\n", c)
		fmt.Fprintf(&b, "commit refs/heads/hist\ncommitter T <t@example.com> %d +0000\ndata %d\n%s\n", 1700000000+c, len(fmt.Sprint("c", c)), fmt.Sprint("c", c))
		files := map[string]string{"long.md": long}
		for k := 0; k < 200; k++ {
			if c == 0 || k%37 == c%37 {
				files[fmt.Sprintf("knowledge/k%03d.md", k)] = fmt.Sprintf("---\nkey: k%03d\n---\nentry %d, version %d\n", k, k, c)
			}
		}
		for p, d := range files {
			fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", p, len(d), d)
		}
	}
	testenv.GitIn(t, dir, b.String(), "fast-import", "--quiet")
	return dir
}

func checkAll(t *testing.T, dir string, wantDeltas bool) (ofs, ref int) {
	t.Helper()
	objs := allObjects(t, dir)
	if len(objs) < 100 {
		t.Fatalf("%d objects", len(objs))
	}
	if wantDeltas {
		if n, depth := deltaObjects(t, dir); n < 50 || depth < 3 {
			t.Fatalf("the packs hold %d deltas, chains of at most %d: the test reads no delta chain", n, depth)
		}
	}
	pr := newPackReader(filepath.Join(dir, ".git", "objects"))
	defer pr.Close()
	for _, o := range objs {
		typ, data, err := pr.read(nil, o.h)
		if err != nil {
			t.Fatalf("%s: %v", o.h, err)
		}
		if typ.String() != o.typ || !bytes.Equal(data, o.data) {
			t.Fatalf("%s: %s of %d bytes, git cat-file: %s of %d", o.h, typ, len(data), o.typ, len(o.data))
		}
	}
	if _, _, err := pr.read(nil, BlobHash([]byte("never written\n"))); !errors.Is(err, errRawMissing) {
		t.Errorf("a missing object: %v", err)
	}
	ofs, ref, err := pr.r.Deltas()
	if err != nil {
		t.Fatal(err)
	}
	return ofs, ref
}

// The pack reader reads every object of a repository as git cat-file does: packed with offset deltas,
// with deltas naming their base (REF_DELTA), in two packs, and loose.
func TestPackReaderMatchesGit(t *testing.T) {
	forEachPackAccess(t, testPackReaderMatchesGit)
}

// forEachPackAccess runs f with packs mapped (on Unix) and read with pread (as elsewhere).
func forEachPackAccess(t *testing.T, f func(t *testing.T)) {
	for _, mapped := range []bool{true, false} {
		t.Run(fmt.Sprintf("mapped=%v", mapped), func(t *testing.T) {
			old := objread.MapPacks
			objread.MapPacks = mapped
			defer func() { objread.MapPacks = old }()
			f(t)
		})
	}
}

func testPackReaderMatchesGit(t *testing.T) {
	dir := historyRepo(t)
	t.Run("loose", func(t *testing.T) {
		packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*"))
		var pack string
		for _, p := range packs {
			moved := filepath.Join(t.TempDir(), filepath.Base(p))
			if err := os.Rename(p, moved); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(p, ".pack") {
				pack = moved
			}
		}
		data, err := os.ReadFile(pack)
		if err != nil {
			t.Fatal(err)
		}
		testenv.GitIn(t, dir, string(data), "unpack-objects", "-q")
		if n := testenv.Git(t, dir, "count-objects"); strings.HasPrefix(n, "0 ") {
			t.Fatalf("count-objects: %s", n)
		}
		checkAll(t, dir, false)
	})
	t.Run("ofs-delta", func(t *testing.T) {
		testenv.Git(t, dir, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
		if ofs, ref := checkAll(t, dir, true); ofs == 0 || ref != 0 {
			t.Errorf("%d offset deltas, %d named deltas", ofs, ref)
		}
	})
	t.Run("ref-delta", func(t *testing.T) {
		testenv.Git(t, dir, "-c", "repack.useDeltaBaseOffset=false", "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
		if ofs, ref := checkAll(t, dir, true); ofs != 0 || ref == 0 {
			t.Errorf("%d offset deltas, %d named deltas", ofs, ref)
		}
	})
	t.Run("two-packs-and-loose", func(t *testing.T) {
		testenv.Git(t, dir, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
		blob := testenv.Blob(t, dir, "a loose blob\n")
		testenv.Git(t, dir, "update-ref", "refs/heads/other", testenv.CommitTree(t, dir, testenv.RawTree(t, dir, testenv.TreeEntry{Mode: "100644", Hash: blob, Name: "x.md"}), "", "other"))
		testenv.GitIn(t, dir, blob+"\n", "pack-objects", "-q", filepath.Join(dir, ".git", "objects", "pack", "pack"))
		checkAll(t, dir, true)
	})
}

// A damaged pack is an error or the right bytes, never other bytes or a panic: each byte of every
// object's entry flipped in turn.
func TestPackReaderDamagedPack(t *testing.T) {
	forEachPackAccess(t, testPackReaderDamagedPack)
}

func testPackReaderDamagedPack(t *testing.T) {
	dir := historyRepo(t)
	testenv.Git(t, dir, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
	objs := allObjects(t, dir)
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs", len(packs))
	}
	orig, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(packs[0], 0o644)
	errorsSeen := 0
	for at := 12; at < len(orig)-20; at += len(orig) / 97 {
		bad := bytes.Clone(orig)
		bad[at] ^= 0x5a
		if err := os.WriteFile(packs[0], bad, 0o644); err != nil {
			t.Fatal(err)
		}
		pr := newPackReader(filepath.Join(dir, ".git", "objects"))
		for _, o := range objs {
			typ, data, err := pr.read(nil, o.h)
			if err != nil {
				errorsSeen++
				continue
			}
			if typ.String() != o.typ || !bytes.Equal(data, o.data) {
				t.Fatalf("byte %d flipped: %s read as %s of %d bytes, not %s of %d", at, o.h, typ, len(data), o.typ, len(o.data))
			}
		}
		pr.Close()
	}
	if errorsSeen == 0 {
		t.Fatal("no flipped byte made a read fail: the test damaged nothing")
	}
}

// A pack index that is not version 2, is cut short or has a descending fan-out is left to go-git (the
// reader misses), without a panic.
func TestPackReaderDamagedIndex(t *testing.T) {
	dir := historyRepo(t)
	testenv.Git(t, dir, "repack", "-a", "-d", "-q")
	objs := allObjects(t, dir)
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	orig, err := os.ReadFile(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(idxs[0], 0o644)
	for name, bad := range map[string][]byte{
		"empty":      {},
		"short":      orig[:len(orig)/2],
		"version 1":  append([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 1}, orig[8:]...),
		"fan-out":    append(append(bytes.Clone(orig[:8+4*200]), 0, 0, 0, 0), orig[8+4*201:]...),
		"longer":     append(bytes.Clone(orig), 1, 2, 3),
		"big offset": withOffset(orig, 0x80000000|5),
	} {
		if err := os.WriteFile(idxs[0], bad, 0o644); err != nil {
			t.Fatal(err)
		}
		pr := newPackReader(filepath.Join(dir, ".git", "objects"))
		for _, o := range objs[:20] {
			if _, data, err := pr.read(nil, o.h); err == nil && !bytes.Equal(data, o.data) {
				t.Errorf("%s: %s read as other bytes", name, o.h)
			}
		}
		pr.Close()
	}
}

// withOffset is idx with the offset of its first object set to o.
func withOffset(idx []byte, o uint32) []byte {
	b := bytes.Clone(idx)
	n := int(b[8+4*255])<<24 | int(b[8+4*255+1])<<16 | int(b[8+4*255+2])<<8 | int(b[8+4*255+3])
	at := 8 + 1024 + n*24
	b[at], b[at+1], b[at+2], b[at+3] = byte(o>>24), byte(o>>16), byte(o>>8), byte(o)
	return b
}

// Crafted deltas are errors: a copy outside the base, an insert past the end, sizes that disagree.
func TestApplyDeltaHostile(t *testing.T) {
	base := []byte("0123456789")
	for name, d := range map[string][]byte{
		"empty":         {},
		"wrong base":    {9, 3, 0x90, 3},
		"copy past end": {10, 5, 0x91, 8, 5},
		"insert past":   {10, 2, 5, 'a', 'b'},
		"zero op":       {10, 1, 0},
		"short result":  {10, 5, 0x90, 3},
		"truncated":     {10, 5, 0x91},
		"huge result":   {10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	} {
		if out, err := applyDelta(base, d); err == nil {
			t.Errorf("%s: %q, no error", name, out)
		}
	}
	out, err := applyDelta(base, []byte{10, 6, 0x91, 2, 3, 3, 'a', 'b', 'c'})
	if err != nil || string(out) != "234abc" {
		t.Errorf("a good delta: %q, %v", out, err)
	}
}

func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("0123456789"), []byte{10, 6, 0x91, 2, 3, 3, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta)
		if err == nil && out == nil {
			t.Fatal("no error and no result")
		}
	})
}

// A Repo reading in process (ReadInProcess) never loads go-git's pack indexes for what a one-shot command
// does (the history of a ref, a path of a tree, a blob, and a write that finds its blob and tree already
// packed or writes them loose), starts no git process, and reads the same bytes as a Repo on go-git.
func TestReadInProcessLoadsNoIndex(t *testing.T) {
	dir := historyRepo(t)
	testenv.Git(t, dir, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
	tip, err := ParseHash(testenv.Git(t, dir, "rev-parse", "refs/heads/hist"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.ReadInProcess()
	if _, ok := r.cf.(*packReader); !ok {
		t.Fatalf("reads go to %T", r.cf)
	}
	plain, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()

	log, err := r.LogAll(context.Background(), tip, 20, "")
	if err != nil || len(log) != 20 {
		t.Fatalf("LogAll: %d commits, %v", len(log), err)
	}
	want, err := plain.LogAll(context.Background(), tip, 20, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range log {
		if log[i].Hash != want[i].Hash || log[i].Message != want[i].Message {
			t.Fatalf("commit %d: %s %q, go-git: %s %q", i, log[i].Hash, log[i].Message, want[i].Hash, want[i].Message)
		}
	}
	tree, err := r.TreeOf(context.Background(), tip)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"knowledge/k005.md", "long.md"} {
		got, err := r.ReadFile(context.Background(), tree, p)
		if err != nil {
			t.Fatal(err)
		}
		if w, _ := plain.ReadFile(context.Background(), tree, p); !bytes.Equal(got, w) || len(got) == 0 {
			t.Fatalf("%s: %q, go-git %q", p, got, w)
		}
	}
	// A write of a packed blob and of a new one, and a tree edit.
	if _, err := r.WriteBlob(context.Background(), []byte(testenv.Git(t, dir, "cat-file", "blob", "refs/heads/hist:knowledge/k005.md")+"\n")); err != nil {
		t.Fatal(err)
	}
	nb, err := r.WriteBlob(context.Background(), []byte("a new blob\n"))
	if err != nil {
		t.Fatal(err)
	}
	nt, err := r.EditTree(context.Background(), tree, []Change{{Path: "knowledge/new.md", Data: []byte("new\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := testenv.Git(t, dir, "cat-file", "-p", nb.String()); got != "a new blob" {
		t.Fatalf("the new blob reads %q in git", got)
	}
	if got := testenv.Git(t, dir, "cat-file", "-p", nt.String()+":knowledge/new.md"); got != "new" {
		t.Fatalf("the new tree's entry reads %q in git", got)
	}
	if r.indexed.Load() {
		t.Fatal("go-git's pack indexes were loaded")
	}
	if pr := r.cf.(*packReader); pr.r.Packs() != 1 {
		t.Fatalf("the reader mapped %d packs", pr.r.Packs())
	}
}

// treeEntry, which stops inflating a packed tree at the entry it looks for, finds what scanTree finds in
// the whole tree: every name of a 3,000-entry tree (bigger than its buffer), names that are not there,
// and a tree stored as a delta is left to the caller.
func TestTreeEntryStreams(t *testing.T) {
	dir := historyRepo(t)
	blob := testenv.Blob(t, dir, "x\n")
	var in strings.Builder
	var names []string
	for i := 0; i < 3000; i++ {
		names = append(names, fmt.Sprintf("entry-with-a-longer-name-%05d.md", i))
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&in, "100644 blob %s\t%s\n", blob, n)
	}
	big := testenv.GitIn(t, dir, in.String(), "mktree")
	testenv.Git(t, dir, "update-ref", "refs/heads/big", testenv.CommitTree(t, dir, big, "", "big"))
	testenv.Git(t, dir, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
	pr := newPackReader(filepath.Join(dir, ".git", "objects"))
	defer pr.Close()

	trees := []string{big}
	for _, l := range strings.Split(testenv.Git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[1] == "tree" && f[0] != big {
			trees = append(trees, f[0])
		}
	}
	streamed, whole := 0, 0
	for _, ts := range trees {
		h, err := ParseHash(ts)
		if err != nil {
			t.Fatal(err)
		}
		_, raw, err := pr.read(nil, h)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		if err := eachRawEntry(raw, func(n []byte, _ FileMode, _ *Hash) bool { want = append(want, string(n)); return true }); err != nil {
			t.Fatal(err)
		}
		if len(want) > 500 {
			// Every 13th name, the first and the last: each look-up inflates up to its entry.
			var some []string
			for i := 0; i < len(want); i += 13 {
				some = append(some, want[i])
			}
			want = append(some, want[len(want)-1])
		}
		for _, name := range append(want, "absent.md", "", "zzz", "entry-with-a-longer-name-0150") {
			we, wfound, werr := scanTree(raw, name)
			e, found, handled, err := pr.treeEntry(h, name)
			if !handled {
				whole++
				continue
			}
			streamed++
			if found != wfound || e != we || (err == nil) != (werr == nil) {
				t.Fatalf("tree %s, %q: %+v %v %v; scanTree: %+v %v %v", ts, name, e, found, err, we, wfound, werr)
			}
		}
	}
	if streamed < 500 || whole == 0 {
		t.Fatalf("%d look-ups streamed, %d left whole: the test covers neither a big whole tree nor a delta", streamed, whole)
	}
}

// TestReadBlobPrefixLargeBlobStreams: the size and first bytes of a 30 MiB blob, loose and packed, read
// with the in-process reader (one-shot commands) and with go-git alone (the server), allocate a small
// fraction of the blob: a large blob is left to go-git, which streams it (largeObjectBytes), instead of
// being inflated whole. ctx knowledge list reads 64 KiB of each entry this way.
func TestReadBlobPrefixLargeBlobStreams(t *testing.T) {
	dir := testenv.NewRepo(t)
	big := "first line\n" + strings.Repeat(strings.Repeat("x", 1023)+"\n", 30<<10)
	h, err := ParseHash(testenv.GitIn(t, dir, big, "hash-object", "-w", "--stdin"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := func(t *testing.T, inProcess bool) {
		r, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if inProcess {
			r.ReadInProcess()
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		data, size, err := r.ReadBlobPrefix(ctx, h, 64<<10)
		runtime.ReadMemStats(&after)
		if err != nil || size != int64(len(big)) || string(data) != big[:64<<10] {
			t.Fatalf("ReadBlobPrefix = %d bytes, size %d, %v; want the first 64 KiB and size %d", len(data), size, err, len(big))
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Fatalf("ReadBlobPrefix of 64 KiB of a %d MiB blob allocated %d MiB", len(big)>>20, alloc>>20)
		}
		// The whole blob still reads right.
		if whole, err := r.ReadBlob(ctx, h); err != nil || string(whole) != big {
			t.Fatalf("ReadBlob: %d bytes, %v", len(whole), err)
		}
	}
	t.Run("loose/in-process", func(t *testing.T) { check(t, true) })
	t.Run("loose/go-git", func(t *testing.T) { check(t, false) })
	testenv.GitIn(t, dir, h.String()+"\n", "pack-objects", "-q", filepath.Join(dir, ".git", "objects", "pack", "pack"))
	testenv.Git(t, dir, "prune-packed")
	t.Run("packed/in-process", func(t *testing.T) { check(t, true) })
	t.Run("packed/go-git", func(t *testing.T) { check(t, false) })
}

// A diff of a folder's tree against its next version inflates the whole tree once: git keeps the newest
// version whole and the older one as a delta of it, and the reader keeps the whole tree it inflated for
// the delta (it inflated it twice, once per side, which was 3 ms of a checkout's hook at 10,000 entries).
// Both orders of the diff, each in a new reader.
func TestDiffInflatesTheBaseOnce(t *testing.T) {
	dir := historyRepo(t)
	testenv.Git(t, dir, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
	newT := testenv.Git(t, dir, "rev-parse", "refs/heads/hist:knowledge")
	oldT := testenv.Git(t, dir, "rev-parse", "refs/heads/hist~1:knowledge")
	base := map[string]string{}
	for _, l := range strings.Split(testenv.Git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(deltabase)"), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			base[f[0]] = f[1]
		}
	}
	// The layout the test is about: the newest tree whole, the one before it a delta on it.
	if base[newT] != ZeroHash.String() || base[oldT] != newT {
		t.Fatalf("pack layout: %s's base is %s, %s's is %s", newT, base[newT], oldT, base[oldT])
	}
	size, _ := strconv.Atoi(testenv.Git(t, dir, "cat-file", "-s", newT))
	for _, order := range [][2]string{{oldT, newT}, {newT, oldT}} {
		r, err := Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		r.ReadInProcess()
		whole := 0
		objread.OnInflate = func(n int64) {
			if n == int64(size) {
				whole++
			}
		}
		a, _ := ParseHash(order[0])
		b, _ := ParseHash(order[1])
		changed, _, err := r.DiffItems(context.Background(), a, b)
		objread.OnInflate = nil
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(changed) == 0 {
			t.Fatalf("diff %s..%s: nothing changed", order[0], order[1])
		}
		if whole != 1 {
			t.Errorf("diff %s..%s inflated the %d-byte tree %d times, want 1", order[0], order[1], size, whole)
		}
	}
}

// TestCommitLargeMessageBounded: a commit with a 32 MiB message (a teammate's, pushed with plain git) is
// read up to MaxCommitBytes, never whole, by every reader (in process, git cat-file, go-git), loose and
// packed: its tree, parents and the beginning of its message read right, and one read allocates a few MiB
// (about 5 MiB with -race; the whole message is 32 MiB; ctx status took 1 GB of memory reading such a
// commit again and again).
func TestCommitLargeMessageBounded(t *testing.T) {
	dir := testenv.NewRepo(t)
	parent := testenv.Git(t, dir, "rev-parse", "HEAD")
	tree := testenv.Git(t, dir, "rev-parse", "HEAD^{tree}")
	msg := "ctx: big\n\n" + strings.Repeat("M", 32<<20)
	h, err := ParseHash(testenv.GitIn(t, dir, msg, "commit-tree", "-p", parent, tree))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := func(t *testing.T, mode string) {
		r, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		switch mode {
		case "in-process":
			r.ReadInProcess()
		case "cat-file":
			r.ReadWithGit()
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, err := r.Commit(ctx, h)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if c.TreeHash.String() != tree || len(c.ParentHashes) != 1 || c.ParentHashes[0].String() != parent {
			t.Fatalf("commit read wrong: tree %s parents %v", c.TreeHash, c.ParentHashes)
		}
		if !strings.HasPrefix(c.Message, "ctx: big\n\nMMM") || len(c.Message) > MaxCommitBytes {
			t.Fatalf("message of %d bytes (%.12q...), want its first bytes, at most %d", len(c.Message), c.Message, MaxCommitBytes)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Fatalf("reading a commit with a %d MiB message allocated %d MiB", len(msg)>>20, alloc>>20)
		}
	}
	for _, m := range []string{"in-process", "cat-file", "go-git"} {
		t.Run("loose/"+m, func(t *testing.T) { check(t, m) })
	}
	testenv.GitIn(t, dir, h.String()+"\n", "pack-objects", "-q", filepath.Join(dir, ".git", "objects", "pack", "pack"))
	testenv.Git(t, dir, "prune-packed")
	for _, m := range []string{"in-process", "cat-file", "go-git"} {
		t.Run("packed/"+m, func(t *testing.T) { check(t, m) })
	}
}
