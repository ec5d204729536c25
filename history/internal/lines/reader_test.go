package lines

import (
	"io"
	"strings"
	"testing"
)

func TestReaderOffsetsAndLongLines(t *testing.T) {
	in := "ab\n" + strings.Repeat("x", 100) + "\n\ncd\r\nlast"
	r := New(strings.NewReader(in), 10, 50)
	type got struct {
		data       string
		start, end int64
		complete   bool
		tooLong    bool
	}
	var all []got
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, got{string(l.Data), l.Start, l.End, l.Complete, l.TooLong})
	}
	want := []got{
		{"ab", 10, 13, true, false},
		{"", 13, 114, true, true},
		{"", 114, 115, true, false},
		{"cd", 115, 119, true, false},
		{"last", 119, 123, false, false},
	}
	if len(all) != len(want) {
		t.Fatalf("got %+v", all)
	}
	for i := range want {
		if all[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, all[i], want[i])
		}
	}
}

// A line far longer than the reader's buffer is read whole when within the bound.
func TestReaderLongerThanBuffer(t *testing.T) {
	long := strings.Repeat("y", 1<<20)
	r := New(strings.NewReader(long+"\nz\n"), 0, 2<<20)
	l, err := r.Next()
	if err != nil || len(l.Data) != 1<<20 || l.TooLong {
		t.Fatalf("%d %v %v", len(l.Data), l.TooLong, err)
	}
	l, err = r.Next()
	if err != nil || string(l.Data) != "z" {
		t.Fatalf("%q %v", l.Data, err)
	}
}
