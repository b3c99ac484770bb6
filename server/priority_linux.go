package server

import (
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"syscall"
)

// costlyNice is the nice value of the threads doing costly work. At 10 the
// kernel gives such a thread about a tenth of the CPU that a thread at the
// default 0 gets when both want it, and all of it when nothing else does.
const costlyNice = 10

// lowPriority runs work on a goroutine of its own, locked to an OS thread
// whose nice value it raises to costlyNice, and waits for it. The gate
// bounds how many cores costly work may take, but on those cores the Go
// runtime's threads still compete in the kernel with the ones serving
// redirects (and with everything else on the machine); a niced thread loses
// that contest, so a redirect waits for a core the less. Only the costly
// goroutine's own work runs niced: the handler's goroutine, and the
// connection it serves, keep their thread and its priority.
//
// Lowering a thread's nice value again needs a privilege the server should
// not have, so the goroutine never unlocks its thread: when it returns, the
// runtime ends the thread with it (see runtime.LockOSThread) rather than
// give a niced thread back to its pool. A thread costs some tens of
// microseconds to make; the work it does costs milliseconds.
//
// A panic in work is raised again on the caller's goroutine, so the
// server's recovery (and http.ErrAbortHandler) work as if it had run there.
func lowPriority(work func() error) error {
	var (
		err      error
		panicked any
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panicked = v
				} else {
					panicked = fmt.Sprintf("%v [in costly work: %s]", v, debug.Stack())
				}
			}
		}()
		runtime.LockOSThread() // for good: see above
		// Where the kernel refuses (a sandbox forbidding the call), the
		// work runs at the usual priority.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), costlyNice)
		err = work()
	}()
	<-done
	if panicked != nil {
		panic(panicked)
	}
	return err
}
