package cli

import (
	"fmt"
	"io"
	"strings"
)

// subcommand joins a command group and its subcommand into the command's
// name ("users" and "list" are "users list") when linkbolt has that
// command, and returns the rest of args.
func subcommand(name string, args []string) (string, []string) {
	if len(args) > 0 && findCommand(name+" "+args[0]) != nil {
		return name + " " + args[0], args[1:]
	}
	return name, args
}

// groupCommands returns the commands of the command group name ("users"),
// none when name is no group.
func groupCommands(name string) []*command {
	var cmds []*command
	for _, c := range commands {
		if strings.HasPrefix(c.name, name+" ") {
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// groupMissing reports, when name is a command group ("users") without a
// subcommand it knows, the group's subcommands on stderr, and whether it
// did.
func groupMissing(name string, stderr io.Writer) bool {
	var subs []string
	for _, c := range groupCommands(name) {
		subs = append(subs, strings.TrimPrefix(c.name, name+" "))
	}
	if len(subs) == 0 {
		return false
	}
	fmt.Fprintf(stderr, "linkbolt %s: name one of %s (run 'linkbolt help %s' for what each does)\n", name, strings.Join(subs, ", "), name)
	return true
}

// groupHelp prints, when name is a command group ("users"), its commands
// and what each does, as "linkbolt help users" and "linkbolt users --help"
// ask, and reports whether it did.
func groupHelp(w io.Writer, name string) bool {
	cmds := groupCommands(name)
	if len(cmds) == 0 {
		return false
	}
	fmt.Fprintf(w, "Usage:\n  linkbolt %s COMMAND [FLAGS]\n\nCommands:\n", name)
	listCommands(w, cmds)
	fmt.Fprintf(w, "\nRun 'linkbolt help %s COMMAND' or 'linkbolt %s COMMAND --help' for a command's flags.\n", name, name)
	return true
}
