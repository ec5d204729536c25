//go:build stress

package main_test

// convWrites under -tags stress (make stress): 40 random writes on each of the 5 clones of TestConvergence.
const convWrites = 40
