package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// row is one line of the summary: the issue and its work, the size it was measured at, ctx's figure, the
// reference's, their ratio, the goal and whether this run met it.
type row struct {
	issue, work, size, ctx, ref, ratio, goal, verdict string
}

// notMeasured is the verdict of a row of the issue's table that this run has no figure for.
const notMeasured = "not measured in this run"

// Verdicts.
const (
	met    = "met"
	notMet = "**not met**"
	noGoal = "—"
)

// summary builds every row of the speed goals (bench/README.md "make bench") from the results of one run:
// the context store's (issue column 15), then the agent history's (10).
func summary(res map[string]result) []row {
	var rows []row
	rows = append(rows, storeRows(res)...)
	rows = append(rows, historyRows(res)...)
	return rows
}

// compareRows are bench/compare's results of row name, by store size (entries), sorted by size.
func compareRows(res map[string]result, name string) []result {
	return resultsOf(res, "Compare/", "row", name, "entries")
}

// resultsOf are the results whose name starts with prefix and whose key is val (every one when key is
// ""), sorted by the integer value of sortKey (sortBy).
func resultsOf(res map[string]result, prefix, key, val, sortKey string) []result {
	var out []result
	for k, r := range res {
		if strings.HasPrefix(k, prefix) && (key == "" || field(k, key) == val) {
			out = append(out, r)
		}
	}
	sortBy(out, sortKey)
	return out
}

// sortBy sorts results by the integer value of their name's key.
func sortBy(rs []result, key string) {
	sort.Slice(rs, func(i, j int) bool {
		a, _ := strconv.Atoi(field(rs[i].name, key))
		b, _ := strconv.Atoi(field(rs[j].name, key))
		if a != b {
			return a < b
		}
		return rs[i].name < rs[j].name
	})
}

// sizeOf is the name's key as a size ("10,000 entries").
func sizeOf(name, key, unit string) string {
	n, err := strconv.Atoi(field(name, key))
	if err != nil {
		return field(name, key) + " " + unit
	}
	return thousands(n) + " " + unit
}

// thousands writes n with a comma every three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// num formats a figure with a precision fit for its size.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return thousands(int(math.Round(v)))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// missing is the cell of a figure the run's line does not have.
const missing = "—"

// metric is the figure of unit on r's line, and whether the line has it: a figure missing from the log
// is not 0, and a verdict that needs it is notMeasured.
func metric(r result, unit string) (float64, bool) {
	v, ok := r.metrics[unit]
	return v, ok
}

// cell is the figure of unit on r's line (num), or missing.
func cell(r result, unit string) string {
	if v, ok := metric(r, unit); ok {
		return num(v)
	}
	return missing
}

// count is the count of unit on r's line (an integer), or missing.
func count(r result, unit string) string {
	if v, ok := metric(r, unit); ok {
		return strconv.Itoa(int(v))
	}
	return missing
}

// ratioCell is the ratio of the figures a and b of lines ra and rb ("%.2f"), or missing when either is.
func ratioCell(ra result, a string, rb result, b string) string {
	x, ok1 := metric(ra, a)
	y, ok2 := metric(rb, b)
	if !ok1 || !ok2 {
		return missing
	}
	return fmt.Sprintf("%.2f", ratio(x, y))
}

// has tells whether r's line has every figure of units.
func has(r result, units ...string) bool {
	for _, u := range units {
		if _, ok := r.metrics[u]; !ok {
			return false
		}
	}
	return true
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.Inf(1)
	}
	return a / b
}

// both is the verdict of a goal checked in wall time and in CPU time.
func both(wallOK, cpuOK bool) string {
	switch {
	case wallOK && cpuOK:
		return met
	case wallOK:
		return "met in wall, not in CPU"
	case cpuOK:
		return "met in CPU, not in wall"
	}
	return notMet
}

// measured is v when the run has the figures it needs (ok), else notMeasured.
func measured(v string, ok bool) string {
	if !ok {
		return notMeasured
	}
	return v
}

