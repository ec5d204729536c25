//go:build unix

package store

import "syscall"

// openNonBlock is or'ed into the flags of every open of a file of .context/: an open of a FIFO does not
// wait for a writer (it would block the process for good), and a regular file ignores it (open(2)).
const openNonBlock = syscall.O_NONBLOCK
