//go:build !stress

package gitstore_test

// logSeeds is how many random histories TestLogAllGitMatchesWalk compares in `make test`; `make stress`
// builds with -tags stress for 6.
const logSeeds = 2
