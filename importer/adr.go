package importer

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/ctx-dev/ctx/internal/mdfence"
)

// Status words of a decision, as docs/format.md "Decisions" lists them.
const (
	StatusProposed   = "proposed"
	StatusAccepted   = "accepted"
	StatusDeprecated = "deprecated"
	StatusSuperseded = "superseded"
	StatusRejected   = "rejected"
)

// statusWords maps status words found in real ADRs (lower-cased) to the four statuses of
// docs/format.md. The English words come from MADR, Nygard/adr-tools, log4brains and interchain-security
// ADRs; the Chinese ones from phodal/adr, whose status legend is 提议/通过/完成/已弃用/已取代
// (proposed/accepted/done/deprecated/superseded). "Done"-like words (完成, implemented) mean the decision
// was accepted and carried out, so they read as accepted. MADR's "rejected" (and "declined") is a status of
// its own. Words not listed here ("on hold", ...) leave the status empty and keep the word in StatusText.
var statusWords = map[string]string{
	"accepted": StatusAccepted, "accept": StatusAccepted, "approved": StatusAccepted,
	"adopted": StatusAccepted, "agreed": StatusAccepted, "decided": StatusAccepted,
	"implemented": StatusAccepted, "done": StatusAccepted, "completed": StatusAccepted,
	"通过": StatusAccepted, "已通过": StatusAccepted, "接受": StatusAccepted, "已接受": StatusAccepted,
	"采纳": StatusAccepted, "已采纳": StatusAccepted, "批准": StatusAccepted, "已批准": StatusAccepted,
	"完成": StatusAccepted, "已完成": StatusAccepted,

	"proposed": StatusProposed, "proposal": StatusProposed, "draft": StatusProposed,
	"rfc": StatusProposed, "pending": StatusProposed, "open": StatusProposed,
	"提议": StatusProposed, "提案": StatusProposed, "草稿": StatusProposed, "建议": StatusProposed,

	"deprecated": StatusDeprecated, "obsolete": StatusDeprecated, "retired": StatusDeprecated,
	"废弃": StatusDeprecated, "已废弃": StatusDeprecated, "弃用": StatusDeprecated, "已弃用": StatusDeprecated,

	"superseded": StatusSuperseded, "replaced": StatusSuperseded,
	"替代": StatusSuperseded, "已替代": StatusSuperseded, "取代": StatusSuperseded, "已取代": StatusSuperseded,
	"被取代": StatusSuperseded, "被替代": StatusSuperseded,

	"rejected": StatusRejected, "declined": StatusRejected, "refused": StatusRejected,
	"拒绝": StatusRejected, "已拒绝": StatusRejected, "否决": StatusRejected, "已否决": StatusRejected,
}

// NormalizeStatus maps a status as written in an ADR to one of the statuses of docs/format.md
// ("proposed", "accepted", "deprecated", "superseded", "rejected"). It looks up the leading word (lower-cased, with
// markdown emphasis and list bullets removed), then the whole text, in the table documented on
// statusWords. text is the original wording, trimmed, when it is not simply the status itself (it becomes
// status_text on the branch): NormalizeStatus("Accepted") = ("accepted", ""), NormalizeStatus("draft") =
// ("proposed", "draft"), NormalizeStatus("superseded by [x](x.md)") = ("superseded", "superseded by
// [x](x.md)"), NormalizeStatus("Rejected") = ("rejected", ""). A decision "partially superseded" (or
// "partly") is still in force: NormalizeStatus("Partially Superseded by ADR-0028") = ("accepted",
// "Partially Superseded by ADR-0028"). known is false when the word is not in the table (status is then
// "").
func NormalizeStatus(raw string) (status, text string, known bool) {
	clean := cleanInline(raw)
	if clean == "" {
		return "", "", false
	}
	lower := strings.ToLower(clean)
	word := lower
	if i := strings.IndexFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) }); i > 0 {
		word = lower[:i]
	}
	if partial.Get().MatchString(lower) {
		return StatusAccepted, clean, true
	}
	status, known = statusWords[word]
	if !known {
		status, known = statusWords[lower]
	}
	if known && strings.EqualFold(clean, status) {
		return status, "", true
	}
	return status, clean, known
}

