package store

import (
	"sync"
	"sync/atomic"

	"github.com/ctx-dev/ctx/gitstore"
)

// madeBlobsMax bounds the bytes madeBlobs keeps: the merged files are in memory already when they are
// added (the merge's result), so the bound only keeps a pathological merge from being held past it.
const madeBlobsMax = 64 << 20

// madeBlobs are the contents of the files a pull's merge commit wrote, by blob name, for the refresh of
// .context/ that follows it in the same operation: it writes exactly those files (the merged tree's
// differences from ours, which .context/ holds), and would otherwise read back and inflate the objects
// the merge had just deflated (bench/README.md "Sixth round", branch pull6). The name is computed from
// the bytes here, so an entry can only ever be the content of the blob it is filed under; Pull drops them
// when it returns.
type madeBlobs struct {
	mu    sync.Mutex
	blobs map[gitstore.Hash][]byte
	bytes int
}

// add files each of data under its blob name, until madeBlobsMax bytes are kept. The slices are kept as
// they are: the caller no longer changes them.
func (m *madeBlobs) add(data [][]byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range data {
		if m.bytes+len(b) > madeBlobsMax {
			return
		}
		if m.blobs == nil {
			m.blobs = make(map[gitstore.Hash][]byte, len(data))
		}
		h := blobHash(b)
		if _, ok := m.blobs[h]; !ok {
			m.blobs[h] = b
			m.bytes += len(b)
		}
	}
}

// get returns the content of blob h if a merge of this operation made it; the caller must not change it.
func (m *madeBlobs) get(h gitstore.Hash) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[h]
	return b, ok
}

// drop forgets them.
func (m *madeBlobs) drop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs, m.bytes = nil, 0
}

// madeBlobsUsed counts the files a refresh wrote from madeBlobs (tests check that a pull's refresh reads
// none of its merge's files back).
var madeBlobsUsed atomic.Int64
