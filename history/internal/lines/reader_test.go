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

// Readers closed and made again reuse their buffers: a line never carries bytes of an earlier input,
// whether it fits in the read buffer, spans it, or is the partial last line.
func TestReaderReuse(t *testing.T) {
	long := strings.Repeat("L", bufSize+17)
	inputs := []string{
		"first\n" + long + "\nshort\n",
		"x\n" + long[:bufSize-1] + "\ntail",
		"a\nb",
	}
	for round := range 3 {
		for _, in := range inputs {
			r := New(strings.NewReader(in), 0, 4*bufSize)
			var got []string
			for {
				l, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(l.Data))
			}
			r.Close()
			r.Close() // a second Close is harmless
			want := strings.Split(strings.TrimSuffix(in, "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("round %d: %d lines, want %d", round, len(got), len(want))
			}
		}
	}
}
