// Command ctx-search answers `ctx search` and `ctx history search` over the agent-history index and the
// context store's search copy without the full CLI (docs/architecture.md "The search program"): the lean
// front runs it, installed beside it as ctx-search, for the command lines internal/searchargs reads. It
// links the history index (SQLite), the search tool's answer (mcp/searchpage) and the store's ranking
// (mcp/storesearch) but no go-git, MCP library, JSON Schema library or CLI library, so it starts in a
// fraction of ctx-full's time, and prints what ctx-full prints, byte for byte. Anything else (a shape it
// does not read, a store's search copy that is missing, stale or unusable, an error of any kind, output
// ctx-full's sanitizer would escape, a hint on standard error) is handed to ctx-full (execve, nothing
// written yet), as the front does.
//
//	ctx-search INDEXDIR FP ARGV0 ARG...
//
// INDEXDIR is the history index's folder (the store's search copy is beside the index); FP is the
// fingerprint of the context refs' tips as the front read them (store.HistoryTips's, store/tipsfp), or
// "-" when the context branch does not exist; ARGV0 ARG... is the command line the front was given.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	"github.com/ctx-dev/ctx/history"
	"github.com/ctx-dev/ctx/internal/lean"
	"github.com/ctx-dev/ctx/internal/searchargs"
	"github.com/ctx-dev/ctx/mcp/searchpage"
	"github.com/ctx-dev/ctx/mcp/storesearch"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "ctx-search: run by ctx (the lean front), not alone")
		os.Exit(2)
	}
	if os.Args[1] == "--server" {
		os.Exit(serverMain(os.Args[2:]))
	}
	args := os.Args[3:]
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400) // as ctx-full's history commands (cmd/ctx/app lessGC)
	}
	if out, ok := search(context.Background(), oneShot{os.Args[1]}, os.Args[2], args[1:]); ok {
		if _, err := os.Stdout.Write(out); err != nil {
			// As ctx-full says it (app.Run): the output could not be written, exit 1.
			fmt.Fprintf(os.Stderr, "ctx: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(lean.RunFull(args))
}

// backend is where a search reads the index and the store's search copy: opened for the one search of a
// one-shot process (oneShot), or kept open by the search server (warm, docs/architecture.md "The search
// server"). Both answer with the same code (answer), so they print the same bytes.
type backend interface {
	// index is the history index, current when it is returned; release is called when the search is done.
	index(ctx context.Context) (ix *history.Index, release func(), err error)
	// storeHits is the context store's hits for query from its search copy, when the copy is current
	// (its fingerprint is fp), the first n of them with their snippets (the most the page can print);
	// ok is false when it is not current, or cannot be read.
	storeHits(ctx context.Context, fp, query string, n int) (hits []searchpage.Result, ok bool)
}

// oneShot is the backend of a one-shot process: the index and the copy in dir are opened for its search
// and closed after it.
type oneShot struct{ dir string }

func (o oneShot) index(ctx context.Context) (*history.Index, func(), error) {
	ix, err := history.OpenOneShot(ctx, o.dir)
	if err != nil {
		return nil, nil, err
	}
	return ix, func() { ix.Close() }, nil
}

func (o oneShot) storeHits(ctx context.Context, fp, query string, n int) ([]searchpage.Result, bool) {
	return searchStore(ctx, o.dir, fp, query, n)
}

// search is ctx-full's `ctx history search` (cmd/ctx/app runUnifiedSearch, then mcp.Search's search
// tool) over the index of b and, when fp is not "-", the context store whose refs' tips have that
// fingerprint, from its search copy beside the index: it returns the bytes ctx-full writes on standard
// output with exit 0, and ok; ok is false when anything differs from that path.
func search(ctx context.Context, b backend, fp string, args []string) ([]byte, bool) {
	out, errOut, ok := answer(ctx, b, fp, args)
	if !ok || len(errOut) > 0 || !lean.Printable(out) {
		return nil, false
	}
	return out, true
}

// answer is search's answer before the checks of what it prints: standard output and standard error.
func answer(ctx context.Context, b backend, fp string, args []string) (stdout, stderr []byte, ok bool) {
	r, ok := searchargs.Parse(args)
	if !ok {
		return nil, nil, false
	}
	tip := ""
	if fp != "-" {
		if !validFP(fp) {
			return nil, nil, false
		}
		tip = fp
	}
	// mcp's searchTool: the store is searched (provider ctx) with every scope of the transcript and no
	// provider named (the index's providers only leave it out). Its documents come from the copy, which
	// must be current: ctx-full would otherwise update it first (a write), or read the store directly.
	// The copy is read on a goroutine while the index is opened and searched (a second core's work on
	// an idle machine: the two are independent until the merge); answer waits for it before it returns.
	// The page prints at most want hits of the merge, which keeps the store's in their order: only the
	// first want of them need their snippets.
	want := min(searchpage.MaxHits, r.Limit+1)
	var storeHits []searchpage.Result
	storeOK := false
	withStore := tip != "" && len(r.Providers) == 0 && r.Scope != "calls" && r.Scope != "outputs"
	var wg sync.WaitGroup
	defer wg.Wait()
	if withStore {
		wg.Add(1)
		go func() {
			defer wg.Done()
			storeHits, storeOK = b.storeHits(ctx, fp, r.Query(), want)
		}()
	}
	ix, release, err := b.index(ctx)
	if err != nil {
		return nil, nil, false
	}
	defer release()
	gen, err := ix.Generation(ctx)
	if err != nil {
		return nil, nil, false
	}
	// mcp's searchTool: one page from offset 0 of at most want hits, cursors bound to
	// "g<generation>/<fp>" ("g<generation>/" without a context branch).
	q := history.Query{Text: r.Query(), Scope: r.Scope, PrimaryOnly: r.PrimaryOnly, Limit: want}
	for _, p := range r.Providers {
		hp, ok := history.ParseProvider(p)
		if !ok {
			return nil, nil, false
		}
		q.Providers = append(q.Providers, hp)
	}
	res, err := ix.Search(ctx, q)
	if err != nil {
		return nil, nil, false
	}
	hits := searchpage.IndexResults(res.Hits)
	if withStore {
		if wg.Wait(); !storeOK {
			return nil, nil, false
		}
		// merged even when the store has no hit: the merge orders the index's groups by score
		hits = storesearch.MergeHits(hits, storeHits)
	}
	if len(hits) > want {
		hits = hits[:want]
	}
	filters := map[string]any{"content_scope": r.Scope}
	if len(r.Providers) > 0 {
		filters["providers"] = r.Providers
	}
	if r.PrimaryOnly {
		filters["primary_only"] = true
	}
	cur := searchpage.CursorBody{Tool: "search", Args: searchpage.ArgsHash(r.Args()), Tip: fmt.Sprintf("g%d/%s", gen, tip)}
	p := searchpage.PageOf(hits, 0, r.Limit, func(off int) string {
		c := cur
		c.Offset = off
		return searchpage.EncodeCursor(c)
	}, func(items []searchpage.Result, pg searchpage.Pagination) any {
		return searchpage.Page(r.Query(), filters, res.Relaxed, res.Window, gen, items, pg, "")
	})
	// runUnifiedSearch: the tool's object as JSON values, its results (one page: limit <= 100).
	js, err := json.Marshal(p.Build(p.N))
	if err != nil {
		return nil, nil, false
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, nil, false
	}
	rs, _ := m["results"].([]any)
	if rs == nil {
		rs = []any{}
	}
	m["results"] = rs
	var out, errOut bytes.Buffer
	if err := searchpage.PrintCLI(&out, &errOut, m, r.JSON); err != nil {
		return nil, nil, false
	}
	return out.Bytes(), errOut.Bytes(), true
}

// searchStore is the context store's hits for query from its search copy in dir, when the copy is
// current (its fingerprint is fp), the first n with their snippets; ok is false when it is not, or
// cannot be read.
func searchStore(ctx context.Context, dir, fp, query string, n int) (hits []searchpage.Result, ok bool) {
	db, err := storesearch.OpenRead(ctx, dir)
	if err != nil {
		return nil, false
	}
	defer db.Close()
	have, err := storesearch.ReadFP(ctx, db)
	if err != nil || have != fp {
		return nil, false
	}
	return storeSearch(ctx, db, query, n)
}

// storeSearch is storesearch.Search of a current copy db, ok false on its error.
func storeSearch(ctx context.Context, db *sql.DB, query string, n int) ([]searchpage.Result, bool) {
	hits, err := storesearch.Search(ctx, db, query, n)
	if err != nil {
		return nil, false
	}
	return hits, true
}

// validFP reports whether fp is a fingerprint of tips as the front passes it: 24 lower-case hex digits.
func validFP(fp string) bool {
	if len(fp) != 24 {
		return false
	}
	for i := 0; i < len(fp); i++ {
		if (fp[i] < '0' || fp[i] > '9') && (fp[i] < 'a' || fp[i] > 'f') {
			return false
		}
	}
	return true
}