func verdict(ok bool) string {
	if ok {
		return met
	}
	return notMet
}

// goalAt maps store sizes (entries) to a ratio goal of a row ("≤ 0.3×" is 0.3); sizes not in it have none.
type goalAt map[int]float64

// ratioRows are the rows of one bench/compare row at every size: ctx's median against git's, the ratio
// of wall times with the CPU ratio beside, checked against the size's goal. want lists the sizes the
// issue's table names: a size missing from the run gets a row that says so.
func ratioRows(res map[string]result, issue, work, compareRow, ref string, goals goalAt, want ...int) []row {
	var rows []row
	seen := map[int]bool{}
	for _, r := range compareRows(res, compareRow) {
		size, _ := strconv.Atoi(field(r.name, "entries"))
		seen[size] = true
		c, cc, g, gc := r.metrics["ctx-ms"], r.metrics["ctx-cpu-ms"], r.metrics["git-ms"], r.metrics["git-cpu-ms"]
		w := work
		if compareRow == "log-n20" {
			w += ", " + sizeOf(r.name, "commits", "commits")
		}
		rw := row{issue: issue, work: w, size: sizeOf(r.name, "entries", "entries"),
			ctx:   fmt.Sprintf("%s ms (cpu %s)", cell(r, "ctx-ms"), cell(r, "ctx-cpu-ms")),
			ref:   fmt.Sprintf("%s %s ms (cpu %s)", ref, cell(r, "git-ms"), cell(r, "git-cpu-ms")),
			ratio: fmt.Sprintf("%s× (cpu %s×)", ratioCell(r, "ctx-ms", r, "git-ms"), ratioCell(r, "ctx-cpu-ms", r, "git-cpu-ms")),
			goal:  noGoal, verdict: noGoal}
		if goal, ok := goals[size]; ok {
			rw.goal = fmt.Sprintf("≤ %g×", goal)
			if !has(r, "ctx-ms", "ctx-cpu-ms", "git-ms", "git-cpu-ms") {
				rw.verdict = notMeasured
			} else {
				rw.verdict = both(ratio(c, g) <= goal, ratio(cc, gc) <= goal)
			}
			if compareRow == "log-n20" && rw.verdict != notMeasured {
				if n, _ := strconv.Atoi(field(r.name, "commits")); n < 20000 {
					rw.goal += " at 20,000 commits"
					rw.verdict += " (at " + thousands(n) + ")"
				}
			}
		}
		rows = append(rows, rw)
	}
	for _, size := range want {
		if !seen[size] {
			goal := noGoal
			if g, ok := goals[size]; ok {
				goal = fmt.Sprintf("≤ %g×", g)
			}
			rows = append(rows, row{issue: issue, work: work, size: thousands(size) + " entries", goal: goal, verdict: notMeasured})
		}
	}
	return rows
}

