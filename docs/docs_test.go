// Package docs_test checks linkbolt's manual: the README and the pages of
// docs/. Their links and #anchors must lead somewhere, the configuration
// they show must be configuration linkbolt reads, and every key of
// config.example.yaml must be named on the configuration page. It also
// collects the linkbolt commands the pages show, for a check against the
// commands linkbolt has.
package docs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/linkbolt/linkbolt/internal/cli"
)

// A page is one Markdown file of the manual, read and split into what the
// checks need.
type page struct {
	name     string   // the path from the repository's root: "README.md", "docs/api.md"
	lines    []string // the file's lines
	headings []string // the ATX headings outside code blocks, as written
	blocks   []codeBlock
}

// A codeBlock is a fenced code block of a page.
type codeBlock struct {
	lang  string   // the fence's info string up to its first space: "sh", "yaml", ""
	start int      // the 1-based line of its first line of code
	lines []string // its lines, without the fences
}

// root is the repository's root, seen from this package's directory.
const root = ".."

var (
	fence   = regexp.MustCompile("^ {0,3}(```+|~~~+)\\s*([^\\s`]*)")
	heading = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$`)
	// linkTarget matches the target of an inline link or image,
	// [text](target) or ![alt](target "title"), from its "](".
	linkTarget = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// linkDefinition matches a reference definition, [label]: target.
	linkDefinition = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)`)
	codeSpan       = regexp.MustCompile("(`+)[^`]*?(`+)")
	inlineLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	scheme         = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	assignment     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	subcommand     = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// loadPages reads README.md and every docs/*.md.
func loadPages(t *testing.T) []page {
	t.Helper()
	names := []string{"README.md"}
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		names = append(names, "docs/"+d)
	}
	var pages []page
	for _, name := range names {
		p, err := readPage(name)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
	}
	return pages
}

// readPage reads the page at name, a path from the repository's root.
func readPage(name string) (page, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		return page{}, err
	}
	p := page{name: name, lines: strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")}
	var open string // the open fence's marker, "" outside a block
	var block codeBlock
	for i, line := range p.lines {
		if open != "" {
			if m := fence.FindStringSubmatch(line); m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) && m[2] == "" {
				p.blocks = append(p.blocks, block)
				open = ""
			} else {
				block.lines = append(block.lines, line)
			}
			continue
		}
		if m := fence.FindStringSubmatch(line); m != nil {
			open = m[1]
			block = codeBlock{lang: strings.ToLower(m[2]), start: i + 2}
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			p.headings = append(p.headings, m[2])
		}
	}
	if open != "" {
		return page{}, fmt.Errorf("%s: the code block opened at line %d is never closed", name, block.start-1)
	}
	return p, nil
}

