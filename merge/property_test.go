package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// Properties of docs/merge.md, checked over generated inputs and by the fuzz
// targets FuzzLines and FuzzTree:
//   - merge(b, x, x) = x and merge(b, b, y) = y;
//   - merge(b, x, y) and merge(b, y, x) give the same result;
//   - every non-conflicting change of either side is in the result (a skill's SKILL.md that one side
//     removed is kept, as a conflict, when the other side changed its folder);
//   - nothing is dropped silently: a file either side added or changed is in
//     the result (or was renumbered, with a Note);
//   - no input panics; no conflict markers are ever written.

// checkInvariants checks what must hold for any merge result.
func checkInvariants(t testing.TB, base, ours, theirs Files, r Result) {
	t.Helper()
	renumbered := false
	renamed := map[string]bool{} // both paths of a rename followed
	for _, n := range r.Notes {
		if strings.HasPrefix(n.Kind, "renumbered") {
			renumbered = true
		}
		if _, ok := skillMD(n.Path); ok && n.Kind == "delete-vs-edit" {
			// A skill kept against its removal because the other side changed its folder: the delete is a
			// conflict's lost version (skillfolder.go).
			renamed[n.Path] = true
		}
		if n.Kind == "renamed" {
			renamed[n.Path] = true
			from, _, _ := strings.Cut(strings.TrimPrefix(n.Message, "renamed from "), " ")
			renamed[from] = true
		}
	}
	for _, side := range []Files{ours, theirs} {
		for p, c := range side {
			if b, ok := base[p]; ok && bytes.Equal(b, c) {
				continue
			}
			if _, ok := r.Files[p]; !ok && !(renumbered && strings.HasPrefix(p, "decisions/")) && !renamed[p] {
				t.Errorf("%s changed on one side but missing from the result", p)
			}
		}
	}
	paths := map[string]bool{}
	for _, f := range []Files{base, ours, theirs} {
		for p := range f {
			paths[p] = true
		}
	}
	for p := range paths {
		if renumbered && strings.HasPrefix(p, "decisions/") || renamed[p] {
			continue
		}
		b, bok := base[p]
		o, ook := ours[p]
		th, tok := theirs[p]
		got, gok := r.Files[p]
		if same(b, bok, o, ook) && !same(got, gok, th, tok) {
			t.Errorf("%s: only theirs changed but the result is not theirs", p)
		}
		if same(b, bok, th, tok) && !same(got, gok, o, ook) {
			t.Errorf("%s: only ours changed but the result is not ours", p)
		}
	}
	seen := map[string]bool{}
	for _, c := range r.Conflicts {
		if seen[c.Path] {
			t.Errorf("two conflicts for %s", c.Path)
		}
		seen[c.Path] = true
		if !bytes.Equal(r.Files[c.Path], c.Kept) {
			t.Errorf("%s: Kept is not the merged file", c.Path)
		}
		if !bytes.Equal(r.Files[c.RecordPath()], c.Record()) {
			t.Errorf("%s: record missing", c.RecordPath())
		}
		if !c.LostDeleted && bytes.Equal(c.Kept, c.Lost) {
			t.Errorf("%s: conflict with Kept == Lost", c.Path)
		}
	}
}

// checkProperties runs Tree both ways and the identity properties.
func checkProperties(t testing.TB, base, ours, theirs Files) {
	t.Helper()
	r1 := Tree(base, ours, theirs)
	r2 := Tree(base, theirs, ours)
	if !reflect.DeepEqual(r1.Files, r2.Files) || !reflect.DeepEqual(r1.Conflicts, r2.Conflicts) || !reflect.DeepEqual(r1.Notes, r2.Notes) {
		t.Fatalf("result depends on which side is ours:\n%s\n---- swapped:\n%s", dump(r1), dump(r2))
	}
	for p, c := range r1.Files {
		if bytes.Contains(c, []byte("<<<<<<<")) && !bytes.Contains(ours[p], []byte("<<<<<<<")) && !bytes.Contains(theirs[p], []byte("<<<<<<<")) {
			t.Fatalf("conflict markers written in %s", p)
		}
	}
	// The path-by-path invariants hold over the sides as the merge sees them: one layout per entry
	// (canonicalize, docs/merge.md "Two layouts, one entry").
	cb, co, ct := canonicalize(base, ours, theirs)
	checkInvariants(t, cb, co, ct, r1)
	for _, x := range []Files{ours, theirs} {
		if r := Tree(base, x, x); !reflect.DeepEqual(r.Files, x) || len(r.Conflicts)+len(r.Notes) != 0 {
			t.Fatalf("merge(b, x, x) != x:\n%s", dump(r))
		}
		if r := Tree(base, base, x); !reflect.DeepEqual(r.Files, x) || len(r.Conflicts)+len(r.Notes) != 0 {
			t.Fatalf("merge(b, b, y) != y:\n%s", dump(r))
		}
		if r := Tree(base, x, base); !reflect.DeepEqual(r.Files, x) || len(r.Conflicts)+len(r.Notes) != 0 {
			t.Fatalf("merge(b, x, b) != x:\n%s", dump(r))
		}
	}
}

