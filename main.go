// Command linkbolt is a self-hosted link shortener in one executable: the
// JSON API, the public redirects and click analytics on one port, with
// everything kept in one bbolt file. Its commands live in internal/cli.
package main

import "github.com/linkbolt/linkbolt/internal/cli"

func main() { cli.Main() }
