//go:build unix

package server

import "syscall"

// cpuTime is the CPU time (user and system) the test process has used,
// for benchmarks to report beside the wall time on a shared machine.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