// gen builds random but realistic stores.
type gen struct{ r *rand.Rand }

func (g gen) word() string {
	words := []string{"git", "merge", "store", "agent", "context", "branch", "ctx", "pull", "push", "lock", "日志", "résumé"}
	return words[g.r.Intn(len(words))]
}

func (g gen) line() string {
	n := 1 + g.r.Intn(5)
	var w []string
	for range n {
		w = append(w, g.word())
	}
	return strings.Join(w, " ") + fmt.Sprintf(" %d\n", g.r.Intn(1000))
}

func (g gen) stamp() string {
	return fmt.Sprintf("2026-11-%02dT%02d:00:00Z", 1+g.r.Intn(28), g.r.Intn(24))
}

func (g gen) body() string {
	var b strings.Builder
	b.WriteString("# Title\n\n")
	for range 3 + g.r.Intn(10) {
		b.WriteString(g.line())
	}
	return b.String()
}

// editText changes, inserts or deletes a few lines.
func (g gen) editText(s string) string {
	lines := splitLines(s)
	for range 1 + g.r.Intn(3) {
		if len(lines) == 0 {
			lines = append(lines, g.line())
			continue
		}
		i := g.r.Intn(len(lines))
		switch g.r.Intn(3) {
		case 0:
			lines[i] = g.line()
		case 1:
			lines = append(lines[:i], append([]string{g.line()}, lines[i:]...)...)
		default:
			lines = append(lines[:i], lines[i+1:]...)
		}
	}
	return strings.Join(lines, "")
}

func (g gen) record() map[string]any {
	m := map[string]any{"updated_at": g.stamp(), "task": g.word()}
	for range g.r.Intn(4) {
		m[g.word()] = g.r.Intn(5)
	}
	if g.r.Intn(2) == 0 {
		m["nested"] = map[string]any{"a": g.word(), "b": g.r.Intn(3)}
	}
	return m
}

func jsonRecord(m map[string]any) string {
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b) + "\n"
}

func (g gen) editRecord(s string) string {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return s
	}
	m["updated_at"] = g.stamp()
	switch g.r.Intn(3) {
	case 0:
		m[g.word()] = g.word()
	case 1:
		delete(m, "task")
	default:
		if n, ok := m["nested"].(map[string]any); ok {
			n[g.word()] = g.r.Intn(9)
		} else {
			m["task"] = g.word()
		}
	}
	return jsonRecord(m)
}

func (g gen) store() Files {
	f := Files{}
	for i := range 6 {
		f[fmt.Sprintf("knowledge/k%d.md", i)] = []byte(kn(g.stamp(), g.body()))
	}
	f["skills/s/SKILL.md"] = []byte("---\nname: s\ndescription: " + g.word() + "\n---\n" + g.body())
	f["state.json"] = []byte(jsonRecord(g.record()))
	f["history/h1.json"] = []byte(jsonRecord(g.record()))
	f["skills/s/.feedback.ndjson"] = []byte(`{"id":"a","timestamp":"2026-11-01T00:00:00Z","rating":3}` + "\n")
	f["decisions/0001-first.md"] = []byte(adr(1, "u1", g.stamp(), "First", "[]", "0", g.body()))
	f["notes.txt"] = []byte(g.body())
	return f
}

