package mcp

import (
	"context"
	"fmt"
	"github.com/ctx-dev/ctx/internal/fairshare"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/store"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Fitting resources into the MCP response limit (docs/limits.md).

// shrinker is a resource value that can render itself within about room bytes of JSON: it returns the
// value to serve and a note saying what was left out ("" when nothing was).
type shrinker interface {
	shrink(room int) (v any, note string)
}

// fitContents renders out as the contents of uri within maxResponseBytes. A value that does not fit is
// shrunk: a shrinker by its own rule, any other list by leaving out its last items; a note on what was
// left out becomes a second, text/plain item. A value that cannot be shrunk to fit is an
// output_limit_exceeded error.
func fitContents(uri string, out any) ([]mcpgo.ResourceContents, error) {
	build := func(v any, note string) ([]mcpgo.ResourceContents, int, error) {
		b, err := store.MarshalRecord(v)
		if err != nil {
			return nil, 0, fmt.Errorf("encode %s: %w", uri, err)
		}
		c := jsonContents(uri, b)
		if note != "" {
			c = append(c, mcpgo.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: note})
		}
		size, err := resourceResponseSize(c)
		return c, size, err
	}
	sh, ok := out.(shrinker)
	if !ok {
		c, size, err := build(out, "")
		if err != nil || size <= maxResponseBytes {
			return c, err
		}
		rv := reflect.ValueOf(out)
		if rv.Kind() != reflect.Slice || rv.Len() < 2 {
			return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte MCP response limit", errOutputLimit,
				uri, size, maxResponseBytes)
		}
		sh = sliceShrinker{rv: rv, uri: uri}
	}
	room := maxResponseBytes - responseEnvelope
	for range 12 {
		v, note := sh.shrink(room)
		c, size, err := build(v, note)
		if err != nil {
			return nil, err
		}
		if size <= maxResponseBytes {
			return c, nil
		}
		// JSON escaping (twice: the resource's text is a JSON string of the response) makes the size
		// larger than the room the value aimed at: aim lower by the ratio seen.
		next := int(int64(room) * int64(maxResponseBytes-responseEnvelope) / int64(size) * 97 / 100)
		if next >= room {
			next = room - room/10
		}
		if next <= 0 {
			break
		}
		room = next
	}
	return nil, fmt.Errorf("%w: %s cannot be shortened to fit the %d-byte MCP response limit", errOutputLimit,
		uri, maxResponseBytes)
}

// sliceShrinker keeps the first items of a list that fit room bytes.
type sliceShrinker struct {
	rv  reflect.Value
	uri string
}

func (s sliceShrinker) shrink(room int) (any, string) {
	n := s.rv.Len()
	size := func(k int) int {
		b, _ := store.MarshalRecord(s.rv.Slice(0, k).Interface())
		return len(b)
	}
	lo, hi := 0, n // the largest k whose raw JSON fits room
	for lo < hi {
		k := (lo + hi + 1) / 2
		if size(k) <= room {
			lo = k
		} else {
			hi = k - 1
		}
	}
	if lo == n {
		return s.rv.Interface(), ""
	}
	return s.rv.Slice(0, lo).Interface(), fmt.Sprintf("[truncated: showing the first %d of %d items of %s, "+
		"the most one MCP response (%d bytes) holds; read single items through the resource templates "+
		"or use the search tool]", lo, n, s.uri, maxResponseBytes)
}

// entryList is context://knowledge or context://conventions as loaded by listEntries: each entry's
// content, or its beginning when the file was too large to load whole.
type entryList struct {
	kind  store.Kind
	uri   string // context://knowledge
	items []loadedEntry
}

type loadedEntry struct {
	entryItem
	full int // bytes of the whole content
}

// fmSlack is how much more than an entry's share loadEntries reads, for its front matter.
const fmSlack = 64 << 10

// listEntries loads the entries of a kind for its list resource ([{key, content, scope}],
// every scope, by key) without loading more of each file than the response can carry: the sizes are read
// first, each entry gets a share of the response limit by max-min fairness (entries smaller than an equal
// share are loaded whole), and only that much of a larger entry is read (loadEntries).
func (s *srv) listEntries(ctx context.Context, v *store.View, k store.Kind) (*entryList, error) {
	es, err := loadEntries(ctx, v, k, func(sizes []int) []int { return fairshare.Split(sizes, maxResponseBytes) })
	if err != nil {
		return nil, err
	}
	out := &entryList{kind: k, uri: scheme + k.Dir, items: make([]loadedEntry, 0, len(es))}
	for _, e := range es {
		out.items = append(out.items, loadedEntry{entryItem{e.Key, e.Content, e.Scope}, e.full})
	}
	return out, nil
}

