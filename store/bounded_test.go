package store_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
)

// ReadPrefix and WithMaxRead on both readers (the checked-out tree and the refs): the size comes without
// the content, a prefix is what was asked, and a file over the limit is refused with its size.
func TestBoundedReads(t *testing.T) {
	s, _ := storetest.New(t)
	ctx := context.Background()
	body := strings.Repeat("x", 300_000)
	if _, err := s.SetEntry(ctx, store.KnowledgeKind, store.SetEntry{Key: "big", Content: body}); err != nil {
		t.Fatal(err)
	}
	checkout, err := s.CheckoutView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := s.RefView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]*store.View{"checkout": checkout, "refs": refs} {
		whole, err := v.ReadIn(ctx, store.Public, "knowledge/big.md")
		if err != nil {
			t.Fatal(err)
		}
		size := int64(len(whole))
		b, n, err := v.ReadPrefix(ctx, store.Public, "knowledge/big.md", 0)
		if err != nil || n != size || len(b) != 0 {
			t.Errorf("%s: size only: %d bytes, size %d, %v", name, len(b), n, err)
		}
		b, n, err = v.ReadPrefix(ctx, store.Public, "knowledge/big.md", 100)
		if err != nil || n != size || string(b) != string(whole[:100]) {
			t.Errorf("%s: prefix: %q, size %d, %v", name, b, n, err)
		}
		if _, _, err := v.ReadPrefix(ctx, store.Public, "knowledge/nope.md", 10); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: missing: %v", name, err)
		}
		capped := v.WithMaxRead(size - 1)
		var tl *store.TooLargeError
		if _, err := capped.ReadIn(ctx, store.Public, "knowledge/big.md"); !errors.As(err, &tl) || tl.Size != size || tl.Max != size-1 {
			t.Errorf("%s: over the limit: %v", name, err)
		}
		if _, err := capped.GetEntry(ctx, store.KnowledgeKind, "big"); !errors.As(err, &tl) {
			t.Errorf("%s: GetEntry over the limit: %v", name, err)
		}
		if b, err := v.WithMaxRead(size).ReadIn(ctx, store.Public, "knowledge/big.md"); err != nil || len(b) != int(size) {
			t.Errorf("%s: at the limit: %d bytes, %v", name, len(b), err)
		}
	}
}
