package mcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ctx-dev/ctx/internal/testenv"
	"github.com/ctx-dev/ctx/store"
	"github.com/ctx-dev/ctx/store/storetest"
	"github.com/ctx-dev/ctx/store/tokens"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// BenchmarkResourceRead measures resources/read of one knowledge entry (context://knowledge/kNNNNN) on
// a store of 10,000 entries by 16 concurrent clients, over Streamable HTTP (16 sessions of one server,
// each with a bearer token) and over stdio (16 stdio sessions). It reports reads/s and the 99th
// percentile latency (p99-ms) besides ns/op. Results: bench/README.md.
//
//	go test -run '^$' -bench ResourceRead -benchtime 5000x ./mcp
func BenchmarkResourceRead(b *testing.B) {
	const entries, clients = 10000, 16
	st := benchStore(b, entries)
	connect := map[string]func(b *testing.B) []*session{
		"stdio": func(b *testing.B) []*session {
			var ss []*session
			for range clients {
				ss = append(ss, serve(b, st, Options{Agent: "bench"}, ""))
			}
			return ss
		},
		"http": func(b *testing.B) []*session {
			h := startHTTP(b, st, Options{Agent: "bench"}, HTTPOptions{Rate: 1e9, Burst: 1 << 30})
			var ss []*session
			for i := range clients {
				ss = append(ss, h.connect(b, h.token(b, tokens.Spec{Member: fmt.Sprintf("m%d", i)}), "", "bench"))
			}
			return ss
		},
	}
	for _, name := range []string{"http", "stdio"} {
		b.Run(name, func(b *testing.B) {
			ss := connect[name](b)
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var failed atomic.Value
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for _, s := range ss {
				wg.Go(func() {
					for {
						i := int(next.Add(1) - 1)
						if i >= b.N {
							return
						}
						t0 := time.Now()
						req := mcpgo.ReadResourceRequest{}
						req.Params.URI = fmt.Sprintf("context://knowledge/k%05d", i%entries)
						if _, err := s.c.ReadResource(context.Background(), req); err != nil {
							failed.Store(err)
							return
						}
						lat[i] = time.Since(t0)
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if err := failed.Load(); err != nil {
				b.Fatal(err)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "reads/s")
			b.ReportMetric(float64(lat[(len(lat)*99)/100])/1e6, "p99-ms")
		})
	}
	// One stdio session reading sequentially, the way one agent reads: context://knowledge/kNNNNN in key
	// order, each entry for the first time since the server started (stdio-one; -benchtime 10000x at
	// most), or after every entry was read once (stdio-one-warm); and the floor: the same session reading
	// a resource whose handler returns a constant, which is what mcp-go's JSON-RPC decoding and encoding,
	// the stdio transport and the client cost per read without any of ctx's work. The store's files are
	// first left 2 s old, as a store written before the session is (a file changed within the read
	// cache's race margin is read again at each read, docs/mcp.md "Reads from memory").
	time.Sleep(2 * time.Second)
	key := func(i int) string { return fmt.Sprintf("context://knowledge/k%05d", i%entries) }
	b.Run("stdio-one", func(b *testing.B) {
		if b.N > entries {
			b.Fatalf("stdio-one reads each entry once: -benchtime %dx at most", entries)
		}
		sequentialReads(b, serve(b, st, Options{Agent: "bench"}, ""), key)
	})
	b.Run("stdio-one-warm", func(b *testing.B) {
		s := serve(b, st, Options{Agent: "bench"}, "")
		for i := range entries {
			s.read(b, key(i))
		}
		sequentialReads(b, s, key)
	})
	b.Run("floor-one", func(b *testing.B) {
		stderr := &syncBuffer{}
		x := NewServer(st, Options{Agent: "bench", Stderr: stderr})
		const uri = "bench://floor"
		x.MCP().AddResource(mcpgo.NewResource(uri, "floor", mcpgo.WithMIMEType("application/json")),
			func(context.Context, mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
				return jsonContents(uri, []byte(`{"key":"k00000","content":"entry 0\n"}`)), nil
			})
		s := serveServer(b, x, stderr, "", "ctx-test")
		sequentialReads(b, s, func(int) string { return uri })
	})
	// The floor of a template resource: mcp-go matches the URI against each resource template (a regular
	// expression, then uritemplate's matcher) before the handler runs, as for context://knowledge/{key}.
	b.Run("floor-template-one", func(b *testing.B) {
		stderr := &syncBuffer{}
		x := NewServer(st, Options{Agent: "bench", Stderr: stderr})
		x.MCP().AddResourceTemplate(mcpgo.NewResourceTemplate("bench://floor/{key}", "floor"),
			func(_ context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
				return jsonContents(req.Params.URI, []byte(`{"key":"k00000","content":"entry 0\n"}`)), nil
			})
		s := serveServer(b, x, stderr, "", "ctx-test")
		sequentialReads(b, s, func(i int) string { return fmt.Sprintf("bench://floor/k%05d", i%entries) })
	})
}

// BenchmarkResourceReadInFlight measures one stdio session with 1, 2, 4, 8 and 16 resources/read
// requests in flight (JSON-RPC lets a client send a request before the previous one is answered; mcp-go's
// client pairs the responses by id): warm reads of context://knowledge/kNNNNN on the 10,000-entry store
// (each entry read once first), beside the floor (a resource whose handler returns a constant, served by
// ctx's ServeStdio) and mcp-go's own floor (the same resource on a bare mcp-go server behind mcp-go's
// StdioServer, nothing of ctx). Each reports reads/s, p50-ms, p99-ms and cpu-us/op (client and server
// in this process). Results: bench/README.md.
//
//	go test -run '^$' -bench ResourceReadInFlight -benchtime 4000x ./mcp
func BenchmarkResourceReadInFlight(b *testing.B) {
	const entries = 10000
	st := benchStore(b, entries)
	time.Sleep(2 * time.Second) // the store's files older than the read cache's race margin
	key := func(i int) string { return fmt.Sprintf("context://knowledge/k%05d", i%entries) }
	const floorURI = "bench://floor"
	floorText := []byte(`{"key":"k00000","content":"entry 0\n"}`)
	floorHandler := func(context.Context, mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
		return jsonContents(floorURI, floorText), nil
	}
	for _, n := range []int{1, 2, 4, 8, 16} {
		b.Run(fmt.Sprintf("warm-%d", n), func(b *testing.B) {
			s := serve(b, st, Options{Agent: "bench"}, "")
			for i := range entries {
				s.read(b, key(i))
			}
			inFlightReads(b, s.c, key, n)
		})
		b.Run(fmt.Sprintf("floor-%d", n), func(b *testing.B) {
			stderr := &syncBuffer{}
			x := NewServer(st, Options{Agent: "bench", Stderr: stderr})
			x.MCP().AddResource(mcpgo.NewResource(floorURI, "floor", mcpgo.WithMIMEType("application/json")), floorHandler)
			s := serveServer(b, x, stderr, "", "ctx-test")
			inFlightReads(b, s.c, func(int) string { return floorURI }, n)
		})
		b.Run(fmt.Sprintf("mcpgo-floor-%d", n), func(b *testing.B) {
			ms := server.NewMCPServer("floor", "1", server.WithResourceCapabilities(false, false))
			ms.AddResource(mcpgo.NewResource(floorURI, "floor", mcpgo.WithMIMEType("application/json")), floorHandler)
			inFlightReads(b, mcpgoStdio(b, ms), func(int) string { return floorURI }, n)
		})
	}
}

// mcpgoStdio serves ms with mcp-go's own StdioServer over pipes and returns an initialised client.
func mcpgoStdio(b *testing.B, ms *server.MCPServer) *client.Client {
	b.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = server.NewStdioServer(ms).Listen(ctx, serverIn, serverOut)
		serverOut.Close()
		close(done)
	}()
	c := client.NewClient(transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader(""))))
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	ireq := mcpgo.InitializeRequest{}
	ireq.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	ireq.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, ireq); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		c.Close()
		serverIn.Close()
		go func() { _, _ = io.Copy(io.Discard, clientIn) }()
		<-done
	})
	return c
}

