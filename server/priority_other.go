//go:build !linux

package server

// lowPriority runs work. Only Linux sets the priority of one thread (see
// priority_linux.go); elsewhere costly work is bounded by the gate alone.
func lowPriority(work func() error) error { return work() }

func lowersPriority() bool { return false }
