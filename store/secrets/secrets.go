// Package secrets finds text that looks like a credential: cloud and SaaS access keys and tokens, private
// keys in PEM form, JSON Web Tokens and password-like assignments with a random-looking value. ctx uses it
// to refuse a public write that would publish one (docs/security.md, "Secrets").
//
// The rules are a small curated set, each with the source of its shape (the provider's documented token
// format, or the rule of the same id in gitleaks' default configuration,
// https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml, MIT), chosen for a low rate of
// false positives on prose and code samples: placeholders ("AKIAIOSFODNN7EXAMPLE", "xxxx", "<token>",
// "${VAR}") are not reported. The package has no dependencies and does no I/O.
package secrets

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ctx-dev/ctx/internal/lazyre"
	"github.com/ctx-dev/ctx/internal/termesc"
)

// Finding is one match: the rule that matched, its 1-based line in the scanned text and a redacted
// form of the match (its first characters and its length), never the secret itself.
type Finding struct {
	Rule        string // rule id, e.g. "github-pat"
	Description string // what it looks like, e.g. "a GitHub personal access token"
	Line        int    // 1-based line of the match's start
	Redacted    string // e.g. "ghp_… (40 characters)"
	match       string
}

// Match is the matched text (for comparing two scans; never print it).
func (f Finding) Match() string { return f.match }

// Rule is one detector.
type Rule struct {
	ID          string
	Description string
	Source      string // where the shape comes from
	re          *lazyre.Regexp
	keywords    []string            // lower-case words one of which the text must hold (a fast pre-filter)
	group       int                 // capture group holding the secret (0 = the whole match)
	check       func(s string) bool // further test on the secret (nil = none)
}

// Rules are the detectors, in the order they are tried.
var Rules = []Rule{
	{ID: "private-key", keywords: []string{"private key"}, Description: "a private key (PEM)", Source: "RFC 7468 labels; gitleaks private-key",
		re: lazyre.New(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\sA-Za-z0-9+/=:,.\\-]{64,}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)},
	{ID: "aws-access-key-id", keywords: []string{"akia", "asia", "abia", "acca", "a3t"}, Description: "an AWS access key ID", Source: "AWS IAM identifiers (AKIA/ASIA/ABIA/ACCA prefixes); gitleaks aws-access-token",
		re: lazyre.New(`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`), group: 1},
	{ID: "aws-secret-access-key", keywords: []string{"secret"}, Description: "an AWS secret access key", Source: "AWS CLI credentials file keys (aws_secret_access_key)",
		re: lazyre.New(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b`), group: 1, check: random},
	{ID: "github-pat", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, Description: "a GitHub token", Source: "GitHub token formats (ghp_, gho_, ghu_, ghs_, ghr_); gitleaks github-pat",
		re: lazyre.New(`\b(gh[pousr]_[0-9A-Za-z]{36,255})\b`), group: 1},
	{ID: "github-fine-grained-pat", keywords: []string{"github_pat_"}, Description: "a GitHub fine-grained personal access token", Source: "GitHub token formats (github_pat_); gitleaks github-fine-grained-pat",
		re: lazyre.New(`\b(github_pat_[0-9A-Za-z_]{82})\b`), group: 1},
	{ID: "gitlab-pat", keywords: []string{"glpat-"}, Description: "a GitLab personal access token", Source: "GitLab token prefixes (glpat-); gitleaks gitlab-pat",
		re: lazyre.New(`\b(glpat-[0-9A-Za-z_-]{20,})\b`), group: 1},
	{ID: "slack-token", keywords: []string{"xox"}, Description: "a Slack token", Source: "Slack token types (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-); gitleaks slack-*-token",
		re: lazyre.New(`\b(xox[abeoprs]-(?:\d+-){1,3}[0-9A-Za-z-]{8,})\b`), group: 1},
	{ID: "slack-webhook", keywords: []string{"hooks.slack.com"}, Description: "a Slack incoming webhook URL", Source: "Slack incoming webhooks; gitleaks slack-webhook-url",
		re: lazyre.New(`https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/]{43,46}`)},
	{ID: "stripe-secret-key", keywords: []string{"_live_", "_prod_"}, Description: "a Stripe live secret key", Source: "Stripe API keys (sk_live_, rk_live_); gitleaks stripe-access-token",
		re: lazyre.New(`\b((?:sk|rk)_(?:live|prod)_[0-9A-Za-z]{10,99})\b`), group: 1},
	{ID: "anthropic-api-key", keywords: []string{"sk-ant-"}, Description: "an Anthropic API key", Source: "Anthropic API keys (sk-ant-api03-, sk-ant-admin01-); gitleaks anthropic-api-key",
		re: lazyre.New(`\b(sk-ant-[a-z]+\d*-[0-9A-Za-z_-]{32,})`), group: 1},
	{ID: "openai-api-key", keywords: []string{"sk-"}, Description: "an OpenAI API key", Source: "OpenAI API keys (sk-proj-, sk-svcacct-, sk-admin-, legacy sk- with T3BlbkFJ); gitleaks openai-api-key",
		re: lazyre.New(`\b(sk-(?:(?:proj|svcacct|admin)-[0-9A-Za-z_-]{40,}|[0-9A-Za-z]{20}T3BlbkFJ[0-9A-Za-z]{20}|[0-9A-Za-z]{48}))\b`), group: 1},
	{ID: "google-api-key", keywords: []string{"aiza"}, Description: "a Google API key", Source: "Google Cloud API keys (AIza); gitleaks gcp-api-key",
		re: lazyre.New(`\b(AIza[0-9A-Za-z_-]{35})\b`), group: 1},
	{ID: "npm-token", keywords: []string{"npm_"}, Description: "an npm access token", Source: "npm granular and classic tokens (npm_); gitleaks npm-access-token",
		re: lazyre.New(`\b(npm_[0-9A-Za-z]{36})\b`), group: 1},
	{ID: "pypi-token", keywords: []string{"pypi-"}, Description: "a PyPI upload token", Source: "PyPI API tokens (pypi-AgEIcHlwaS5vcmc); gitleaks pypi-upload-token",
		re: lazyre.New(`\b(pypi-AgEIcHlwaS5vcmc[0-9A-Za-z_-]{50,})`), group: 1},
	{ID: "huggingface-token", keywords: []string{"hf_"}, Description: "a Hugging Face access token", Source: "Hugging Face user access tokens (hf_); gitleaks huggingface-access-token",
		re: lazyre.New(`\b(hf_[A-Za-z]{34})\b`), group: 1},
	{ID: "jwt", keywords: []string{"eyj"}, Description: "a JSON Web Token", Source: "RFC 7519 compact serialisation (base64url header starting eyJ); gitleaks jwt",
		re: lazyre.New(`\b(eyJ[0-9A-Za-z_-]{15,}\.eyJ[0-9A-Za-z_-]{15,}\.[0-9A-Za-z_-]{20,})`), group: 1},
	{ID: "password-assignment", keywords: []string{"pass", "pwd", "secret", "apikey", "api_key", "api-key", "token"}, Description: "a password or secret assigned a random-looking value",
		Source: "gitleaks generic-api-key (keyword, assignment, value with Shannon entropy >= 3.5)",
		re:     lazyre.New(`(?i)\b(?:password|passwd|pwd|secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?token)["']?\s*(?::=|=|:)\s*["']?([^\s"'` + "`" + `;,]{12,100})`),
		group:  1, check: random},
}

