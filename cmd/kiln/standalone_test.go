package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The repository must stand alone: its users have no planning documents
// beside it. These patterns are spelled so that this file does not match
// them itself.
var (
	// outsideDocRE matches a reference to a planning document that is not
	// in the repository (the contract, the design, the maintenance
	// contract, the style guide, the user-facing source text).
	outsideDocRE = regexp.MustCompile(`\b(?:S[P]EC|D[E]SIGN|M[A]INTENANCE|S[T]YLE)\.md\b|\bS[P]EC\b|kiln-latency-[o]bservability|/work/[s]hared`)
	// sharedDirRE matches the folder beside the repository that holds the
	// shared test data (reference models, tokenizers): test code may read
	// it, documentation and non-test code may not point at it.
	sharedDirRE = regexp.MustCompile(`\.\./(?:\.\./)*[s]hared\b`)
	// mdLinkRE is an inline Markdown link or image: its target, without
	// the optional title.
	mdLinkRE = regexp.MustCompile(`!?\[[^\]]*\]\(([^()\s]*)(?:\s+"[^"]*")?\)`)
	// docRefRE is a reference from code or configuration to a page of the
	// repository, with its optional anchor.
	docRefRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:\.\./)*(?:docs/[a-z0-9-]+|README|CONTRIBUTING|BENCHMARKS)\.md)(#[A-Za-z0-9_-]+)?`)
	// maintSectionRE is a reference to numbered sections of
	// docs/maintenance.md: "docs/maintenance.md section 4", "sections 2-4
	// and 7", "sections 6 and\n// 9".
	maintSectionRE = regexp.MustCompile(`docs/maintenance\.md,?(?:\s|//|#)+sections?((?:(?:\s|//|#|,|-|and|to)+\d+)+)`)
	numberRE       = regexp.MustCompile(`\d+`)
	// headingRE is an ATX heading; anchorRE an explicit HTML anchor.
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	anchorRE  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// inlineLinkRE is a link inside a heading (its text is the slug's);
	// codeSpanRE an inline code span.
	inlineLinkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	codeSpanRE   = regexp.MustCompile("`[^`]*`")
)

// scannedExt are the text files whose contents are checked.
var scannedExt = []string{".go", ".md", ".js", ".mjs", ".py", ".sh", ".yml", ".yaml", ".json", ".html", ".css", ".txt", ".toml"}

// skippedDirs are never walked: version control, installed packages,
// build and benchmark outputs, fuzz corpora (random bytes).
var skippedDirs = []string{".git", "node_modules", "bench-results", "e2e-artifacts", "__pycache__", "fuzz"}

// repoText is one scanned file: its path from the root and its contents.
type repoText struct {
	rel  string
	text string
}