// cleanInline trims spaces, a list bullet and surrounding markdown emphasis or code marks.
func cleanInline(s string) string {
	s = strings.TrimSpace(s)
	for _, p := range []string{"* ", "- ", "+ "} {
		s = strings.TrimPrefix(s, p)
	}
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "*_`"))
}

// partial is a status that says the decision was superseded in part only.
var partial = lazyre.New(`^(?:partially|partly|partial)\s+(?:superseded|replaced)`)

// adrRef is a reference to another ADR in a status ("Superseded by ADR-0019", "Supersedes [2. Use
// X](0002-use-x.md)"): its number when the text or the link's file name gives one, and the link target
// as written (a path relative to the ADR's folder) when there is a link.
type adrRef struct {
	Number int
	Target string
}

// adrInfo is what parseADR reads from one ADR file.
type adrInfo struct {
	Number       int
	Title        string
	Status       string
	StatusText   string
	Date         string
	SupersededBy adrRef   // "superseded by ..." (also replaced, deprecated, obsoleted by); zero when none
	Supersedes   []adrRef // "supersedes ..." / "replaces ..."
	Warnings     []string
}

var (
	// refBy and refOf find the verbs of a status that name another ADR.
	refBy = lazyre.New(`(?i)\b(?:superseded|replaced|deprecated|obsoleted)\s+by\b`)
	refOf = lazyre.New(`(?i)\b(?:supersedes|replaces)\b`)
	// refLink, refADR, refHash and refNum read the reference right after such a verb.
	refLink = lazyre.New(`^[\s:*_]*\[([^\]]*)\]\(<?([^)\s>]+)>?\)`)
	refADR  = lazyre.New(`^[\s:*_]*(?i:adr)[-_ #]?0*(\d{1,6})\b`)
	refHash = lazyre.New(`^[\s:*_]*#0*(\d{1,6})\b`)
	refNum  = lazyre.New(`^[\s:*_]*0*(\d{1,5})\b`)
)

// parseRef reads the ADR reference at the start of s (see adrRef).
func parseRef(s string) (adrRef, bool) {
	if m := refLink.Get().FindStringSubmatch(s); m != nil {
		ref := adrRef{Target: m[2]}
		text := cleanInline(m[1])
		switch {
		case adrHeading.Get().MatchString(text):
			ref.Number, _ = strconv.Atoi(adrHeading.Get().FindStringSubmatch(text)[1])
		case nygardHeading.Get().MatchString(text):
			ref.Number, _ = strconv.Atoi(nygardHeading.Get().FindStringSubmatch(text)[1])
		default:
			stem := stripDocExt(path.Base(m[2]))
			if dm := dateName.Get().FindStringSubmatch(stem); dm == nil || !validDate(dm[1], dm[2], dm[3]) {
				if nm := numberName.Get().FindStringSubmatch(stem); nm != nil {
					ref.Number, _ = strconv.Atoi(nm[1])
				}
			}
		}
		if strings.Contains(ref.Target, "://") || strings.HasPrefix(ref.Target, "#") {
			ref.Target = "" // a web page or an anchor, not a file next to this one
		}
		return ref, ref.Number > 0 || ref.Target != ""
	}
	for _, re := range []*lazyre.Regexp{refADR, refHash, refNum} {
		if m := re.Get().FindStringSubmatch(s); m != nil {
			n, _ := strconv.Atoi(m[1])
			return adrRef{Number: n}, n > 0
		}
	}
	return adrRef{}, false
}

// statusRefs reads the ADRs a status text names: after "superseded by" (and alike) and after
// "supersedes" / "replaces".
func statusRefs(text string) (by adrRef, of []adrRef) {
	for _, loc := range refBy.Get().FindAllStringIndex(text, -1) {
		if r, ok := parseRef(text[loc[1]:]); ok && by == (adrRef{}) {
			by = r
		}
	}
	for _, loc := range refOf.Get().FindAllStringIndex(text, -1) {
		if r, ok := parseRef(text[loc[1]:]); ok {
			of = append(of, r)
		}
	}
	return by, of
}

