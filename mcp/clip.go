package mcp

import (
	"fmt"
	"slices"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Clipping events that cannot fit one response (docs/mcp.md "History read tools", "Paging"). An event of
// the index holds up to history.MaxTextBytes of text and as much of a tool's input and output (and its
// facts' values, a command line, are not bounded): more than
// the 1 MiB response limit together, and more than it alone once escaped and repeated as text. Failing
// such an event with output_limit_exceeded would stop every cursor before it for good (show_session has
// no smaller projection), so a result that cannot fit otherwise is sent with its events' long fields cut,
// each cut field ending in clipMarker and its event saying so in `clipped`: never silently.

// clipNote is the `clipped` field of an event row whose long fields were cut to fit the response.
type clipNote struct {
	// Fields are the cut fields ("text", "tool.input", "tool.output", "facts": values of facts);
	// OmittedBytes how many bytes of them the row leaves out in all.
	Fields       []string `json:"fields"`
	OmittedBytes int      `json:"omitted_bytes"`
	// Full is the command that prints the whole event.
	Full string `json:"full"`
}

// clipMarker ends a cut field: how much was left out, why, and how to read the whole event.
const clipMarker = "\n[… %d bytes cut to fit the MCP response limit: `%s` prints the whole event]"

// fullEventCommand is the CLI command that prints event id whole.
func fullEventCommand(id string) string { return "ctx show event " + id + " --json" }

// clipField is one long string field of an event row that may be cut, with the row's note and event id.
type clipField struct {
	s    *string
	name string
	note **clipNote
	id   string
}

// clipper gathers the fields of the event rows of one result that clipping may cut.
type clipper struct{ fields []clipField }

// row returns a copy of row (a historyEvent or a textEvent; anything else is returned as it is) whose
// long fields the clipper may cut; the copy has its own tool, so row stays whole.
func (c *clipper) row(row any) any {
	switch r := row.(type) {
	case historyEvent:
		c.event(&r)
		return &r
	case textEvent:
		c.fields = append(c.fields, clipField{&r.Text, "text", &r.Clipped, r.ID})
		return &r
	}
	return row
}

// event adds the long fields of e (a copy the caller owns) to the clipper, giving e its own tool.
func (c *clipper) event(e *historyEvent) {
	c.fields = append(c.fields, clipField{&e.Text, "text", &e.Clipped, e.ID})
	if e.Tool != nil {
		t := *e.Tool
		e.Tool = &t
		c.fields = append(c.fields, clipField{&t.Input, "tool.input", &e.Clipped, e.ID},
			clipField{&t.Output, "tool.output", &e.Clipped, e.ID})
	}
	if len(e.Facts) > 0 { // a command line is kept whole by the import
		e.Facts = slices.Clone(e.Facts)
		for i := range e.Facts {
			c.fields = append(c.fields, clipField{&e.Facts[i].Value, "facts", &e.Clipped, e.ID})
		}
	}
}

// events is c.event on a copy of each of evs.
func (c *clipper) events(evs []historyEvent) []historyEvent {
	out := slices.Clone(evs)
	for i := range out {
		c.event(&out[i])
	}
	return out
}

// cut cuts the fields so that their lengths add up to at most budget bytes (their markers apart): the
// shortest keep all they hold, the longest share the rest equally (each cut at a rune boundary and
// ended by clipMarker). It reports whether it cut any.
func (c *clipper) cut(budget int) bool {
	order := make([]int, len(c.fields))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(*c.fields[a].s) - len(*c.fields[b].s) })
	cut := false
	for n, i := range order {
		f := c.fields[i]
		share := max(budget/(len(order)-n), 0)
		if len(*f.s) <= share {
			budget -= len(*f.s)
			continue
		}
		end := share
		for end > 0 && (*f.s)[end]&0xC0 == 0x80 {
			end--
		}
		omitted := len(*f.s) - end
		*f.s = (*f.s)[:end] + fmt.Sprintf(clipMarker, omitted, fullEventCommand(f.id))
		if *f.note == nil {
			*f.note = &clipNote{Full: fullEventCommand(f.id)}
		}
		if !slices.Contains((*f.note).Fields, f.name) {
			(*f.note).Fields = append((*f.note).Fields, f.name)
		}
		(*f.note).OmittedBytes += omitted
		budget -= end
		cut = true
	}
	return cut
}

// clippable is a result that can be rendered with its events' long fields cut: clip(budget) is the
// result whose clipper cut them to budget bytes in all (clipper.cut), and whether it cut any.
type clippable interface {
	clip(budget int) (any, bool)
}

// fitClipped renders the result clip makes, with the largest budget (within a few percent) whose
// response, structuredContent and its copy as text, fits maxResponseBytes; output_limit_exceeded when
// even one without any text of its events does not fit (the rest of the result alone is too large).
func fitClipped(name string, clip func(budget int) (any, bool)) (*mcpgo.CallToolResult, error) {
	encode := func(budget int) (*mcpgo.CallToolResult, int, error) {
		v, _ := clip(budget)
		res, size, err := render(v)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: encode result: %w", name, err)
		}
		return res, size, nil
	}
	// The rest of the result: every long field cut to nothing (its marker alone).
	res, base, err := encode(0)
	if err != nil || base > maxResponseBytes {
		if err == nil {
			res = codedResult(codeOutputLimit, fmt.Sprintf("the result is %d bytes without its events' text, over "+
				"the %d-byte response limit", base, maxResponseBytes))
		}
		return res, err
	}
	// The text is there twice (structuredContent and the text block): half the room left, less a margin
	// for the markers' longer counts.
	budget := (maxResponseBytes - base) / 2 * 99 / 100
	for range 8 {
		r, size, err := encode(budget)
		if err != nil {
			return nil, err
		}
		if size <= maxResponseBytes {
			return r, nil
		}
		// Escaping (JSON, and JSON again in the text block) makes a field longer than its bytes: aim
		// lower by the ratio seen.
		next := int(int64(budget) * int64(maxResponseBytes-base) / int64(size-base) * 97 / 100)
		budget = max(min(next, budget-1), 0)
	}
	return res, nil // the fields cut to nothing
}
