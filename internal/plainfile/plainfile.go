// Package plainfile opens files as os.OpenFile does, without offering them to the runtime's poller: on
// Unix os.OpenFile makes every descriptor non-blocking and registers it with epoll (two fcntl, an
// epoll_ctl that the kernel refuses for a regular file or a folder, two fcntl to undo it), five system
// calls a file that a one-shot process (the lean front, docs/architecture.md "The lean front") pays some
// twenty times per write; the first one also sets up the poller (epoll_create1, eventfd2). The files
// ctx opens this way are regular files, folders and lock files, which the poller never waits on: reads
// and writes block as before. Standard library only.
package plainfile