var (
	// dateName is a log4brains file name: YYYYMMDD-slug, or YYYY-MM-DD-slug.
	dateName = lazyre.New(`^(\d{4})-?(\d{2})-?(\d{2})(?:[-_ ]|$)`)
	// numberName is an ADR number at the start of a file name: 0001-slug, adr-009-slug, ADR0001_slug.
	numberName = lazyre.New(`^(?i:adr[-_ ]?)?(\d{1,7})(?:[-_ ]|$)`)
	// longNumberName is a file name that starts with more digits than an ADR number has (numberName).
	longNumberName = lazyre.New(`^(?i:adr[-_ ]?)?\d{8,}(?:[-_ ]|$)`)
	// adrHeading is a title that starts with its number: "ADR 009: Soft Opt-Out", "ADR-12 - Foo".
	adrHeading = lazyre.New(`^(?i:adr)[-_ ]?0*(\d{1,7})\s*(?:[:.\-–—]\s*|\s+)(.*)$`)
	// nygardHeading is adr-tools' "1. Record architecture decisions" (also phodal's "1. 编写...").
	nygardHeading = lazyre.New(`^0*(\d{1,7})\.\s+(.*)$`)
	// atxHeading is a markdown heading line; group 1 the #s, group 2 the text.
	atxHeading = lazyre.New(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)
	// metaLine is a "Status: x" or "Date: x" line in the preamble, bulleted or not, bold or not,
	// with an ASCII or full-width colon (MADR 2 "* Status:", log4brains "- Status:", phodal "日期:").
	metaLine = lazyre.New(`^\s*(?:[*+-]\s+)?(?:\*\*|__)?(?i:(status|date|状态|日期))(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*(.*?)\s*$`)
	// datedLine is a status history line: "2017-11-22 提议" (phodal/adr).
	datedLine = lazyre.New(`^(\d{4}[-/.]\d{1,2}[-/.]\d{1,2})\s+(.+)$`)
)

// mdLine is one line of a markdown body with what parseADR needs to know about it.
type mdLine struct {
	text    string
	fenced  bool   // inside (or delimiting) a ``` or ~~~ code block
	level   int    // heading level, 0 when not a heading
	heading string // heading text
}

// scanMarkdown splits a body into lines, marking fenced code blocks and ATX/setext headings.
func scanMarkdown(body string) []mdLine {
	raw := strings.Split(body, "\n")
	lines := make([]mdLine, 0, len(raw))
	var fence mdfence.Fence
	for _, t := range raw {
		t = strings.TrimSuffix(t, "\r")
		l := mdLine{text: t, fenced: fence.In(t)}
		trimmed := strings.TrimLeft(t, " ")
		indent := len(t) - len(trimmed)
		if !l.fenced {
			if m := atxHeading.Get().FindStringSubmatch(t); m != nil {
				l.level = len(m[1])
				l.heading = strings.TrimSpace(strings.TrimRight(m[2], "#"))
			} else if len(lines) > 0 && strings.Trim(trimmed, "=") == "" && trimmed != "" && indent <= 3 {
				// Setext level-1 heading: the previous non-empty paragraph line becomes a heading.
				prev := &lines[len(lines)-1]
				if !prev.fenced && prev.level == 0 && strings.TrimSpace(prev.text) != "" {
					prev.level = 1
					prev.heading = strings.TrimSpace(prev.text)
				}
			}
		}
		lines = append(lines, l)
	}
	return lines
}

