package merge

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

func TestHangProbe(t *testing.T) {
	in := [3][]byte{
		[]byte("---\nauthor: Ada Lovelace <ada@example.com>\nagent: claude-code\nupdated_at: 2026-01-01T00:00:00Z\nprova"),
		[]byte("---\nauthor: Ada Lovelace <ada@example.com>\nagent: claude-code\nupdated_at: 2026-01-01T00:00:00Z\nprovenance: agent_generated\nscope: public\n---\n# Architecture\n\nx\nline 2\nline 3\nline 4\nline 5\n"),
		[]byte("---\nauthor: Ada Lovelace <ada@example.com>\nagent: claude-code\nupdated_at: 2026-01-01T00:00:00Z\nprovenance: agent_generated\nscope: public\n---\n# Architecture\n\nline 1\nline 2\nl\xff\xff\xff\x803\nline 4\ny\n"),
	}
	for sel := 0; sel < 16; sel++ {
		for a := 0; a < 3; a++ {
			for i := 0; i <= len(in[a]); i++ {
				for j := i; j <= len(in[a]) && j < i+40; j++ {
					cur := in
					cur[a] = append(append([]byte{}, in[a][:i]...), in[a][j:]...)
					done := make(chan bool)
					go func() {
						select {
						case <-done:
						case <-time.After(3 * time.Second):
							buf := make([]byte, 1<<20)
							n := runtime.Stack(buf, true)
							os.WriteFile("/tmp/gen/hang.txt", []byte(fmt.Sprintf("%d %q %q %q\n%s", sel, cur[0], cur[1], cur[2], buf[:n])), 0o644)
							os.Exit(3)
						}
					}()
					runFuzzTree(t, uint8(sel), cur[0], cur[1], cur[2])
					close(done)
				}
			}
		}
	}
}