// scanRepo returns every text file of the repository worth checking.
func scanRepo(t *testing.T, root string) []repoText {
	t.Helper()
	var files []repoText
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (slices.Contains(skippedDirs, d.Name()) || rel == "tmp" || rel == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if !slices.Contains(scannedExt, filepath.Ext(rel)) && dir != "scripts" && dir != ".ci" && d.Name() != "Dockerfile" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if slices.Contains(b, 0) {
			return nil // binary
		}
		files = append(files, repoText{rel: rel, text: string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("scanned %d files under %s; expected the whole repository", len(files), root)
	}
	return files
}

// isTestCode reports whether rel is test code or test data, which may
// read the shared test data beside the repository.
func isTestCode(rel string) bool {
	return strings.HasSuffix(rel, "_test.go") || strings.Contains("/"+rel, "/testdata/") ||
		strings.HasPrefix(rel, "internal/testshared/") || rel == "scripts/test"
}

// lineOf is the 1-based line of offset i in s.
func lineOf(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// githubSlug is the anchor GitHub gives a heading: lower case, the
// markup's punctuation dropped, spaces as hyphens.
func githubSlug(heading string) string {
	heading = inlineLinkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// mdPage is what links into one Markdown page can name.
type mdPage struct {
	anchors  map[string]bool
	sections map[int]bool // "## N. Title" headings
}

// parsePage reads the headings and explicit anchors of a Markdown page
// (fenced code blocks excluded), with GitHub's -1, -2 suffixes for
// repeated headings.
func parsePage(text string) mdPage {
	p := mdPage{anchors: map[string]bool{}, sections: map[int]bool{}}
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range anchorRE.FindAllStringSubmatch(line, -1) {
			p.anchors[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := githubSlug(m[1])
		if n := seen[s]; n > 0 {
			p.anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			p.anchors[s] = true
		}
		seen[s]++
		if num, _, ok := strings.Cut(m[1], ". "); ok && strings.HasPrefix(line, "## ") {
			if n, err := strconv.Atoi(num); err == nil {
				p.sections[n] = true
			}
		}
	}
	return p
}

// stripCode blanks fenced code blocks and inline code spans of a
// Markdown page, keeping its line structure, so that code is not read as
// links.
func stripCode(text string) string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
			continue
		}
		lines[i] = codeSpanRE.ReplaceAllString(line, "``")
	}
	return strings.Join(lines, "\n")
}

// TestRepositoryStandsAlone: users of the repository have only the
// repository. No file (documentation, code and its comments, scripts,
// configuration) refers to a planning document kept outside it, and only
// test code names the shared test data folder beside it; every relative
// link of the Markdown pages resolves to a file of the repository and, with
// an anchor, to a heading of that page; every page a code comment names
// (docs/<page>.md#<anchor>, docs/maintenance.md section N) exists.
func TestRepositoryStandsAlone(t *testing.T) {
	root := repoRoot(t)
	files := scanRepo(t, root)
	pages := map[string]mdPage{}
	for _, f := range files {
		if strings.HasSuffix(f.rel, ".md") {
			pages[f.rel] = parsePage(f.text)
		}
	}
	for _, must := range []string{"README.md", "CONTRIBUTING.md", "BENCHMARKS.md", "docs/architecture.md", "docs/maintenance.md", "docs/latency-guide.md", "docs/http-api.md"} {
		if _, ok := pages[must]; !ok {
			t.Errorf("%s is missing", must)
		}
	}
	// checkTarget reports what is wrong with a reference from file rel to
	// target (a path relative to base) and anchor, or "".
	checkTarget := func(base, target, anchor string) string {
		path := filepath.ToSlash(filepath.Clean(filepath.Join(base, target)))
		if target == "" {
			path = base
		}
		if strings.HasPrefix(path, "../") || path == ".." {
			return fmt.Sprintf("%s is outside the repository", target)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path))); err != nil {
			return fmt.Sprintf("%s does not exist", path)
		}
		if anchor == "" {
			return ""
		}
		p, ok := pages[path]
		if !ok {
			return ""
		}
		if !p.anchors[anchor] {
			return fmt.Sprintf("%s has no heading or anchor #%s", path, anchor)
		}
		return ""
	}
	for _, f := range files {
		for _, loc := range outsideDocRE.FindAllStringIndex(f.text, -1) {
			t.Errorf("%s:%d refers to %q, a document outside the repository: point at its page in docs/ instead",
				f.rel, lineOf(f.text, loc[0]), f.text[loc[0]:loc[1]])
		}
		if !isTestCode(f.rel) {
			for _, loc := range sharedDirRE.FindAllStringIndex(f.text, -1) {
				t.Errorf("%s:%d names %q, a folder outside the repository (only test code may read the shared test data)",
					f.rel, lineOf(f.text, loc[0]), f.text[loc[0]:loc[1]])
			}
		}
		if strings.HasSuffix(f.rel, ".md") {
			text := stripCode(f.text)
			for _, m := range mdLinkRE.FindAllStringSubmatchIndex(text, -1) {
				link := text[m[2]:m[3]]
				if link == "" || strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
					continue
				}
				target, anchor, _ := strings.Cut(link, "#")
				base := filepath.ToSlash(filepath.Dir(f.rel))
				if target == "" {
					base, target = f.rel, ""
				}
				if msg := checkTarget(base, target, anchor); msg != "" {
					t.Errorf("%s:%d links to %s: %s", f.rel, lineOf(text, m[0]), link, msg)
				}
			}
			continue
		}
		// Code, comments, scripts and configuration name pages from the
		// repository root.
		for _, m := range docRefRE.FindAllStringSubmatchIndex(f.text, -1) {
			target := f.text[m[2]:m[3]]
			anchor := ""
			if m[4] >= 0 {
				anchor = f.text[m[4]+1 : m[5]]
			}
			base := "."
			if strings.HasPrefix(target, "../") {
				base = filepath.ToSlash(filepath.Dir(f.rel))
			}
			if msg := checkTarget(base, target, anchor); msg != "" {
				t.Errorf("%s:%d names %s%s: %s", f.rel, lineOf(f.text, m[2]), target, f.text[m[3]:max(m[3], m[5])], msg)
			}
		}
		maint := pages["docs/maintenance.md"]
		for _, m := range maintSectionRE.FindAllStringSubmatchIndex(f.text, -1) {
			for _, n := range numberRE.FindAllString(f.text[m[2]:m[3]], -1) {
				if k, _ := strconv.Atoi(n); !maint.sections[k] {
					t.Errorf("%s:%d names section %s of docs/maintenance.md, which has no heading \"## %s.\"", f.rel, lineOf(f.text, m[0]), n, n)
				}
			}
		}
	}
}

// TestGithubSlug pins the anchors links rely on to GitHub's rule.
func TestGithubSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"The request summary (`latency`)", "the-request-summary-latency"},
		{"`GET /health` and `GET /v1/health`", "get-health-and-get-v1health"},
		{"4. The actor barrier (KV resize and adapter swaps)", "4-the-actor-barrier-kv-resize-and-adapter-swaps"},
		{"Kernels, 4096×4096 matrix-vector", "kernels-40964096-matrix-vector"},
		{"Reading the numbers: null, zero and positive", "reading-the-numbers-null-zero-and-positive"},
		{"See [the guide](guide.md) now", "see-the-guide-now"},
	} {
		if got := githubSlug(c.heading); got != c.want {
			t.Errorf("githubSlug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}
