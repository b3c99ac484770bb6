package server

import (
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"
)

// costlyNice is the nice value of the threads doing costly work. At 10 the
// kernel gives such a thread about a tenth of the CPU that a thread at the
// default 0 gets when both want it, and all of it when nothing else does.
const costlyNice = 10

// costlyThreads runs the server's costly work; a thread left idle for 10 s
// ends.
var costlyThreads = &nicedThreads{linger: 10 * time.Second, jobs: make(chan func())}

// lowPriority runs work on a thread of low CPU priority (costlyThreads)
// and waits for it. The gate bounds how many cores costly work may take,
// but on those cores the Go runtime's threads still compete in the kernel
// with the ones serving redirects (and with everything else on the
// machine); a niced thread loses that contest, so a redirect waits for a
// core the less. Only the work runs niced: the handler's goroutine, and
// the connection it serves, keep their thread and its priority.
//
// A panic in work is raised again on the caller's goroutine, so the
// server's recovery (and http.ErrAbortHandler) work as if it had run there.
func lowPriority(work func() error) error { return costlyThreads.run(work) }

// lowersPriority reports whether the kernel lets this process lower the
// priority of a thread: it tries on a thread that then ends.
func lowersPriority() bool {
	done := make(chan error)
	var probe func()
	probe = func() {
		runtime.LockOSThread() // for good: the thread ends with the goroutine
		if onMainThread() {
			runtime.UnlockOSThread() // the main thread never ends: not that one
			go probe()
			return
		}
		done <- syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), costlyNice)
	}
	go probe()
	return <-done == nil
}

// onMainThread reports whether the calling goroutine, locked to its
// thread, runs on the process's main thread, which the Go runtime never
// ends: a thread niced there would stay niced for the life of the process.
func onMainThread() bool { return syscall.Gettid() == syscall.Getpid() }

// nicedThreads is a pool of goroutines, each locked for good to an OS
// thread whose nice value it raised to costlyNice. Lowering a nice value
// again needs a privilege the server should not have, so such a thread
// must never go back to the runtime to run other goroutines: its goroutine
// never unlocks it, and when the goroutine returns the runtime ends the
// thread with it (see runtime.LockOSThread). The goroutines wait for work
// between jobs, as making a thread for each job cost more than a cheap
// costly request itself (170 µs against 260 µs for an analytics query).
// There are as many as jobs ever ran at once, which the gate bounds (plus
// the streaming answers waiting for slow clients without a slot); one that
// has had nothing to do for linger returns, ending its thread.
type nicedThreads struct {
	linger time.Duration
	jobs   chan func() // unsent to unless a goroutine waits for a job
}

func (p *nicedThreads) run(work func() error) error {
	var (
		err      error
		panicked any
		done     = make(chan struct{})
	)
	job := func() {
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
		err = work()
	}
	select {
	case p.jobs <- job: // an idle thread took it
	default:
		go p.thread(job)
	}
	<-done
	if panicked != nil {
		panic(panicked)
	}
	return err
}

// thread locks its goroutine to a thread for good, lowers the thread's
// priority and runs job, then the jobs sent to it until it idles for
// p.linger.
func (p *nicedThreads) thread(job func()) {
	runtime.LockOSThread() // for good: see nicedThreads
	if onMainThread() {
		// The process's main thread never ends (the runtime keeps it when
		// its goroutine exits locked): leave it as it is, and try again on
		// another thread.
		runtime.UnlockOSThread()
		go p.thread(job)
		return
	}
	// Where the kernel refuses (a sandbox forbidding the call), the work
	// runs at the usual priority.
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), costlyNice)
	idle := time.NewTimer(p.linger)
	defer idle.Stop()
	for {
		job()
		idle.Reset(p.linger)
		select {
		case job = <-p.jobs:
		case <-idle.C:
			return
		}
	}
}