func (g gen) mutate(base Files, tag string) Files {
	f := copyFiles(base)
	for p, c := range base {
		if g.r.Intn(3) != 0 {
			continue
		}
		switch kindOf(p) {
		case kindJSON:
			f[p] = []byte(g.editRecord(string(c)))
		case kindNDJSON:
			f[p] = append(append([]byte{}, c...), fmt.Sprintf(`{"id":"%s%d","timestamp":"%s","rating":%d}`+"\n", tag, g.r.Intn(3), g.stamp(), g.r.Intn(5))...)
		case kindMarkdown:
			d, _ := parseMD(c)
			if _, ok := d.chunks["updated_at"]; ok {
				setChunk(&d, "updated_at", g.stamp())
			}
			d.body = g.editText(d.body)
			f[p] = d.render()
		default:
			f[p] = []byte(g.editText(string(c)))
		}
		if g.r.Intn(10) == 0 {
			delete(f, p)
		}
	}
	if g.r.Intn(2) == 0 {
		f["knowledge/new-"+g.word()+".md"] = []byte(kn(g.stamp(), g.body()))
	}
	if g.r.Intn(2) == 0 {
		f["history/"+tag+".json"] = []byte(jsonRecord(g.record()))
	}
	if g.r.Intn(4) == 0 {
		// This side migrated to the date-sharded layout (docs/format.md "Layout for growth").
		for p, c := range f {
			if id, ok := SessionID(p); ok && p == "history/"+id+".json" {
				delete(f, p)
				f[SessionPath(id, "2026-11-01T00:00:00Z", true)] = c
			}
			if d, l, ok := logFlat(p); ok {
				months, residue := SplitLog(c)
				for m, lines := range months {
					f[LogMonthPath(d, l, m)] = lines
				}
				delete(f, p)
				if residue != nil {
					f[p] = residue
				}
			}
		}
	}
	if g.r.Intn(2) == 0 {
		f[fmt.Sprintf("decisions/0002-%s.md", tag)] = []byte(adr(2, "u-"+tag+fmt.Sprint(g.r.Intn(9)), g.stamp(), tag, "[1]", "0", g.body()))
	}
	return f
}

// TestPropertiesGenerated checks every property on propSeeds generated merges (100 in make test, 300
// under make stress).
func TestPropertiesGenerated(t *testing.T) {
	for seed := range int64(propSeeds) {
		g := gen{rand.New(rand.NewSource(seed))}
		base := g.store()
		ours := g.mutate(base, "ours")
		theirs := g.mutate(base, "theirs")
		ok := t.Run(fmt.Sprint(seed), func(t *testing.T) { checkProperties(t, base, ours, theirs) })
		if !ok {
			break
		}
	}
}

// TestLinesDisjointChanges: changes of the two sides on distinct lines
// (interleaved, adjacent) all appear in the result, with no conflict.
func TestLinesDisjointChanges(t *testing.T) {
	for seed := range int64(200) {
		r := rand.New(rand.NewSource(seed))
		n := 1 + r.Intn(40)
		var base, a, b, want []string
		prev := 0 // side of the previous line's change
		for i := range n {
			l := fmt.Sprintf("line %d\n", i)
			base = append(base, l)
			// Side of the change: 0 none, 1 a, 2 b; kind: edit, delete, insert before.
			side, kind := r.Intn(3), r.Intn(3)
			if side != 0 && side == prev {
				side = 0 // keep each side's hunks separate so nothing overlaps
			}
			prev = side
			mod := fmt.Sprintf("side%d edit %d\n", side, i)
			var got []string
			switch {
			case side == 0:
				got = []string{l}
			case kind == 0:
				got = []string{mod}
			case kind == 1:
				got = nil
			default:
				got = []string{mod, l}
			}
			want = append(want, got...)
			switch side {
			case 0:
				a, b = append(a, l), append(b, l)
			case 1:
				a, b = append(a, got...), append(b, l)
			case 2:
				a, b = append(a, l), append(b, got...)
			}
		}
		j := strings.Join
		got, c := Lines([]byte(j(base, "")), []byte(j(a, "")), []byte(j(b, "")))
		if c || string(got) != j(want, "") {
			t.Fatalf("seed %d: Lines = %q (conflict %v)\nwant %q\nbase %q\na %q\nb %q", seed, got, c, j(want, ""), j(base, ""), j(a, ""), j(b, ""))
		}
	}
}

// TestRecordDisjointFields: fields changed on one side only all appear in
// the merged record.
func TestRecordDisjointFields(t *testing.T) {
	for seed := range int64(200) {
		g := gen{rand.New(rand.NewSource(seed))}
		base := map[string]any{}
		for i := range 12 {
			base[fmt.Sprintf("f%d", i)] = g.word()
		}
		a, b, want := map[string]any{}, map[string]any{}, map[string]any{}
		for k, v := range base {
			a[k], b[k], want[k] = v, v, v
		}
		for i := range 12 {
			k := fmt.Sprintf("f%d", i)
			switch g.r.Intn(4) {
			case 1:
				a[k] = "a-" + g.word()
				want[k] = a[k]
			case 2:
				b[k] = "b-" + g.word()
				want[k] = b[k]
			case 3:
				delete(a, k)
				delete(want, k)
			}
		}
		a["added_a"], b["added_b"] = 1.0, 2.0
		want["added_a"], want["added_b"] = 1.0, 2.0
		r := treeBoth(t, Files{"state.json": []byte(jsonRecord(base))}, Files{"state.json": []byte(jsonRecord(a))}, Files{"state.json": []byte(jsonRecord(b))})
		var got map[string]any
		if err := json.Unmarshal(r.Files["state.json"], &got); err != nil || !reflect.DeepEqual(got, want) || len(r.Conflicts) != 0 {
			t.Fatalf("seed %d: got %v, want %v (%v)", seed, got, want, r.Conflicts)
		}
	}
}

