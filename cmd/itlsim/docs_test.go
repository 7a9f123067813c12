package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
)

// The documentation checks: the command pages under docs/commands are what
// the command tree renders, the worked comparisons in docs/ are their story
// goldens, and every relative link in README.md and docs/ resolves.
//
//	go test ./cmd/itlsim -run 'TestCommandDocs|TestDocGoldens' -update

const repoRoot = "../.."

// commandPageName is cobra/doc's file name for a command: its path with
// spaces as underscores.
func commandPageName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// documented lists the command and its visible descendants, depth first.
func documented(c *cobra.Command) []*cobra.Command {
	if c.Hidden || c.Name() == "help" {
		return nil
	}
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		out = append(out, documented(s)...)
	}
	return out
}

// renderCommandPage writes one command's page: its description, usage,
// examples, flags, inherited flags and links to its parent and children.
func renderCommandPage(w io.Writer, c *cobra.Command) {
	fmt.Fprintf(w, "# %s\n\n", c.CommandPath())
	fmt.Fprintf(w, "<!-- generated from the command tree; rewrite with: go test ./cmd/itlsim -run TestCommandDocs -update -->\n\n")
	if c.Short != "" {
		fmt.Fprintf(w, "%s\n\n", c.Short)
	}
	if c.Long != "" {
		fmt.Fprintf(w, "## Synopsis\n\n```text\n%s\n```\n\n", strings.TrimRight(c.Long, "\n"))
	}
	if c.Runnable() {
		fmt.Fprintf(w, "```text\n%s\n```\n\n", c.UseLine())
	}
	if c.Example != "" {
		fmt.Fprintf(w, "## Examples\n\n```text\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(w, "## Flags\n\n```text\n%s```\n\n", fs.FlagUsages())
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(w, "## Flags inherited from parent commands\n\n```text\n%s```\n\n", fs.FlagUsages())
	}
	var see []string
	if p := c.Parent(); p != nil {
		see = append(see, fmt.Sprintf("- [%s](%s) — %s", p.CommandPath(), commandPageName(p), p.Short))
	}
	for _, s := range c.Commands() {
		if s.Hidden || s.Name() == "help" {
			continue
		}
		see = append(see, fmt.Sprintf("- [%s](%s) — %s", s.CommandPath(), commandPageName(s), s.Short))
	}
	if len(see) > 0 {
		fmt.Fprintf(w, "## See also\n\n%s\n", strings.Join(see, "\n"))
	}
}

// commandPages renders the page of every command of the CLI Main runs.
func commandPages() map[string][]byte {
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb, newTempFiles())
	var prof cpuProfile
	prof.bind(root)
	root.InitDefaultHelpFlag()
	pages := map[string][]byte{}
	for _, c := range documented(root) {
		c.InitDefaultHelpFlag()
		var b bytes.Buffer
		renderCommandPage(&b, c)
		pages[commandPageName(c)] = b.Bytes()
	}
	return pages
}

