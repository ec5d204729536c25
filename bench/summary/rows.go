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
	var out []result
	for k, r := range res {
		if strings.HasPrefix(k, "Compare/") && field(k, "row") == name {
			out = append(out, r)
		}
	}
	sortBy(out, "entries")
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
			ctx: fmt.Sprintf("%s ms (cpu %s)", num(c), num(cc)), ref: fmt.Sprintf("%s %s ms (cpu %s)", ref, num(g), num(gc)),
			ratio: fmt.Sprintf("%.2f× (cpu %.2f×)", ratio(c, g), ratio(cc, gc)), goal: noGoal, verdict: noGoal}
		if goal, ok := goals[size]; ok {
			rw.goal = fmt.Sprintf("≤ %g×", goal)
			rw.verdict = both(ratio(c, g) <= goal, ratio(cc, gc) <= goal)
			if compareRow == "log-n20" {
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
	var ws []result
	for k, r := range res {
		if strings.HasPrefix(k, "WriteSh/") {
			ws = append(ws, r)
		}
	}
	sortBy(ws, "entries")
	for _, r := range ws {
		size, _ := strconv.Atoi(field(r.name, "entries"))
		c, g := r.metrics["ctx-ms/write"], r.metrics["git-ms/write"]
		rw := row{issue: is, work: fmt.Sprintf("`ctx knowledge set`, %d writes in a row (bench/write.sh)", r.n),
			size: sizeOf(r.name, "entries", "entries"), ctx: num(c) + " ms/write",
			ref:   fmt.Sprintf("C git plumbing (%s) %s ms/write", field(r.name, "mode"), num(g)),
			ratio: fmt.Sprintf("%.2f×", ratio(c, g)), goal: noGoal, verdict: noGoal}
		if goal, ok := (goalAt{100: 0.3, 10000: 0.5})[size]; ok {
			rw.goal, rw.verdict = fmt.Sprintf("≤ %g×", goal), verdict(ratio(c, g) <= goal)
		}
		rows = append(rows, rw)
	}
	rows = append(rows, ratioRows(res, is, "`ctx knowledge get`", "get", "`git show ctx:knowledge/k.md`", goalAt{100: 1.5, 10000: 1.5, 50000: 1.5})...)

	// ctx mcp serve: spawn → initialize answer, an absolute goal.
	for _, r := range compareRows(res, "mcp-init") {
		c, cc, g := r.metrics["ctx-ms"], r.metrics["ctx-cpu-ms"], r.metrics["git-ms"]
		rows = append(rows, row{issue: is, work: "`ctx mcp serve` spawn → initialize answer", size: sizeOf(r.name, "entries", "entries"),
			ctx: fmt.Sprintf("%s ms (cpu %s)", num(c), num(cc)), ref: fmt.Sprintf("`git rev-parse HEAD` %s ms", num(g)),
			ratio: fmt.Sprintf("%.2f×", ratio(c, g)), goal: "< 25 ms", verdict: verdict(c < 25)})
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
	var ctxs []result
	for k, r := range res {
		if strings.HasPrefix(k, "MCPRead/") && field(k, "server") == "ctx" {
			ctxs = append(ctxs, r)
		}
	}
	sortBy(ctxs, "inflight")
	for _, r := range ctxs {
		rate, p50, p99 := r.metrics["reads/s"], r.metrics["p50-ms"], r.metrics["p99-ms"]
		rw := row{issue: "15", work: fmt.Sprintf("%s, %s in flight (bench/mcpread)", work, field(r.name, "inflight")),
			size: sizeOf(r.name, "entries", "entries"), ctx: fmt.Sprintf("%s/s, p50 %s ms, p99 %s ms", num(rate), num(p50), num(p99)),
			ratio: noGoal, ref: noGoal, goal: goal, verdict: verdict(rate >= 10000 && p99 < 1)}
		if fl, ok := res[strings.Replace(r.name, "server=ctx", "server=mcp-go-floor", 1)]; ok {
			rw.ref = fmt.Sprintf("mcp-go floor %s/s, p99 %s ms", num(fl.metrics["reads/s"]), num(fl.metrics["p99-ms"]))
			rw.ratio = fmt.Sprintf("%.2f× the floor's reads/s", ratio(rate, fl.metrics["reads/s"]))
		}
		rows = append(rows, rw)
	}
	// BenchmarkResourceRead (mcp): client and server in one process, one read at a time.
	floor, hasFloor := res["ResourceRead/floor-one"]
	for _, sub := range []string{"stdio-one", "stdio-one-warm"} {
		r, ok := res["ResourceRead/"+sub]
		if !ok {
			continue
		}
		rate, p99 := r.metrics["reads/s"], r.metrics["p99-ms"]
		rw := row{issue: "15", work: fmt.Sprintf("%s, %s (go test, in process)", work, sub), size: "10,000 entries",
			ctx: fmt.Sprintf("%s/s, p99 %s ms", num(rate), num(p99)), ref: noGoal, ratio: noGoal, goal: goal,
			verdict: verdict(rate >= 10000 && p99 < 1)}
		if hasFloor {
			rw.ref = fmt.Sprintf("floor %s/s, p99 %s ms", num(floor.metrics["reads/s"]), num(floor.metrics["p99-ms"]))
			rw.ratio = fmt.Sprintf("%.2f× the floor's reads/s", ratio(rate, floor.metrics["reads/s"]))
		}
		rows = append(rows, rw)
	}
	if len(rows) == 0 {
		rows = append(rows, row{issue: "15", work: work, size: "10,000 entries", goal: goal, verdict: notMeasured})
	}
	return rows
}

// mcpWriteRows: the write tool of a real `ctx mcp serve` (bench/mcpwrite) against C git's plumbing
// write at the same size (bench/compare's set row), and the server's RSS after the writes; then the
// in-process go test figure.
func mcpWriteRows(res map[string]result) []row {
	var rows []row
	var ws []result
	for k, r := range res {
		if strings.HasPrefix(k, "MCPWrite/") && field(k, "binary") == "ctx" {
			ws = append(ws, r)
		}
	}
	sortBy(ws, "entries")
	for _, r := range ws {
		entries := field(r.name, "entries")
		p50 := r.metrics["p50-ms"]
		rw := row{issue: "15", work: "MCP write tool p50 (bench/mcpwrite)", size: sizeOf(r.name, "entries", "entries"),
			ctx: fmt.Sprintf("p50 %s ms, p99 %s ms, server cpu %s ms/call", num(p50), num(r.metrics["p99-ms"]), num(r.metrics["server-cpu-ms/call"])),
			ref: noGoal, ratio: noGoal, goal: noGoal, verdict: noGoal}
		for _, c := range compareRows(res, "set") {
			if field(c.name, "entries") == entries {
				rw.ref = fmt.Sprintf("C git plumbing commit %s ms", num(c.metrics["git-ms"]))
				rw.ratio = fmt.Sprintf("%.2f×", ratio(p50, c.metrics["git-ms"]))
			}
		}
		if entries == "10000" {
			rw.goal, rw.verdict = "p50 ≤ 20 ms", verdict(p50 <= 20)
		}
		rows = append(rows, rw)
		rows = append(rows, row{issue: "15", work: fmt.Sprintf("MCP server RSS after %s writes (bench/mcpwrite)", field(r.name, "writes")),
			size: sizeOf(r.name, "entries", "entries"), ctx: fmt.Sprintf("%s MB (peak %s MB)", num(r.metrics["rss-MB"]), num(r.metrics["peak-rss-MB"])),
			ref: noGoal, ratio: noGoal, goal: "≤ 60 MB", verdict: verdict(r.metrics["rss-MB"] <= 60)})
	}
	if len(ws) == 0 {
		rows = append(rows, row{issue: "15", work: "MCP write tool p50; server RSS after 200 writes", size: "10,000 entries",
			goal: "p50 ≤ 20 ms; RSS ≤ 60 MB", verdict: notMeasured})
	}
	if r, ok := res["WriteTool/10000"]; ok {
		rows = append(rows, row{issue: "15", work: "MCP write tool p50 (go test, in process)", size: "10,000 entries",
			ctx: fmt.Sprintf("p50 %s ms, p99 %s ms", num(r.metrics["p50-ms"]), num(r.metrics["p99-ms"])), ref: noGoal, ratio: noGoal,
			goal: "p50 ≤ 20 ms", verdict: verdict(r.metrics["p50-ms"] <= 20)})
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
	rw.ctx = fmt.Sprintf("%s ms (cpu %s)", num(cw), num(cc))
	rw.ref = fmt.Sprintf("`git pull` %s ms (cpu %s)", num(gw), num(gc))
	rw.ratio = fmt.Sprintf("%.2f× (cpu %.2f×)", ratio(cw, gw), ratio(cc, gc))
	rw.verdict = both(cw <= gw, cc <= gc)
	return rw
}

// checkoutRows: `git checkout` in a repository with ctx's hooks against one without; the goal is on the
// difference of the wall medians.
func checkoutRows(res map[string]result, compareRow, work string) []row {
	var rows []row
	for _, r := range compareRows(res, compareRow) {
		c, cc, g, gc := r.metrics["ctx-ms"], r.metrics["ctx-cpu-ms"], r.metrics["git-ms"], r.metrics["git-cpu-ms"]
		rows = append(rows, row{issue: "15", work: work, size: sizeOf(r.name, "entries", "entries"),
			ctx: fmt.Sprintf("%s ms (cpu %s)", num(c), num(cc)), ref: fmt.Sprintf("without hooks %s ms (cpu %s)", num(g), num(gc)),
			ratio: fmt.Sprintf("%+.1f ms (cpu %+.1f)", c-g, cc-gc), goal: "≤ +20 ms", verdict: both(c-g <= 20, cc-gc <= 20)})
	}
	if len(rows) == 0 {
		rows = append(rows, row{issue: "15", work: work, goal: "≤ +20 ms", verdict: notMeasured})
	}
	return rows
}

// syncRows: bench/sync-stress.sh, N clones syncing at once against the same syncs one after another.
func syncRows(res map[string]result) []row {
	const goal = "0 failed syncs, 0 missing, converge ≤ 2× serial, at 40 clones"
	var par []result
	for k, r := range res {
		if strings.HasPrefix(k, "SyncStress/") && field(k, "mode") == "parallel" {
			par = append(par, r)
		}
	}
	sortBy(par, "clones")
	var rows []row
	has40 := false
	for _, r := range par {
		n := field(r.name, "clones")
		has40 = has40 || n == "40"
		p := r.metrics
		rw := row{issue: "15", work: fmt.Sprintf("%s clones × %s writes, all `ctx sync` at once", n, field(r.name, "writes")),
			size: n + " clones", ctx: fmt.Sprintf("converge %s s, %d failed, %d missing, %d retries", num(p["wall-s"]),
				int(p["failed"]), int(p["missing"]), int(p["retries"])), ref: noGoal, ratio: noGoal, goal: goal}
		ok := p["failed"] == 0 && p["missing"] == 0
		if s, found := res[strings.Replace(r.name, "mode=parallel", "mode=serial", 1)]; found {
			rw.ref = fmt.Sprintf("serial %s s", num(s.metrics["wall-s"]))
			q := ratio(p["wall-s"], s.metrics["wall-s"])
			rw.ratio = fmt.Sprintf("%.2f× serial", q)
			ok = ok && q <= 2
		}
		rw.verdict = verdict(ok)
		if n != "40" {
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
			rows = append(rows, row{issue: is, work: "first import, MB of JSONL per CPU second", size: size,
				ctx: fmt.Sprintf("%s MB/s (%s MB in %s s of cpu)", num(m["MB/cpu-s"]), num(m["jsonl-B"]/1e6), num(m["cpu-s"])),
				ref: noGoal, ratio: noGoal, goal: "≥ 50 MB/s", verdict: verdict(m["MB/cpu-s"] >= 50)})
			wallVerdict := verdict(m["wall-s"] < 60)
			if h.events != 300000 {
				wallVerdict += fmt.Sprintf(" (at %s)", thousands(h.events))
			}
			rows = append(rows, row{issue: is, work: "first import, wall and peak RSS", size: size,
				ctx: fmt.Sprintf("%s s wall, peak RSS %s MB", num(m["wall-s"]), num(m["peak-rss-MB"])),
				ref: noGoal, ratio: noGoal, goal: "< 60 s at 300,000 events; memory bounded", verdict: wallVerdict})
		}
		if h.hasRefresh {
			m := h.second.metrics
			rows = append(rows, row{issue: is, work: "import with nothing new", size: size,
				ctx: fmt.Sprintf("%s ms (cpu %s)", num(m["wall-s"]*1000), num(m["cpu-s"]*1000)), ref: noGoal, ratio: noGoal,
				goal: "< 200 ms", verdict: verdict(m["wall-s"]*1000 < 200)})
		}
		if h.hasSearch {
			m := h.search.metrics
			rw := row{issue: is, work: fmt.Sprintf("`ctx history search`, whole process (%d runs)", h.search.n), size: size,
				ctx: fmt.Sprintf("p50 %s ms, p99 %s ms (cpu p50 %s)", num(m["wall-p50-ms"]), num(m["wall-p99-ms"]), num(m["cpu-p50-ms"])),
				ref: noGoal, ratio: noGoal, goal: "p50 < 20 ms, p99 < 100 ms",
				verdict: verdict(m["wall-p50-ms"] < 20 && m["wall-p99-ms"] < 100)}
			if h.refName != "" {
				rw.ref = fmt.Sprintf("`%s -l -i` over the JSONL, p50 %s ms", h.refName, num(h.ref.metrics["wall-p50-ms"]))
				rw.ratio = fmt.Sprintf("%.3f× (p50)", ratio(m["wall-p50-ms"], h.ref.metrics["wall-p50-ms"]))
			}
			rows = append(rows, rw)
		}
		if h.hasMCP {
			m := h.mcp.metrics
			rows = append(rows, row{issue: is, work: fmt.Sprintf("MCP search, warm server (%d calls)", h.mcp.n), size: size,
				ctx: fmt.Sprintf("p50 %s ms, p99 %s ms", num(m["wall-p50-ms"]), num(m["wall-p99-ms"])), ref: noGoal, ratio: noGoal,
				goal: "p99 < 50 ms", verdict: verdict(m["wall-p99-ms"] < 50)})
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
	add := func(what string, a, b float64, ok bool, unit string) {
		if !ok {
			return
		}
		rows = append(rows, row{issue: "10", work: "growth: " + what, size: size, ctx: fmt.Sprintf("%s → %s %s", num(a), num(b), unit),
			ref: fmt.Sprintf("events ×%s", num(float64(hi.events)/float64(lo.events))), ratio: fmt.Sprintf("×%s", num(ratio(b, a))),
			goal: "report", verdict: noGoal})
	}
	add("first import wall", lo.first.metrics["wall-s"], hi.first.metrics["wall-s"], lo.hasFirst && hi.hasFirst, "s")
	add("first import MB per CPU second", lo.first.metrics["MB/cpu-s"], hi.first.metrics["MB/cpu-s"], lo.hasFirst && hi.hasFirst, "MB/s")
	add("first import peak RSS", lo.first.metrics["peak-rss-MB"], hi.first.metrics["peak-rss-MB"], lo.hasFirst && hi.hasFirst, "MB")
	add("import with nothing new", lo.second.metrics["wall-s"]*1000, hi.second.metrics["wall-s"]*1000, lo.hasRefresh && hi.hasRefresh, "ms")
	add("`ctx history search` p50", lo.search.metrics["wall-p50-ms"], hi.search.metrics["wall-p50-ms"], lo.hasSearch && hi.hasSearch, "ms")
	add("`ctx history search` p99", lo.search.metrics["wall-p99-ms"], hi.search.metrics["wall-p99-ms"], lo.hasSearch && hi.hasSearch, "ms")
	add("MCP search p99", lo.mcp.metrics["wall-p99-ms"], hi.mcp.metrics["wall-p99-ms"], lo.hasMCP && hi.hasMCP, "ms")
	return rows
}
