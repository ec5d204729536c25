package lazyre

import (
	"sync"
	"testing"
)

func TestGetCompilesOnceConcurrently(t *testing.T) {
	r := New(`a(b+)c`)
	if r.re != nil {
		t.Fatal("compiled before the first Get")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m := r.Get().FindStringSubmatch("xabbbc"); len(m) != 2 || m[1] != "bbb" {
				t.Errorf("match %q", m)
			}
		}()
	}
	wg.Wait()
	if r.String() != `a(b+)c` {
		t.Errorf("String %q", r.String())
	}
}
