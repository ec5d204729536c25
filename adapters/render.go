package adapters

import (
	"fmt"
	"github.com/ctx-dev/ctx/internal/fairshare"
	"strings"

	"github.com/ctx-dev/ctx/importer"
	"github.com/ctx-dev/ctx/store"
)

// DefaultMaxBlock is the most bytes of body a managed block holds (16 KiB) when Options.MaxBlock is 0:
// an instruction file is read whole into the agent's context on every start, so the block carries an
// excerpt and points at the MCP resources for the rest.
const DefaultMaxBlock = 16 << 10

// minBlock is the smallest Options.MaxBlock accepted: room for the header and one marker per section.
const minBlock = 2 << 10

// maxItem is the most bytes one convention or knowledge entry takes in a block or a Cursor rule; a
// longer one is cut with a marker naming its resource.
const maxItem = 4 << 10

// GeneratedMarker starts the body of every Cursor rule ctx writes (after the front matter, which must
// come first for Cursor): import skips such files.
const GeneratedMarker = "<!-- ctx:generated"

const generatedLine = GeneratedMarker + " by `ctx adapters export` from the context branch; edit the context with ctx, not this file -->\n"

// blockHeader is the first line of a block's body.
const blockHeader = "<!-- Written by `ctx adapters export` from the context branch. Do not edit between the ctx markers: " +
	"change the context with ctx (or its MCP tools) and export again. -->\n"

// section is one part of a rendered text: items rendered in order, unit and uri name what a truncation
// marker says ("[truncated: 3 more conventions; read context://conventions]").
type section struct {
	title, unit, uri string
	items            []string
}

