// Package redact removes credentials and home-directory prefixes from text before it is shared on the
// context branch (ctx history share, docs/security.md "Redaction of shared sessions").
//
// It replaces, in this order:
//
//  1. every match of the secret detector's rules (package store/secrets: PEM private keys, AWS, GitHub,
//     GitLab, Slack, Stripe, Anthropic, OpenAI, Google, npm, PyPI, Hugging Face tokens, JWTs, generated
//     values assigned to password/secret/token keys) by "[REDACTED:<rule id>]";
//  2. the broader shapes that only redaction uses because they would refuse too many public writes: any
//     value assigned to a key that names a secret (.env style, YAML, JSON: assignments), and the Rules:
//     Authorization headers and bearer tokens, passwords in URLs, a PEM block whose end is cut off, and
//     looser prefixes of the token families above;
//  3. home-directory prefixes (/home/<user>, /Users/<user>, /root, C:\Users\<user>) by "~".
//
// Redaction is by shape: a secret of no known shape (a bare password in prose) is not found. The package
// does no I/O.
package redact

import (
	"sort"
	"strings"

	"github.com/ctx-dev/ctx/store/secrets"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// Rule is one redaction-only detector: the secret is the capture group Group of RE (0: the whole match).
// RE runs only around the occurrences of Keywords (lower case), on their line unless Multiline
// (secrets.FindAll).
type Rule struct {
	ID        string
	Keywords  []string
	Multiline bool
	RE        *lazyre.Regexp
	Group     int
	// Keep, when set, reports values that are no secret (a placeholder, a variable reference).
	Keep func(v string) bool
}

// Rules are the redaction-only detectors, tried after the secret detector's rules.
var Rules = []Rule{
	{ID: "private-key", Keywords: []string{"private key"}, Multiline: true,
		RE: lazyre.New(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\sA-Za-z0-9+/=:,.\\-]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|[\sA-Za-z0-9+/=:,.\\-]*)`)},
	{ID: "authorization-header", Keywords: []string{"authorization"}, RE: lazyre.New(`(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|token|basic|digest|bot)\s+)?([A-Za-z0-9._~+/=:-]{6,})`), Group: 1, Keep: schemeOrReference},
	{ID: "bearer-token", Keywords: []string{"bearer"}, RE: lazyre.New(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{12,}=*)`), Group: 1, Keep: reference},
	{ID: "url-credentials", Keywords: []string{"://"}, RE: lazyre.New(`(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@"'<>]{1,256}:([^\s/@"'<>]{1,256})@`), Group: 1, Keep: reference},
	{ID: "openai-api-key", Keywords: []string{"sk-"}, RE: lazyre.New(`\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}`)},
	{ID: "github-token", Keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, RE: lazyre.New(`\b(?:gh[pousr]_[0-9A-Za-z]{20,}|github_pat_[0-9A-Za-z_]{22,})`)},
	{ID: "slack-token", Keywords: []string{"xox"}, RE: lazyre.New(`\bxox[a-z]-[0-9A-Za-z-]{10,}`)},
	{ID: "stripe-key", Keywords: []string{"k_live_", "k_test_", "k_prod_"}, RE: lazyre.New(`\b[rsp]k_(?:live|test|prod)_[0-9A-Za-z]{10,}`)},
	{ID: "google-api-key", Keywords: []string{"aiza"}, RE: lazyre.New(`\bAIza[0-9A-Za-z_-]{30,}`)},
	{ID: "aws-access-key-id", Keywords: []string{"akia", "asia", "abia", "acca", "a3t"}, RE: lazyre.New(`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{ID: "jwt", Keywords: []string{"eyj"}, RE: lazyre.New(`\beyJ[0-9A-Za-z_-]{8,}\.eyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}`)},
}

// secretWords are the words (lower case) that make a key name a secret's: password, passwd, passphrase,
// secret, token, api key, access key, private key, credential(s), session key. PWD is left out (the shell's
// working directory), and so is "auth" alone ("author").
var secretWords = []string{"passw", "passphrase", "secret", "token", "apikey", "api_key", "api-key", "accesskey",
	"access_key", "access-key", "privatekey", "private_key", "private-key", "credential", "sessionkey", "session_key",
	"session-key"}

// assignments finds the values assigned to a key whose name holds a secret word, .env, shell, YAML or JSON
// style (`DB_PASSWORD=v`, `export API_KEY="v"`, `token: v`, `"client_secret": "v"`, also with the quotes
// escaped as in JSON text), rule "secret-assignment": the key is the run of letters, digits, '_', '.' and
// '-' around the word; then an optional quote, ':', '=' or ':=' (spaces and tabs around it), an optional
// quote, and the value up to a space, quote, backslash, backquote, ',', ';', ')', '}' or ']' (at most 512
// bytes). Values notSecretValue keeps are left. A hand-written scan: linear in the text.
func assignments(text, lower string) []span {
	var out []span
	seen := map[int]bool{}
	n := len(text)
	for _, w := range secretWords {
		for from := 0; ; {
			j := strings.Index(lower[from:], w)
			if j < 0 {
				break
			}
			at := from + j
			from = at + len(w)
			i := at + len(w)
			for i < n && keyByte(text[i]) {
				i++
			}
			if i < n && text[i] == '\\' {
				i++
			}
			if i < n && (text[i] == '"' || text[i] == '\'') {
				i++
			}
			for i < n && (text[i] == ' ' || text[i] == '\t') {
				i++
			}
			switch {
			case strings.HasPrefix(text[i:], ":="):
				i += 2
			case i < n && (text[i] == '=' || text[i] == ':'):
				i++
			default:
				continue
			}
			for i < n && (text[i] == ' ' || text[i] == '\t') {
				i++
			}
			if i < n && text[i] == '\\' {
				i++
			}
			if i < n && (text[i] == '"' || text[i] == '\'') {
				i++
			}
			vs := i
			for i < n && i-vs < 512 && valueByte(text[i]) {
				i++
			}
			if i == vs || seen[vs] || notSecretValue(text[vs:i]) {
				continue
			}
			seen[vs] = true
			out = append(out, span{vs, i, "secret-assignment"})
		}
	}
	return out
}

func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

func valueByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', '"', '\'', '\\', '`', ',', ';', ')', '}', ']':
		return false
	}
	return true
}