// storeRows are the context store's rows: writes, reads, MCP, status, log, pull, checkout and sync.
func storeRows(res map[string]result) []row {
	const is = "15"
	var rows []row
	rows = append(rows, ratioRows(res, is, "`ctx knowledge set`", "set", "C git plumbing commit", goalAt{100: 0.3, 10000: 0.5}, 100, 10000)...)
	// bench/write.sh: 200 writes in a row on one store, ctx's and C git's plumbing.
	ws := resultsOf(res, "WriteSh/", "", "", "entries")
	wsGoals := goalAt{100: 0.3, 10000: 0.5}
	wsSeen := map[int]bool{}
	for _, r := range ws {
		size, _ := strconv.Atoi(field(r.name, "entries"))
		wsSeen[size] = true
		c, g := r.metrics["ctx-ms/write"], r.metrics["git-ms/write"]
		rw := row{issue: is, work: fmt.Sprintf("`ctx knowledge set`, %d writes in a row (bench/write.sh)", r.n),
			size: sizeOf(r.name, "entries", "entries"), ctx: cell(r, "ctx-ms/write") + " ms/write",
			ref:   fmt.Sprintf("C git plumbing (%s) %s ms/write", field(r.name, "mode"), cell(r, "git-ms/write")),
			ratio: ratioCell(r, "ctx-ms/write", r, "git-ms/write") + "×", goal: noGoal, verdict: noGoal}
		if goal, ok := wsGoals[size]; ok {
			rw.goal, rw.verdict = fmt.Sprintf("≤ %g×", goal), measured(verdict(ratio(c, g) <= goal), has(r, "ctx-ms/write", "git-ms/write"))
		}
		rows = append(rows, rw)
	}
	for _, size := range []int{100, 10000} {
		if !wsSeen[size] {
			rows = append(rows, row{issue: is, work: "`ctx knowledge set`, writes in a row (bench/write.sh)", size: thousands(size) + " entries",
				goal: fmt.Sprintf("≤ %g×", wsGoals[size]), verdict: notMeasured})
		}
	}
	rows = append(rows, ratioRows(res, is, "`ctx knowledge get`", "get", "`git show ctx:knowledge/k.md`", goalAt{100: 1.5, 10000: 1.5, 50000: 1.5}, 100, 10000, 50000)...)

	// ctx mcp serve: spawn → initialize answer, an absolute goal.
	for _, r := range compareRows(res, "mcp-init") {
		c := r.metrics["ctx-ms"]
		rows = append(rows, row{issue: is, work: "`ctx mcp serve` spawn → initialize answer", size: sizeOf(r.name, "entries", "entries"),
			ctx: fmt.Sprintf("%s ms (cpu %s)", cell(r, "ctx-ms"), cell(r, "ctx-cpu-ms")), ref: fmt.Sprintf("`git rev-parse HEAD` %s ms", cell(r, "git-ms")),
			ratio: ratioCell(r, "ctx-ms", r, "git-ms") + "×", goal: "< 25 ms", verdict: measured(verdict(c < 25), has(r, "ctx-ms"))})
	}
	if len(compareRows(res, "mcp-init")) == 0 {
		rows = append(rows, row{issue: is, work: "`ctx mcp serve` spawn → initialize answer", goal: "< 25 ms", verdict: notMeasured})
	}

	rows = append(rows, mcpReadRows(res)...)
	rows = append(rows, mcpWriteRows(res)...)
	rows = append(rows, ratioRows(res, is, "`ctx status`", "status", "`git status --porcelain`", goalAt{10000: 1.5, 50000: 1.5}, 10000, 50000)...)
	rows = append(rows, ratioRows(res, is, "`ctx log -n 20`", "log-n20", "`git log -n 20 ctx`", goalAt{100: 1.5, 10000: 1.5, 50000: 1.5})...)
	if len(compareRows(res, "log-n20")) == 0 {
		rows = append(rows, row{issue: is, work: "`ctx log -n 20`, 20,000 commits", goal: "≤ 1.5×", verdict: notMeasured})
	}
	rows = append(rows, pullRow(res))
	rows = append(rows, checkoutRows(res, "checkout", "`git checkout` with ctx's hooks vs without, nothing moved")...)
	rows = append(rows, checkoutRows(res, "checkout-moved", "`git checkout` with ctx's hooks vs without, context branch moved")...)
	rows = append(rows, syncRows(res)...)
	return rows
}