// parseADR reads the number, title, status and date of one ADR file. name is the file's base name;
// content its bytes. It never fails: what it cannot find it guesses or leaves empty, and says so in
// Warnings. Sources, first found wins:
//
//   - number: the file name (0001-x.md, adr-009-x.md), else the title heading ("ADR 009: x", "1. x");
//     a log4brains date name (20200924-x.md) is a date, not a number: number 0 and a warning;
//   - title: front-matter "title", else the first heading when it is level 1 or starts with "ADR NNN:",
//     with the "ADR 009:" / "1." prefix removed; else made from the file name, with a warning;
//   - status: front-matter "status", else a "Status: x" line before the first section (MADR 2 bullets,
//     log4brains), else the "## Status" / "## 状态" section: its last dated line ("2017-11-22 提议",
//     phodal/adr) or its first line (Nygard); mapped by NormalizeStatus;
//   - date: front-matter "date", else a "Date: x" / "日期: x" line before the first section, else the
//     file name's date (20200924 -> 2020-09-24); kept as written.
func parseADR(name string, content []byte) adrInfo {
	var info adrInfo
	warn := func(format string, args ...any) {
		info.Warnings = append(info.Warnings, fmt.Sprintf(format, args...))
	}
	stem := strings.ToValidUTF8(stripDocExt(name), "\uFFFD")
	if !utf8.Valid(content) {
		content = []byte(strings.ToValidUTF8(string(content), "\uFFFD"))
		warn("file is not valid UTF-8; invalid bytes replaced by U+FFFD when reading title and status (content kept byte for byte)")
	}
	fm, body := parseFrontMatter(content)
	if fm.warning != "" {
		warn("%s", fm.warning)
	}
	lines := scanMarkdown(string(body))

	// Number and file-name date.
	fileNumber, fileDate := -1, ""
	if m := dateName.Get().FindStringSubmatch(stem); m != nil && validDate(m[1], m[2], m[3]) {
		fileDate = m[1] + "-" + m[2] + "-" + m[3]
	} else if m := numberName.Get().FindStringSubmatch(stem); m != nil {
		fileNumber, _ = strconv.Atoi(m[1])
	}

	// Title: the first heading, when it is a title.
	headingNumber := -1
	headingTitle := ""
	for _, l := range lines {
		if l.level == 0 {
			continue
		}
		h := cleanInline(l.heading)
		if m := adrHeading.Get().FindStringSubmatch(h); m != nil {
			headingNumber, _ = strconv.Atoi(m[1])
			headingTitle = strings.TrimSpace(m[2])
		} else if l.level == 1 {
			headingTitle = h
			if m := nygardHeading.Get().FindStringSubmatch(h); m != nil {
				headingNumber, _ = strconv.Atoi(m[1])
				headingTitle = strings.TrimSpace(m[2])
			}
		}
		break
	}
	// What the store does with a decision that has no number, and how to choose one.
	const noNumber = "ctx numbers it: a decision imported before under another name keeps its number; a new one gets the next free number, or the one its file name starts with (0012-title.md)"
	switch {
	case fileNumber >= 0:
		info.Number = fileNumber
		if headingNumber >= 0 && headingNumber != fileNumber {
			warn("the title heading says ADR %d but the file name says %d; kept %d", headingNumber, fileNumber, fileNumber)
		}
		if fileNumber == 0 {
			warn("the file name's ADR number is 0, which reads as \"no number\"; the store assigns one")
		}
	case headingNumber >= 0:
		info.Number = headingNumber
	case fileDate != "":
		warn("the file name starts with the date %s (log4brains style), not an ADR number: %s", fileDate, noNumber)
	case longNumberName.Get().MatchString(stem):
		warn("the number at the start of the file name has more than 7 digits, more than an ADR number has: %s", noNumber)
	default:
		warn("no ADR number in the file name or title: %s", noNumber)
	}
	switch {
	case fm.get("title") != "":
		info.Title = fm.get("title")
	case headingTitle != "":
		info.Title = headingTitle
	default:
		info.Title = titleFromName(stem)
		warn("no title (no front-matter title, no \"# \" heading); made %q from the file name", info.Title)
	}

	// Metadata lines of the preamble: everything before the first section heading (level >= 2).
	var metaStatus, metaDate string
	for _, l := range lines {
		if l.level >= 2 {
			break
		}
		if l.fenced || l.level > 0 {
			continue
		}
		if m := metaLine.Get().FindStringSubmatch(l.text); m != nil {
			switch strings.ToLower(m[1]) {
			case "status", "状态":
				if metaStatus == "" {
					metaStatus = m[2]
				}
			default:
				if metaDate == "" {
					metaDate = m[2]
				}
			}
		}
	}

	raw, refText := "", ""
	switch {
	case fm.get("status") != "":
		raw = fm.get("status")
		refText = raw
	case metaStatus != "":
		raw = metaStatus
		refText = raw
	default:
		raw, refText = statusSection(lines)
	}
	info.SupersededBy, info.Supersedes = statusRefs(refText)
	if raw == "" {
		warn("no status (no front-matter status, \"Status:\" line or \"## Status\" section); stored as proposed")
	} else {
		status, text, known := NormalizeStatus(raw)
		info.Status, info.StatusText = status, text
		switch {
		case !known:
			warn("status %q is not a known word; stored as proposed, the word kept in status_text", text)
		case text != "":
			warn("status %q read as %q", text, status)
		}
	}

	switch {
	case fm.get("date") != "":
		info.Date = fm.get("date")
	case metaDate != "":
		info.Date = metaDate
	default:
		info.Date = fileDate
	}
	return info
}

