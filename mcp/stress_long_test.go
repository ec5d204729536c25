//go:build stress

package mcp

// responseLimitSmall under -tags stress (make stress): the real response limit, 1 MiB.
const responseLimitSmall = 1 << 20