// mcpReadRows: resources/read on one session of a real `ctx mcp serve` (bench/mcpread), per number of
// requests in flight, beside mcp-go's floor; then the in-process go test figures.
func mcpReadRows(res map[string]result) []row {
	const work, goal = "MCP resources/read, one session", "≥ 10,000/s, p99 < 1 ms"
	var rows []row
	ctxs := resultsOf(res, "MCPRead/", "server", "ctx", "inflight")
	for _, r := range ctxs {
		rate, p99 := r.metrics["reads/s"], r.metrics["p99-ms"]
		rw := row{issue: "15", work: fmt.Sprintf("%s, %s in flight (bench/mcpread)", work, field(r.name, "inflight")),
			size: sizeOf(r.name, "entries", "entries"), ctx: fmt.Sprintf("%s/s, p50 %s ms, p99 %s ms", cell(r, "reads/s"), cell(r, "p50-ms"), cell(r, "p99-ms")),
			ratio: noGoal, ref: noGoal, goal: goal, verdict: measured(verdict(rate >= 10000 && p99 < 1), has(r, "reads/s", "p99-ms"))}
		if fl, ok := res[strings.Replace(r.name, "server=ctx", "server=mcp-go-floor", 1)]; ok {
			rw.ref = fmt.Sprintf("mcp-go floor %s/s, p99 %s ms", cell(fl, "reads/s"), cell(fl, "p99-ms"))
			rw.ratio = ratioCell(r, "reads/s", fl, "reads/s") + "× the floor's reads/s"
		}
		rows = append(rows, rw)
	}
	// BenchmarkResourceRead (mcp): client and server in one process, one read at a time.
	floor, hasFloor := res["ResourceRead/floor-one"]
	for _, sub := range []string{"stdio-one", "stdio-one-warm"} {
		r, ok := res["ResourceRead/"+sub]
		if !ok {
			rows = append(rows, row{issue: "15", work: fmt.Sprintf("%s, %s (go test, in process)", work, sub), size: "10,000 entries",
				goal: goal, verdict: notMeasured})
			continue
		}
		rate, p99 := r.metrics["reads/s"], r.metrics["p99-ms"]
		rw := row{issue: "15", work: fmt.Sprintf("%s, %s (go test, in process)", work, sub), size: "10,000 entries",
			ctx: fmt.Sprintf("%s/s, p99 %s ms", cell(r, "reads/s"), cell(r, "p99-ms")), ref: noGoal, ratio: noGoal, goal: goal,
			verdict: measured(verdict(rate >= 10000 && p99 < 1), has(r, "reads/s", "p99-ms"))}
		if hasFloor {
			rw.ref = fmt.Sprintf("floor %s/s, p99 %s ms", cell(floor, "reads/s"), cell(floor, "p99-ms"))
			rw.ratio = ratioCell(r, "reads/s", floor, "reads/s") + "× the floor's reads/s"
		}
		rows = append(rows, rw)
	}
	if len(ctxs) == 0 {
		rows = append([]row{{issue: "15", work: work + " (bench/mcpread)", size: "10,000 entries", goal: goal, verdict: notMeasured}}, rows...)
	}
	return rows
}

