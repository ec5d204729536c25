//go:build !unix

package store

// openNonBlock is 0 where there is no O_NONBLOCK (nonblock_unix.go).
const openNonBlock = 0