// statusSection returns the status written in a "Status"/"状态" section: the word of its last dated line
// when it has dated lines (a status history, phodal/adr), else its first line, extended to the next line
// when that one repeats and details the word ("Deprecated" then "Deprecated by [x](x.md)",
// interchain-security). "" when there is no such section or it is empty. all is the whole section, one
// line after another, where references to other ADRs are looked for (adr-tools writes "Accepted", then
// "Supersedes [2. x](0002-x.md)" on a line of its own).
func statusSection(lines []mdLine) (status, all string) {
	start := -1
	for i, l := range lines {
		if l.level > 0 {
			h := strings.ToLower(strings.TrimRight(cleanInline(l.heading), ":："))
			if h == "status" || h == "状态" || h == "狀態" {
				start = i + 1
				break
			}
		}
	}
	if start < 0 {
		return "", ""
	}
	var body []string
	for _, l := range lines[start:] {
		if l.level > 0 {
			break
		}
		if l.fenced || strings.TrimSpace(l.text) == "" || strings.HasPrefix(strings.TrimSpace(l.text), "<!--") {
			continue
		}
		body = append(body, strings.TrimSpace(l.text))
	}
	if len(body) == 0 {
		return "", ""
	}
	all = strings.Join(body, "\n")
	dated := ""
	for _, t := range body {
		if m := datedLine.Get().FindStringSubmatch(cleanInline(t)); m != nil {
			dated = m[2]
		}
	}
	if dated != "" {
		return dated, all
	}
	first := cleanInline(body[0])
	if len(body) > 1 {
		next := cleanInline(body[1])
		if len(next) > len(first) && strings.HasPrefix(strings.ToLower(next), strings.ToLower(first)) {
			return next, all
		}
	}
	return first, all
}

// validDate reports whether y, m, d (digits) look like a calendar date of 1900-2199.
func validDate(y, m, d string) bool {
	yy, _ := strconv.Atoi(y)
	mm, _ := strconv.Atoi(m)
	dd, _ := strconv.Atoi(d)
	return yy >= 1900 && yy < 2200 && mm >= 1 && mm <= 12 && dd >= 1 && dd <= 31
}

// titleFromName makes a title from a file name without extension: the number or date prefix dropped,
// '-' and '_' read as spaces, the first letter upper-cased ("20201028-adr-with-no-title" -> "Adr with no
// title").
func titleFromName(stem string) string {
	stem = path.Base(strings.ReplaceAll(stem, "\\", "/"))
	if m := dateName.Get().FindStringSubmatchIndex(stem); m != nil && validDate(stem[m[2]:m[3]], stem[m[4]:m[5]], stem[m[6]:m[7]]) {
		stem = stem[m[1]:]
	} else if m := numberName.Get().FindStringSubmatchIndex(stem); m != nil {
		stem = stem[m[1]:]
	}
	t := strings.Join(strings.FieldsFunc(stem, func(r rune) bool { return r == '-' || r == '_' || unicode.IsSpace(r) }), " ")
	if t == "" {
		return "Untitled"
	}
	r, size := utf8.DecodeRuneInString(t)
	return string(unicode.ToUpper(r)) + t[size:]
}