// anchors are the #fragments GitHub gives p's headings: each heading's
// text lower-cased, spaces turned into '-', every other character but
// letters, digits, '-' and '_' dropped, and "-1", "-2", … added to a
// repeated one.
func (p page) anchors() map[string]bool {
	seen := map[string]int{}
	anchors := map[string]bool{}
	for _, h := range p.headings {
		s := slug(h)
		if n := seen[s]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

func slug(h string) string {
	h = inlineLink.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// A link is a relative link of a page: to a file of the repository, a
// heading of a page, or both.
type link struct {
	line   int    // 1-based
	target string // as written
}

// links returns p's relative links outside code blocks and code spans.
func (p page) links() []link {
	inBlock := make([]bool, len(p.lines))
	open := ""
	for i, line := range p.lines {
		m := fence.FindStringSubmatch(line)
		switch {
		case open == "" && m != nil:
			open = m[1]
			inBlock[i] = true
		case open != "":
			inBlock[i] = true
			if m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) && m[2] == "" {
				open = ""
			}
		}
	}
	var links []link
	for i, line := range p.lines {
		if inBlock[i] {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range linkTarget.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := linkDefinition.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if target == "" || scheme.MatchString(target) {
				continue
			}
			links = append(links, link{line: i + 1, target: target})
		}
	}
	return links
}

// TestLinks checks that every relative link of the README and docs/*.md
// names a file or directory of the repository, and that every #anchor
// names a heading of the page it points into.
func TestLinks(t *testing.T) {
	pages := loadPages(t)
	byName := map[string]page{}
	for _, p := range pages {
		byName[p.name] = p
	}
	checked := 0
	for _, p := range pages {
		for _, l := range p.links() {
			checked++
			file, anchor, _ := strings.Cut(l.target, "#")
			target := p.name
			if file != "" {
				target = path.Join(path.Dir(p.name), file)
				if strings.HasPrefix(target, "../") {
					t.Errorf("%s:%d: %s leaves the repository", p.name, l.line, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
					t.Errorf("%s:%d: %s: no such file or directory (%s)", p.name, l.line, l.target, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: %s: an anchor into %s, which is not a Markdown page", p.name, l.line, l.target, target)
				continue
			}
			into, ok := byName[target]
			if !ok {
				var err error
				if into, err = readPage(target); err != nil {
					t.Errorf("%s:%d: %s: %v", p.name, l.line, l.target, err)
					continue
				}
				byName[target] = into
			}
			if !into.anchors()[anchor] {
				t.Errorf("%s:%d: %s: %s has no heading #%s", p.name, l.line, l.target, target, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the pages are not being read")
	}
}

// TestEveryPageLinksTheIndex checks that every page of docs/ links back to
// the index, and that the index and the README link every page.
func TestEveryPageLinksTheIndex(t *testing.T) {
	pages := loadPages(t)
	linked := func(p page, target string) bool {
		return slices.ContainsFunc(p.links(), func(l link) bool {
			file, _, _ := strings.Cut(l.target, "#")
			return path.Join(path.Dir(p.name), file) == target
		})
	}
	var readme, index page
	for _, p := range pages {
		switch p.name {
		case "README.md":
			readme = p
		case "docs/README.md":
			index = p
		}
	}
	for _, p := range pages {
		if p.name == "README.md" || p.name == "docs/README.md" {
			continue
		}
		if !linked(p, "docs/README.md") {
			t.Errorf("%s does not link the index, docs/README.md", p.name)
		}
		if !linked(index, p.name) {
			t.Errorf("docs/README.md does not link %s", p.name)
		}
		if !linked(readme, p.name) {
			t.Errorf("README.md does not link %s", p.name)
		}
	}
}

// configKeys returns the dotted paths of the leaves of a YAML mapping:
// "server.listen", "auth.oidc.issuer". A list is a leaf.
func configKeys(prefix string, m map[string]any, keys map[string]bool) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			configKeys(key, sub, keys)
		} else {
			keys[key] = true
		}
	}
}

// exampleConfig parses config.example.yaml.
func exampleConfig(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var config map[string]any
	if err := yaml.Unmarshal(data, &config); err != nil {
		t.Fatalf("config.example.yaml: %v", err)
	}
	return config
}

// TestConfigKeys checks that the configuration the pages show in YAML code
// blocks (```yaml, which the manual keeps for linkbolt's configuration) is
// made of keys config.example.yaml has, and that the configuration page
// names every section.key of config.example.yaml.
func TestConfigKeys(t *testing.T) {
	config := exampleConfig(t)
	known := map[string]bool{}
	configKeys("", config, known)

	blocks := 0
	for _, p := range loadPages(t) {
		for _, b := range p.blocks {
			if b.lang != "yaml" && b.lang != "yml" {
				continue
			}
			blocks++
			var shown map[string]any
			if err := yaml.Unmarshal([]byte(strings.Join(b.lines, "\n")), &shown); err != nil {
				t.Errorf("%s:%d: the YAML block does not parse: %v", p.name, b.start, err)
				continue
			}
			keys := map[string]bool{}
			configKeys("", shown, keys)
			for _, k := range slices.Sorted(mapKeys(keys)) {
				if !known[k] {
					t.Errorf("%s:%d: the YAML block sets %s, which config.example.yaml does not have", p.name, b.start, k)
				}
			}
		}
	}
	if blocks == 0 {
		t.Error("no YAML code block found in the pages")
	}

	configuration, err := readPage("docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(configuration.lines, "\n")
	for _, section := range slices.Sorted(mapKeys(config)) {
		keys, ok := config[section].(map[string]any)
		if !ok {
			t.Errorf("config.example.yaml: %s is not a section of keys", section)
			continue
		}
		for _, k := range slices.Sorted(mapKeys(keys)) {
			name := section + "." + k
			named := regexp.MustCompile(`(^|[^A-Za-z0-9_.])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
			if !named.MatchString(text) {
				t.Errorf("docs/configuration.md does not name %s of config.example.yaml", name)
			}
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// A shellCommand is a run of the linkbolt binary shown in a shell code
// block of the manual.
type shellCommand struct {
	page string // the path from the repository's root: "docs/operations.md"
	line int    // the 1-based line where the command starts
	text string // the shell line, continuation lines joined, as written
	// words are the words of the run of linkbolt, from the program's own
	// word ("./linkbolt", "linkbolt", "/linkbolt") to the end of its
	// command, quotes removed and $(…) kept as written: "./linkbolt",
	// "backup", "--out", "backup.db", "--token", "$TOKEN".
	words []string
	err   error // why text does not split into words; words is then nil
}

var mentionsLinkbolt = regexp.MustCompile(`(^|[\s/|;&(])linkbolt\s+\S`)

// shellCommands returns every run of linkbolt (`linkbolt backup …`,
// `./linkbolt users list`, `docker exec … /linkbolt backup …`) in the
// shell code blocks (```sh, bash, shell, console) of pages, each with its
// page, line and words, in the pages' order. A line is a run of linkbolt
// when, after environment assignments, a command of it starts with a word
// naming the binary (linkbolt, or a path ending in /linkbolt) followed by
// another word, or when a path ending in /linkbolt is followed by a
// subcommand (what docker exec runs). Comment lines are skipped. A line
// that mentions linkbolt but cannot be split into words is returned with
// err set and no words.
func shellCommands(pages []page) []shellCommand {
	var cmds []shellCommand
	for _, p := range pages {
		for _, b := range p.blocks {
			switch b.lang {
			case "sh", "bash", "shell", "console":
			default:
				continue
			}
			for i := 0; i < len(b.lines); i++ {
				start := i
				text := strings.TrimSpace(b.lines[i])
				for strings.HasSuffix(text, `\`) && i+1 < len(b.lines) {
					i++
					text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(b.lines[i])
				}
				if strings.HasPrefix(text, "#") || !mentionsLinkbolt.MatchString(text) {
					continue
				}
				cmd := shellCommand{page: p.name, line: b.start + start, text: text}
				commands, err := splitCommands(text)
				if err != nil {
					cmd.err = err
					cmds = append(cmds, cmd)
					continue
				}
				for _, words := range commands {
					if run := linkboltRun(words); run != nil {
						cmd.words = run
						cmds = append(cmds, cmd)
						break
					}
				}
			}
		}
	}
	return cmds
}

// linkboltRun returns the words of words from the one that runs linkbolt,
// or nil when words runs something else.
func linkboltRun(words []string) []string {
	isBinary := func(w string) bool { return w == "linkbolt" || strings.HasSuffix(w, "/linkbolt") }
	first := 0
	for first < len(words) && assignment.MatchString(words[first]) {
		first++
	}
	if first+1 < len(words) && isBinary(words[first]) {
		return words[first:]
	}
	for i := first + 1; i+1 < len(words); i++ {
		if strings.HasSuffix(words[i], "/linkbolt") && subcommand.MatchString(words[i+1]) {
			return words[i:]
		}
	}
	return nil
}

// splitCommands splits a shell line into its simple commands (at |, ||,
// &&, ; and &) and each into words, as a POSIX shell reads them: quotes
// removed, a backslash escaping the next character, $(…) and `…` kept
// whole and as written, and a # that starts a word ending the line.
func splitCommands(line string) ([][]string, error) {
	var commands [][]string
	var words []string
	var word strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCommand := func() {
		endWord()
		if len(words) > 0 {
			commands = append(commands, words)
			words = nil
		}
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t':
			endWord()
		case r == '#' && !inWord:
			i = len(rs)
		case r == '|' || r == ';' || r == '&':
			endCommand()
			if i+1 < len(rs) && (rs[i+1] == '|' || rs[i+1] == '&') {
				i++
			}
		case r == '\\':
			if i+1 == len(rs) {
				return nil, errors.New("a backslash ends the line")
			}
			i++
			word.WriteRune(rs[i])
			inWord = true
		case r == '\'':
			end := slices.Index(rs[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("a single quote is never closed")
			}
			word.WriteString(string(rs[i+1 : i+1+end]))
			i += end + 1
			inWord = true
		case r == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[j+1]) {
					j++
				}
				word.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, errors.New("a double quote is never closed")
			}
			i = j
			inWord = true
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(':
			depth := 0
			j := i + 1
			for ; j < len(rs); j++ {
				if rs[j] == '(' {
					depth++
				} else if rs[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j == len(rs) {
				return nil, errors.New("a $( is never closed")
			}
			word.WriteString(string(rs[i : j+1]))
			i = j
			inWord = true
		case r == '`':
			end := slices.Index(rs[i+1:], '`')
			if end < 0 {
				return nil, errors.New("a backquote is never closed")
			}
			word.WriteString(string(rs[i : i+end+2]))
			i += end + 1
			inWord = true
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	endCommand()
	return commands, nil
}

// TestShellCommands checks that the pages show runs of linkbolt and that
// each splits into words: the binary, then a command or a flag.
func TestShellCommands(t *testing.T) {
	cmds := shellCommands(loadPages(t))
	if len(cmds) == 0 {
		t.Fatal("no run of linkbolt found in the pages' shell code blocks")
	}
	for _, c := range cmds {
		if c.err != nil {
			t.Errorf("%s:%d: %q does not split into words: %v", c.page, c.line, c.text, c.err)
			continue
		}
		if len(c.words) < 2 || c.words[1] == "" {
			t.Errorf("%s:%d: %q: no command after the binary", c.page, c.line, c.text)
		}
	}
}

func TestSplitCommands(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [][]string
	}{
		{`./linkbolt backup --out backup.db --token "$TOKEN"   # a hot copy`, [][]string{{"./linkbolt", "backup", "--out", "backup.db", "--token", "$TOKEN"}}},
		{`printf '%s\n' "$PW" | ./linkbolt users create --email bea@example.com`, [][]string{{"printf", `%s\n`, "$PW"}, {"./linkbolt", "users", "create", "--email", "bea@example.com"}}},
		{`linkbolt backup --out /b/linkbolt-$(date +%F).db && echo ok`, [][]string{{"linkbolt", "backup", "--out", "/b/linkbolt-$(date +%F).db"}, {"echo", "ok"}}},
		{`a\ b "c \"d\"" 'e f'`, [][]string{{"a b", `c "d"`, "e f"}}},
	} {
		got, err := splitCommands(tc.line)
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || len(got) != len(tc.want) {
			t.Errorf("%q: got %q, want %q", tc.line, got, tc.want)
		}
	}
	for _, line := range []string{`linkbolt "open`, `linkbolt 'open`, `linkbolt $(date`, "linkbolt `date"} {
		if _, err := splitCommands(line); err == nil {
			t.Errorf("%q: split without an error", line)
		}
	}
}

func TestLinkboltRun(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"LINKBOLT_STORAGE_PATH=/x", "linkbolt", "restore", "--from", "B"}, []string{"linkbolt", "restore", "--from", "B"}},
		{[]string{"docker", "exec", "-e", "X=y", "linkbolt", "/linkbolt", "backup"}, []string{"/linkbolt", "backup"}},
		{[]string{"install", "-m", "0755", "linkbolt", "/usr/local/bin/linkbolt"}, nil},
		{[]string{"install", "-m", "0755", "v/linkbolt", "/usr/local/bin/linkbolt"}, nil},
		{[]string{"journalctl", "-u", "linkbolt", "-n", "20"}, nil},
		{[]string{"./linkbolt"}, nil},
	} {
		if got := linkboltRun(tc.words); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.words, got, tc.want)
		}
	}
}

// TestShellCommandsExist: every run of linkbolt in the pages names a real
// command (the longest of cli.CommandNames its words start with; serve
// when they start with a flag; help) and only flags that command's own
// help lists.
func TestShellCommandsExist(t *testing.T) {
	names := cli.CommandNames()
	for _, c := range shellCommands(loadPages(t)) {
		if c.err != nil || len(c.words) < 2 {
			continue // TestShellCommands names these
		}
		args := c.words[1:]
		name := ""
		for _, n := range names {
			parts := strings.Fields(n)
			if len(parts) <= len(args) && slices.Equal(parts, args[:len(parts)]) && len(n) > len(name) {
				name = n
			}
		}
		switch {
		case name != "":
		case args[0] == "help" || args[0] == "--help" || args[0] == "-h":
			continue
		case strings.HasPrefix(args[0], "-"):
			name = "serve"
		default:
			t.Errorf("%s:%d: %q: linkbolt has no command %q (it has: %s)", c.page, c.line, c.text, args[0], strings.Join(names, ", "))
			continue
		}
		var help bytes.Buffer
		if code := cli.Run(context.Background(), append(strings.Fields(name), "--help"), nil, &help, &help); code != 0 {
			t.Fatalf("linkbolt %s --help: exit %d: %s", name, code, help.String())
		}
		for _, a := range args {
			flag, _, _ := strings.Cut(a, "=")
			if !strings.HasPrefix(flag, "--") || flag == "--" {
				continue
			}
			if !strings.Contains(help.String(), "  "+flag+" ") && !strings.Contains(help.String(), "  "+flag+"\n") {
				t.Errorf("%s:%d: %q: linkbolt %s has no flag %s", c.page, c.line, c.text, name, flag)
			}
		}
	}
}