// partEntry is an entry whose Content may be only the beginning of its content: full is the length of
// the whole content in bytes.
type partEntry struct {
	store.Entry
	full int
}

// loadEntries reads every entry of a kind (every scope, by key) like store.ListEntries, but no more of
// each file than share allows: share gets the files' sizes and returns how many bytes of content to keep
// of each. A larger file is read up to its share plus fmSlack (for its
// front matter); a file whose front matter does not end within that is shown from its first byte.
func loadEntries(ctx context.Context, v *store.View, k store.Kind, share func(sizes []int) []int) ([]partEntry, error) {
	return loadEntriesOf(ctx, v, k, nil, share)
}

// loadEntriesOf is loadEntries of the entries whose key keep accepts (nil: every entry).
func loadEntriesOf(ctx context.Context, v *store.View, k store.Kind, keep func(key string) bool, share func(sizes []int) []int) ([]partEntry, error) {
	names, err := v.List(ctx, k.Dir)
	if err != nil {
		return nil, err
	}
	type file struct {
		key  string
		sc   store.Scope
		size int64
	}
	var files []file
	var sizes []int
	for _, n := range names {
		key, ok := strings.CutSuffix(n.Name, ".md")
		if n.Dir || !ok || (keep != nil && !keep(key)) {
			continue
		}
		_, size, err := v.ReadPrefix(ctx, n.Scope, k.Dir+"/"+n.Name, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, file{key, n.Scope, size})
		sizes = append(sizes, int(size))
	}
	shares := share(sizes)
	out := make([]partEntry, 0, len(files))
	for i, f := range files {
		want := int64(shares[i])
		if want < f.size {
			want += fmSlack
		}
		b, size, err := v.ReadPrefix(ctx, f.sc, k.Dir+"/"+f.key+".md", want)
		if err != nil {
			return nil, err
		}
		e := store.ParseEntry(f.key, f.sc, b)
		full := len(e.Content) + int(size-int64(len(b)))
		if len(e.Content) > shares[i] {
			e.Content = truncUTF8(e.Content, shares[i]) // keep no more than the share in memory
		}
		out = append(out, partEntry{e, full})
	}
	return out, nil
}

// entryOverhead is the JSON of one list item around its key and content (indented as MarshalRecord does).
const entryOverhead = len("  {\n    \"key\": \"\",\n    \"content\": \"\",\n    \"scope\": \"ephemeral\"\n  },\n")

// truncMarkerMax is the most bytes a truncation marker of an entry takes.
const truncMarkerMax = 160

func (l *entryList) shrink(room int) (any, string) {
	all := make([]entryItem, len(l.items))
	fits := true
	total := 2
	for i, it := range l.items {
		all[i] = it.entryItem
		total += entryOverhead + len(it.Key) + len(it.Content)
		if len(it.Content) < it.full {
			fits = false
		}
	}
	if fits && total <= room {
		return all, ""
	}
	// Room for the contents once every item's key, fields and a possible marker are counted.
	n := len(l.items)
	fixed := 2
	for _, it := range l.items {
		fixed += entryOverhead + 2*len(it.Key) + truncMarkerMax
	}
	for n > 0 && fixed > room {
		n--
		fixed -= entryOverhead + 2*len(l.items[n].Key) + truncMarkerMax
	}
	demand := make([]int, n)
	for i := range n {
		demand[i] = len(l.items[i].Content)
	}
	alloc := fairshare.Split(demand, max(room-fixed, 0))
	items := make([]entryItem, n)
	for i := range n {
		it := l.items[i]
		items[i] = it.entryItem
		if alloc[i] < len(it.Content) || len(it.Content) < it.full {
			cut := truncUTF8(it.Content, alloc[i])
			items[i].Content = cut + l.marker(it, len(cut))
		}
	}
	note := ""
	if n < len(l.items) {
		note = fmt.Sprintf("[truncated: %d more %s entries after %q are not shown, over the %d-byte MCP "+
			"response limit; read one through %s/{key}, or list them with `ctx %s list`]",
			len(l.items)-n, l.kind.Name, l.items[max(n-1, 0)].Key, maxResponseBytes, l.uri, l.kind.Name)
	}
	return items, note
}

