package fairshare

import (
	"fmt"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		demand []int
		room   int
		want   string
	}{
		{[]int{10, 100, 100}, 90, "[10 40 40]"},
		{[]int{10, 20}, 100, "[10 20]"},
		{[]int{50, 50, 50}, 30, "[10 10 10]"},
		{[]int{}, 10, "[]"},
	} {
		if got := fmt.Sprint(Split(c.demand, c.room)); got != c.want {
			t.Errorf("Split(%v, %d) = %s, want %s", c.demand, c.room, got, c.want)
		}
	}
}
