package pgtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// StoreEnv names the store the tests of a package run on: "bbolt" or
// "postgres". Unset, MainBothStores runs them on both.
const StoreEnv = "LINKBOLT_TEST_STORE"

// secondPassEnv marks the second run of MainBothStores.
const secondPassEnv = "LINKBOLT_TEST_SECOND_PASS"

// SkipInSecondPass skips a test of what only bbolt has (it runs on bbolt
// whichever store is chosen) in the second run of MainBothStores, where
// it would run again just as the first run ran it.
func SkipInSecondPass(t testing.TB) {
	t.Helper()
	if os.Getenv(secondPassEnv) != "" {
		t.Skip("a test on bbolt only: the run on bbolt ran it")
	}
}

// SkipUnlessPostgres skips a test of what only the PostgreSQL store has
// (several instances on one database) unless the tests run on PostgreSQL:
// under MainBothStores the run on PostgreSQL runs it.
func SkipUnlessPostgres(t testing.TB) {
	t.Helper()
	if os.Getenv(StoreEnv) != "postgres" {
		t.Skip("a test of instances sharing a PostgreSQL database: the run with " + StoreEnv + "=postgres runs it")
	}
}

// MainBothStores runs the package's tests on both of linkbolt's stores:
// in this process on the store StoreEnv names, or when it is unset on
// bbolt and at the same time, in a second run of the same test binary
// with StoreEnv=postgres, on PostgreSQL. The second run's output follows
// the first's; either failing fails the package. Without PostgreSQL's
// programs the second run is left out with a message, except with
// CI=true, where that fails. Call it from TestMain.
func MainBothStores(m *testing.M) int {
	if os.Getenv(StoreEnv) != "" {
		return Main(m)
	}
	var out bytes.Buffer
	var child *exec.Cmd
	if _, err := binDir(); err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "FAIL: the tests on PostgreSQL: %v\n", err)
			Main(m)
			return 1
		}
		fmt.Fprintf(os.Stderr, "pgtest: the tests ran on bbolt only: %v\n", err)
	} else {
		child = exec.Command(os.Args[0], secondPassArgs(os.Args[1:])...)
		child.Env = append(os.Environ(), StoreEnv+"=postgres", secondPassEnv+"=1")
		child.Stdout, child.Stderr = &out, &out
		// Killed with the test process, as the cluster is.
		child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := startServer(child); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: start the tests on PostgreSQL: %v\n", err)
			Main(m)
			return 1
		}
	}
	code := Main(m)
	if child == nil {
		return code
	}
	err := child.Wait()
	fmt.Fprintf(os.Stdout, "the same tests on PostgreSQL (%s=postgres):\n", StoreEnv)
	os.Stdout.Write(out.Bytes())
	if err != nil {
		return 1
	}
	return code
}

// secondPassArgs are the test flags of the second run: those naming a
// file the run writes (coverage, profiles, trace) name another, so the
// two runs do not write one file, and the go command's test log, which
// only the first run may write, is left out.
func secondPassArgs(args []string) []string {
	var out []string
	for _, a := range args {
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case ok && name == "test.testlogfile":
			continue
		case ok && value != "" && (name == "test.coverprofile" || name == "test.cpuprofile" ||
			name == "test.memprofile" || name == "test.blockprofile" || name == "test.mutexprofile" || name == "test.trace"):
			a = "-" + name + "=" + value + ".postgres"
		}
		out = append(out, a)
	}
	return out
}
