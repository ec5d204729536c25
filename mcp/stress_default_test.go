//go:build !stress

package mcp

// responseLimitSmall is the response limit TestAgentHistoryOversizedEvent and TestListsWithinResponseLimit
// run at in `make test` (withResponseLimit): 64 KiB, the same fitting paths as at the real 1 MiB for a
// sixteenth of the bytes to encode and check under -race; `make stress` builds with -tags stress for 1 MiB.
const responseLimitSmall = 64 << 10
