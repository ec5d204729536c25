//go:build !linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

var errNoServer = errors.New("the search server runs on Linux only (it checks its clients with SO_PEERCRED)")

func runServer(context.Context, string, time.Duration, bool, io.Writer) error { return errNoServer }

func startServer(string, time.Duration) int {
	fmt.Fprintf(os.Stderr, "ctx: %v\n", errNoServer)
	return 1
}

func stopServer(string) int {
	fmt.Fprintf(os.Stderr, "ctx: %v\n", errNoServer)
	return 1
}

func serverStatus(string) int {
	fmt.Fprintf(os.Stderr, "ctx: %v\n", errNoServer)
	return 1
}

func enableServer(string) int {
	fmt.Fprintf(os.Stderr, "ctx: %v\n", errNoServer)
	return 1
}

func disableServer(string) int {
	fmt.Fprintf(os.Stderr, "ctx: %v\n", errNoServer)
	return 1
}
