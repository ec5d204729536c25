// Command histgen writes a large synthetic agent history made from the real transcripts of the shared
// corpus, for the history benchmarks (bench/README.md "Agent history: import and search").
//
//	go run ./bench/histgen -corpus DIR -out DIR [-sessions 20000] [-events 300000] [-seed 1]
//
// It imports the corpus into a scratch index to learn each line-based session (Claude Code, Codex,
// Cursor, Copilot CLI, Gemini CLI JSONL): its provider, native id, working directory and records per
// event. Each generated session is then a window of one real session's lines: its first lines (the
// session header: Codex's session_meta, Gemini's and Copilot's start records) and a contiguous run of
// the rest chosen at random, long enough for a drawn event count (geometric, its mean steered so that the
// total lands on -events). Templates are picked by provider weight (Claude Code and Codex 40% each,
// Cursor 8%, Copilot and Gemini 6%) so every provider's shapes occur, and within a provider in
// proportion to their event counts. In the copied lines every UUID is
// replaced by a new one derived from the generated session's number, the native id by a new one, and the
// template's working directory by one of 2,000 project directories drawn with a Zipf law
// (/home/dev/src/proj-N), so project names, ids and paths vary as in a real history while the words
// of the text keep the corpus's frequencies. Files are laid out under -out/<provider>/ as each
// provider lays them out under its root, so that `ctx history import` under the environment histgen
// prints (CLAUDE_CONFIG_DIR=OUT/claude-code, CODEX_HOME=OUT/codex, …) finds them all. The same seed writes the same bytes.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ctx-dev/ctx/history"
)

var uuidRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

type template struct {
	provider history.Provider
	native   string
	cwd      string
	lines    [][]byte
	header   int     // lines always kept
	perLine  float64 // events per line
}

func main() {
	corpus := flag.String("corpus", "../shared/corpus/agent-history", "the shared corpus of real transcripts")
	out := flag.String("out", "", "output directory (created; must not exist)")
	sessions := flag.Int("sessions", 20000, "sessions to write")
	events := flag.Int("events", 300000, "events to aim for in total")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *out == "" || *sessions <= 0 || *events < *sessions {
		fmt.Fprintln(os.Stderr, "usage: histgen -out DIR [-corpus DIR] [-sessions N] [-events M ≥ N] [-seed S]")
		os.Exit(2)
	}
	if err := run(context.Background(), *corpus, *out, *sessions, *events, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "histgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, corpus, out string, nSessions, nEvents int, seed uint64) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists", out)
	}
	if err := os.MkdirAll(filepath.Join(out, "home"), 0o755); err != nil {
		return err
	}
	byProvider, err := loadTemplates(ctx, corpus)
	if err != nil {
		return err
	}
	weights := []struct {
		p history.Provider
		w float64
	}{{history.ClaudeCode, 0.40}, {history.Codex, 0.40}, {history.Cursor, 0.08}, {history.CopilotCLI, 0.06}, {history.GeminiCLI, 0.06}}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	zipf := rand.NewZipf(rng, 1.1, 4, 1999)
	written := 0.0
	var bytesOut int64
	for i := range nSessions {
		x, p := rng.Float64(), weights[0].p
		for _, w := range weights {
			if x < w.w {
				p = w.p
				break
			}
			x -= w.w
		}
		ts := byProvider[p]
		if len(ts) == 0 {
			return fmt.Errorf("no %s session in the corpus", p)
		}
		t := pick(rng, ts)
		mean := (float64(nEvents) - written) / float64(nSessions-i)
		want := 1 + int(rng.ExpFloat64()*max(mean-1, 0.5))
		body := len(t.lines) - t.header
		n := min(body, int(float64(want)/t.perLine+0.5))
		n = max(n, min(body, 1))
		start := 0
		if body > n {
			start = rng.IntN(body - n + 1)
		}
		lines := append(append([][]byte{}, t.lines[:t.header]...), t.lines[t.header+start:t.header+start+n]...)
		written += float64(t.header+n) * t.perLine
		data, native := rename(t, lines, i, int(zipf.Uint64()))
		path := layout(out, t.provider, native, i)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		bytesOut += int64(len(data))
	}
	fmt.Printf("histgen: %d sessions, about %.0f events, %.1f MB of JSONL under %s\n", nSessions, written, float64(bytesOut)/1e6, out)
	fmt.Printf("import it with: env %s ctx history import\n", strings.Join(Env(out), " "))
	return nil
}

