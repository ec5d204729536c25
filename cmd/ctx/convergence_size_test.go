//go:build !stress

package main_test

// convWrites is how many random writes each clone of TestConvergence makes in `make test`: 5 clones × 12
// writes, about 110 ctx runs. `make stress` builds with -tags stress for the full size, 40 each.
const convWrites = 12
