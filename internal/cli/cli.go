// Package cli is linkbolt's command line: every command, its flags and
// help, and the admin client the commands share to reach a running server.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	_ "time/tzdata" // analytics time zones work on hosts without a zone database

	"github.com/linkbolt/linkbolt/analytics/geodata"
	"github.com/linkbolt/linkbolt/internal/app"
	"github.com/linkbolt/linkbolt/internal/version"
	"github.com/linkbolt/linkbolt/link"
)

// Main runs linkbolt with the process's arguments and exits with the
// command's code. SIGINT and SIGTERM end the command gracefully.
func Main() {
	// Redirects allocate little but often; a larger heap goal trades a few
	// MB for less time in the collector. GOGC in the environment wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// A command is a subcommand of linkbolt: its flags, its help and what it
// runs.
type command struct {
	name     string
	synopsis string // the command line after "linkbolt", for its help
	summary  string // one line in the list of commands
	about    string // what it does, for its help
	// define declares the command's flags on fs and returns what runs the
	// command once they are parsed.
	define func(fs *flag.FlagSet) func(ctx context.Context, stdout, stderr io.Writer) error
}

// commands are linkbolt's subcommands in the order help lists them; help
// itself is handled by run.
var commands = []*command{serveCommand, versionCommand, backupCommand, checkCommand, compactCommand,
	restoreCommand, usersListCommand, usersCreateCommand, usersDisableCommand, usersResetPasswordCommand,
	workspacesListCommand, workspacesSetPlanCommand, keysListCommand, keysRevokeCommand, exportCommand, importCommand, copyCommand,
	geoipUpdateCommand}

// CommandNames returns the name of every command ("serve", "users
// create", ...) in the order help lists them.
func CommandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

var serveCommand = &command{
	name:     "serve",
	synopsis: "[serve] [--config FILE]",
	summary:  "start the server (the default when no command is given)",
	about: `Serve the API, the redirects and the setup page on server.listen until
SIGINT or SIGTERM, then stop gracefully: requests in flight finish and
queued clicks are written.`,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		configPath := configFlag(fs)
		return func(ctx context.Context, _, stderr io.Writer) error {
			return app.Serve(ctx, *configPath, stderr)
		}
	},
}

var versionCommand = &command{
	name:     "version",
	synopsis: "version",
	summary:  "print the version",
	about: `Print linkbolt's version on the first line ("linkbolt v1.2.3"), then the
git commit it was built from ("-dirty" when it had uncommitted changes),
the Go version, the platform and the country database inside linkbolt
(its package, version, date and licence; a server prefers geoip.mmdb in
the data folder or analytics.geoip_path, and logs which it uses).`,
	define: func(*flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		return func(_ context.Context, stdout, _ io.Writer) error {
			fmt.Fprintf(stdout, "linkbolt %s\ncommit   %s\ngo       %s\nplatform %s/%s\ngeoip    %s\n",
				version.String(), version.Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH, GeoIPVersion())
			return nil
		}
	},
}

// GeoIPVersion describes the country database inside linkbolt, as
// linkbolt version prints it.
func GeoIPVersion() string {
	i := geodata.Read()
	return fmt.Sprintf("%s %s (data of %s, %s; %s)", i.Source, i.Version, i.Date, i.License, i.Attribution)
}

// configFlag declares --config, which every command that reads the
// configuration takes.
func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "", "configuration `FILE` (YAML); default: config.yaml in the working\ndirectory when it exists")
}

// tokenFlag declares --token, the admin's login token with which backup,
// check, import and the admin commands (users, workspaces, keys, export)
// reach a running server that holds the data file.
func tokenFlag(fs *flag.FlagSet) *string {
	return fs.String("token", os.Getenv("LINKBOLT_TOKEN"), "an instance admin's login `TOKEN` (from POST /v1/auth/login), used only\nwhen a running server holds the data file; default: $LINKBOLT_TOKEN,\nelse a login with admin.email and admin.password")
}

// usageError is a mistake in the command line: run prints it on one line
// and exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Run runs a subcommand with its arguments (without the program's name)
// and returns the exit code: 0 for success and for help asked for, 1 for a
// failure, 2 for a mistake in the command line. --password-stdin reads
// stdin.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx = context.WithValue(ctx, stdinKey{}, stdin)
	name := "serve"
	if len(args) > 0 {
		switch a := args[0]; {
		case isHelpFlag(a):
			usage(stdout)
			return 0
		case a != "" && a[0] != '-':
			name, args = a, args[1:]
		}
	}
	if name == "help" {
		return runHelp(args, stdout, stderr)
	}
	name, args = subcommand(name, args)
	cmd := findCommand(name)
	if cmd == nil && len(args) == 1 && isHelpFlag(args[0]) && groupHelp(stdout, name) {
		return 0
	} else if cmd == nil && groupMissing(name, stderr) {
		return 2
	} else if cmd == nil {
		fmt.Fprintf(stderr, "linkbolt: unknown command %q (run 'linkbolt help' for the list)\n", name)
		return 2
	}
	fs := newFlagSet(cmd)
	runCmd := cmd.define(fs)
	if name := flagGivenAsValue(fs, args); name != "" {
		return usageFailed(stderr, cmd, fmt.Errorf("flag --%s needs a value", name))
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		commandHelp(stdout, cmd, fs)
		return 0
	} else if err != nil {
		return usageFailed(stderr, cmd, err)
	}
	if fs.NArg() > 0 {
		return usageFailed(stderr, cmd, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	err := runCmd(ctx, stdout, stderr)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return usageFailed(stderr, cmd, err)
	case errors.Is(err, errDamaged):
		return 1 // the report says why
	default:
		fmt.Fprintln(stderr, "linkbolt:", errorLine(err))
		return 1
	}
}

