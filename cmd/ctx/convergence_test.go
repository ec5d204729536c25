package main_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
)

// convSeed replays a convergence run: go test ./cmd/ctx -run TestConvergence -seed N (or CTX_SEED=N).
var convSeed = flag.Int64("seed", 0, "random seed of TestConvergence (0: CTX_SEED, else the clock)")

// Convergence parameters (docs/merge.md "Properties"): a bare remote and 5 clones; each clone makes
// convWrites random writes (12 in make test, 40 in make stress: convergence_size_test.go).
const convClones = 5

// marker is the unique token every write carries (W<number>x), so the final tree can be searched for it.
var markerRE = regexp.MustCompile(`W[0-9]{4}x`)

// clone is one machine of the convergence run.
type clone struct {
	name, dir string
	env       []string
	left      int      // writes still to make
	sessions  []string // sessions started here and not ended
}

// convergence keeps what the run wrote and what later writes superseded.
type convergence struct {
	t          *testing.T
	rng        *rand.Rand
	n          int               // writes made so far (the marker number)
	written    map[string]string // marker → what wrote it
	superseded map[string]bool   // markers a later write on a clone that had them replaced or removed
	titles     map[string]bool   // decision titles added
	statuses   map[string]map[string]bool
	usages     map[string]int // skill → usage records written
	syncs      int
	launches   int
	conflicts  map[string]bool // conflict ids printed by pulls
}

// TestConvergence is the convergence test with real clones: a bare remote and 5 clones each make
// convWrites random writes (12; 40 under make stress) of every kind through the ctx binary — knowledge
// set/rm (a small pool of keys, single lines edited so that clones clash on the same keys and lines),
// conventions, decisions (the first write of every clone is a decision, before any sync: they all take
// number 1), decision status changes, skill add + rate + usage (the feedback and usage ndjson logs), state,
// sessions (start, update, end), activity check-ins and hand edits of .context/ (committed by the next
// pull) — and run `ctx sync` between writes in a random order. Everything runs sequentially from one seed
// (printed; replay with -seed or CTX_SEED), so a failing run replays exactly.
//
// "Every write is present or recorded in a conflict record" is checked with markers: every write carries a
// unique token; before and after each write the clone's .context/ is scanned, and tokens present before
// and gone after were superseded by that write (a later write on a clone that had seen them: replaced or
// removed on purpose). Every other token must be in the final tree — in its file or in a
// conflicts/<id>.json record (which is part of the tree). Merges never remove a token: that is what this
// checks. Then, after every clone syncs twice round-robin: all tips equal the remote's; decisions have
// distinct ids and each title once on every clone; statuses are ones that were written; usage logs hold
// every record; `git fsck --strict` is clean everywhere; `ctx conflicts --json` lists exactly the
// conflicts/ files on every clone.
//
// Writes go through the binary (not the store API) so that the CLI's paths (open, refresh, hand-edit
// commit) are what converges: about 110 ctx runs (about 330 under make stress), 10-30 s on 2 quiet
// cores.
func TestConvergence(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	seed := *convSeed
	if seed == 0 {
		if s, err := strconv.ParseInt(os.Getenv("CTX_SEED"), 10, 64); err == nil {
			seed = s
		}
	}
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("convergence seed %d (replay: go test ./cmd/ctx -run TestConvergence -seed %d)", seed, seed)
	start := time.Now()
	cv := &convergence{t: t, rng: rand.New(rand.NewSource(seed)), written: map[string]string{},
		superseded: map[string]bool{}, titles: map[string]bool{}, statuses: map[string]map[string]bool{},
		usages: map[string]int{}, conflicts: map[string]bool{}}

	remote := testenv.BareRemote(t)
	first := testenv.Clone(t, remote, "first")
	cv.ctx(&clone{name: "first", dir: first}, "init", "--no-hooks")
	cv.ctx(&clone{name: "first", dir: first}, "push")
	clones := make([]*clone, convClones)
	for i := range clones {
		name := fmt.Sprintf("m%d", i)
		c := &clone{name: name, dir: testenv.Clone(t, remote, name), left: convWrites,
			env: []string{"CTX_MACHINE=" + name, "CTX_AGENT=agent-" + name}}
		cv.ctx(c, "init", "--no-hooks") // adopts the remote's context branch
		clones[i] = c
	}
	// Decisions added on every clone at once: all take number 1 before anyone syncs.
	for _, c := range clones {
		cv.write(c, "decision")
	}
	for {
		var open []*clone
		for _, c := range clones {
			if c.left > 0 {
				open = append(open, c)
			}
		}
		if len(open) == 0 {
			break
		}
		c := open[cv.rng.Intn(len(open))]
		cv.write(c, "")
		if cv.rng.Intn(5) < 2 {
			cv.sync(clones[cv.rng.Intn(len(clones))])
		}
	}
	for round := 0; round < 2; round++ {
		for _, c := range clones {
			cv.sync(c)
		}
	}
	elapsed := time.Since(start)
	cv.check(remote, clones)
	t.Logf("convergence: seed %d, %d writes (%d with a marker), %d syncs, %d ctx launches, %d conflicts reported by pulls, %s",
		seed, convClones*convWrites, len(cv.written), cv.syncs, cv.launches, len(cv.conflicts), elapsed.Round(time.Millisecond))
}

