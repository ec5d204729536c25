package searchsock

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// TestRequestRoundTrip: a request encodes to Magic, its body's length and the body, and the body reads
// back to the same request; fields with NUL, bodies over MaxRequest and malformed bodies are refused.
func TestRequestRoundTrip(t *testing.T) {
	r := Request{Build: "1:2:3:4.5", FP: "-", Args: []string{"ctx", "-C", "dir with space", "search", "--json", "ünïcödé", ""}}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), Magic) {
		t.Fatalf("no magic: %q", b)
	}
	n := binary.BigEndian.Uint32(b[len(Magic):])
	body := b[len(Magic)+4:]
	if int(n) != len(body) {
		t.Fatalf("length %d, body %d bytes", n, len(body))
	}
	got, err := ParseBody(body)
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("read back %#v, %v; want %#v", got, err, r)
	}
	if _, err := (Request{Build: "b", FP: "-", Args: []string{"ctx", "a\x00b"}}).Encode(); err == nil {
		t.Error("a field with NUL was encoded")
	}
	if _, err := (Request{Build: "b", FP: "-", Args: []string{"ctx", strings.Repeat("a", MaxRequest)}}).Encode(); err == nil {
		t.Error("a body over MaxRequest was encoded")
	}
	for _, body := range []string{"", "a", "a\x00b\x00", "a\x00b\x00c", "\x00"} {
		if _, err := ParseBody([]byte(body)); err == nil {
			t.Errorf("malformed body %q read", body)
		}
	}
}
