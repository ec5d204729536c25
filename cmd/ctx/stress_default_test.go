//go:build !stress

package main_test

// stressIterations is how many kills of each kind TestKillStress makes in `make test`; `make stress`
// builds with -tags stress for 100.
const stressIterations = 5
