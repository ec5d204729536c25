package secrets

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/internal/lazyre"
)

// gen returns n characters of alphabet from a fixed-seed generator: test tokens are built at run time so
// that this file holds no string that a secret scanner would flag.
func gen(seed uint64, n int, alphabet string) string {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnum = "ABCDEFGHJKLMNPQRSTUVWXYZabcdeghijkmnopqrstuvwxyz23456789"
	upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64   = alnum + "+/"
)

func pem() string {
	var body []string
	for i := 0; i < 6; i++ {
		body = append(body, gen(uint64(100+i), 64, b64))
	}
	return "-----BEGIN " + "RSA PRIVATE KEY-----\n" + strings.Join(body, "\n") + "\n-----END RSA PRIVATE KEY-----\n"
}

func TestScanFindsEachShape(t *testing.T) {
	cases := map[string]string{
		"private-key":             "the deploy key:\n\n" + pem(),
		"aws-access-key-id":       "aws_access_key_id = " + "AKIA" + gen(1, 16, upper),
		"aws-secret-access-key":   "aws_secret_access_key = " + gen(2, 38, b64) + "9x",
		"github-pat":              "token: " + "ghp_" + gen(3, 36, alnum),
		"github-fine-grained-pat": "GH=" + "github_pat_" + gen(4, 82, alnum),
		"gitlab-pat":              "glpat-" + gen(5, 20, alnum),
		"slack-token":             "SLACK_BOT=" + "xoxb-" + "2931847561-4718264531-" + gen(6, 24, alnum),
		"slack-webhook":           "post to https://hooks.slack.com/services/" + "T0" + gen(7, 7, upper) + "/B0" + gen(8, 7, upper) + "/" + gen(9, 24, alnum),
		"stripe-secret-key":       "stripe: " + "sk_live_" + gen(10, 24, alnum),
		"anthropic-api-key":       "ANTHROPIC_API_KEY=" + "sk-ant-api03-" + gen(11, 93, alnum) + "AA",
		"openai-api-key":          "OPENAI_API_KEY=" + "sk-proj-" + gen(12, 48, alnum),
		"google-api-key":          "maps key " + "AIza" + gen(13, 35, alnum),
		"npm-token":               "//registry.npmjs.org/:_authToken=" + "npm_" + gen(14, 36, alnum),
		"pypi-token":              "password = " + "pypi-AgEIcHlwaS5vcmc" + gen(15, 60, alnum),
		"huggingface-token":       "HF_TOKEN=" + "hf_" + gen(16, 34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
		"jwt":                     "Authorization: Bearer " + "eyJ" + gen(17, 30, alnum) + ".eyJ" + gen(18, 40, alnum) + "." + gen(19, 43, alnum),
		"password-assignment":     "db:\n  password: \"" + gen(20, 20, alnum) + "\"\n",
	}
	for rule, text := range cases {
		t.Run(rule, func(t *testing.T) {
			full := "some notes\n" + text + "\nmore notes"
			f := Scan(full)
			if len(f) == 0 || f[0].Rule != rule {
				t.Fatalf("Scan(%q) = %+v, want rule %s", text, f, rule)
			}
			if want := 1 + strings.Count(full[:strings.Index(full, f[0].Match())], "\n"); f[0].Line != want || want < 2 {
				t.Errorf("line %d, want %d", f[0].Line, want)
			}
			if len(f[0].Match()) > 12 && strings.Contains(f[0].Redacted, f[0].Match()[4:]) {
				t.Errorf("redacted form %q shows the secret", f[0].Redacted)
			}
		})
	}
	for _, r := range Rules {
		if _, ok := cases[r.ID]; !ok {
			t.Errorf("rule %s has no test case", r.ID)
		}
		if r.Source == "" || r.Description == "" {
			t.Errorf("rule %s has no source or description", r.ID)
		}
	}
}

func TestScanIgnoresPlaceholdersAndProse(t *testing.T) {
	for _, text := range []string{
		"aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"password: <your password>",
		"password=${DB_PASSWORD}",
		"api_key: changeme-please-now",
		"token: xxxxxxxxxxxxxxxxxxxxxxxx",
		"The password is stored in the team vault; ask ops for the secret key.",
		"password = correcthorsebatterystaple", // no digits: a passphrase in prose, not a generated secret
		"-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
		"run task-runner sk-learn and mask-rcnn",
		"secret_key_base: Rails.application.credentials.secret_key_base",
		"client_secret = os.environ[\"CLIENT_SECRET\"]",
		"token := ghp_ (a prefix GitHub uses)",
		"api_key = \"sk_test_" + gen(30, 24, alnum)[:8] + "\"",
		"see https://hooks.slack.com/services/ for webhooks",
		"eyJhbGciOiJIUzI1NiJ9 is a header",
	} {
		if f := Scan(text); len(f) != 0 {
			t.Errorf("Scan(%q) = %+v, want none", text, f)
		}
	}
}

func TestNewIgnoresSecretsAlreadyThere(t *testing.T) {
	tok := "ghp_" + gen(40, 36, alnum)
	old := "line\n" + tok + "\n"
	if f := New(old, old+"appended line\n"); len(f) != 0 {
		t.Errorf("a secret already in the old text reported as new: %+v", f)
	}
	tok2 := "ghp_" + gen(41, 36, alnum)
	if f := New(old, old+tok2+"\n"); len(f) != 1 || f[0].Match() != tok2 || f[0].Line != 3 {
		t.Errorf("New = %+v, want the second token on line 3", f)
	}
}

// TestCorpusHasNoFindings: the real corpus (ADRs, agent instruction files, skills, conventions, agent
// transcripts) must not trip any rule; a public import of it must not be refused.
func TestCorpusHasNoFindings(t *testing.T) {
	roots := []string{filepath.Join("..", "..", "testdata", "corpus")}
	for _, shared := range []string{filepath.Join("..", "..", "..", "shared", "corpus"), "/work/shared/corpus"} {
		if _, err := os.Stat(shared); err == nil {
			roots = append(roots, shared)
			break
		}
	}
	files := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			for _, f := range Scan(string(b)) {
				t.Errorf("%s:%d: %s (%s)", p, f.Line, f.Rule, f.Redacted)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 50 {
		t.Fatalf("scanned %d files: the corpus is missing", files)
	}
	t.Logf("%d files of %v: no finding", files, roots)
}

func BenchmarkScan(b *testing.B) {
	text := strings.Repeat("Use the token from the vault; never paste an api_key into the notes.\n", 1500) // ~100 KB
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Scan(text)
	}
}

// TestScanSeesThroughTerminalEscapes: the public-write check finds a key glued to a colour code and a
// private key with CRLF endings.
func TestScanSeesThroughTerminalEscapes(t *testing.T) {
	for _, text := range []string{
		"GH=\x1b[32mghp_" + strings.Repeat("aB3", 12) + "\x1b[0m",
		"-----BEGIN PRIVATE KEY-----\r\n" + strings.Repeat("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 2) + "\r\n-----END PRIVATE KEY-----\r\n",
	} {
		if f := Scan(text); len(f) == 0 {
			t.Errorf("no finding in %q", text)
		}
	}
}

// FindAll compiles a rule's expression only for a text that holds one of its keywords: an expression
// that cannot compile (lazyre panics then) is never compiled for a text without them.
func TestFindAllCompilesOnlyWithKeyword(t *testing.T) {
	bad := lazyre.New(`(`)
	text := "---\nauthor: A <a@example.com>\n---\nnothing to see\n"
	if got := FindAll(bad, text, Lower(text), []string{"zzkeyword"}, false); got != nil {
		t.Fatalf("FindAll = %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("the expression was not compiled for a text holding its keyword")
		}
	}()
	FindAll(bad, text+"zzKeyword", Lower(text+"zzKeyword"), []string{"zzkeyword"}, false)
}

// The password rule's keywords are the words its expression starts with, so that its pre-filter lets
// through every text it can match and no more: each spelling of each word is found (matches equal to a
// run of the expression over the whole text), and the trailers of a ctx commit ("Ctx-Key: k5"), which
// the write of every entry scans, hold none of them (its expression, the largest, is not compiled).
func TestPasswordKeywordsAreTheExpressionsWords(t *testing.T) {
	var rule *Rule
	for i := range Rules {
		if Rules[i].ID == "password-assignment" {
			rule = &Rules[i]
		}
	}
	words := []string{"password", "passwd", "pwd", "secret", "secret_key", "secret-key", "secretkey", "api_key", "api-key",
		"apikey", "access_token", "access-token", "accesstoken", "auth_token", "auth-token", "authtoken", "client_secret",
		"client-secret", "clientsecret", "private_token", "private-token", "privatetoken"}
	for i, w := range words {
		for _, spelled := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
			text := "config:\n  " + spelled + ": \"" + gen(uint64(200+i), 24, alnum) + "\"\nend\n"
			got := FindAll(rule.re, text, Lower(text), rule.keywords, false)
			want := rule.re.Get().FindAllStringSubmatchIndex(text, -1)
			if len(want) != 1 || len(got) != 1 || got[0][0] != want[0][0] || got[0][1] != want[0][1] {
				t.Errorf("%s: found %v, the expression over the whole text %v", spelled, got, want)
			}
		}
	}
	msg := Lower("ctx: set knowledge k5\n\nCtx-Op: knowledge.set\nCtx-Key: k5\nCtx-Agent: claude-code\nCtx-Session: s1\nCtx-Machine: laptop\n")
	for _, k := range rule.keywords {
		if strings.Contains(msg, k) {
			t.Errorf("a commit message holds the keyword %q", k)
		}
	}
}
