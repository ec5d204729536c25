//go:build stress

package gitstore_test

// logSeeds under -tags stress (make stress): 6 random histories of TestLogAllGitMatchesWalk.
const logSeeds = 6
