//go:build !unix

package storage_test

// cpuTime is not measured here: benchmarks report 0.
func cpuTime() int64 { return 0 }
