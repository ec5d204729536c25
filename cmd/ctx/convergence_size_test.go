//go:build !stress

package main_test

// convWrites is how many random writes each clone of TestConvergence makes in `make test`: 5 clones × 20
// writes, about 250 ctx launches. `make stress` builds with -tags stress for the full size, 40 each.
const convWrites = 20
