package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden summaries under testdata/")

// The logs under testdata/ are real outputs: small.log of the drivers run at small sizes with their
// -benchfmt / BENCHFMT=1 output, bench.log of a whole default `make bench` (bench/README.md,
// "bench13").
// Each must give its golden summary (go test ./bench/summary -update rewrites them after a deliberate
// change of the table).
func TestGolden(t *testing.T) {
	for _, name := range []string{"small", "bench"} {
		t.Run(name, func(t *testing.T) {
			log := filepath.Join("testdata", name+".log")
			f, err := os.Open(log)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res, info, err := parse(f)
			if err != nil {
				t.Fatal(err)
			}
			got := render(summary(res), info)
			golden := filepath.Join("testdata", name+".summary.md")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("summary of %s differs from %s:\n%s", log, golden, got)
			}
		})
	}
}

// A go test block's names lose their -GOMAXPROCS suffix, the drivers' names keep theirs; lines that
// start with "Benchmark" but are not results are skipped; the markers give the run's times and load.
func TestParse(t *testing.T) {
	log := `make-bench: vars BENCH_SIZES=100 on 2 CPUs
make-bench: start 1000 1.50 1.20 1.00 3/100 42
goos: linux
pkg: github.com/ctx-dev/ctx/store
BenchmarkPullVsGit/ctx         	       3	 123456789 ns/op	       200.5 cpu-ms/op
BenchmarkPullVsGit/git         	       3	 100000000 ns/op	       150 cpu-ms/op
BenchmarkPullVsGit
PULL-RATIO ctx=123ms git=100ms ratio=1.23
PASS
ok  	github.com/ctx-dev/ctx/store	12.3s
BenchmarkSyncStress/clones=10/writes=10/mode=serial-2 1 0 failed 12.5 wall-s
BenchmarkMCPRead/entries=10000/server=mcp-go-floor/inflight=1 5000 3000 reads/s
make-bench: end 1130 2.00 1.50 1.10 1/99 43
`
	res, info, err := parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := res["PullVsGit/ctx"]; !ok || r.n != 3 || r.metrics["ns/op"] != 123456789 || r.metrics["cpu-ms/op"] != 200.5 {
		t.Errorf("PullVsGit/ctx: %+v (%v)", r, ok)
	}
	if _, ok := res["PullVsGit"]; ok {
		t.Error("a name alone parsed as a result")
	}
	if _, ok := res["SyncStress/clones=10/writes=10/mode=serial-2"]; !ok {
		t.Errorf("a driver's name outside go test lost its suffix: %v", keys(res))
	}
	if r := res["MCPRead/entries=10000/server=mcp-go-floor/inflight=1"]; r.metrics["reads/s"] != 3000 {
		t.Errorf("MCPRead: %+v", r)
	}
	if info.start != 1000 || info.end != 1130 || info.loadStart != "1.50 1.20 1.00" || info.loadEnd != "2.00 1.50 1.10" ||
		info.vars != "BENCH_SIZES=100 on 2 CPUs" {
		t.Errorf("markers: %+v", info)
	}
	if got := render(nil, info); !strings.Contains(got, "2m10s wall") || !strings.Contains(got, "load average 1.50 1.20 1.00 at the start") {
		t.Errorf("header: %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, log := range []string{
		"BenchmarkCompare/entries=100/row=get 15 abc ctx-ms\n",
		"make-bench: start soon 1.0 1.0 1.0\n",
		"BenchmarkCompare/entries=100/row=get 15 NaN ctx-ms\n",
		"BenchmarkCompare/entries=100/row=get 15 +Inf ctx-ms\n",
		"BenchmarkCompare/entries=100/row=get 15 1e400 ctx-ms\n",
		"BenchmarkCompare/entries=100/row=get 15 -5 ctx-ms\n",
		"BenchmarkCompare/entries=100/row=get 99999999999999999999 2.5 ctx-ms\n",
	} {
		if _, _, err := parse(strings.NewReader(log)); err == nil {
			t.Errorf("%q: no error", log)
		}
	}
}

// A tool's log line of any length (over bufio.Scanner's limit) is skipped, and the lines around it are read.
func TestParseLongLine(t *testing.T) {
	log := "BenchmarkCompare/entries=100/row=get 15 2.5 ctx-ms\n" + strings.Repeat("x", 3<<20) + "\n" +
		"BenchmarkCompare/entries=100/row=set 15 9.5 ctx-ms\r\n" + strings.Repeat("y", 70<<10)
	res, _, err := parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res["Compare/entries=100/row=get"].metrics["ctx-ms"] != 2.5 || res["Compare/entries=100/row=set"].metrics["ctx-ms"] != 9.5 {
		t.Fatalf("results %v", res)
	}
}

// The verdicts at and beside each kind of goal: a ratio checked in wall and CPU time, an absolute bound,
// the checkout's added milliseconds, the sync's failures and ratio to serial, and the rows the issue
// names that the run did not measure.
func TestVerdicts(t *testing.T) {
	log := `BenchmarkCompare/entries=10000/commits=20000/row=set 15 50 ctx-ms 40 ctx-cpu-ms 100 git-ms 100 git-cpu-ms
BenchmarkCompare/entries=100/commits=20000/row=set 15 31 ctx-ms 20 ctx-cpu-ms 100 git-ms 100 git-cpu-ms
BenchmarkCompare/entries=10000/commits=20000/row=status 15 15 ctx-ms 16 ctx-cpu-ms 10 git-ms 10 git-cpu-ms
BenchmarkCompare/entries=10000/commits=20000/row=mcp-init 15 25 ctx-ms 20 ctx-cpu-ms 1 git-ms 1 git-cpu-ms
BenchmarkCompare/entries=10000/commits=20000/row=checkout 15 30 ctx-ms 10 ctx-cpu-ms 10 git-ms 5 git-cpu-ms
BenchmarkSyncStress/clones=40/writes=10/mode=serial 1 0 failed 100 wall-s
BenchmarkSyncStress/clones=40/writes=10/mode=parallel 1 0 failed 201 wall-s 0 missing
BenchmarkSyncStress/clones=20/writes=10/mode=serial 1 0 failed 100 wall-s
BenchmarkSyncStress/clones=20/writes=10/mode=parallel 1 1 failed 50 wall-s 0 missing
BenchmarkHistoryImport/events=30000/run=first 1 5.38 wall-s 2.84 cpu-s 60 MB/cpu-s 193.301 peak-rss-MB 86104023 jsonl-B
`
	res, _, err := parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // work + " " + size → verdict
		"`ctx knowledge get` 100 entries":                                                      notMeasured,
		"`ctx knowledge get` 50,000 entries":                                                   notMeasured,
		"`ctx knowledge set`, writes in a row (bench/write.sh) 100 entries":                    notMeasured,
		"MCP resources/read, one session (bench/mcpread) 10,000 entries":                       notMeasured,
		"MCP resources/read, one session, stdio-one (go test, in process) 10,000 entries":      notMeasured,
		"MCP resources/read, one session, stdio-one-warm (go test, in process) 10,000 entries": notMeasured,
		"MCP write tool p50 (go test, in process) 10,000 entries":                              notMeasured,
		"first import, MB of JSONL per CPU second 30,000 events":                               met,
		"first import, wall and peak RSS 30,000 events":                                        met + " (wall only) (at 30,000)",
		"import with nothing new 30,000 events":                                                notMeasured,
		"`ctx history search`, whole process 30,000 events":                                    notMeasured,
		"MCP search, warm server 30,000 events":                                                notMeasured,
		"`ctx knowledge set` 10,000 entries":                                                   met,                       // 0.5× (cpu 0.4×), ≤ 0.5×
		"`ctx knowledge set` 100 entries":                                                      "met in CPU, not in wall", // 0.31× (cpu 0.2×), ≤ 0.3×
		"`ctx status` 10,000 entries":                                                          "met in wall, not in CPU", // 1.5× (cpu 1.6×)
		"`ctx status` 50,000 entries":                                                          notMeasured,
		"`ctx mcp serve` spawn → initialize answer 10,000 entries":                             notMet,              // 25 ms, < 25 ms
		"`git checkout` with ctx's hooks vs without, nothing moved 10,000 entries":             met,                 // +20 ms (cpu +5)
		"40 clones × 10 writes, all `ctx sync` at once 40 clones":                              notMet,              // 2.01× serial
		"20 clones × 10 writes, all `ctx sync` at once 20 clones":                              notMet + " (at 20)", // one failed
		"`ctx pull` merging 1k×1k changes (go test) 10,000 entries":                            notMeasured,
		"growth 30,000 → 300,000 events ":                                                      notMeasured,
	}
	got := map[string]string{}
	for _, r := range summary(res) {
		got[r.work+" "+r.size] = r.verdict
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: verdict %q, want %q", k, got[k], v)
		}
	}
}

