package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeStatus(t *testing.T) {
	tests := []struct {
		raw, status, text string
		known             bool
	}{
		{"Accepted", "accepted", "", true},
		{"accepted", "accepted", "", true},
		{"**Accepted**", "accepted", "", true},
		{"approved", "accepted", "approved", true},
		{"Implemented", "accepted", "Implemented", true},
		{"draft", "proposed", "draft", true},
		{"RFC", "proposed", "RFC", true},
		{"Deprecated by [PSS](adr-015.md)", "deprecated", "Deprecated by [PSS](adr-015.md)", true},
		{"superseded by [x](x.md)", "superseded", "superseded by [x](x.md)", true},
		{"Replaced", "superseded", "Replaced", true},
		{"obsolete", "deprecated", "obsolete", true},
		{"通过", "accepted", "通过", true},
		{"提议", "proposed", "提议", true},
		{"完成", "accepted", "完成", true},
		{"已弃用", "deprecated", "已弃用", true},
		{"已取代", "superseded", "已取代", true},
		{"废弃", "deprecated", "废弃", true},
		{"Rejected", "rejected", "", true},
		{"declined", "rejected", "declined", true},
		{"Superseded by ADR-0019", "superseded", "Superseded by ADR-0019", true},
		{"Partially Superseded by ADR-0028", "accepted", "Partially Superseded by ADR-0028", true},
		{"on hold", "", "on hold", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		status, text, known := NormalizeStatus(tt.raw)
		if status != tt.status || text != tt.text || known != tt.known {
			t.Errorf("NormalizeStatus(%q) = %q, %q, %v; want %q, %q, %v", tt.raw, status, text, known, tt.status, tt.text, tt.known)
		}
	}
}

func TestParseADR(t *testing.T) {
	tests := []struct {
		name, content string
		want          adrInfo
		warn          []string // parts of expected warnings, in order
	}{
		{
			name:    "0002-nygard.md",
			content: "# 2. Use Go\n\nDate: 2024-01-01\n\n## Status\n\nAccepted\n\n## Context\n\nx\n",
			want:    adrInfo{Number: 2, Title: "Use Go", Status: "accepted", Date: "2024-01-01"},
		},
		{
			name:    "0003-madr2.md",
			content: "# Use X\n\n* Status: superseded by [ADR-0005](0005-y.md)\n* Deciders: a\n* Date: 2018-01-01\n\n## Context\n",
			want: adrInfo{Number: 3, Title: "Use X", Status: "superseded", StatusText: "superseded by [ADR-0005](0005-y.md)", Date: "2018-01-01",
				SupersededBy: adrRef{Number: 5, Target: "0005-y.md"}},
			warn: []string{`read as "superseded"`},
		},
		{
			name:    "adr-012-x.md",
			content: "## ADR 012: Soft Thing\n\n## Status\n\nProposed\n",
			want:    adrInfo{Number: 12, Title: "Soft Thing", Status: "proposed"},
		},
		{
			name:    "no-number.md",
			content: "# ADR-7 - Heading Number\n\n## Status\n\nRejected\n",
			want:    adrInfo{Number: 7, Title: "Heading Number", Status: "rejected"},
		},
		{
			name:    "0013-superseded.md",
			content: "# 13. Old Way\n\n## Status\n\nSuperseded by ADR-0019\n",
			want:    adrInfo{Number: 13, Title: "Old Way", Status: "superseded", StatusText: "Superseded by ADR-0019", SupersededBy: adrRef{Number: 19}},
			warn:    []string{`read as "superseded"`},
		},
		{
			name:    "0014-partial.md",
			content: "# 14. Half Way\n\n## Status\n\nPartially Superseded by ADR-0028\n",
			want:    adrInfo{Number: 14, Title: "Half Way", Status: "accepted", StatusText: "Partially Superseded by ADR-0028", SupersededBy: adrRef{Number: 28}},
			warn:    []string{`read as "accepted"`},
		},
		{
			name:    "0015-adr-tools.md",
			content: "# 15. New Way\n\n## Status\n\nAccepted\n\nSupersedes [2. Use Foo](0002-use-foo.md)\n",
			want:    adrInfo{Number: 15, Title: "New Way", Status: "accepted", Supersedes: []adrRef{{Number: 2, Target: "0002-use-foo.md"}}},
		},
		{
			name:    "0016-madr3.md",
			content: "---\nstatus: rejected\ndate: 2023-01-01\n---\n# Use Z\n",
			want:    adrInfo{Number: 16, Title: "Use Z", Status: "rejected", Date: "2023-01-01"},
		},
		{
			name:    "0004-mismatch.md",
			content: "# ADR 5: Mismatch\n",
			want:    adrInfo{Number: 4, Title: "Mismatch"},
			warn:    []string{"says ADR 5 but the file name says 4", "no status"},
		},
		{
			name:    "0006-bad-yaml.md",
			content: "---\ntitle: [unclosed\nstatus: accepted\ndate: 2020-02-02\n---\n# Body Title\n",
			want:    adrInfo{Number: 6, Title: "[unclosed", Status: "accepted", Date: "2020-02-02"},
			warn:    []string{"not valid YAML"},
		},
		{
			name:    "0007-unclosed.md",
			content: "---\ntitle: x\n# Real Title\n",
			want:    adrInfo{Number: 7, Title: "Real Title"},
			warn:    []string{"never closed", "no status"},
		},
		{
			name:    "0008-fenced.md",
			content: "# Fenced\n\n```markdown\n## Status\n\naccepted\n```\n\n~~~\n# Not A Title\n~~~\n",
			want:    adrInfo{Number: 8, Title: "Fenced"},
			warn:    []string{"no status"},
		},
		{
			name:    "20210102-setext.md",
			content: "Setext Title\n============\n\nStatus: **accepted**\n",
			want:    adrInfo{Title: "Setext Title", Status: "accepted", Date: "2021-01-02"},
			warn:    []string{"log4brains style"},
		},
		{
			name:    "0009-crlf.md",
			content: "---\r\nstatus: draft\r\n---\r\n# CRLF Title\r\n\r\n## 状态\r\n\r\n2017-11-22 通过\r\n",
			want:    adrInfo{Number: 9, Title: "CRLF Title", Status: "proposed", StatusText: "draft"},
			warn:    []string{`"draft" read as "proposed"`},
		},
		{
			name:    "0010-中文.md",
			content: "# 10. 中文标题\n\n日期：2017-11-23\n\n## 状态\n\n列表：提议/通过/完成/已弃用/已取代\n\n2017-11-23 提议\n\n2017-11-24 已废弃\n\n## 背景\n",
			want:    adrInfo{Number: 10, Title: "中文标题", Status: "deprecated", StatusText: "已废弃", Date: "2017-11-23"},
			warn:    []string{`"已废弃" read as "deprecated"`},
		},
		{
			name:    "0011-empty.md",
			content: "",
			want:    adrInfo{Number: 11, Title: "Empty"},
			warn:    []string{"no title", "no status"},
		},
		{
			name:    "999999999-last.md",
			content: "# Last\n\n## Status\n\nAccepted\n",
			want:    adrInfo{Title: "Last", Status: "accepted"},
			warn:    []string{"more than 7 digits"},
		},
		{
			name:    "0012-bad-utf8.md",
			content: "# T\xffitle\n",
			want:    adrInfo{Number: 12, Title: "T\uFFFDitle"},
			warn:    []string{"not valid UTF-8", "no status"},
		},
	}
	for _, tt := range tests {
		got := parseADR(tt.name, []byte(tt.content))
		warnings := got.Warnings
		got.Warnings = nil
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseADR(%s) = %+v, want %+v", tt.name, got, tt.want)
		}
		if len(warnings) != len(tt.warn) {
			t.Errorf("parseADR(%s) warnings = %q, want %d matching %q", tt.name, warnings, len(tt.warn), tt.warn)
			continue
		}
		for i, w := range tt.warn {
			if !strings.Contains(warnings[i], w) {
				t.Errorf("parseADR(%s) warning %d = %q, want it to mention %q", tt.name, i, warnings[i], w)
			}
		}
	}
}

// FuzzParseADR checks that parseADR never panics and keeps its promises on any input, seeded with the
// bundled corpus ADRs.
func FuzzParseADR(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(repoCorpus, "adr", "*", "*.md"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Base(p), b)
	}
	f.Add("0001-x.md", []byte("---\n---\n"))
	f.Add("adr-1.md", []byte("---\nstatus: [\n---\n## Status\n\n2017-11-22 提议\n"))
	f.Fuzz(func(t *testing.T, name string, content []byte) {
		info := parseADR(name, content)
		if info.Title == "" {
			t.Fatalf("no title for %q", name)
		}
		if !utf8.ValidString(info.Title) {
			t.Fatalf("title %q is not UTF-8", info.Title)
		}
		switch info.Status {
		case "", StatusProposed, StatusAccepted, StatusDeprecated, StatusSuperseded, StatusRejected:
		default:
			t.Fatalf("status %q", info.Status)
		}
		if info.Number < 0 {
			t.Fatalf("number %d", info.Number)
		}
	})
}