// sequentialReads reads b.N resources one after the other on one session, the i-th named by uri(i), and
// reports reads/s, the median and 99th percentile latency (p50-ms, p99-ms) and the process's CPU time per
// read (cpu-us/op: client and server run in this process).
func sequentialReads(b *testing.B, s *session, uri func(i int) string) {
	b.Helper()
	inFlightReads(b, s.c, uri, 1)
}

// inFlightReads is sequentialReads with n requests in flight on the one session: n goroutines each send
// a request when their last one was answered, together b.N reads.
func inFlightReads(b *testing.B, c *client.Client, uri func(i int) string, n int) {
	b.Helper()
	read := func(i int) error {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = uri(i)
		res, err := c.ReadResource(context.Background(), req)
		if err != nil {
			return err
		}
		if len(res.Contents) != 1 {
			return fmt.Errorf("read %s: %d contents", req.Params.URI, len(res.Contents))
		}
		return nil
	}
	if err := read(0); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	cpu0 := testenv.CPUTime(syscall.RUSAGE_SELF)
	stopProfile := profileLoop(b)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := read(i); err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	stopProfile()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	cpu := testenv.CPUTime(syscall.RUSAGE_SELF) - cpu0
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "reads/s")
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100])/1e6, "p99-ms")
	b.ReportMetric(float64(cpu)/1e3/float64(b.N), "cpu-us/op")
}

// benchStore is an initialised store with n knowledge entries k00000..k<n-1>, committed in one write.
func benchStore(b *testing.B, n int) *store.Store {
	b.Helper()
	st, _ := storetest.New(b)
	if _, err := st.Write(context.Background(), store.Op{Name: "bench", Summary: "bench"}, func(v *store.View) (store.Edits, error) {
		ed := store.Edits{}
		for i := range n {
			ed.Put(store.Public, fmt.Sprintf("knowledge/k%05d.md", i), []byte(fmt.Sprintf("---\nauthor: a\n---\nentry %d\n", i)))
		}
		return ed, nil
	}); err != nil {
		b.Fatal(err)
	}
	return st
}

// profileLoop starts a CPU profile of the measured loop alone (without building the store and warming the
// cache, which -cpuprofile would include) when CTX_BENCH_CPUPROFILE names a file; the returned function
// stops it. Both sides of the pipe run in this process, so the profile holds the client's and the
// server's work.
func profileLoop(b *testing.B) func() {
	b.Helper()
	path := os.Getenv("CTX_BENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