func fuzzSeeds() [][3]string {
	k := kn("2026-01-01T00:00:00Z", body5)
	return [][3]string{
		{"", "", ""},
		{k, strings.Replace(k, "line 1", "x", 1), strings.Replace(k, "line 5", "y", 1)},
		{k, strings.Replace(k, "line 3", "x", 1), strings.Replace(k, "line 3", "y", 1)},
		{"a\r\nb\r\n", "a\r\nB\r\n", "A\r\nb"},
		{"a\nb", "a\nb\nc", "z"},
		{"---\n: : :\n---\n", "---\nkey: [unclosed\n---\nbody", "---\nkey: v\nkey: w\n---\n"},
		{`{"a":1,"b":{"c":2}}`, `{"a":2,"b":{"c":2}}`, `{"a":1,"b":{"c":3},"d":[1,2]}`},
		{`{"a":1}`, `{"a":`, `[1,2,3]`},
		{`{"id":"1","timestamp":"x"}` + "\n", `{"id":"1","timestamp":"y"}` + "\n" + `{"id":"2"}`, "not json\n\n{}\n"},
		{"\x00\xff\xfe", "\x00\xff", "\xff\xfe\x00"},
		{adr(3, "u", "2026-01-01T00:00:00Z", "T", "[1]", "0", "b\n"), adr(3, "v", "2026-01-02T00:00:00Z", "T", "[1]", "0", "c\n"), adr(3, "w", "2026-01-01T00:00:00Z", "T", "[2]", "3", "d\n")},
	}
}

func FuzzLines(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		m1, c1 := Lines(base, ours, theirs)
		m2, c2 := Lines(base, theirs, ours)
		if !bytes.Equal(m1, m2) || c1 != c2 {
			t.Fatalf("not symmetric: %q %v / %q %v", m1, c1, m2, c2)
		}
		if m, c := Lines(base, ours, ours); !bytes.Equal(m, ours) || c {
			t.Fatalf("Lines(b, x, x) = %q, %v", m, c)
		}
		if m, c := Lines(base, base, theirs); !bytes.Equal(m, theirs) || c {
			t.Fatalf("Lines(b, b, y) = %q, %v", m, c)
		}
		if m, c := Lines(base, ours, base); !bytes.Equal(m, ours) || c {
			t.Fatalf("Lines(b, x, b) = %q, %v", m, c)
		}
		// Without conflict, kept and lost agree.
		k, l, n := merge3(base, ours, theirs)
		if n == 0 && !bytes.Equal(k, l) {
			t.Fatalf("no conflict but kept %q != lost %q", k, l)
		}
	})
}

// fuzzPaths puts the fuzzed contents at paths of every kind.
var fuzzPaths = []string{
	"knowledge/k.md", "decisions/0003-x.md", "skills/s/SKILL.md", "state.json",
	"activity/ada/a--m.json", "skills/s/.feedback.ndjson", "notes.bin",
}

func FuzzTree(f *testing.F) {
	for i, s := range fuzzSeeds() {
		f.Add(uint8(i), []byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	f.Fuzz(runFuzzTree)
}

func runFuzzTree(t *testing.T, sel uint8, base, ours, theirs []byte) {
	{
		b, o, th := Files{}, Files{}, Files{}
		for i, p := range fuzzPaths {
			if sel&1 == 0 || i%2 == 0 {
				b[p] = base
			}
			if sel&2 == 0 || i%3 == 0 {
				o[p] = ours
			}
			if sel&4 == 0 || i%3 == 1 {
				th[p] = theirs
			}
		}
		if sel&8 != 0 {
			// A second decision number on both sides, made unique per side.
			o["decisions/0003-ours.md"] = append([]byte("---\nid: 3\nuid: o\n---\n"), ours...)
			th["decisions/0003-theirs.md"] = append([]byte("---\nid: 3\nuid: t\n---\n"), theirs...)
		}
		checkProperties(t, b, o, th)
	}
}