// mcpWriteRows: the write tool of a real `ctx mcp serve` (bench/mcpwrite) against C git's plumbing
// write at the same size (bench/compare's set row), and the server's RSS after the writes; then the
// in-process go test figure.
func mcpWriteRows(res map[string]result) []row {
	var rows []row
	ws := resultsOf(res, "MCPWrite/", "binary", "ctx", "entries")
	for _, r := range ws {
		entries := field(r.name, "entries")
		p50 := r.metrics["p50-ms"]
		rw := row{issue: "15", work: "MCP write tool p50 (bench/mcpwrite)", size: sizeOf(r.name, "entries", "entries"),
			ctx: fmt.Sprintf("p50 %s ms, p99 %s ms, server cpu %s ms/call", cell(r, "p50-ms"), cell(r, "p99-ms"), cell(r, "server-cpu-ms/call")),
			ref: noGoal, ratio: noGoal, goal: noGoal, verdict: noGoal}
		for _, c := range compareRows(res, "set") {
			if field(c.name, "entries") == entries {
				rw.ref = fmt.Sprintf("C git plumbing commit %s ms", cell(c, "git-ms"))
				rw.ratio = ratioCell(r, "p50-ms", c, "git-ms") + "×"
			}
		}
		if entries == "10000" {
			rw.goal, rw.verdict = "p50 ≤ 20 ms", measured(verdict(p50 <= 20), has(r, "p50-ms"))
		}
		rows = append(rows, rw)
		rows = append(rows, row{issue: "15", work: fmt.Sprintf("MCP server RSS after %s writes (bench/mcpwrite)", field(r.name, "writes")),
			size: sizeOf(r.name, "entries", "entries"), ctx: fmt.Sprintf("%s MB (peak %s MB)", cell(r, "rss-MB"), cell(r, "peak-rss-MB")),
			ref: noGoal, ratio: noGoal, goal: "≤ 60 MB", verdict: measured(verdict(r.metrics["rss-MB"] <= 60), has(r, "rss-MB"))})
	}
	if len(ws) == 0 {
		rows = append(rows, row{issue: "15", work: "MCP write tool p50; server RSS after 200 writes", size: "10,000 entries",
			goal: "p50 ≤ 20 ms; RSS ≤ 60 MB", verdict: notMeasured})
	}
	if r, ok := res["WriteTool/10000"]; ok {
		rows = append(rows, row{issue: "15", work: "MCP write tool p50 (go test, in process)", size: "10,000 entries",
			ctx: fmt.Sprintf("p50 %s ms, p99 %s ms", cell(r, "p50-ms"), cell(r, "p99-ms")), ref: noGoal, ratio: noGoal,
			goal: "p50 ≤ 20 ms", verdict: measured(verdict(r.metrics["p50-ms"] <= 20), has(r, "p50-ms"))})
	} else {
		rows = append(rows, row{issue: "15", work: "MCP write tool p50 (go test, in process)", size: "10,000 entries", goal: "p50 ≤ 20 ms",
			verdict: notMeasured})
	}
	return rows
}

// pullRow: BenchmarkPullVsGit (store), `(*Store).Pull` against `git pull` of the same histories.
func pullRow(res map[string]result) row {
	rw := row{issue: "15", work: "`ctx pull` merging 1k×1k changes (go test)", size: "10,000 entries", goal: "≤ 1.0×"}
	c, ok1 := res["PullVsGit/ctx"]
	g, ok2 := res["PullVsGit/git"]
	if !ok1 || !ok2 {
		rw.verdict = notMeasured
		return rw
	}
	cw, gw := c.metrics["ns/op"]/1e6, g.metrics["ns/op"]/1e6
	cc, gc := c.metrics["cpu-ms/op"], g.metrics["cpu-ms/op"]
	ms := func(r result) string {
		if v, ok := metric(r, "ns/op"); ok {
			return num(v / 1e6)
		}
		return missing
	}
	rw.ctx = fmt.Sprintf("%s ms (cpu %s)", ms(c), cell(c, "cpu-ms/op"))
	rw.ref = fmt.Sprintf("`git pull` %s ms (cpu %s)", ms(g), cell(g, "cpu-ms/op"))
	rw.ratio = fmt.Sprintf("%s× (cpu %s×)", ratioCell(c, "ns/op", g, "ns/op"), ratioCell(c, "cpu-ms/op", g, "cpu-ms/op"))
	rw.verdict = measured(both(cw <= gw, cc <= gc), has(c, "ns/op", "cpu-ms/op") && has(g, "ns/op", "cpu-ms/op"))
	return rw
}