// placeholder reports values that stand for a secret rather than being one.
func placeholder(s string) bool {
	l := strings.ToLower(s)
	for _, w := range []string{"example", "xxxx", "****", "....", "<", ">", "${", "$(", "{{", "%s", "your", "changeme", "replace", "redacted", "dummy", "sample", "placeholder", "0000000000", "1234567890", "abcdef"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// random reports whether s looks generated: letters and digits mixed and a Shannon entropy of at least
// 3.5 bits per character (gitleaks' threshold for its generic rule).
func random(s string) bool {
	var letters, digits bool
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters = true
		}
	}
	return letters && digits && entropy(s) >= 3.5
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	h := 0.0
	for _, c := range n {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// Scan returns the findings in text, ordered by line; a text matched by several rules is reported once,
// by the first. A match that is a placeholder (see the package doc) is not reported. Text holding terminal
// escape sequences or carriage returns is also scanned as Normalize makes it, so that a colour code just
// before a key ("\x1b[32mghp_...") or a CRLF private key hides nothing.
func Scan(text string) []Finding {
	var out []Finding
	seen := map[string]bool{}
	scan := func(text string) {
		for _, sp := range Spans(text) {
			m := text[sp.Start:sp.End]
			if seen[m] {
				continue
			}
			seen[m] = true
			out = append(out, Finding{Rule: sp.Rule.ID, Description: sp.Rule.Description, Line: 1 + strings.Count(text[:sp.Start], "\n"),
				Redacted: redact(m), match: m})
		}
	}
	scan(text)
	if n := Normalize(text); n != text {
		scan(n)
	}
	sortFindings(out)
	return out
}

// Normalize is text as a terminal shows it, for detection: terminal escape sequences removed, CRLF and
// lone CR turned into LF. Text without either is returned as it is.
func Normalize(text string) string {
	text = termesc.Strip(text) // terminal escape sequences (internal/termesc)
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	return text
}

// Span is where one rule matched in a text: the secret is text[Start:End] (byte offsets), without the
// keyword or assignment around it. Package store/redact replaces spans.
type Span struct {
	Rule       *Rule
	Start, End int
}

// Spans returns every match of every rule in text, in the order of Rules and then of position; every
// occurrence is returned (Scan reports a repeated secret once). Matches may overlap when two rules match
// the same text. Placeholders and values that fail a rule's check are left out, as in Scan.
//
// A rule's expression runs only in windows around the occurrences of its keywords (FindAll), so that the
// cost follows the text's length, not its length times the expressions' size: a match is found when it
// lies on the line of a keyword, within 512 bytes before and 4 KiB after it (a PEM block: 32 KiB across
// lines).
func Spans(text string) []Span {
	var out []Span
	lower := Lower(text)
	for i := range Rules {
		r := &Rules[i]
		for _, loc := range FindAll(r.re, text, lower, r.keywords, r.ID == "private-key") {
			start, end := loc[0], loc[1]
			if r.group > 0 && len(loc) > 2*r.group+1 && loc[2*r.group] >= 0 {
				start, end = loc[2*r.group], loc[2*r.group+1]
			}
			m := text[start:end]
			if placeholder(m) || r.check != nil && !r.check(m) {
				continue
			}
			out = append(out, Span{Rule: r, Start: start, End: end})
		}
	}
	return out
}

// Lower is text with ASCII letters in lower case and every other byte as it is (the same length, so that
// offsets into it are offsets into text).
func Lower(text string) string {
	b := []byte(text)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Window sizes of FindAll around a keyword, in bytes.
const (
	windowBefore     = 512
	windowAfter      = 4 << 10
	windowMultiline  = 32 << 10
	windowMultiStart = 128
)

// FindAll returns the matches of re in text (as regexp's FindAllStringSubmatchIndex, offsets into text)
// that lie in a window around an occurrence of one of keywords in lower (Lower(text); keywords in lower
// case): the keyword's line, from 512 bytes before it to 4 KiB after it; with multiline, from 128 bytes
// before it to 32 KiB after it, across lines. Overlapping windows are merged. No keywords: the whole
// text. re is compiled only when a keyword is there: most texts hold none of a rule's keywords, and
// compiling every rule's expression cost a one-shot write about 0.7 ms (bench/README.md, "Fifth round").
func FindAll(re *lazyre.Regexp, text, lower string, keywords []string, multiline bool) [][]int {
	if len(keywords) == 0 {
		return re.Get().FindAllStringSubmatchIndex(text, -1)
	}
	var wins [][2]int
	for _, k := range keywords {
		for from := 0; ; {
			i := strings.Index(lower[from:], k)
			if i < 0 {
				break
			}
			at := from + i
			from = at + len(k)
			var w [2]int
			if multiline {
				w = [2]int{max(0, at-windowMultiStart), min(len(text), at+windowMultiline)}
			} else {
				w = [2]int{max(0, at-windowBefore), min(len(text), at+len(k)+windowAfter)}
				if nl := strings.LastIndexByte(text[w[0]:at], '\n'); nl >= 0 {
					w[0] += nl + 1
				}
				if nl := strings.IndexByte(text[at:w[1]], '\n'); nl >= 0 {
					w[1] = at + nl
				}
			}
			wins = append(wins, w)
		}
	}
	if len(wins) == 0 {
		return nil
	}
	sort.Slice(wins, func(i, j int) bool { return wins[i][0] < wins[j][0] })
	merged := wins[:1]
	for _, w := range wins[1:] {
		last := &merged[len(merged)-1]
		if w[0] <= last[1] {
			last[1] = max(last[1], w[1])
			continue
		}
		merged = append(merged, w)
	}
	var out [][]int
	for _, w := range merged {
		for _, loc := range re.Get().FindAllStringSubmatchIndex(text[w[0]:w[1]], -1) {
			for i := range loc {
				if loc[i] >= 0 {
					loc[i] += w[0]
				}
			}
			out = append(out, loc)
		}
	}
	return out
}

// Placeholder reports whether s stands for a secret rather than being one ("example", "xxxx", "<token>",
// "${VAR}", "changeme", ...): the rule of Scan, for detectors that build on this package.
func Placeholder(s string) bool { return placeholder(s) }

// New returns the findings of text that are not in old (the same secret already there before a change
// is not new).
func New(old, text string) []Finding {
	f := Scan(text)
	if len(f) == 0 || old == "" {
		return f
	}
	had := map[string]bool{}
	for _, o := range Scan(old) {
		had[o.match] = true
	}
	var out []Finding
	for _, x := range f {
		if !had[x.match] {
			out = append(out, x)
		}
	}
	return out
}

func redact(m string) string {
	n := len([]rune(m))
	keep := 4
	if i := strings.IndexAny(m, "_-"); i >= 0 && i < 12 {
		keep = i + 1
	}
	if keep > n/3 {
		keep = n / 3
	}
	if strings.HasPrefix(m, "-----BEGIN") {
		return "-----BEGIN … PRIVATE KEY----- block"
	}
	return string([]rune(m)[:keep]) + "… (" + strconv.Itoa(n) + " characters)"
}

func sortFindings(f []Finding) {
	sort.SliceStable(f, func(i, j int) bool { return f[i].Line < f[j].Line })
}
