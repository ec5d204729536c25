// Command summary reads the log of one `make bench` run and prints one table of every speed goal of the
// context store and of the agent history (the rows bench/README.md "make bench" lists): ctx's figure, the
// reference's, their ratio, the goal and whether this run met it.
//
// It reads only result lines in the Go benchmark format ("BenchmarkNAME N VALUE UNIT ..."): go test's
// benchmarks print them, and the drivers under bench/ print theirs under -benchfmt (bench/compare,
// bench/mcpread, bench/mcpwrite, bench/histsearch) or BENCHFMT=1 (bench/write.sh, bench/history.sh,
// bench/sync-stress.sh). A row of the issues' tables that the log holds no figure for says "not measured
// in this run". The make bench recipe adds "make-bench: start|end EPOCH LOADAVG" and "make-bench: vars
// ..." lines, from which the run's wall time and load are printed.
//
// usage: go run ./bench/summary [-o FILE] [LOG...]   (standard input without LOG; -o also writes the table to FILE)
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func main() {
	out := flag.String("o", "", "also write the summary to this file")
	flag.Parse()
	var readers []io.Reader
	for _, p := range flag.Args() {
		f, err := os.Open(p)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		readers = append(readers, f)
	}
	if len(readers) == 0 {
		readers = append(readers, os.Stdin)
	}
	res, info, err := parse(io.MultiReader(readers...))
	if err != nil {
		fail(err)
	}
	text := render(summary(res), info)
	fmt.Print(text)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "summary:", err)
	os.Exit(1)
}

// render writes the run's header (variables, wall time, load) and the rows as a Markdown table.
func render(rows []row, info runInfo) string {
	var b strings.Builder
	b.WriteString("## make bench summary\n\n")
	if info.vars != "" {
		fmt.Fprintf(&b, "Run: %s", info.vars)
		if info.start > 0 && info.end >= info.start {
			fmt.Fprintf(&b, "; %s wall", (time.Duration(info.end-info.start) * time.Second).String())
		}
		if info.loadStart != "" {
			fmt.Fprintf(&b, "; load average %s at the start", info.loadStart)
		}
		if info.loadEnd != "" {
			fmt.Fprintf(&b, ", %s at the end", info.loadEnd)
		}
		b.WriteString(".\nRatios are ctx / reference of the medians of this run (wall, CPU = user+sys beside).\n\n")
	}
	b.WriteString("| issue | work | size | ctx | reference | ratio | goal | this run |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	dash := func(s string) string {
		if s == "" {
			return noGoal
		}
		return s
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.issue, r.work, dash(r.size), dash(r.ctx), dash(r.ref),
			dash(r.ratio), dash(r.goal), dash(r.verdict))
	}
	return b.String()
}
