//go:build stress

package main_test

// stressIterations under -tags stress (make stress): 100 kills of each kind.
const stressIterations = 100