// marker is the visible end of a cut entry's content: how much is shown and where the rest is.
func (l *entryList) marker(it loadedEntry, shown int) string {
	where := fmt.Sprintf("read %s/%s", l.uri, it.Key)
	if it.full > maxResponseBytes-truncMarkerMax {
		where = fmt.Sprintf("the entry is over the MCP response limit: `ctx %s get %s` prints it", l.kind.Name, it.Key)
	}
	return fmt.Sprintf("\n\n[truncated: showing %d of %d bytes; %s]", shown, it.full, where)
}

// notedResult is a tool result with a note on what was left out to fit the response limit: the handler
// serves v as structuredContent and its JSON as text, then the note as a second text item.
type notedResult struct {
	v    any
	note string
}

// cutValue is a memory value within the schema's 4,000 characters and at most capBytes bytes: raw whole
// when it fits (and is the whole content: full bytes), else its beginning and a marker saying how much of
// the entry is shown and where the rest is.
func cutValue(key, raw string, full, capBytes int) string {
	if len(raw) == full && len(raw) <= capBytes && utf8.RuneCountInString(raw) <= maxMemoryValue {
		return raw
	}
	marker := func(shown int) string {
		return fmt.Sprintf("\n[truncated: showing %d of %d bytes; read context://knowledge/%s]", shown, full, key)
	}
	longest := marker(full)
	cut := truncate(raw, max(maxMemoryValue-utf8.RuneCountInString(longest), 0))
	cut = truncUTF8(cut, max(capBytes-len(longest), 0))
	return cut + marker(len(cut))
}

// fitProjectContext applies the schema's value cut to get_project_context's memory (fulls: each entry's
// whole content length in bytes) and shrinks the result to the response limit: values share the room
// by max-min fairness, then memory items and pulse items are left out from the end.
func fitProjectContext(out projectContext, fulls []int) (any, error) {
	raw := make([]string, len(out.Memory))
	for i, m := range out.Memory {
		raw[i] = m.Value
	}
	apply := func(caps []int) {
		for i := range out.Memory {
			out.Memory[i].Value = cutValue(out.Memory[i].Key, raw[i], fulls[i], caps[i])
		}
	}
	limit := maxResponseBytes - 512 // the note
	size := func() int {
		_, n, err := render(out)
		if err != nil {
			return maxResponseBytes + 1
		}
		return n
	}
	unlimited := make([]int, len(raw))
	for i := range unlimited {
		unlimited[i] = math.MaxInt
	}
	apply(unlimited)
	if size() <= limit {
		return out, nil
	}
	demand := make([]int, len(raw))
	total := 0
	for i, r := range raw {
		demand[i] = len(truncate(r, maxMemoryValue))
		total += demand[i]
	}
	// Aim the values' room at the limit: the result's text repeats the structured JSON, and JSON escaping
	// widens it, so measure and aim lower by the ratio seen.
	room := total
	for range 12 {
		sz := size()
		if sz <= limit || room == 0 {
			break
		}
		room = max(int(int64(room)*int64(limit)/int64(sz)*95/100)-len(raw)*8, 0)
		apply(fairshare.Split(demand, room))
	}
	droppedMem, droppedPulse := 0, 0
	for size() > limit && len(out.Memory) > 0 {
		n := len(out.Memory) - max(len(out.Memory)/8, 1)
		droppedMem += len(out.Memory) - n
		out.Memory = out.Memory[:n]
	}
	for size() > limit && len(out.Pulse) > 0 {
		n := len(out.Pulse) - max(len(out.Pulse)/8, 1)
		droppedPulse += len(out.Pulse) - n
		out.Pulse = out.Pulse[:n]
	}
	if size() > limit {
		return nil, codedErrorf(codeOutputLimit, "get_project_context: the result does not fit the %d-byte MCP "+
			"response limit", maxResponseBytes)
	}
	note := fmt.Sprintf("[truncated: memory values were cut to fit the %d-byte MCP response limit (each cut value "+
		"ends with a marker naming its context://knowledge/{key} resource)", maxResponseBytes)
	if droppedMem > 0 || droppedPulse > 0 {
		note += fmt.Sprintf("; %d memory items and %d pulse items at the end were left out (read "+
			"context://knowledge and context://activity)", droppedMem, droppedPulse)
	}
	return &notedResult{v: out, note: note + "]"}, nil
}
