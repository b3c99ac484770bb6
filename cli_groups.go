package main

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

// groupMissing reports, when name is a command group ("users") without a
// subcommand it knows, the group's subcommands on stderr, and whether it
// did.
func groupMissing(name string, stderr io.Writer) bool {
	var subs []string
	for _, c := range commands {
		if sub, ok := strings.CutPrefix(c.name, name+" "); ok {
			subs = append(subs, sub)
		}
	}
	if len(subs) == 0 {
		return false
	}
	fmt.Fprintf(stderr, "linkbolt %s: name one of %s (run 'linkbolt help' for the list)\n", name, strings.Join(subs, ", "))
	return true
}