// checkoutRows: `git checkout` in a repository with ctx's hooks against one without; the goal is on the
// difference of the wall medians.
func checkoutRows(res map[string]result, compareRow, work string) []row {
	var rows []row
	for _, r := range compareRows(res, compareRow) {
		c, cc, g, gc := r.metrics["ctx-ms"], r.metrics["ctx-cpu-ms"], r.metrics["git-ms"], r.metrics["git-cpu-ms"]
		diff := func(a, b string) string {
			if !has(r, a, b) {
				return missing
			}
			return fmt.Sprintf("%+.1f", r.metrics[a]-r.metrics[b])
		}
		rows = append(rows, row{issue: "15", work: work, size: sizeOf(r.name, "entries", "entries"),
			ctx:   fmt.Sprintf("%s ms (cpu %s)", cell(r, "ctx-ms"), cell(r, "ctx-cpu-ms")),
			ref:   fmt.Sprintf("without hooks %s ms (cpu %s)", cell(r, "git-ms"), cell(r, "git-cpu-ms")),
			ratio: fmt.Sprintf("%s ms (cpu %s)", diff("ctx-ms", "git-ms"), diff("ctx-cpu-ms", "git-cpu-ms")), goal: "≤ +20 ms",
			verdict: measured(both(c-g <= 20, cc-gc <= 20), has(r, "ctx-ms", "ctx-cpu-ms", "git-ms", "git-cpu-ms"))})
	}
	if len(rows) == 0 {
		rows = append(rows, row{issue: "15", work: work, goal: "≤ +20 ms", verdict: notMeasured})
	}
	return rows
}

// syncRows: bench/sync-stress.sh, N clones syncing at once against the same syncs one after another.
func syncRows(res map[string]result) []row {
	const goal = "0 failed syncs, 0 missing, converge ≤ 2× serial, at 40 clones"
	par := resultsOf(res, "SyncStress/", "mode", "parallel", "clones")
	var rows []row
	has40 := false
	for _, r := range par {
		n := field(r.name, "clones")
		has40 = has40 || n == "40"
		p := r.metrics
		rw := row{issue: "15", work: fmt.Sprintf("%s clones × %s writes, all `ctx sync` at once", n, field(r.name, "writes")),
			size: n + " clones", ctx: fmt.Sprintf("converge %s s, %s failed, %s missing, %s retries", cell(r, "wall-s"),
				count(r, "failed"), count(r, "missing"), count(r, "retries")), ref: noGoal, ratio: noGoal, goal: goal}
		ok := p["failed"] == 0 && p["missing"] == 0
		all := has(r, "failed", "missing", "wall-s")
		s, found := res[strings.Replace(r.name, "mode=parallel", "mode=serial", 1)]
		if found {
			rw.ref = fmt.Sprintf("serial %s s", cell(s, "wall-s"))
			rw.ratio = ratioCell(r, "wall-s", s, "wall-s") + "× serial"
			ok = ok && ratio(p["wall-s"], s.metrics["wall-s"]) <= 2
		}
		rw.verdict = measured(verdict(ok), all && found && has(s, "wall-s"))
		if n != "40" && rw.verdict != notMeasured {
			rw.verdict += " (at " + n + ")"
		}
		rows = append(rows, rw)
	}
	if !has40 {
		rows = append(rows, row{issue: "15", work: "40 clones × 10 writes, all `ctx sync` at once", size: "40 clones", goal: goal, verdict: notMeasured})
	}
	return rows
}

// historyRun is the figures of bench/history.sh at one number of events.
type historyRun struct {
	events        int
	first, second result // first import, refresh with nothing new
	hasFirst      bool
	hasRefresh    bool
	search, mcp   result // whole-process search, MCP search in a warm server
	hasSearch     bool
	hasMCP        bool
	ref           result // rg (or grep) over the JSONL
	refName       string
}

// historyRuns gathers the agent-history results by number of events, fewest first.
func historyRuns(res map[string]result) []*historyRun {
	by := map[int]*historyRun{}
	get := func(name string) *historyRun {
		e, _ := strconv.Atoi(field(name, "events"))
		if by[e] == nil {
			by[e] = &historyRun{events: e}
		}
		return by[e]
	}
	for k, r := range res {
		switch {
		case strings.HasPrefix(k, "HistoryImport/") && field(k, "run") == "first":
			h := get(k)
			h.first, h.hasFirst = r, true
		case strings.HasPrefix(k, "HistoryImport/") && field(k, "run") == "refresh":
			h := get(k)
			h.second, h.hasRefresh = r, true
		case strings.HasPrefix(k, "HistSearch/") && field(k, "what") == "process":
			h := get(k)
			h.search, h.hasSearch = r, true
		case strings.HasPrefix(k, "HistSearch/") && field(k, "what") == "mcp":
			h := get(k)
			h.mcp, h.hasMCP = r, true
		case strings.HasPrefix(k, "HistSearch/") && strings.HasPrefix(field(k, "what"), "ref-"):
			h := get(k)
			h.ref, h.refName = r, strings.TrimPrefix(field(k, "what"), "ref-")
		}
	}
	var out []*historyRun
	for _, h := range by {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].events < out[j].events })
	return out
}

