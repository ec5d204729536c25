package gitstore_test

import (
	"crypto/sha1" //nolint:gosec // a fan-out key, not a security use
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore"
	"github.com/ctx-dev/ctx/internal/testenv"
)

// The layout decision of docs/format.md "Layout for growth", measured: one write of one file in a folder
// of N entries, flat against sharded.
//
//	knowledge/flat       knowledge/k<i>.md                      (the layout ctx keeps for curated kinds)
//	knowledge/hash2      knowledge/<2 hex of sha1(key)>/k<i>.md (256 folders, git notes' fan-out)
//	history/flat         history/<id>.json                      (layout 1)
//	history/month        history/YYYY/MM/<id>.json over 36 months (layout 2)
//
// Each iteration adds a new file (as a session start or a new entry does). Reported per write: ctx's CPU
// time (user+sys of this process, getrusage), the bytes of the tree objects the commit wrote, and, as the
// peer measured in the same run on the same store, C git's CPU time for the same tree write through a
// temporary index (git read-tree TIP, update-index --cacheinfo, write-tree: what bench/write.sh does).
func BenchmarkLayoutWrite(b *testing.B) {
	sizes := []int{10000, 50000}
	if s := os.Getenv("CTX_LAYOUT_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatalf("CTX_LAYOUT_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	layouts := []struct {
		name string
		path func(i int) string
	}{
		{"knowledge-flat", func(i int) string { return fmt.Sprintf("knowledge/k%d.md", i) }},
		{"knowledge-hash2", func(i int) string {
			k := fmt.Sprintf("k%d", i)
			h := sha1.Sum([]byte(k)) //nolint:gosec // fan-out only
			return "knowledge/" + hex.EncodeToString(h[:1]) + "/" + k + ".md"
		}},
		{"history-flat", func(i int) string { return fmt.Sprintf("history/s-%07d.json", i) }},
		{"history-month", func(i int) string {
			m := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, i%36, 0)
			return fmt.Sprintf("history/%s/s-%07d.json", m.Format("2006/01"), i)
		}},
	}
	for _, n := range sizes {
		for _, l := range layouts {
			b.Run(fmt.Sprintf("%s/entries=%d", l.name, n), func(b *testing.B) {
				dir := testenv.NewRepo(b)
				r := open(b, dir)
				changes := make([]gitstore.Change, n)
				for i := range changes {
					changes[i] = gitstore.Change{Path: l.path(i), Data: []byte(fmt.Sprintf("{\"id\": %d}\n", i))}
				}
				if _, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
					return map[string]*gitstore.Write{pub: {Changes: changes, Message: "fill"}}, nil
				}); err != nil {
					b.Fatal(err)
				}
				testenv.Git(b, dir, "gc", "-q")
				r = open(b, dir)
				var cpu time.Duration
				var treeBytes int64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					ch := []gitstore.Change{{Path: l.path(n + i), Data: []byte(fmt.Sprintf("{\"id\": %d}\n", n+i))}}
					before := testenv.CPUTime(syscall.RUSAGE_SELF)
					res, err := r.Transact(bg, []string{pub}, func(map[string]gitstore.Tip) (map[string]*gitstore.Write, error) {
						return map[string]*gitstore.Write{pub: {Changes: ch, Message: "ctx: add"}}, nil
					})
					cpu += testenv.CPUTime(syscall.RUSAGE_SELF) - before
					if err != nil || !res[0].Committed {
						b.Fatalf("write %d: %v", i, err)
					}
					b.StopTimer()
					treeBytes += newTreeBytes(b, dir, res[0].Old.String(), res[0].New.String())
					b.StartTimer()
				}
				b.StopTimer()
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(treeBytes)/float64(b.N), "tree-B/op")
				// The peer: C git writing the same kind of path into the same store, a few times.
				const peerRuns = 5
				idx := filepath.Join(b.TempDir(), "index")
				before := testenv.CPUTime(syscall.RUSAGE_CHILDREN)
				for i := 0; i < peerRuns; i++ {
					blob := testenv.Blob(b, dir, fmt.Sprintf("{\"peer\": %d}\n", i))
					gitIdx(b, dir, idx, "read-tree", pub)
					gitIdx(b, dir, idx, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+l.path(10*n+i))
					gitIdx(b, dir, idx, "write-tree")
				}
				b.ReportMetric(float64((testenv.CPUTime(syscall.RUSAGE_CHILDREN)-before).Microseconds())/1000/peerRuns, "cgit-cpu-ms/op")
			})
		}
	}
}

// newTreeBytes sums the sizes of the tree objects commit new has and old has not (git's own count).
func newTreeBytes(b *testing.B, dir, old, new string) int64 {
	out := testenv.Git(b, dir, "rev-list", "--objects", "--no-object-names", new, "^"+old)
	var total int64
	for _, h := range strings.Fields(out) {
		if testenv.Git(b, dir, "cat-file", "-t", h) == "tree" {
			n, err := strconv.ParseInt(testenv.Git(b, dir, "cat-file", "-s", h), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			total += n
		}
	}
	return total
}

func gitIdx(b *testing.B, dir, idx string, args ...string) string {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}
