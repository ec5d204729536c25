package mcp

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ctx-dev/ctx/mcp/storesearch"
)

// maxSearchText bounds what the search reads of one entry (storesearch.MaxText).
const maxSearchText = storesearch.MaxText

func boundText(s string) string { return storesearch.BoundText(s) }

// ctxInserter adds documents to the copy in a transaction: the row, the body and the words.
type ctxInserter struct {
	doc, body, term *sql.Stmt
}

func newCtxInserter(ctx context.Context, tx *sql.Tx) (*ctxInserter, error) {
	var in ctxInserter
	var err error
	if in.doc, err = tx.PrepareContext(ctx, `INSERT OR REPLACE INTO docs(id, cls, name, ord, kind, key, title, uri, sess, event, at, path, nw)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	if in.body, err = tx.PrepareContext(ctx, `INSERT OR REPLACE INTO bodies(id, body) VALUES (?, ?)`); err != nil {
		in.close()
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	if in.term, err = tx.PrepareContext(ctx, `INSERT OR REPLACE INTO terms(term, id, tf) VALUES (?, ?, ?)`); err != nil {
		in.close()
		return nil, fmt.Errorf("store search copy: %w", err)
	}
	return &in, nil
}

func (in *ctxInserter) close() {
	for _, st := range []*sql.Stmt{in.doc, in.body, in.term} {
		if st != nil {
			_ = st.Close()
		}
	}
}

// add inserts one document: its row, its body (bounded) and the counts of the words of its text
// (bounded).
func (in *ctxInserter) add(ctx context.Context, id string, cls int, name string, ord int,
	kind, key, title, uri, sess, event, at, text, body, path string) error {
	ws := storesearch.Words(boundText(text))
	tf := map[string]int{}
	for _, w := range ws {
		tf[w]++
	}
	if _, err := in.doc.ExecContext(ctx, id, cls, name, ord, kind, key, title, uri, sess, event, at, path, len(ws)); err != nil {
		return fmt.Errorf("store search copy: %w", err)
	}
	if _, err := in.body.ExecContext(ctx, id, boundText(body)); err != nil {
		return fmt.Errorf("store search copy: %w", err)
	}
	for w, n := range tf {
		if _, err := in.term.ExecContext(ctx, w, id, n); err != nil {
			return fmt.Errorf("store search copy: %w", err)
		}
	}
	return nil
}

// deleteCtxDocs deletes the documents of docs matching where (with args), their bodies and words.
func deleteCtxDocs(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	for _, q := range []string{
		`DELETE FROM terms WHERE id IN (SELECT id FROM docs WHERE ` + where + `)`,
		`DELETE FROM bodies WHERE id IN (SELECT id FROM docs WHERE ` + where + `)`,
		`DELETE FROM docs WHERE ` + where,
	} {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("store search copy: %w", err)
		}
	}
	return nil
}