// historyRows are the agent history's rows at each number of events, then their growth.
func historyRows(res map[string]result) []row {
	const is = "10"
	runs := historyRuns(res)
	var rows []row
	for _, h := range runs {
		size := thousands(h.events) + " events"
		if h.hasFirst {
			m := h.first.metrics
			mb := missing
			if v, ok := metric(h.first, "jsonl-B"); ok {
				mb = num(v / 1e6)
			}
			rows = append(rows, row{issue: is, work: "first import, MB of JSONL per CPU second", size: size,
				ctx: fmt.Sprintf("%s MB/s (%s MB in %s s of cpu)", cell(h.first, "MB/cpu-s"), mb, cell(h.first, "cpu-s")),
				ref: noGoal, ratio: noGoal, goal: "≥ 50 MB/s", verdict: measured(verdict(m["MB/cpu-s"] >= 50), has(h.first, "MB/cpu-s"))})
			// The goal's "memory bounded" has no figure to check against: the verdict is the wall time's.
			wallVerdict := measured(verdict(m["wall-s"] < 60)+" (wall only)", has(h.first, "wall-s"))
			if h.events != 300000 && wallVerdict != notMeasured {
				wallVerdict += fmt.Sprintf(" (at %s)", thousands(h.events))
			}
			rows = append(rows, row{issue: is, work: "first import, wall and peak RSS", size: size,
				ctx: fmt.Sprintf("%s s wall, peak RSS %s MB", cell(h.first, "wall-s"), cell(h.first, "peak-rss-MB")),
				ref: noGoal, ratio: noGoal, goal: "< 60 s at 300,000 events; memory bounded", verdict: wallVerdict})
		}
		if h.hasRefresh {
			m := h.second.metrics
			ms := func(unit string) string {
				if v, ok := metric(h.second, unit); ok {
					return num(v * 1000)
				}
				return missing
			}
			rows = append(rows, row{issue: is, work: "import with nothing new", size: size,
				ctx: fmt.Sprintf("%s ms (cpu %s)", ms("wall-s"), ms("cpu-s")), ref: noGoal, ratio: noGoal,
				goal: "< 200 ms", verdict: measured(verdict(m["wall-s"]*1000 < 200), has(h.second, "wall-s"))})
		}
		if h.hasSearch {
			m := h.search.metrics
			rw := row{issue: is, work: fmt.Sprintf("`ctx history search`, whole process (%d runs)", h.search.n), size: size,
				ctx: fmt.Sprintf("p50 %s ms, p99 %s ms (cpu p50 %s)", cell(h.search, "wall-p50-ms"), cell(h.search, "wall-p99-ms"), cell(h.search, "cpu-p50-ms")),
				ref: noGoal, ratio: noGoal, goal: "p50 < 20 ms, p99 < 100 ms",
				verdict: measured(verdict(m["wall-p50-ms"] < 20 && m["wall-p99-ms"] < 100), has(h.search, "wall-p50-ms", "wall-p99-ms"))}
			if h.refName != "" {
				rw.ref = fmt.Sprintf("`%s -l -i` over the JSONL, p50 %s ms", h.refName, cell(h.ref, "wall-p50-ms"))
				rw.ratio = missing
				if has(h.search, "wall-p50-ms") && has(h.ref, "wall-p50-ms") {
					rw.ratio = fmt.Sprintf("%.3f× (p50)", ratio(m["wall-p50-ms"], h.ref.metrics["wall-p50-ms"]))
				}
			}
			rows = append(rows, rw)
		}
		if h.hasMCP {
			m := h.mcp.metrics
			rows = append(rows, row{issue: is, work: fmt.Sprintf("MCP search, warm server (%d calls)", h.mcp.n), size: size,
				ctx: fmt.Sprintf("p50 %s ms, p99 %s ms", cell(h.mcp, "wall-p50-ms"), cell(h.mcp, "wall-p99-ms")), ref: noGoal, ratio: noGoal,
				goal: "p99 < 50 ms", verdict: measured(verdict(m["wall-p99-ms"] < 50), has(h.mcp, "wall-p99-ms"))})
		}
		// The figures of this size the run does not have.
		for _, m := range []struct {
			has        bool
			work, goal string
		}{
			{h.hasFirst, "first import, MB of JSONL per CPU second", "≥ 50 MB/s"},
			{h.hasFirst, "first import, wall and peak RSS", "< 60 s at 300,000 events; memory bounded"},
			{h.hasRefresh, "import with nothing new", "< 200 ms"},
			{h.hasSearch, "`ctx history search`, whole process", "p50 < 20 ms, p99 < 100 ms"},
			{h.hasMCP, "MCP search, warm server", "p99 < 50 ms"},
		} {
			if !m.has {
				rows = append(rows, row{issue: is, work: m.work, size: size, goal: m.goal, verdict: notMeasured})
			}
		}
	}
	if len(runs) == 0 {
		rows = append(rows, row{issue: is, work: "agent history: import, refresh, search", goal: "the agent history's speed goals", verdict: notMeasured})
	}
	rows = append(rows, growthRows(runs)...)
	return rows
}