// ctx runs the binary in c's clone with its environment; the test fails on a non-zero exit.
func (cv *convergence) ctx(c *clone, args ...string) string {
	cv.t.Helper()
	cv.launches++
	cmd := exec.Command(ctxBin, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		cv.t.Fatalf("%s: ctx %s: %v\nstdout:\n%s\nstderr:\n%s", c.name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

var conflictLineRE = regexp.MustCompile(`conflict ([0-9a-f]{16}):`)

func (cv *convergence) sync(c *clone) {
	cv.t.Helper()
	cv.syncs++
	out := cv.ctx(c, "sync")
	for _, m := range conflictLineRE.FindAllStringSubmatch(out, -1) {
		cv.conflicts[m[1]] = true
	}
}

// scan returns the markers in c's checked-out tree.
func (cv *convergence) scan(c *clone) map[string]bool {
	cv.t.Helper()
	out := map[string]bool{}
	root := filepath.Join(c.dir, ".context")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range markerRE.FindAll(b, -1) {
			out[string(m)] = true
		}
		return nil
	})
	if err != nil {
		cv.t.Fatal(err)
	}
	return out
}

// files lists the names in a folder of c's checked-out tree ("" entries when absent).
func files(c *clone, dir string) []string {
	es, _ := os.ReadDir(filepath.Join(c.dir, ".context", dir))
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

var knowledgeKeys = []string{"architecture", "testing", "deploy", "style"}
var conventionKeys = []string{"git", "review"}
var skillNames = []string{"tdd", "debug", "release"}

// write makes one random write (of kind, or a random kind when "") on c and records its marker.
func (cv *convergence) write(c *clone, kind string) {
	cv.t.Helper()
	kinds := []string{"knowledge", "knowledge", "knowledge", "knowledge-rm", "convention", "decision", "status",
		"skill", "rate", "usage", "state", "session", "activity", "hand"}
	if kind == "" {
		kind = kinds[cv.rng.Intn(len(kinds))]
	}
	cv.n++
	c.left--
	mk := fmt.Sprintf("W%04dx", cv.n)
	cv.written[mk] = c.name + " " + kind
	before := cv.scan(c)
	rng := cv.rng
	switch kind {
	case "knowledge", "convention", "hand":
		dir, key := "knowledge", knowledgeKeys[rng.Intn(len(knowledgeKeys))]
		if kind == "convention" {
			dir, key = "conventions", conventionKeys[rng.Intn(len(conventionKeys))]
		}
		body := editLine(cv.currentBody(c, dir+"/"+key+".md"), rng.Intn(4), fmt.Sprintf("%s line by %s", mk, c.name))
		switch kind {
		case "hand": // a hand edit of .context/, committed by the pull of the sync that follows
			p := filepath.Join(c.dir, ".context", dir, key+".md")
			old, err := os.ReadFile(p)
			fm := "---\nprovenance: owner_instruction\nscope: public\n---\n"
			if err == nil {
				if i := bytes.Index(old[4:], []byte("\n---\n")); bytes.HasPrefix(old, []byte("---\n")) && i >= 0 {
					fm = string(old[:4+i+5])
				}
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				cv.t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(fm+body), 0o644); err != nil {
				cv.t.Fatal(err)
			}
			cv.account(c, mk, kind, before)
			cv.sync(c)
			return
		default:
			verb := "knowledge"
			if kind == "convention" {
				verb = "convention"
			}
			cv.ctxIn(c, body, verb, "set", key)
		}
	case "knowledge-rm":
		keys := files(c, "knowledge")
		if len(keys) == 0 {
			c.left++
			cv.n--
			delete(cv.written, mk)
			cv.write(c, "knowledge")
			return
		}
		cv.ctx(c, "knowledge", "rm", strings.TrimSuffix(keys[rng.Intn(len(keys))], ".md"))
		delete(cv.written, mk) // no marker in a removal
	case "decision":
		title := fmt.Sprintf("Decision %s by %s", mk, c.name)
		cv.titles[title] = true
		cv.statuses[title] = map[string]bool{"proposed": true}
		cv.ctx(c, "decision", "add", title, "--context", "why "+mk, "--decision", "what "+mk, "--consequences", "so "+mk)
	case "status":
		titles := cv.decisionTitles(c)
		if len(titles) == 0 {
			c.left++
			cv.n--
			delete(cv.written, mk)
			cv.write(c, "decision")
			return
		}
		title := titles[rng.Intn(len(titles))]
		st := []string{"proposed", "accepted", "deprecated"}[rng.Intn(3)]
		cv.statuses[title][st] = true
		cv.ctx(c, "decision", "set-status", title, st)
		delete(cv.written, mk) // checked by status at the end
	case "skill":
		name := skillNames[rng.Intn(len(skillNames))]
		cv.ctx(c, "skill", "add", name, "-d", "when "+name+" is needed", fmt.Sprintf("Do %s carefully (%s by %s).", name, mk, c.name))
	case "rate", "usage":
		names := files(c, "skills")
		if len(names) == 0 {
			c.left++
			cv.n--
			delete(cv.written, mk)
			cv.write(c, "skill")
			return
		}
		name := names[rng.Intn(len(names))]
		if kind == "rate" {
			cv.ctx(c, "skill", "rate", name, strconv.Itoa(1+rng.Intn(5)), "rated "+mk)
		} else {
			cv.usages[name]++
			cv.ctx(c, "skill", "usage", name)
			delete(cv.written, mk) // checked by count at the end
		}
	case "state":
		if rng.Intn(2) == 0 {
			cv.ctx(c, "state", "set", "current_task", "task "+mk)
		} else {
			cv.ctx(c, "state", "set", "blockers", "blocked "+mk)
		}
	case "session":
		switch {
		case len(c.sessions) == 0 || rng.Intn(3) == 0:
			out := cv.ctx(c, "session", "start", "-m", "started "+mk, "--json")
			var s struct{ ID string }
			if err := json.Unmarshal([]byte(out), &s); err != nil || s.ID == "" {
				cv.t.Fatalf("session start: %q %v", out, err)
			}
			c.sessions = append(c.sessions, s.ID)
		case rng.Intn(3) == 0:
			i := rng.Intn(len(c.sessions))
			cv.ctx(c, "session", "end", c.sessions[i])
			c.sessions = append(c.sessions[:i], c.sessions[i+1:]...)
			cv.n--
			delete(cv.written, mk) // no marker in an end
		default:
			cv.ctx(c, "session", "update", c.sessions[rng.Intn(len(c.sessions))], "-m", "then "+mk)
		}
	case "activity":
		cv.ctx(c, "activity", "check-in", "working on "+mk, "--doing", "step "+mk)
	}
	cv.account(c, mk, kind, before)
}

// account checks that write mk is in c's .context/ and marks the markers it removed as superseded.
func (cv *convergence) account(c *clone, mk, kind string, before map[string]bool) {
	cv.t.Helper()
	after := cv.scan(c)
	if _, ok := cv.written[mk]; ok && !after[mk] {
		cv.t.Fatalf("%s: write %s (%s) is not in .context/ right after it", c.name, mk, kind)
	}
	for m := range before {
		if !after[m] {
			cv.superseded[m] = true
		}
	}
}

// ctxIn is ctx with standard input.
func (cv *convergence) ctxIn(c *clone, stdin string, args ...string) {
	cv.t.Helper()
	cv.launches++
	cmd := exec.Command(ctxBin, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		cv.t.Fatalf("%s: ctx %s: %v\n%s", c.name, strings.Join(args, " "), err, out)
	}
}

// currentBody is the body of a markdown entry in c's checked-out tree (4 placeholder lines when absent).
func (cv *convergence) currentBody(c *clone, p string) string {
	b, err := os.ReadFile(filepath.Join(c.dir, ".context", filepath.FromSlash(p)))
	if err != nil {
		return "one\ntwo\nthree\nfour\n"
	}
	s := string(b)
	if strings.HasPrefix(s, "---\n") {
		if i := strings.Index(s[4:], "\n---\n"); i >= 0 {
			s = s[4+i+5:]
		}
	}
	return s
}

// editLine replaces line i of body (padding to 4 lines).
func editLine(body string, i int, line string) string {
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	for len(lines) < 4 {
		lines = append(lines, "pad")
	}
	lines[i] = line
	return strings.Join(lines, "\n") + "\n"
}

// decisionTitles lists the titles of the decisions checked out in c.
func (cv *convergence) decisionTitles(c *clone) []string {
	var out []string
	for _, f := range files(c, "decisions") {
		b, _ := os.ReadFile(filepath.Join(c.dir, ".context", "decisions", f))
		for _, l := range strings.Split(string(b), "\n") {
			if t, ok := strings.CutPrefix(l, "title: "); ok {
				t = strings.Trim(t, `"'`)
				if cv.titles[t] {
					out = append(out, t)
				}
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// check verifies the end state (see TestConvergence).
func (cv *convergence) check(remote string, clones []*clone) {
	t := cv.t
	tip := testenv.Git(t, remote, "rev-parse", "ctx")
	for _, c := range clones {
		if got := testenv.Git(t, c.dir, "rev-parse", "ctx"); got != tip {
			t.Errorf("%s: tip %s, remote %s", c.name, got, tip)
		}
	}
	// Every write's marker is in the final tree (its file, or a conflict record), unless superseded.
	grep, _ := testenv.GitErr(remote, "grep", "-h", "-o", "-E", "W[0-9]{4}x", "ctx")
	present := map[string]bool{}
	for _, m := range strings.Fields(grep) {
		present[strings.TrimPrefix(m, "ctx:")] = true
	}
	missing := 0
	for m, what := range cv.written {
		if !cv.superseded[m] && !present[m] {
			missing++
			t.Errorf("write %s (%s) is neither in the final tree nor in a conflict record", m, what)
		}
	}
	// Conflict records on the branch.
	ls := testenv.Git(t, remote, "ls-tree", "--name-only", "ctx", "conflicts/")
	records := map[string]bool{}
	for _, l := range strings.Fields(ls) {
		records[strings.TrimSuffix(strings.TrimPrefix(l, "conflicts/"), ".json")] = true
	}
	for id := range cv.conflicts {
		if !records[id] {
			t.Errorf("conflict %s reported by a pull has no record", id)
		}
	}
	for _, c := range clones {
		// ctx conflicts --json lists exactly the records.
		var listed []struct{ ID, Path string }
		if err := json.Unmarshal([]byte(cv.ctx(c, "conflicts", "--json")), &listed); err != nil {
			t.Fatalf("%s: conflicts --json: %v", c.name, err)
		}
		got := map[string]bool{}
		for _, r := range listed {
			got[r.ID] = true
		}
		if fmt.Sprint(got) != fmt.Sprint(records) {
			t.Errorf("%s: ctx conflicts lists %v, the branch has %v", c.name, got, records)
		}
		// Decisions: distinct ids, every title once, a status that was written.
		var ds []struct {
			ID            int
			Title, Status string
		}
		if err := json.Unmarshal([]byte(cv.ctx(c, "decision", "list", "--json")), &ds); err != nil {
			t.Fatalf("%s: decision list: %v", c.name, err)
		}
		ids, titles := map[int]bool{}, map[string]int{}
		for _, d := range ds {
			if ids[d.ID] {
				t.Errorf("%s: decision id %d twice\n%s", c.name, d.ID, testenv.Git(t, c.dir, "grep", "-h", "-e", "^id:", "-e", "^uid:", "ctx", "--", "decisions/"))
				if os.Getenv("CTX_DEBUG_TREE") != "" {
					t.Log(testenv.Git(t, c.dir, "ls-tree", "-r", "--name-only", "ctx", "decisions/"))
				}
			}
			ids[d.ID] = true
			titles[d.Title]++
			if cv.titles[d.Title] && !cv.statuses[d.Title][d.Status] {
				t.Errorf("%s: decision %q has status %q, never written", c.name, d.Title, d.Status)
			}
		}
		for title := range cv.titles {
			if titles[title] != 1 {
				t.Errorf("%s: decision %q present %d times", c.name, title, titles[title])
			}
		}
		testenv.Git(t, c.dir, "fsck", "--strict", "--no-dangling")
	}
	testenv.Git(t, remote, "fsck", "--strict", "--no-dangling")
	// Usage logs are unions: every record written is there.
	for name, n := range cv.usages {
		// The log's month files (docs/format.md "Layout for growth") and a flat file, if any.
		var out string
		for _, p := range strings.Split(testenv.Git(t, remote, "ls-tree", "-r", "--name-only", "ctx", "skills/"+name+"/"), "\n") {
			if strings.HasPrefix(p, "skills/"+name+"/.usage") {
				part, _ := testenv.GitErr(remote, "show", "ctx:"+p)
				out += part
			}
		}
		if got := strings.Count(strings.TrimSpace(out), "\n") + 1; strings.TrimSpace(out) == "" || got != n {
			t.Errorf("skill %s: %d usage records, %d written", name, got, n)
		}
	}
	t.Logf("convergence: %d conflict records on the branch, %d decisions, %d markers (%d superseded, %d missing)",
		len(records), len(cv.titles), len(cv.written), len(cv.superseded), missing)
}

// TestConflictsCLI drives the conflict commands through the binary: a pull that conflicts (merge commit
// with Ctx-Conflicts: 1), `ctx conflicts` and `--json`, `ctx resolve PATH --theirs` (one commit, record
// gone), `ctx pull --strategy ours` (no record, our version), `ctx sync --strategy theirs`, and a pull with
// a hand edit of .context/ pending (committed first, never lost).
func TestConflictsCLI(t *testing.T) {
	remote := testenv.BareRemote(t)
	a := testenv.Clone(t, remote, "a")
	b := testenv.Clone(t, remote, "b")
	run(t, a, 0, "init", "--no-hooks")
	run(t, a, 0, "knowledge", "set", "arch", "base\n")
	run(t, a, 0, "push")
	run(t, b, 0, "init", "--no-hooks")
	clash := func(key string) {
		run(t, a, 0, "knowledge", "set", key, "A's "+key+"\n")
		run(t, b, 0, "knowledge", "set", key, "B's "+key+"\n")
		run(t, b, 0, "push")
	}
	clash("arch")
	out := run(t, a, 0, "pull")
	if !strings.Contains(out, "(1 conflict)") || !strings.Contains(out, "knowledge/arch.md") {
		t.Fatalf("pull: %s", out)
	}
	if msg := testenv.Git(t, a, "log", "-1", "--format=%B", "ctx"); !strings.Contains(msg, "Ctx-Op: merge") || !strings.Contains(msg, "Ctx-Conflicts: 1") {
		t.Errorf("merge message: %s", msg)
	}
	var recs []struct{ ID, Path, Ours, Theirs, Diff, OursIs string }
	if err := json.Unmarshal([]byte(run(t, a, 0, "conflicts", "--json")), &recs); err != nil || len(recs) != 1 {
		t.Fatalf("conflicts --json: %v %+v", err, recs)
	}
	r := recs[0]
	if !strings.Contains(r.Ours, "A's arch") || !strings.Contains(r.Theirs, "B's arch") || r.Diff == "" {
		t.Errorf("record: %+v", r)
	}
	if txt := run(t, a, 0, "conflicts"); !strings.Contains(txt, r.ID) || !strings.Contains(txt, "-A's arch") || !strings.Contains(txt, "+B's arch") {
		t.Errorf("conflicts: %s", txt)
	}
	run(t, a, 2, "resolve", "knowledge/arch.md")           // no choice: usage
	run(t, a, 3, "resolve", "knowledge/none.md", "--ours") // not found
	before := testenv.Git(t, a, "rev-list", "--count", "ctx")
	run(t, a, 0, "resolve", "knowledge/arch.md", "--theirs")
	if after := testenv.Git(t, a, "rev-list", "--count", "ctx"); after == before {
		t.Errorf("resolve made no commit")
	}
	if got := run(t, a, 0, "knowledge", "get", "arch"); got != "B's arch\n\n" {
		t.Errorf("after resolve --theirs: %q", got)
	}
	if got := run(t, a, 0, "conflicts", "--json"); strings.TrimSpace(got) != "[]" {
		t.Errorf("conflicts after resolve: %s", got)
	}
	run(t, a, 0, "push")
	run(t, b, 0, "pull")

	// --strategy ours on pull: our version in the merge commit, no record.
	clash("deploy")
	out = run(t, a, 0, "pull", "--strategy", "ours")
	if !strings.Contains(out, "(0 conflicts)") || !strings.Contains(out, "decided") {
		t.Errorf("pull --strategy ours: %s", out)
	}
	if got := run(t, a, 0, "knowledge", "get", "deploy"); got != "A's deploy\n\n" {
		t.Errorf("--strategy ours kept %q", got)
	}
	if ls := testenv.Git(t, a, "ls-tree", "--name-only", "ctx", "conflicts/"); ls != "" {
		t.Errorf("records after --strategy: %s", ls)
	}
	run(t, a, 2, "pull", "--strategy", "mine")
	run(t, a, 0, "push")
	run(t, b, 0, "pull")

	// --strategy theirs on sync, with a hand edit of .context/ pending on the pulling side.
	clash("testing")
	hand := filepath.Join(a, ".context", "knowledge", "hand.md")
	if err := os.WriteFile(hand, []byte("typed by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = run(t, a, 0, "sync", "--strategy", "theirs")
	if !strings.Contains(out, "recorded 1 hand edit ") {
		t.Errorf("sync: %s", out)
	}
	if got := run(t, a, 0, "knowledge", "get", "testing"); got != "B's testing\n\n" {
		t.Errorf("--strategy theirs kept %q", got)
	}
	run(t, b, 0, "pull")
	if got := run(t, b, 0, "knowledge", "get", "hand"); got != "typed by hand\n" {
		t.Errorf("the hand edit reached B as %q", got)
	}
	for _, dir := range []string{a, b, remote} {
		testenv.Git(t, dir, "fsck", "--strict", "--no-dangling")
	}
}
