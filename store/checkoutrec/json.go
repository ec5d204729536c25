package checkoutrec

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Encode is json.Marshal(rec), byte for byte (Record's fields in order, map keys sorted, the
// omitempty fields left out, strings escaped as encoding/json does), without reflection: the record of a
// 10,000-file checkout is written whole by a refresh that changed many files, and encoding/json took
// ~15 ms of it (bench/README.md "Sixth round", branch pull6). TestEncodeRecordAsJSON compares both.
func Encode(rec *Record) ([]byte, error) {
	b := make([]byte, 0, 64+len(rec.Files)*150)
	b = append(b, `{"commits":`...)
	if rec.Commits == nil {
		b = append(b, "null"...)
	} else {
		keys := make([]string, 0, len(rec.Commits))
		for k := range rec.Commits {
			keys = append(keys, string(k))
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, rec.Commits[Scope(k)])
		}
		b = append(b, '}')
	}
	if rec.Incomplete {
		b = append(b, `,"incomplete":true`...)
	}
	if rec.Clean {
		b = append(b, `,"clean":true`...)
	}
	if rec.Gen != "" {
		b = append(b, `,"gen":`...)
		b = appendJSONString(b, rec.Gen)
	}
	b = append(b, `,"files":`...)
	if rec.Files == nil {
		b = append(b, "null"...)
	} else {
		paths := make([]string, 0, len(rec.Files))
		for p := range rec.Files {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		b = append(b, '{')
		for i, p := range paths {
			if i > 0 {
				b = append(b, ',')
			}
			e := rec.Files[p]
			b = appendJSONString(b, p)
			b = append(b, `:{"scope":`...)
			b = appendJSONString(b, string(e.Scope))
			b = append(b, `,"blob":`...)
			b = appendJSONString(b, e.Blob)
			if st := e.Stat; st != nil {
				b = append(b, `,"stat":{"size":`...)
				b = strconv.AppendInt(b, st.Size, 10)
				b = append(b, `,"mtime":`...)
				b = strconv.AppendInt(b, st.Mtime, 10)
				if st.Ctime != 0 {
					b = append(b, `,"ctime":`...)
					b = strconv.AppendInt(b, st.Ctime, 10)
				}
				if st.Ino != 0 {
					b = append(b, `,"ino":`...)
					b = strconv.AppendUint(b, st.Ino, 10)
				}
				b = append(b, '}')
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as encoding/json writes a string: as it is when every byte is printable
// ASCII that needs no escape (encoding/json escapes <, > and & for HTML), else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, err := json.Marshal(s)
			if err != nil { // a string always encodes
				panic(err)
			}
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