// pick draws a template with a probability proportional to its event count (long sessions supply
// the long windows).
func pick(rng *rand.Rand, ts []*template) *template {
	total := 0.0
	for _, t := range ts {
		total += t.perLine * float64(len(t.lines))
	}
	x := rng.Float64() * total
	for _, t := range ts {
		x -= t.perLine * float64(len(t.lines))
		if x < 0 {
			return t
		}
	}
	return ts[len(ts)-1]
}

// Env is the environment under which discovery finds exactly the history written under out (HOME and
// XDG_DATA_HOME point at empty folders under out).
func Env(out string) []string {
	return []string{
		"HOME=" + filepath.Join(out, "home"), "XDG_DATA_HOME=" + filepath.Join(out, "home"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(out, string(history.ClaudeCode)),
		"CODEX_HOME=" + filepath.Join(out, string(history.Codex)),
		"GEMINI_CLI_HOME=" + filepath.Join(out, string(history.GeminiCLI)),
		"CURSOR_DATA_DIR=" + filepath.Join(out, string(history.Cursor)),
		"COPILOT_HOME=" + filepath.Join(out, string(history.CopilotCLI)),
	}
}

// newUUID derives a UUID (version 4 shape) from the generated session number and the old one.
func newUUID(i int, old string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d/%s", i, strings.ToLower(old))))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func rename(t *template, lines [][]byte, i, project int) ([]byte, string) {
	data := bytes.Join(lines, []byte("\n"))
	data = append(data, '\n')
	native := newUUID(i, t.native)
	if !uuidRE.MatchString(t.native) {
		data = bytes.ReplaceAll(data, []byte(t.native), []byte(native))
	}
	data = uuidRE.ReplaceAllFunc(data, func(m []byte) []byte { return []byte(newUUID(i, string(m))) })
	if t.cwd != "" && len(t.cwd) > 1 {
		data = bytes.ReplaceAll(data, []byte(t.cwd), fmt.Appendf(nil, "/home/dev/src/proj-%d", project))
	}
	return data, native
}

func layout(out string, p history.Provider, native string, i int) string {
	day := fmt.Sprintf("%02d", 1+i%28)
	switch p {
	case history.ClaudeCode:
		return filepath.Join(out, string(p), "projects", fmt.Sprintf("-home-dev-src-p%d", i%500), native+".jsonl")
	case history.Codex:
		return filepath.Join(out, string(p), "sessions", "2026", "01", day, "rollout-2026-01-"+day+"T00-00-00-"+native+".jsonl")
	case history.CopilotCLI:
		return filepath.Join(out, string(p), "session-state", native, "events.jsonl")
	case history.Cursor:
		return filepath.Join(out, string(p), "projects", fmt.Sprintf("p%d", i%500), "agent-transcripts", native, native+".jsonl")
	default:
		return filepath.Join(out, string(p), ".gemini", "tmp", fmt.Sprintf("p%d", i%500), "chats", native+".jsonl")
	}
}

// loadTemplates imports the corpus into a scratch index and returns its line-based sessions by provider.
func loadTemplates(ctx context.Context, corpus string) (map[history.Provider][]*template, error) {
	tmp, err := os.MkdirTemp("", "histgen")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ix, err := history.Open(ctx, tmp)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	byProvider := map[history.Provider][]*template{}
	for _, p := range []history.Provider{history.ClaudeCode, history.Codex, history.Cursor, history.CopilotCLI, history.GeminiCLI} {
		srcs, err := history.Discover(ctx, p, filepath.Join(corpus, string(p)), true)
		if err != nil {
			return nil, err
		}
		if _, err := ix.Import(ctx, srcs); err != nil {
			return nil, err
		}
		ss, err := ix.Sessions(ctx, p, 1000)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			if !strings.HasSuffix(s.SourcePath, ".jsonl") || s.EventCount < 2 {
				continue
			}
			lines, err := readLines(s.SourcePath)
			if err != nil {
				return nil, err
			}
			header := min(len(lines)-1, 2)
			byProvider[p] = append(byProvider[p], &template{provider: p, native: s.NativeID, cwd: s.CWD, lines: lines,
				header: header, perLine: float64(s.EventCount) / float64(len(lines))})
		}
	}
	return byProvider, nil
}

func readLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var lines [][]byte
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
	}
	return lines, sc.Err()
}
