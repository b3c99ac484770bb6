package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

func TestVersionAndUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"version"}, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "linkbolt ") {
		t.Fatalf("version: %d %q", code, out.String())
	}
	if code := Run(context.Background(), []string{"frobnicate"}, nil, &out, &errb); code != 2 {
		t.Fatalf("unknown command exit %d", code)
	}
}

// runCLI runs linkbolt's command line in the test's process and returns
// the exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, nil, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestHelp: every spelling of help prints to stdout and exits 0; the list
// names every command, and each command's help shows all its flags.
func TestHelp(t *testing.T) {
	// A token in the environment is a flag's default, and never shown.
	t.Setenv("LINKBOLT_TOKEN", "lb_secret_token_value")
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"-help"}, {"help", "help"}, {"help", "--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			for _, name := range []string{"serve", "version", "backup", "check", "compact", "help"} {
				if !strings.Contains(stdout, "\n  linkbolt "+name+" ") {
					t.Errorf("the list does not name %s:\n%s", name, stdout)
				}
			}
			if !strings.Contains(stdout, "linkbolt help COMMAND") || !strings.Contains(stdout, "linkbolt COMMAND --help") {
				t.Errorf("the list does not say how to get more:\n%s", stdout)
			}
		})
	}
	for _, tc := range []struct {
		cmd   string
		flags []string
		say   []string
	}{
		{"serve", []string{"--config FILE"}, []string{"linkbolt [serve] [--config FILE]"}},
		{"version", nil, []string{"linkbolt version", "Print linkbolt's version"}},
		{"backup", []string{"--config FILE", "--out FILE", "--token TOKEN"},
			[]string{"linkbolt backup --out FILE", "running server holds the data file", "LINKBOLT_TOKEN", "admin.email"}},
		{"check", []string{"--config FILE", "--file FILE", "--token TOKEN"}, []string{"linkbolt check [--file FILE]"}},
		{"compact", []string{"--config FILE", "--out FILE"}, []string{"linkbolt compact --out FILE", "server stopped"}},
	} {
		var first string
		for _, args := range [][]string{{"help", tc.cmd}, {tc.cmd, "--help"}, {tc.cmd, "-help"}, {tc.cmd, "-h"}, {tc.cmd, "--h"}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, stdout, stderr := runCLI(t, args...)
				if code != 0 || stderr != "" {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				if first == "" {
					first = stdout
				} else if stdout != first {
					t.Fatalf("help differs by spelling:\n%s\n---\n%s", stdout, first)
				}
				for _, want := range append(append([]string{"Usage:"}, tc.say...), tc.flags...) {
					if !strings.Contains(stdout, want) {
						t.Errorf("help does not say %q:\n%s", want, stdout)
					}
				}
				if got, want := strings.Count(stdout, "\n  --"), len(tc.flags); got != want {
					t.Errorf("%d flags shown, want %d:\n%s", got, want, stdout)
				}
				if strings.Contains(stdout, "lb_secret_token_value") {
					t.Errorf("help shows the token from the environment:\n%s", stdout)
				}
			})
		}
	}
}

// TestUsageErrors: a mistake in the command line exits 2 with one line on
// stderr that says what is wrong and where help is, and runs nothing.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{[]string{"frobnicate"}, `linkbolt: unknown command "frobnicate" (run 'linkbolt help' for the list)`},
		{[]string{"help", "frobnicate"}, `linkbolt help: unknown command "frobnicate"`},
		{[]string{"help", "backup", "check"}, `linkbolt help: unexpected argument "check"`},
		{[]string{"--bogus"}, "linkbolt serve: unknown flag --bogus (run 'linkbolt serve --help' for its flags)"},
		{[]string{"serve", "--bogus"}, "linkbolt serve: unknown flag --bogus"},
		{[]string{"serve", "extra"}, `linkbolt serve: unexpected argument "extra"`},
		{[]string{"version", "--bogus"}, "linkbolt version: unknown flag --bogus"},
		{[]string{"version", "extra"}, `linkbolt version: unexpected argument "extra"`},
		{[]string{"backup", "--bogus"}, "linkbolt backup: unknown flag --bogus (run 'linkbolt backup --help' for its flags)"},
		{[]string{"backup"}, "linkbolt backup: --out FILE is required"},
		{[]string{"backup", "--out"}, "linkbolt backup: flag --out needs a value"},
		{[]string{"check", "--bogus"}, "linkbolt check: unknown flag --bogus"},
		{[]string{"check", "--file", "a.db", "b.db"}, `linkbolt check: unexpected argument "b.db"`},
		{[]string{"compact"}, "linkbolt compact: --out FILE is required"},
		{[]string{"compact", "--bogus"}, "linkbolt compact: unknown flag --bogus"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir()) // nothing to find or create here
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if stdout != "" || !strings.HasPrefix(stderr, tc.say) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("stdout %q, stderr %q, want one line starting %q", stdout, stderr, tc.say)
			}
			if entries, _ := os.ReadDir("."); len(entries) != 0 {
				t.Fatalf("a usage error left files behind: %v", entries)
			}
		})
	}
}
