package gitstore_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/gitstore/objread"
	"github.com/ctx-dev/ctx/gitstore/objwrite"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestEncodeCommitSameAsGoGit: objwrite.EncodeCommit, which gitstore and the lean front write commits
// with, gives go-git's bytes (Commit.Encode) for random commits: 0 to 3 parents, names and addresses of
// any printable text, times before 1970, zones east and west with minutes, messages with and without a
// final newline, empty.
func TestEncodeCommitSameAsGoGit(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	hash := func() objread.Hash {
		var h objread.Hash
		for i := range h {
			h[i] = byte(rnd.IntN(256))
		}
		return h
	}
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+30*60), time.FixedZone("", -(3*3600 + 30*60)),
		time.FixedZone("", 14*3600), time.FixedZone("", -12*3600), time.FixedZone("", 45*60)}
	texts := []string{"", "A", "Ann Author", "é ü 漢字", "x\ty", "a@b", "trailing ", " lead"}
	messages := []string{"", "ctx: set knowledge k\n", "no newline", "ctx: x\n\nCtx-Op: knowledge.set\nCtx-Key: k\n", "a\n\n\n"}
	sig := func() objwrite.Signature {
		when := time.Unix(rnd.Int64N(4e9)-1e9, 0).In(zones[rnd.IntN(len(zones))])
		return objwrite.Signature{Name: texts[rnd.IntN(len(texts))], Email: texts[rnd.IntN(len(texts))], When: when}
	}
	for round := range 2000 {
		tree := hash()
		parents := make([]objread.Hash, rnd.IntN(4))
		for i := range parents {
			parents[i] = hash()
		}
		author, committer := sig(), sig()
		msg := messages[rnd.IntN(len(messages))]
		got := objwrite.EncodeCommit(tree, parents, author, committer, msg)
		c := &object.Commit{TreeHash: plumbing.Hash(tree), Message: msg,
			Author:    object.Signature{Name: author.Name, Email: author.Email, When: author.When},
			Committer: object.Signature{Name: committer.Name, Email: committer.Email, When: committer.When}}
		for _, p := range parents {
			c.ParentHashes = append(c.ParentHashes, plumbing.Hash(p))
		}
		o := &plumbing.MemoryObject{}
		if err := c.Encode(o); err != nil {
			t.Fatal(err)
		}
		rd, _ := o.Reader()
		want, _ := io.ReadAll(rd)
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d:\n got %q\nwant %q", round, got, want)
		}
		if n := objwrite.Name(objread.Commit, got); n != objread.Hash(o.Hash()) {
			t.Fatalf("round %d: named %s, go-git says %s", round, n, o.Hash())
		}
	}
}