// entryItem renders one convention or knowledge entry, cut at maxItem.
func entryItem(uriPrefix string, e store.Entry) string {
	body := strings.TrimRight(e.Content, "\n")
	if len(body) > maxItem {
		cut := cutUTF8(body, maxItem)
		// Both ways to the rest: the MCP resource, and the CLI, which prints an entry of any size (the MCP
		// server refuses one over its response limit, docs/limits.md).
		cmd := "knowledge"
		if strings.Contains(uriPrefix, "conventions") {
			cmd = "convention"
		}
		body = cut + fmt.Sprintf("\n\n[truncated: %d more bytes; read %s%s or run ctx %s get %s]", len(body)-len(cut), uriPrefix, e.Key, cmd, e.Key)
	}
	return fmt.Sprintf("### %s\n\n%s\n\n", e.Key, body)
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

// cutUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// markerRoom is the room kept per section for its truncation marker.
const markerRoom = 96

// fit renders sections after head within limit bytes. Each section gets a share of the room by max-min
// fairness (one smaller than an equal share keeps all its items; the rest is split between the bigger
// ones), so that many conventions cannot push the decisions out. Within a section items are kept in
// order while they fit; the others are counted in a visible "[truncated: ...]" marker. Empty sections
// are left out.
func fit(head string, secs []section, limit int) string {
	var live []section
	for _, s := range secs {
		if len(s.items) > 0 {
			live = append(live, s)
		}
	}
	room := limit - len(head)
	demand := make([]int, len(live))
	for i, s := range live {
		room -= len("## \n\n") + len(s.title) + markerRoom
		for _, it := range s.items {
			demand[i] += len(it)
		}
	}
	alloc := fairshare.Split(demand, max(room, 0))
	var b strings.Builder
	b.WriteString(head)
	for i, s := range live {
		fmt.Fprintf(&b, "## %s\n\n", s.title)
		used, n := 0, 0
		for _, it := range s.items {
			if used+len(it) > alloc[i] {
				break
			}
			b.WriteString(it)
			used += len(it)
			n++
		}
		if more := len(s.items) - n; more > 0 {
			fmt.Fprintf(&b, "[truncated: %d more %s; read %s]\n\n", more, s.unit, s.uri)
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// selfKey is the knowledge key `ctx import` gives the file at path (importer.DeriveKey of its path):
// an entry imported from an instruction file is not written back into that file's own block.
func selfKey(path string) string {
	k, _ := importer.DeriveKey(path)
	return k
}

// blockBody renders the body of the managed block of the instruction file at path: a header, then the
// conventions, knowledge, decisions (number, title, status) and skills (name, description) of c, bounded
// to limit bytes with a "[truncated: ...]" marker per cut section and a pointer to the MCP resources.
func blockBody(c *Content, path string, limit int) string {
	self := selfKey(path)
	conv := section{title: "Conventions", unit: "conventions", uri: "context://conventions"}
	for _, e := range c.Conventions {
		conv.items = append(conv.items, entryItem("context://conventions/", e))
	}
	know := section{title: "Knowledge", unit: "knowledge entries", uri: "context://knowledge"}
	for _, e := range c.Knowledge {
		if e.Key != self {
			know.items = append(know.items, entryItem("context://knowledge/", e))
		}
	}
	dec := decisionsSection(c)
	sk := section{title: "Skills", unit: "skills", uri: "context://skills"}
	for _, s := range c.Skills {
		sk.items = append(sk.items, fmt.Sprintf("- %s: %s\n", s.Name, oneLine(s.Description)))
	}
	if len(sk.items) > 0 {
		sk.items[len(sk.items)-1] += "\n"
	}
	name := oneLine(c.Project)
	if name == "" {
		name = "this project"
	}
	head := blockHeader + "# Team context (ctx)\n\n" + fmt.Sprintf("The shared context of %s, kept by ctx on the git "+
		"branch of its context store, bounded to %d KiB here. The whole of it: the MCP resources context://conventions, "+
		"context://knowledge, context://decisions and context://skills (`ctx mcp serve`), or `ctx export`.\n\n", name, limit>>10)
	if len(conv.items)+len(know.items)+len(dec.items)+len(sk.items) == 0 {
		return head + "(no shared context yet)\n"
	}
	return fit(head, []section{conv, know, dec, sk}, limit)
}

func decisionsSection(c *Content) section {
	dec := section{title: "Decisions", unit: "decisions", uri: "context://decisions"}
	for _, d := range c.Decisions {
		dec.items = append(dec.items, fmt.Sprintf("- %d. %s (%s)\n", d.ID, oneLine(d.Title), d.Status))
	}
	if len(dec.items) > 0 {
		dec.items[len(dec.items)-1] += "\n"
	}
	return dec
}

// rule is one Cursor rule file ctx writes.
type rule struct {
	name string // file name, ctx-*.mdc
	data []byte
}

// cursorRules renders the Cursor rules of c (docs/adapters.md "Cursor rules"): ctx-conventions.mdc
// (alwaysApply: true), ctx-knowledge.mdc and ctx-decisions.mdc (alwaysApply: false: the agent reads them
// when their description fits the task). Each has the front matter Cursor reads (description, globs,
// alwaysApply), then GeneratedMarker, and is bounded to limit bytes. A section with nothing in it has no
// file. Knowledge imported from Cursor's own rules (keys cursor-rules-*) is not written back.
func cursorRules(c *Content, limit int) []rule {
	var out []rule
	add := func(name, desc string, always bool, s section) {
		if len(s.items) == 0 {
			return
		}
		fm := fmt.Sprintf("---\ndescription: %s\nglobs:\nalwaysApply: %t\n---\n", desc, always)
		out = append(out, rule{name: name, data: []byte(fit(fm+generatedLine+"\n", []section{s}, limit))})
	}
	conv := section{title: "Conventions", unit: "conventions", uri: "context://conventions"}
	for _, e := range c.Conventions {
		conv.items = append(conv.items, entryItem("context://conventions/", e))
	}
	know := section{title: "Knowledge", unit: "knowledge entries", uri: "context://knowledge"}
	for _, e := range c.Knowledge {
		if !strings.HasPrefix(e.Key, "cursor-rules-") {
			know.items = append(know.items, entryItem("context://knowledge/", e))
		}
	}
	add("ctx-conventions.mdc", "Team conventions of this project, kept by ctx on the context branch", true, conv)
	add("ctx-knowledge.mdc", "Team knowledge of this project (architecture, how things work), kept by ctx on the context branch", false, know)
	add("ctx-decisions.mdc", "Architecture decisions of this project and their status, kept by ctx on the context branch", false, decisionsSection(c))
	return out
}