// growthRows: how each figure of the agent history grows from the smallest number of events of the run to the
// largest (the goal asks for 30k → 300k).
func growthRows(runs []*historyRun) []row {
	const work = "growth 30,000 → 300,000 events"
	if len(runs) < 2 {
		return []row{{issue: "10", work: work, goal: "report", verdict: notMeasured}}
	}
	lo, hi := runs[0], runs[len(runs)-1]
	size := fmt.Sprintf("%s → %s events", thousands(lo.events), thousands(hi.events))
	var rows []row
	add := func(what string, ra, rb result, key string, scale float64, ok bool, unit string) {
		if !ok || !has(ra, key) || !has(rb, key) {
			return
		}
		a, b := ra.metrics[key]*scale, rb.metrics[key]*scale
		rows = append(rows, row{issue: "10", work: "growth: " + what, size: size, ctx: fmt.Sprintf("%s → %s %s", num(a), num(b), unit),
			ref: fmt.Sprintf("events ×%s", num(float64(hi.events)/float64(lo.events))), ratio: fmt.Sprintf("×%s", num(ratio(b, a))),
			goal: "report", verdict: noGoal})
	}
	add("first import wall", lo.first, hi.first, "wall-s", 1, lo.hasFirst && hi.hasFirst, "s")
	add("first import MB per CPU second", lo.first, hi.first, "MB/cpu-s", 1, lo.hasFirst && hi.hasFirst, "MB/s")
	add("first import peak RSS", lo.first, hi.first, "peak-rss-MB", 1, lo.hasFirst && hi.hasFirst, "MB")
	add("import with nothing new", lo.second, hi.second, "wall-s", 1000, lo.hasRefresh && hi.hasRefresh, "ms")
	add("`ctx history search` p50", lo.search, hi.search, "wall-p50-ms", 1, lo.hasSearch && hi.hasSearch, "ms")
	add("`ctx history search` p99", lo.search, hi.search, "wall-p99-ms", 1, lo.hasSearch && hi.hasSearch, "ms")
	add("MCP search p99", lo.mcp, hi.mcp, "wall-p99-ms", 1, lo.hasMCP && hi.hasMCP, "ms")
	return rows
}