func TestCommandDocs(t *testing.T) {
	dir := filepath.Join(repoRoot, "docs", "commands")
	pages := commandPages()
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		for _, f := range old {
			if _, ok := pages[filepath.Base(f)]; !ok {
				os.Remove(f)
			}
		}
		for name, b := range pages {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("docs/commands/%s: %v; regenerate: go test ./cmd/itlsim -run TestCommandDocs -update", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs/commands/%s is not what the command tree renders; regenerate: go test ./cmd/itlsim -run TestCommandDocs -update", name)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, f := range files {
		if _, ok := pages[filepath.Base(f)]; !ok {
			t.Errorf("docs/commands/%s documents no command; regenerate: go test ./cmd/itlsim -run TestCommandDocs -update", filepath.Base(f))
		}
	}
	if _, ok := pages["itlsim_run.md"]; !ok {
		t.Errorf("no page for itlsim run among %d pages", len(pages))
	}
}

// goldenBlock matches a worked comparison pasted from a golden under
// cmd/itlsim/testdata: the marker names the file, the block is its bytes.
var goldenBlock = regexp.MustCompile(`(?s)<!-- golden: ([^ ]+) -->\n(.*?)<!-- end golden -->`)

// docPages lists README.md and every page under docs/, relative to the root.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

func TestDocGoldens(t *testing.T) {
	blocks := 0
	for _, page := range docPages(t) {
		path := filepath.Join(repoRoot, page)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		var rerr error
		fixed := goldenBlock.ReplaceAllStringFunc(text, func(m string) string {
			sub := goldenBlock.FindStringSubmatch(m)
			blocks++
			golden, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(sub[1])))
			if err != nil {
				rerr = fmt.Errorf("%s: golden %s: %v", page, sub[1], err)
				return m
			}
			// A blank line ends the table before the end marker.
			want := string(golden) + "\n"
			if sub[2] != want {
				if !*update {
					t.Errorf("%s: the block marked golden: %s differs from the golden; rewrite the page: go test ./cmd/itlsim -run TestDocGoldens -update", page, sub[1])
				}
			}
			return "<!-- golden: " + sub[1] + " -->\n" + want + "<!-- end golden -->"
		})
		if rerr != nil {
			t.Error(rerr)
		}
		if *update && fixed != text {
			if err := os.WriteFile(path, []byte(fixed), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if blocks == 0 {
		t.Error("no page in docs/ marks a golden block")
	}
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`^#{1,6} +(.*?) *#*$`)
	mdLinkTxt = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// githubAnchor is the id GitHub gives a heading: the rendered text in lower
// case, without punctuation other than '-' and '_', spaces as '-'.
func githubAnchor(heading string) string {
	s := mdLinkTxt.ReplaceAllString(heading, "$1")
	s = strings.NewReplacer("`", "", "*", "").Replace(s)
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// outsideFences returns the lines of a page that are not in code blocks.
func outsideFences(text string) []string {
	var out []string
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if !fence {
			out = append(out, l)
		}
	}
	return out
}

// anchors lists the heading ids of a page, with GitHub's -1, -2 suffixes
// for repeated headings.
func anchors(text string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, l := range outsideFences(text) {
		m := mdHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		a := githubAnchor(m[1])
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		ids[a] = true
	}
	return ids
}

func TestDocLinks(t *testing.T) {
	checked := 0
	for _, page := range docPages(t) {
		raw, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range outsideFences(string(raw)) {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, frag, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), file)))
				}
				info, err := os.Stat(filepath.Join(repoRoot, dest))
				if err != nil {
					t.Errorf("%s: link %s: no file %s", page, target, dest)
					continue
				}
				if frag == "" {
					continue
				}
				if info.IsDir() {
					dest = filepath.ToSlash(filepath.Join(dest, "README.md"))
				}
				body, err := os.ReadFile(filepath.Join(repoRoot, dest))
				if err != nil {
					t.Errorf("%s: link %s: %v", page, target, err)
					continue
				}
				if !anchors(string(body))[frag] {
					t.Errorf("%s: link %s: %s has no heading #%s", page, target, dest, frag)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link checked")
	}
}

// The README's first answer is the table `itlsim run --format markdown`
// prints on the default scenario: the page shows it row for row, so a new
// row or a changed figure fails here until the page is updated.
func TestReadmeShowsTheDefaultRun(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const intro = "`go run ./cmd/itlsim run --format markdown` prints"
	page := string(b)
	i := strings.Index(page, intro)
	if i < 0 {
		t.Fatalf("README.md: no paragraph starting %q", intro)
	}
	var shown []string
	started := false
	for _, l := range strings.Split(page[i:], "\n")[1:] {
		if strings.HasPrefix(l, "|") {
			shown, started = append(shown, l), true
		} else if started {
			break
		}
	}
	var printed []string
	for _, l := range strings.Split(mustRunCLI(t, "run", "--format", "markdown").stdout, "\n") {
		if strings.HasPrefix(l, "|") {
			printed = append(printed, l)
		}
	}
	if strings.Join(shown, "\n") != strings.Join(printed, "\n") {
		t.Errorf("README.md's default-run table differs from what `itlsim run --format markdown` prints:\n--- README\n%s\n--- printed\n%s",
			strings.Join(shown, "\n"), strings.Join(printed, "\n"))
	}
}