// A figure missing from a line is not 0: every row whose verdict needs it says "not measured in this run"
// and prints "—" for it. Each line below drops one figure its verdict needs (two for the lines that give
// two rows); the others would meet their goals.
func TestMissingFigures(t *testing.T) {
	log := `BenchmarkCompare/entries=10000/commits=20000/row=set 15 10 ctx-cpu-ms 100 git-ms 100 git-cpu-ms
BenchmarkCompare/entries=100/commits=20000/row=get 15 1 ctx-ms 100 git-ms 100 git-cpu-ms
BenchmarkCompare/entries=10000/commits=20000/row=status 15 10 ctx-cpu-ms 100 git-ms 100 git-cpu-ms
BenchmarkCompare/entries=10000/commits=20000/row=log-n20 15 1 ctx-ms 1 ctx-cpu-ms 100 git-ms
BenchmarkCompare/entries=10000/commits=20000/row=mcp-init 15 1 ctx-cpu-ms 1 git-ms 1 git-cpu-ms
BenchmarkCompare/entries=10000/commits=20000/row=checkout 15 1 ctx-cpu-ms 10 git-ms 5 git-cpu-ms
BenchmarkWriteSh/entries=100/mode=index 200 48 git-ms/write
BenchmarkMCPRead/entries=10000/server=ctx/inflight=1 15000 20000 reads/s 0.05 p50-ms
BenchmarkResourceRead/stdio-one 5000 415296 ns/op 0.1 p50-ms 20000 reads/s
BenchmarkMCPWrite/entries=10000/writes=200/binary=ctx 597 10 server-cpu-ms/call 30 p99-ms 44 peak-rss-MB
BenchmarkWriteTool/10000 200 14701469 ns/op 59.54 p99-ms
BenchmarkPullVsGit/ctx 3 100 ns/op
BenchmarkPullVsGit/git 3 200 ns/op 10 cpu-ms/op
BenchmarkSyncStress/clones=40/writes=10/mode=serial 1 0 failed 100 wall-s
BenchmarkSyncStress/clones=40/writes=10/mode=parallel 1 100 wall-s 0 missing
BenchmarkHistoryImport/events=30000/run=first 1 2.84 cpu-s 193.301 peak-rss-MB 86104023 jsonl-B
BenchmarkHistoryImport/events=30000/run=refresh 1 0.01 cpu-s
BenchmarkHistSearch/events=30000/what=process 60 1 wall-p50-ms 1 cpu-p50-ms
BenchmarkHistSearch/events=30000/what=mcp 60 1 wall-p50-ms
`
	res, _, err := parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range summary(res) {
		if r.goal == noGoal || r.goal == "report" {
			continue
		}
		n++
		if r.verdict != notMeasured {
			t.Errorf("%s %s: verdict %q with a figure missing, want %q (ctx %q, ratio %q)", r.work, r.size, r.verdict, notMeasured, r.ctx, r.ratio)
		}
		if r.ctx != "" && !strings.Contains(r.ctx+r.ref, missing) {
			t.Errorf("%s %s: no %q for the missing figure: ctx %q, ref %q", r.work, r.size, missing, r.ctx, r.ref)
		}
	}
	if n < 20 {
		t.Errorf("%d rows with a goal, want every kind", n)
	}
}

func keys(m map[string]result) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
