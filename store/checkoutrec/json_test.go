package checkoutrec

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestEncodeRecordAsJSON: Encode writes what json.Marshal writes for records of generated paths,
// blobs, scopes and stat data, including strings encoding/json escapes (quotes, backslashes, control
// bytes, <>&, invalid UTF-8, U+2028) and the omitempty fields both present and absent.
func TestEncodeRecordAsJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"knowledge/", "k", "a.md", "\"", "\\", "\n", "\x00", "\x7f", "<", ">", "&", "é", "\u2028",
		"\xff", "\xc3", "日本", " ", "/", "0", "-", "_", "\t"}
	str := func() string {
		var b []byte
		for n := r.IntN(6); n >= 0; n-- {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		return string(b)
	}
	num := func() int64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return -r.Int64()
		default:
			return r.Int64()
		}
	}
	for i := 0; i < 3000; i++ {
		rec := &Record{Incomplete: r.IntN(2) == 0, Clean: r.IntN(2) == 0}
		if r.IntN(5) > 0 {
			rec.Gen = str()
		}
		if r.IntN(10) > 0 {
			rec.Commits = map[Scope]string{}
			for n := r.IntN(4); n > 0; n-- {
				rec.Commits[Scope(str())] = str()
			}
		}
		if r.IntN(10) > 0 {
			rec.Files = map[string]RecordEntry{}
			for n := r.IntN(20); n > 0; n-- {
				e := RecordEntry{Scope: Scope(str()), Blob: str()}
				if r.IntN(3) > 0 {
					e.Stat = &FileStat{Size: num(), Mtime: num(), Ctime: num(), Ino: uint64(num())}
				}
				rec.Files[str()] = e
			}
		}
		want, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("record %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