// errorLine is err as one line for a person: a linkbolt error says its
// message, without the code and field names meant for programs.
func errorLine(err error) string {
	msg := err.Error()
	if le := (*link.Error)(nil); errors.As(err, &le) && le.Message != "" {
		say := le.Message
		for _, f := range le.Fields {
			if fe := f.Field + ": " + f.Message; !strings.Contains(say, fe) {
				say += "; " + fe
			}
		}
		msg = strings.Replace(msg, le.Error(), say, 1)
	}
	return msg
}

// newFlagSet returns the flag set of cmd. It prints nothing itself: run
// says what went wrong on one line, and help goes to stdout.
func newFlagSet(cmd *command) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// usageFailed reports a mistake in cmd's command line and returns exit
// code 2.
func usageFailed(stderr io.Writer, cmd *command, err error) int {
	msg := err.Error()
	// The flag package names a flag with one dash; the help shows two.
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag --" + name
	} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		msg = "flag --" + name + " needs a value"
	}
	fmt.Fprintf(stderr, "linkbolt %s: %s (run 'linkbolt %s --help' for its flags)\n", cmd.name, msg, cmd.name)
	return 2
}

// flagGivenAsValue returns the name of a flag of fs whose value in args
// is another flag ("backup --out --token SECRET"), or "". The flag package
// would take "--token" as the file name and then print SECRET to stderr
// as an unexpected argument; a missing value is the mistake to report.
func flagGivenAsValue(fs *flag.FlagSet, args []string) string {
	for i := 0; i+1 < len(args); i++ {
		name, ok := flagArg(args[i])
		if !ok {
			continue
		}
		if name == "" {
			return "" // "--": the rest are arguments
		}
		f := fs.Lookup(name) // nil for "--out=FILE", whose value is given
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if next, ok := flagArg(args[i+1]); ok && next != "" {
			next, _, _ = strings.Cut(next, "=")
			if fs.Lookup(next) != nil || isHelpFlag(args[i+1]) {
				return name
			}
		}
		i++ // the value
	}
	return ""
}

// flagArg reports whether arg is a flag ("-x", "--x", "--x=v") and
// returns its name with any "=value"; "--" has the empty name.
func flagArg(arg string) (string, bool) {
	if len(arg) < 2 || arg[0] != '-' {
		return "", false
	}
	if arg == "--" {
		return "", true
	}
	name := strings.TrimPrefix(arg[1:], "-")
	return name, name != "" && name[0] != '-'
}

// isHelpFlag reports whether arg asks for help the way the flag package
// understands it.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

func findCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// runHelp answers "linkbolt help [COMMAND]".
func runHelp(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		name, rest := subcommand(args[0], args[1:])
		args = append([]string{name}, rest...)
	}
	switch {
	case len(args) == 0 || len(args) == 1 && (args[0] == "help" || isHelpFlag(args[0])):
		usage(stdout)
		return 0
	case len(args) > 1:
		fmt.Fprintf(stderr, "linkbolt help: unexpected argument %q (run 'linkbolt help COMMAND' for one command)\n", args[1])
		return 2
	}
	cmd := findCommand(args[0])
	if cmd == nil && groupHelp(stdout, args[0]) {
		return 0
	} else if cmd == nil {
		fmt.Fprintf(stderr, "linkbolt help: unknown command %q (run 'linkbolt help' for the list)\n", args[0])
		return 2
	}
	fs := newFlagSet(cmd)
	cmd.define(fs)
	commandHelp(stdout, cmd, fs)
	return 0
}

// usage prints the list of commands.
func usage(w io.Writer) {
	fmt.Fprint(w, `linkbolt is a self-hosted link shortener in one executable.

Usage:
  linkbolt [COMMAND] [FLAGS]

Commands:
`)
	help := &command{name: "help", summary: "print this list, or a command's help (linkbolt help COMMAND)"}
	listCommands(w, append(slices.Clip(commands), help))
	fmt.Fprint(w, `
Run 'linkbolt help COMMAND' or 'linkbolt COMMAND --help' for a command's flags.

Configuration: config.yaml in the working directory (or --config FILE) and
LINKBOLT_<SECTION>_<KEY> environment variables; see config.example.yaml.
`)
}

// listCommands writes a line for each of cmds: its name, padded to the
// longest, and its summary.
func listCommands(w io.Writer, cmds []*command) {
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  linkbolt %-*s %s\n", width, c.name, c.summary)
	}
}

// commandHelp prints cmd's usage, what it does and every flag it takes.
func commandHelp(w io.Writer, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage:\n  linkbolt %s\n\n%s\n", cmd.synopsis, cmd.about)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if n++; n == 1 {
			fmt.Fprint(w, "\nFlags:\n")
		}
		arg, text := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + arg
		}
		fmt.Fprintf(w, "  --%s%s\n", f.Name, arg)
		for _, line := range strings.Split(text, "\n") {
			fmt.Fprintf(w, "        %s\n", line)
		}
	})
}
