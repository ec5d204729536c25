//go:build !stress

package main_test

// convWrites is how many random writes each clone of TestConvergence makes in `make test`: 5 clones × 20
// writes, about 170 ctx runs. `make stress` builds with -tags stress for the full size, 40 each.
const convWrites = 20
