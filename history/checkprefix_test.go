package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkPrefix hashes the whole prefix: SHA-256 of "<n>\x00" and the first n bytes (for n ≤ 64 KiB the
// sampled hash earlier versions recorded, so their short files stay appendable).
func TestCheckPrefixStable(t *testing.T) {
	data := make([]byte, 200<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.IntN(256))
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, n := range []int64{0, 1, 4095, 4096, 64 << 10, 64<<10 + 1, 68 << 10, 69 << 10, 200 << 10} {
		h := sha256.New()
		fmt.Fprintf(h, "%d\x00", n)
		h.Write(data[:n])
		want := hex.EncodeToString(h.Sum(nil))
		got, err := checkPrefix(f, n)
		if err != nil || got != want {
			t.Fatalf("n=%d: %s %v, want %s", n, got, err, want)
		}
	}
	if _, err := checkPrefix(f, 300<<10); err == nil {
		t.Fatal("a prefix longer than the file hashed without an error")
	}
}

// TestSameLengthEditReimported: a transcript whose middle is rewritten without changing its
// length (a secret replaced by as many '*'), past the first 64 KiB and more than 4 KiB before the end, is
// re-imported whole, and so is one rewritten the same way and then appended to: the old text is no longer
// searchable. The sampled check hash (head and the 4 KiB before the offset) took the first as unchanged
// and the second as a pure append.
func TestSameLengthEditReimported(t *testing.T) {
	for _, appendToo := range []bool{false, true} {
		t.Run(fmt.Sprint("append=", appendToo), func(t *testing.T) {
			ix := openTestIndex(t)
			path := filepath.Join(t.TempDir(), "p", "s1.jsonl")
			src := Source{Provider: ClaudeCode, Format: FormatClaude, Path: path}
			var b strings.Builder
			for i := range 400 {
				text := strings.Repeat(fmt.Sprintf("filler %d lorem ipsum dolor sit amet ", i), 20)
				if i == 200 {
					text = "the db password is hunter2zebra " + text
				}
				b.WriteString(claudeUser(fmt.Sprintf("u%04d", i), text))
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			if r := importOne(t, ix, src); r.Events != 400 {
				t.Fatalf("first import: %+v", r)
			}
			edited := strings.Replace(b.String(), "hunter2zebra", "************", 1)
			if appendToo {
				edited += claudeUser("u9999", "one more message")
			}
			before, _ := os.Stat(path)
			if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			// The edit moves the mtime (as sed -i does); make sure of it on a coarse clock.
			later := before.ModTime().Add(time.Second)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
			r := importOne(t, ix, src)
			if r.Action != "imported" {
				t.Fatalf("after the edit: %s (%d events), want imported", r.Action, r.Events)
			}
			res, err := ix.Search(context.Background(), Query{Text: "hunter2zebra"})
			if err != nil || len(res.Hits) != 0 {
				t.Fatalf("the redacted text is still searchable: %d hits, %v", len(res.Hits), err)
			}
			if r := importOne(t, ix, src); r.Action != "unchanged" {
				t.Fatalf("third import: %+v", r)
			}
		})
	}
}
