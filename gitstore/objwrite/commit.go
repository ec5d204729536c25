package objwrite

import (
	"strconv"
	"time"

	"github.com/ctx-dev/ctx/gitstore/objread"
)

// Signature is the identity and time of a commit's author or committer line.
type Signature struct {
	Name, Email string
	When        time.Time
}

// appendTo appends "Name <email> <unix seconds> <±hhmm>" (a time before 1970 written as 0, the zone as
// When's, as go-git's Signature.Encode writes it).
func (s Signature) appendTo(b []byte) []byte {
	b = append(b, s.Name...)
	b = append(b, " <"...)
	b = append(b, s.Email...)
	b = append(b, "> "...)
	u := s.When.Unix()
	if u < 0 {
		u = 0
	}
	b = strconv.AppendInt(b, u, 10)
	b = append(b, ' ')
	return s.When.AppendFormat(b, "-0700")
}

// EncodeCommit returns the content of a commit object: "tree <hex>", one "parent <hex>" line per parent
// in order, the author and committer lines, a blank line and message as it is (gitformat-commit). The
// bytes are those of go-git's Commit.Encode for a commit without merge tag, encoding, extra header or
// signature (TestEncodeCommitSameAsGoGit), which is every commit ctx writes. The caller checks that the
// names and e-mail addresses hold no '<', '>' or newline (identcache.Ident.Valid).
func EncodeCommit(tree objread.Hash, parents []objread.Hash, author, committer Signature, message string) []byte {
	b := make([]byte, 0, 46+48*len(parents)+2*(len(author.Name)+len(author.Email)+40)+len(message)+2)
	b = append(b, "tree "...)
	b = append(b, tree.String()...)
	b = append(b, '\n')
	for _, p := range parents {
		b = append(b, "parent "...)
		b = append(b, p.String()...)
		b = append(b, '\n')
	}
	b = append(b, "author "...)
	b = author.appendTo(b)
	b = append(b, "\ncommitter "...)
	b = committer.appendTo(b)
	b = append(b, "\n\n"...)
	return append(b, message...)
}
