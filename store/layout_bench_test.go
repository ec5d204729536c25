package store_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
	"github.com/google/uuid"
)

// BenchmarkSessionLookup measures View.GetSession on a ref (docs/format.md "Layout for growth": a lookup
// by id must not read every month): N sessions flat, or spread over 36 month folders, looked up by
//
//	flat      history/<id>.json
//	uuidv7    a UUIDv7 id: its month is read from the id, one path looked up
//	recent    an id without a date, started this month: found by the probe of this month
//	old       an id without a date in the oldest month: every month folder is looked through
//
// Reported: ctx's CPU time per lookup (getrusage) and, as the peer in the same run, C git's
// `git cat-file blob ctx:<path>` CPU time for the same record.
func BenchmarkSessionLookup(b *testing.B) {
	n := 10000
	if s := os.Getenv("CTX_LOOKUP_SIZE"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("CTX_LOOKUP_SIZE: %v", err)
		}
	}
	s, dir := storetest.New(b)
	now := time.Now().UTC()
	oldest := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -35, 0)
	v7 := uuid.Must(uuid.NewV7FromReader(strings.NewReader(strings.Repeat("x", 64))))
	// A UUIDv7 whose time is the oldest month: the first 48 bits are Unix milliseconds.
	ms := oldest.Add(time.Hour).UnixMilli()
	for i := 0; i < 6; i++ {
		v7[i] = byte(ms >> (8 * (5 - i)))
	}
	rec := func(id string, t time.Time) []byte {
		return []byte(fmt.Sprintf(`{"id": %q, "started": %q, "ended": null, "summary": "s", "knowledge_added": [], "decisions_added": [], "skills_used": []}`+"\n", id, t.Format(time.RFC3339)))
	}
	if _, err := s.Write(bg, store.Op{Name: "bench", Summary: "bench"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		for i := 0; i < n; i++ {
			t := oldest.AddDate(0, i%36, 0).Add(time.Hour)
			id := fmt.Sprintf("s-%07d", i)
			ed.Put(store.Public, "history/"+t.Format("2006/01")+"/"+id+".json", rec(id, t))
			ed.Put(store.Public, "history/f-"+id+".json", rec("f-"+id, t))
		}
		ed.Put(store.Public, "history/"+oldest.Format("2006/01")+"/"+v7.String()+".json", rec(v7.String(), oldest.Add(time.Hour)))
		return ed, nil
	}); err != nil {
		b.Fatal(err)
	}
	recent := fmt.Sprintf("s-%07d", 35) // i%36 == 35: this month
	cases := []struct{ name, id, path string }{
		{"flat", "f-s-0000000", "history/f-s-0000000.json"},
		{"uuidv7", v7.String(), "history/" + oldest.Format("2006/01") + "/" + v7.String() + ".json"},
		{"recent", recent, "history/" + now.Format("2006/01") + "/" + recent + ".json"},
		{"old", "s-0000000", "history/" + oldest.Format("2006/01") + "/s-0000000.json"},
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("%s/sessions=%d", c.name, n), func(b *testing.B) {
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				before := testenv.CPUTime(syscall.RUSAGE_SELF)
				v, err := s.RefView(bg)
				if err != nil {
					b.Fatal(err)
				}
				ss, err := v.GetSession(bg, c.id)
				cpu += testenv.CPUTime(syscall.RUSAGE_SELF) - before
				if err != nil || ss.ID != c.id {
					b.Fatalf("%s: %+v %v", c.id, ss, err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			const peerRuns = 5
			before := testenv.CPUTime(syscall.RUSAGE_CHILDREN)
			for i := 0; i < peerRuns; i++ {
				cmd := exec.Command("git", "cat-file", "blob", "ctx:"+c.path)
				cmd.Dir = dir
				if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), c.id) {
					b.Fatalf("git cat-file %s: %v", c.path, err)
				}
			}
			b.ReportMetric(float64((testenv.CPUTime(syscall.RUSAGE_CHILDREN)-before).Microseconds())/1000/peerRuns, "cgit-cpu-ms/op")
		})
	}
}
