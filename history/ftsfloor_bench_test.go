package history

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/history/internal/ftsrank"
)

// BenchmarkFTSFloor is the full-text part of a first import alone: the search bodies of bench/histgen's
// history ($CTX_BENCH_HISTORY) are parsed and encoded once, outside the timing, then each iteration
// inserts them into a fresh ev_fts (the index's schema and hashsize, the import's transaction bounds:
// 512 sources or 32 MiB of bodies, WAL, synchronous=NORMAL) and nothing else. Its MB/cpu-s is of the
// history's JSONL bytes, so it bounds what a first import can reach while it indexes the same bodies with
// FTS5 (bench/README.md "Seventh round"). It holds every body in memory (about 35 MB at 30,000 events,
// 340 MB at 300,000).
func BenchmarkFTSFloor(b *testing.B) {
	srcs := generatedSources(b)
	ctx := context.Background()
	ix, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	type doc struct {
		rowid int64
		body  string
	}
	var bodies [][]doc // per source
	var rowid int64
	next, stop := ix.prepareAhead(ctx, srcs, nil)
	for j := range srcs {
		_, p, err := next(j)
		if err != nil {
			b.Fatal(err)
		}
		if p == nil {
			continue
		}
		docs := make([]doc, len(p.encoded))
		for i, enc := range p.encoded {
			rowid++
			docs[i] = doc{ftsRowid(rowid, p.pr.Events[i].Type, enc.ftsLen), enc.body}
		}
		bodies = append(bodies, docs)
	}
	stop()
	ix.Close()
	bytes := corpusBytes(b, srcs)
	var cpu time.Duration
	defer func() { reportCPU(b, cpu, bytes) }()
	for b.Loop() {
		dir := b.TempDir()
		db := sql.OpenDB(&ftsrank.Connector{DSN: "file:" + filepath.Join(dir, "fts.db") +
			"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-65536)&_txlock=immediate"})
		db.SetMaxOpenConns(1)
		if _, err := db.ExecContext(ctx, ftsSchema); err != nil {
			b.Fatal(err)
		}
		before := processCPU()
		var tx *sql.Tx
		var st *sql.Stmt
		n, size := 0, 0
		commit := func() {
			st.Close()
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
				if st, err = tx.PrepareContext(ctx, `INSERT INTO ev_fts(rowid, body) VALUES(?,?)`); err != nil {
					b.Fatal(err)
				}
				n, size = 0, 0
			}
			for _, d := range docs {
				if _, err := st.ExecContext(ctx, d.rowid, d.body); err != nil {
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
		cpu += processCPU() - before
		db.Close()
	}
}
