//go:build !linux

package searchsock

import (
	"errors"
	"time"
)

// BuildID is an error on this platform (no search server).
func BuildID(string) (string, error) { return "", errors.New("no search server on this platform") }

// Supported reports whether this platform has the search server (Linux only: SO_PEERCRED).
const Supported = false

// Dial is ErrNoServer on this platform: the caller runs the one-shot path.
func Dial(string, Request, time.Duration) ([]byte, error) { return nil, ErrNoServer }

// Running is false on this platform.
func Running(string) bool { return false }

// AutoOn is false on this platform.
func AutoOn(string) bool { return false }

// CheckDir is an error on this platform (no search server).
func CheckDir(string) error { return errors.New("no search server on this platform") }

// AutoStart starts nothing on this platform.
func AutoStart(string, string) bool { return false }
