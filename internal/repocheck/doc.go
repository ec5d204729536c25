// Package repocheck holds the tests of the repository's own checks (the scripts `make lint` runs), so
// that a check that can no longer fail is noticed. It has no code of its own.
package repocheck