// reference reports values that name a secret rather than hold one: a variable ($X, ${X}, %X%), a template
// ({{x}}, <x>) or a placeholder of package secrets.
func reference(v string) bool {
	return strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") || strings.HasPrefix(v, "{") ||
		strings.HasPrefix(v, "<") || strings.HasPrefix(v, "[REDACTED") || secrets.Placeholder(v)
}

// schemeOrReference keeps an authentication scheme's name (the value after it is the secret) and references.
func schemeOrReference(v string) bool {
	switch strings.ToLower(v) {
	case "bearer", "token", "basic", "digest", "bot":
		return true
	}
	return reference(v)
}

// notSecretValue keeps what an assignment to a secret-named key holds when it is no secret: a reference,
// a boolean or null, a short number (max_tokens=4096), or a call or attribute (os.environ["X"], getToken()).
func notSecretValue(v string) bool {
	if reference(v) {
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "nil", "none", "yes", "no", "required", "optional", "string", "str", "bool", "int":
		return true
	}
	if len(v) <= 8 && strings.Trim(v, "0123456789") == "" {
		return true
	}
	return strings.ContainsAny(v, "([") || strings.HasPrefix(v, "os.") || strings.HasPrefix(v, "process.env")
}

// home matches home-directory prefixes (group 1): /home/<user>, /Users/<user>, /root, C:\Users\<user> (also
// with doubled backslashes, as in JSON text), each followed by a separator or the end of the text.
var home = lazyre.New(`(/(?:home|Users)/[^/\\\s"'<>:]{1,128}|/root|(?i:[A-Z]):(?:\\{1,2}|/)(?i:users)(?:\\{1,2}|/)[^/\\\s"'<>:]{1,128})(?:[/\\\s"'<>:,;)\]}]|$)`)

// Redaction is one replacement.
type Redaction struct {
	Rule string `json:"rule"` // the rule id, "home-dir" for a home-directory prefix
	Line int    `json:"line"` // 1-based line of the text it was in
}

// Marker is what a redacted secret becomes: "[REDACTED:<rule id>]".
func Marker(rule string) string { return "[REDACTED:" + rule + "]" }

type span struct {
	start, end int
	rule       string
}

// String redacts text and lists what it replaced, in text order. The text is first normalised as a
// terminal shows it (secrets.Normalize: escape sequences removed, CRLF and CR as LF), so that a colour code
// glued to a key or a CRLF private key is redacted whole. Text without escapes, carriage returns or any
// match is returned as it is (the same string).
func String(text string) (string, []Redaction) { return StringHomes(text, nil) }

// StringHomes is String that also replaces by "~" each of homes (absolute paths, such as $HOME when it is
// not under /home, /Users or /root: HOME=/srv/ci/agent) where it starts a path and is followed by a
// separator or the end of the text. A home that is not absolute, or is "/", is ignored.
func StringHomes(text string, homes []string) (string, []Redaction) {
	if text == "" {
		return text, nil
	}
	text = secrets.Normalize(text)
	var spans []span
	for _, sp := range secrets.Spans(text) {
		spans = append(spans, span{sp.Start, sp.End, sp.Rule.ID})
	}
	lower := secrets.Lower(text)
	for _, r := range Rules {
		for _, loc := range secrets.FindAll(r.RE, text, lower, r.Keywords, r.Multiline) {
			s, e := loc[0], loc[1]
			if r.Group > 0 {
				if loc[2*r.Group] < 0 {
					continue
				}
				s, e = loc[2*r.Group], loc[2*r.Group+1]
			}
			if r.Keep != nil && r.Keep(text[s:e]) {
				continue
			}
			spans = append(spans, span{s, e, r.ID})
		}
	}
	spans = append(spans, assignments(text, lower)...)
	out, reds := apply(text, spans, Marker)
	// Home directories last, on the redacted text (a marker holds no path). A prefix must start a path:
	// "/srv/home/x" is left alone.
	var hs []span
	for _, loc := range secrets.FindAll(home, out, secrets.Lower(out), homeKeywords, false) {
		st, en := loc[2], loc[3]
		if st > 0 && strings.IndexByte(pathByte, out[st-1]) >= 0 {
			continue
		}
		hs = append(hs, span{st, en, "home-dir"})
	}
	hs = append(hs, extraHomes(out, homes)...)
	out, hreds := apply(out, hs, func(string) string { return "~" })
	reds = append(reds, hreds...)
	sort.SliceStable(reds, func(i, j int) bool { return reds[i].Line < reds[j].Line })
	return out, reds
}

// homeKeywords are what a home-directory prefix holds (lower case).
var homeKeywords = []string{"/home/", "/users", "/root", "\\users"}

// pathByte are the bytes that, before "/home/", make it the middle of a longer path.
const pathByte = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/~"

// apply replaces the spans (overlapping ones merged into the first, longest one) by mark(rule).
func apply(text string, spans []span, mark func(string) string) (string, []Redaction) {
	if len(spans) == 0 {
		return text, nil
	}
	sort.SliceStable(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var b strings.Builder
	var reds []Redaction
	pos, line, lineAt := 0, 1, 0
	for i := 0; i < len(spans); i++ {
		sp := spans[i]
		if sp.end <= pos {
			continue // inside the previous replacement
		}
		start := max(sp.start, pos)
		end := sp.end
		// Swallow later spans that overlap this one.
		for i+1 < len(spans) && spans[i+1].start < end {
			end = max(end, spans[i+1].end)
			i++
		}
		b.WriteString(text[pos:start])
		line += strings.Count(text[lineAt:start], "\n")
		lineAt = start
		b.WriteString(mark(sp.rule))
		reds = append(reds, Redaction{Rule: sp.rule, Line: line})
		pos = end
	}
	b.WriteString(text[pos:])
	return b.String(), reds
}

// extraHomes finds the prefixes homes in text (see StringHomes).
func extraHomes(text string, homes []string) []span {
	var hs []span
	for _, h := range homes {
		h = strings.TrimRight(h, "/")
		if len(h) < 2 || h[0] != '/' {
			continue
		}
		for from := 0; from < len(text); {
			i := strings.Index(text[from:], h)
			if i < 0 {
				break
			}
			st, en := from+i, from+i+len(h)
			from = en
			if st > 0 && strings.IndexByte(pathByte, text[st-1]) >= 0 {
				continue // the middle of a longer path
			}
			if en < len(text) && strings.IndexByte("/\\ \t\n\"'<>:,;)]}", text[en]) < 0 {
				continue // /srv/ci/agent2 is not /srv/ci/agent
			}
			hs = append(hs, span{st, en, "home-dir"})
		}
	}
	return hs
}
