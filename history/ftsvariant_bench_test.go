package history

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ctx-dev/ctx/history/internal/ftsrank"
)

// BenchmarkFTSVariant is BenchmarkFTSFloor with what is indexed changed by $CTX_FTS_VARIANT, to bound
// what indexing less per JSONL byte could save (bench/README.md "Ninth round", import9):
//   - full: the floor itself (one ev_fts, detail=full);
//   - out-column, out-none: tool outputs in a second table with detail=column or detail=none;
//   - all-none: every body in one detail=none table (a lower bound);
//   - skip-outputs: tool outputs not indexed at all (a lower bound);
//   - drop-long: tokens of 24+ letters and digits that hold a digit (hashes, base64) left out;
//   - drop-num: tokens of digits only left out.
//
// $CTX_FTS_HASHSIZE, $CTX_FTS_AUTOMERGE and $CTX_FTS_CRISISMERGE set those FTS5 options of ev_fts, and
// $CTX_FTS_FINAL=optimize (or merge=N) runs that FTS5 command after the last commit, inside the timing.
// $CTX_FTS_KEEP=FILE keeps the last iteration's index there.
// $CTX_FTS_DUMP=FILE writes the bodies to a plain table b(id, body) of a new SQLite file, for another
// SQLite build to index the same bodies.
//
// It also logs each class's share of the bodies' bytes and tokens.
func BenchmarkFTSVariant(b *testing.B) {
	variant := os.Getenv("CTX_FTS_VARIANT")
	if variant == "" {
		variant = "full"
	}
	srcs := generatedSources(b)
	ctx := context.Background()
	ix, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	type doc struct {
		rowid int64
		body  string
		out   bool
	}
	var bodies [][]doc
	var rowid int64
	var clsBytes, clsTok [8]int64
	var longTok, numTok, allTok int64
	next, stop := ix.prepareAhead(ctx, srcs, nil)
	for j := range srcs {
		_, p, err := next(j)
		if err != nil {
			b.Fatal(err)
		}
		if p == nil {
			continue
		}
		docs := make([]doc, 0, len(p.encoded))
		for i, enc := range p.encoded {
			rowid++
			c := classOf(p.pr.Events[i].Type)
			clsBytes[c] += int64(len(enc.body))
			clsTok[c] += int64(enc.ftsLen)
			body := enc.body
			body, l, n, a := filterTokens(body, variant)
			longTok += l
			numTok += n
			allTok += a
			if variant == "skip-outputs" && c == classOutput {
				continue
			}
			docs = append(docs, doc{ftsRowid(rowid, p.pr.Events[i].Type, enc.ftsLen), body, c == classOutput})
		}
		bodies = append(bodies, docs)
	}
	stop()
	ix.Close()
	if dump := os.Getenv("CTX_FTS_DUMP"); dump != "" {
		db, err := sql.Open("sqlite", "file:"+dump)
		if err != nil {
			b.Fatal(err)
		}
		tx, _ := db.Begin()
		if _, err := tx.Exec(`CREATE TABLE b(id INTEGER PRIMARY KEY, body TEXT)`); err != nil {
			b.Fatal(err)
		}
		for _, docs := range bodies {
			for _, d := range docs {
				if _, err := tx.Exec(`INSERT INTO b VALUES(?,?)`, d.rowid, d.body); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
	b.Logf("variant %s; class bytes %v tokens %v; tokens: all %d, long-with-digit %d, digits-only %d", variant, clsBytes[:6], clsTok[:6], allTok, longTok, numTok)
	bytes := corpusBytes(b, srcs)
	var cpu time.Duration
	defer func() { reportCPU(b, cpu, bytes) }()
	schema := ftsSchema
	outTable := "ev_fts"
	switch variant {
	case "out-column", "out-none":
		schema += strings.Replace(strings.Replace(ftsSchema, "ev_fts", "ev_fts_out", 1), "content=''", "content='', detail="+strings.TrimPrefix(variant, "out-"), 1)
		outTable = "ev_fts_out"
	case "all-none":
		schema = strings.Replace(ftsSchema, "content=''", "content='', detail=none", 1)
	}
	for b.Loop() {
		dir := b.TempDir()
		db := sql.OpenDB(&ftsrank.Connector{DSN: "file:" + filepath.Join(dir, "fts.db") +
			"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-65536)&_txlock=immediate"})
		db.SetMaxOpenConns(1)
		if _, err := db.ExecContext(ctx, schema); err != nil {
			b.Fatal(err)
		}
		before := processCPU()
		var tx *sql.Tx
		var st, so *sql.Stmt
		n, size := 0, 0
		commit := func() {
			st.Close()
			so.Close()
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			tx = nil
		}
		for _, docs := range bodies {
			if tx == nil {
				if tx, err = db.BeginTx(ctx, nil); err != nil {
					b.Fatal(err)
				}
				if err := setFTSConfig(ctx, tx, false); err != nil {
					b.Fatal(err)
				}
				for k, env := range map[string]string{"hashsize": "CTX_FTS_HASHSIZE", "automerge": "CTX_FTS_AUTOMERGE", "crisismerge": "CTX_FTS_CRISISMERGE"} {
					if v := os.Getenv(env); v != "" {
						if _, err := tx.ExecContext(ctx, `INSERT INTO ev_fts(ev_fts, rank) VALUES(?, ?)`, k, v); err != nil {
							b.Fatal(err)
						}
					}
				}
				if outTable != "ev_fts" {
					if _, err := tx.ExecContext(ctx, `INSERT INTO ev_fts_out(ev_fts_out, rank) VALUES('hashsize', ?)`, ftsHashSize); err != nil {
						b.Fatal(err)
					}
				}
				if st, err = tx.PrepareContext(ctx, `INSERT INTO ev_fts(rowid, body) VALUES(?,?)`); err != nil {
					b.Fatal(err)
				}
				if so, err = tx.PrepareContext(ctx, fmt.Sprintf(`INSERT INTO %s(rowid, body) VALUES(?,?)`, outTable)); err != nil {
					b.Fatal(err)
				}
				n, size = 0, 0
			}
			for _, d := range docs {
				s := st
				if d.out {
					s = so
				}
				if _, err := s.ExecContext(ctx, d.rowid, d.body); err != nil {
					b.Fatal(err)
				}
				size += len(d.body)
			}
			if n++; n >= batchMaxSources || size >= batchMaxBytes {
				commit()
			}
		}
		if tx != nil {
			commit()
		}
		if m := os.Getenv("CTX_FTS_FINAL"); m != "" { // e.g. optimize, or merge=-16
			k, v, _ := strings.Cut(m, "=")
			if _, err := db.ExecContext(ctx, `INSERT INTO ev_fts(ev_fts, rank) VALUES(?, ?)`, k, v); err != nil {
				b.Fatal(err)
			}
		}
		cpu += processCPU() - before
		var segs int
		if err := db.QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM ev_fts_idx`).Scan(&segs); err == nil {
			b.ReportMetric(float64(segs), "segments")
		}
		db.Close()
		if keep := os.Getenv("CTX_FTS_KEEP"); keep != "" { // keep the index, e.g. to time queries over it
			if err := os.Rename(filepath.Join(dir, "fts.db"), keep); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// filterTokens counts body's tokens (letters and digits, roughly unicode61's) and, for the drop-long and
// drop-num variants, blanks the tokens they leave out.
func filterTokens(body, variant string) (string, int64, int64, int64) {
	var long, num, all int64
	rs := []rune(body)
	changed := false
	for i := 0; i < len(rs); {
		if !unicode.IsLetter(rs[i]) && !unicode.IsDigit(rs[i]) {
			i++
			continue
		}
		j, digits, letters := i, 0, 0
		for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || unicode.Is(unicode.Mn, rs[j])) {
			if unicode.IsDigit(rs[j]) {
				digits++
			} else {
				letters++
			}
			j++
		}
		all++
		drop := false
		if j-i >= 24 && digits > 0 {
			long++
			drop = variant == "drop-long"
		}
		if letters == 0 {
			num++
			drop = drop || variant == "drop-num"
		}
		if drop {
			for k := i; k < j; k++ {
				rs[k] = ' '
			}
			changed = true
		}
		i = j
	}
	if changed {
		return string(rs), long, num, all
	}
	return body, long, num, all
}
