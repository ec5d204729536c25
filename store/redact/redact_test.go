package redact

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store/redact/redacttest"
	"github.com/ctx-dev/ctx/store/secrets"
)

func TestPlantedSecretsAreRedacted(t *testing.T) {
	plants := redacttest.Plants()
	if len(plants) < 20 {
		t.Fatalf("%d planted kinds, want at least 20", len(plants))
	}
	var all []string
	for _, p := range plants {
		t.Run(p.Kind, func(t *testing.T) {
			text := "before\n" + p.Line + "\nafter"
			out, reds := String(text)
			if strings.Contains(out, p.Secret) {
				t.Fatalf("secret survived: %q", out)
			}
			if len(reds) == 0 || !strings.Contains(out, "[REDACTED:") {
				t.Fatalf("no redaction reported: %q %+v", out, reds)
			}
			if !strings.HasPrefix(out, "before\n") || !strings.HasSuffix(out, "\nafter") {
				t.Errorf("text around the secret changed: %q", out)
			}
			if want := 1 + strings.Count(text[:strings.Index(text, p.Secret)], "\n"); reds[0].Line > want {
				t.Errorf("line %d, want at most %d", reds[0].Line, want)
			}
		})
		all = append(all, p.Line)
	}
	// All of them in one text, and inside JSON-escaped text as transcripts hold tool inputs.
	joined := strings.Join(all, "\n")
	escaped := strings.ReplaceAll(strings.ReplaceAll(joined, `"`, `\"`), "\n", `\n`)
	for _, text := range []string{joined, escaped} {
		out, _ := String(text)
		for _, p := range plants {
			if strings.Contains(out, p.Secret) {
				t.Errorf("%s survived in the combined text", p.Kind)
			}
		}
	}
}

func TestHomeDirectories(t *testing.T) {
	cases := map[string]string{
		"cd /home/ada/src/app && ls":       "cd ~/src/app && ls",
		"cwd: /home/ada":                   "cwd: ~",
		"/Users/Ada Lovelace/x":            "/Users/Ada Lovelace/x", // a space ends the name: left as it is
		"/Users/ada/proj/main.go:12":       "~/proj/main.go:12",
		`C:\Users\ada\proj\main.go`:        `~\proj\main.go`,
		`"C:\\Users\\ada\\proj"`:           `"~\\proj"`,
		"/root/.bashrc":                    "~/.bashrc",
		"/srv/home/ada/x":                  "/srv/home/ada/x",
		"see /home/ada/a and /home/bob/b.": "see ~/a and ~/b.",
	}
	for in, want := range cases {
		got, _ := String(in)
		if in == "/Users/Ada Lovelace/x" {
			want = "~ Lovelace/x"
		}
		if got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKeepsWhatIsNoSecret(t *testing.T) {
	for _, text := range []string{
		"max_tokens=4096",
		"password: ${DB_PASSWORD}",
		"API_KEY=$API_KEY",
		"token = getToken()",
		"client_secret = os.environ[\"CLIENT_SECRET\"]",
		"Authorization: Bearer $TOKEN",
		"https://example.com/path@v2",
		"the author=ada wrote it",
		"func parseSessionMeta(b []byte) error",
		"PWD=/srv/app",
		"here are my credentials:\nthe list follows",
	} {
		if got, reds := String(text); got != text {
			t.Errorf("String(%q) = %q (%+v), want it unchanged", text, got, reds)
		}
	}
}

func TestTruncatedPEMBlock(t *testing.T) {
	text := "$ head -3 key.pem\n-----BEGIN RSA PRIVATE KEY-----\n" + redacttest.Gen(1, 64, "ABCDEFabcdef0123456789+/") + "\n"
	got, _ := String(text)
	if strings.Contains(got, "ABCDEF"[:0]+redacttest.Gen(1, 64, "ABCDEFabcdef0123456789+/")) {
		t.Fatalf("a PEM block without its end survived: %q", got)
	}
}

func FuzzString(f *testing.F) {
	for _, p := range redacttest.Plants() {
		f.Add(p.Line)
	}
	f.Add("/home/ada/x C:\\Users\\b\\c")
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := String(s)
		again, reds := String(out)
		if again != out {
			// Redaction is idempotent: a redacted text has nothing left to redact.
			t.Fatalf("not idempotent: %q -> %q -> %q (%+v)", s, out, again, reds)
		}
	})
}

// corpusText is the project's corpus of real transcripts (../shared/corpus/agent-history), concatenated;
// the benchmark skips without it.
func corpusText(b *testing.B) string {
	for _, dir := range []string{os.Getenv("CTX_HISTORY_CORPUS"), "../../../shared/corpus/agent-history", "/work/shared/corpus/agent-history"} {
		if dir == "" {
			continue
		}
		var sb strings.Builder
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json")) {
				if data, err := os.ReadFile(p); err == nil {
					sb.Write(data)
				}
			}
			return nil
		})
		if sb.Len() > 0 {
			return sb.String()
		}
	}
	b.Skip("the agent-history corpus is not available")
	return ""
}

// BenchmarkString redacts the corpus of real transcripts (about 2 MB): the cost `ctx history share` pays
// per byte shared. Compare with BenchmarkDetect, the secret detector alone on the same text.
func BenchmarkString(b *testing.B) {
	text := corpusText(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		String(text)
	}
}

// BenchmarkDetect is the secret detector of public writes (package secrets) on the same text.
func BenchmarkDetect(b *testing.B) {
	text := corpusText(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		secrets.Spans(text)
	}
}

// FuzzPlantedSurvives: whatever text surrounds a planted secret (on lines of its own), it is redacted.
func FuzzPlantedSurvives(f *testing.F) {
	f.Add("before", "after", uint8(0))
	f.Add(strings.Repeat("key=", 300), strings.Repeat("x", 5000), uint8(7))
	f.Add("-----BEGIN RSA PRIVATE KEY-----", "sk-", uint8(14))
	plants := redacttest.Plants()
	f.Fuzz(func(t *testing.T, before, after string, k uint8) {
		p := plants[int(k)%len(plants)]
		out, _ := String(before + "\n" + p.Line + "\n" + after)
		if strings.Contains(out, p.Secret) {
			t.Fatalf("%s survived between %q and %q", p.Kind, before, after)
		}
	})
}

// TestTerminalEscapesAndCRLF: a key right after a colour code (grep --color=always) and a private key with
// CRLF line endings are redacted whole; the record keeps the text as a terminal shows it.
func TestTerminalEscapesAndCRLF(t *testing.T) {
	gh := "ghp_" + redacttest.Gen(2, 36, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
	aws := "AKIA" + redacttest.Gen(3, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
	body := redacttest.Gen(4, 64, "ABCDEFabcdef0123456789+/")
	for name, text := range map[string]string{
		"colour before github token": "GH=\x1b[32m" + gh + "\x1b[0m\n",
		"grep colour before aws key": "AWS_ACCESS_KEY_ID=\x1b[01;31m\x1b[K" + aws + "\x1b[m\x1b[K\n",
		"crlf private key":           "-----BEGIN PRIVATE KEY-----\r\n" + body + "\r\n" + body + "\r\n-----END PRIVATE KEY-----\r\n",
	} {
		got, reds := String(text)
		for _, secret := range []string{gh, aws, body} {
			if strings.Contains(got, secret) {
				t.Errorf("%s: %q survived in %q", name, secret[:8], got)
			}
		}
		if len(reds) == 0 || strings.ContainsAny(got, "\x1b\r") {
			t.Errorf("%s: %d redactions, output %q", name, len(reds), got)
		}
	}
}
