package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/server"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// userDocs lists the documentation a user reads, relative to the
// repository root: the README, CONTRIBUTING.md, BENCHMARKS.md, docs/*.md
// and every README.md under examples/.
func userDocs(t *testing.T, root string) []string {
	t.Helper()
	docs := []string{"README.md", "CONTRIBUTING.md", "BENCHMARKS.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "README.md" {
			more = append(more, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range more {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, filepath.ToSlash(rel))
	}
	return docs
}

// docText is one document split into what its references are read from:
// the inline code spans, the lines of its fenced code blocks (a `\`
// continuation joined), its prose outside code, and its link targets.
type docText struct {
	spans, codeLines, prose, links []string
}

var (
	spanRE = regexp.MustCompile("`([^`\n]+)`")
	linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

func readDoc(t *testing.T, path string) docText {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d docText
	inFence, cont := false, ""
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			if strings.HasSuffix(line, `\`) {
				cont += strings.TrimSuffix(line, `\`) + " "
				continue
			}
			d.codeLines = append(d.codeLines, cont+line)
			cont = ""
			continue
		}
		for _, m := range spanRE.FindAllStringSubmatch(line, -1) {
			d.spans = append(d.spans, m[1])
		}
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			d.links = append(d.links, m[1])
		}
		d.prose = append(d.prose, spanRE.ReplaceAllString(line, " "))
	}
	return d
}

// docFlagExceptions are --flags the documents name that belong to another
// program, each with the reason.
var docFlagExceptions = map[string]string{
	"help":    "every kiln command takes --help (Go's flag package)",
	"version": "kiln --version is kiln version",
	"flag":    "docs/configuration.md's placeholder: \"`--flag` alone means true\"",
}

// toolFlags is every --flag the repository's own scripts and example
// clients parse (scripts/bench-peer's --rounds, chat-with-timing.mjs's
// --base-url): the documents describe those programs too, in prose and
// tables that do not say which program a flag belongs to.
func toolFlags(t *testing.T, root string) map[string]bool {
	t.Helper()
	var files []string
	for _, pat := range []string{"scripts/*", "examples/clients/*.mjs", "examples/clients/agents/*.mjs", "examples/clients/*.py", "examples/clients/*.sh"} {
		m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pat)))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	flags := map[string]bool{}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range flagRE.FindAllStringSubmatch(string(b), -1) {
			flags[m[1]] = true
		}
	}
	return flags
}

var (
	// kilnCall finds the start of a kiln invocation in a line: flags after
	// it are kiln's.
	kilnCall = regexp.MustCompile(`(?:\bkiln|\./cmd/kiln|bin/kiln)\s+(?:serve|generate|train|bench|health|version|help)\b`)
	flagRE   = regexp.MustCompile(`(?:^|[\s("'=\[|,;])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)`)
)

// kilnFlags is every flag of every kiln subcommand, from the built
// binary's --help.
func kilnFlags(t *testing.T) map[string]bool {
	t.Helper()
	flags := map[string]bool{}
	for _, c := range commands() {
		if c.run == nil {
			continue
		}
		out, _ := exec.Command(kilnBinary(t), c.name, "--help").CombinedOutput()
		for _, f := range parseHelp(string(out)) {
			flags[f.name] = true
		}
	}
	if !flags["prefill-chunk"] || !flags["prompt-ids"] || !flags["lora-rank"] {
		t.Fatalf("flags read from kiln's help look wrong: %v", flags)
	}
	return flags
}

// docFlags returns the --flags d names as kiln's: in an inline code span
// that starts with one (a table's `--prefill-chunk`) or that invokes kiln
// (`kiln generate --chat`), on a code line after a kiln invocation, and in
// prose.
func docFlags(d docText) []string {
	var out []string
	add := func(s string) {
		for _, m := range flagRE.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
	}
	for _, s := range append(slices.Clone(d.spans), d.codeLines...) {
		if strings.HasPrefix(s, "--") {
			add(s)
		} else if loc := kilnCall.FindStringIndex(s); loc != nil {
			add(s[loc[1]:])
		}
	}
	for _, p := range d.prose {
		add(p)
	}
	return out
}

// TestDocsNameRealFlags: no document names a --flag that no kiln
// subcommand has (a renamed or removed flag leaves its mentions behind).
// A flag the repository's scripts and example clients parse is allowed
// (toolFlags); a flag on a code line before its kiln invocation (docker's
// --rm) is another program's and not read.
func TestDocsNameRealFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; -short skips it")
	}
	root := repoRoot(t)
	flags, tools := kilnFlags(t), toolFlags(t, root)
	for _, doc := range userDocs(t, root) {
		for _, f := range docFlags(readDoc(t, filepath.Join(root, doc))) {
			if _, ok := docFlagExceptions[f]; !ok && !flags[f] && !tools[f] {
				t.Errorf("%s names --%s, which no kiln subcommand (kiln <command> --help) nor script of the repository has", doc, f)
			}
		}
	}
}

// docRouteExceptions are route mentions that are not routes of the
// server, each with the reason.
var docRouteExceptions = map[string]string{}

var (
	methodRouteRE = regexp.MustCompile(`^(GET|POST|DELETE|PUT|PATCH|HEAD)\s+(/\S*)`)
	bareRouteRE   = regexp.MustCompile(`^/v1/\S*$`)
)

// docRoute is a route as a document names it.
type docRoute struct{ method, path string }

// docRoutes returns the routes named in d's inline code spans: `GET
// /v1/...` (any method, any path) and bare `/v1/...` paths.
func docRoutes(d docText) []docRoute {
	var out []docRoute
	for _, s := range d.spans {
		if m := methodRouteRE.FindStringSubmatch(s); m != nil {
			out = append(out, docRoute{m[1], m[2]})
		} else if bareRouteRE.MatchString(s) {
			out = append(out, docRoute{"", s})
		}
	}
	return out
}

// routeMatches reports whether the documented path p names pattern: their
// segments agree, a pattern wildcard ({id}, {name...}) taking any segment
// (the rest, for {x...}), a document placeholder ({name}, <id>, …, *)
// standing for a wildcard. A query string is ignored; "/" names "/{$}".
func routeMatches(pattern, p string) bool {
	p, _, _ = strings.Cut(p, "?")
	if !strings.HasSuffix(p, "/...") {
		p = strings.TrimRight(p, ".,;:")
	}
	if pattern == "/{$}" {
		return p == "/"
	}
	ps, ds := strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(strings.Trim(p, "/"), "/")
	for i, seg := range ps {
		rest := strings.HasSuffix(seg, "...}")
		if i >= len(ds) {
			return false
		}
		d := ds[i]
		placeholder := strings.HasPrefix(d, "{") || strings.HasPrefix(d, "<") || d == "…" || d == "..." || d == "*"
		switch {
		case rest:
			return true
		case strings.HasPrefix(seg, "{"):
		case (d == "*" || d == "..." || d == "…") && i == len(ds)-1:
			return true // `/v1/stats/*`, `/v1/...`: some route under the prefix
		case placeholder || d != seg:
			return false
		}
	}
	return len(ds) == len(ps)
}

// findRoute returns whether some route of the server's table matches the
// documented method and path (GET covers HEAD; no method matches any).
func findRoute(routes []server.Route, r docRoute) bool {
	for _, rt := range routes {
		method := r.method
		if method == "HEAD" {
			method = "GET"
		}
		if (method == "" || method == rt.Method) && routeMatches(rt.Pattern, r.path) {
			return true
		}
	}
	return false
}

// TestDocsNameRealRoutes: every HTTP route a document names is in the
// server's route table (server.Routes, the table the mux registers).
func TestDocsNameRealRoutes(t *testing.T) {
	root := repoRoot(t)
	routes := server.Routes()
	for _, doc := range userDocs(t, root) {
		for _, r := range docRoutes(readDoc(t, filepath.Join(root, doc))) {
			name := strings.TrimSpace(r.method + " " + r.path)
			if _, ok := docRouteExceptions[name]; ok {
				continue
			}
			if !findRoute(routes, r) {
				t.Errorf("%s names `%s`, which the server's route table does not have", doc, name)
			}
		}
	}
}

// TestReadmeHTTPTableListsEveryRoute: the HTTP tables of the README and of
// docs/http-api.md name every route of the server's table.
func TestReadmeHTTPTableListsEveryRoute(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range []struct{ doc, heading string }{
		{"README.md", "## HTTP surface"},
		{"docs/http-api.md", "## Routes"},
	} {
		b, err := os.ReadFile(filepath.Join(root, tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(b), tc.heading+"\n")
		if !ok {
			t.Fatalf("%s has no %q", tc.doc, tc.heading)
		}
		var listed []docRoute
		for _, line := range strings.Split(section, "\n") {
			if strings.HasPrefix(line, "## ") {
				break
			}
			if !strings.HasPrefix(line, "| `") {
				continue
			}
			cell := strings.Split(line, " | ")[0]
			listed = append(listed, docRoutes(docText{spans: spanCells(cell)})...)
		}
		for _, rt := range server.Routes() {
			found := slices.ContainsFunc(listed, func(r docRoute) bool {
				return r.method == rt.Method && routeMatches(rt.Pattern, r.path)
			})
			if !found {
				t.Errorf("%s: the table under %q lacks `%s %s`", tc.doc, tc.heading, rt.Method, rt.Pattern)
			}
		}
	}
}

// spanCells returns the inline code spans of a table cell.
func spanCells(cell string) []string {
	var out []string
	for _, m := range spanRE.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// docPathExceptions are repository-looking paths the documents name that
// are not files of the repository, each with the reason.
var docPathExceptions = map[string]string{}

var pathRE = regexp.MustCompile(`^(?:\./)?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)*/?$`)

// repoPathCandidates returns the spans of d that name a path of the
// repository: a path whose first segment is a top-level entry of root
// (not one .gitignore ignores, like adapters/), with no placeholder.
func repoPathCandidates(d docText, top map[string]bool) []string {
	var out []string
	for _, s := range d.spans {
		if !pathRE.MatchString(s) || !strings.Contains(strings.TrimPrefix(s, "./"), "/") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(s, "./"), "/")
		if top[first] {
			out = append(out, s)
		}
	}
	return out
}

// topLevel lists the repository's top-level entries, less the
// directories .gitignore ignores at the root (the outputs a command
// writes there, such as adapters/).
func topLevel(t *testing.T, root string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		top[e.Name()] = true
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(ignore), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "/"); ok {
			delete(top, strings.TrimSuffix(name, "/"))
		}
	}
	delete(top, ".git")
	return top
}

// TestDocsNameRealFiles: every repository path a document names, in an
// inline code span (`examples/clients/stream-timing.sh`, `scripts/test`,
// `telemetry/names*.go`) or as a relative link, exists.
func TestDocsNameRealFiles(t *testing.T) {
	root := repoRoot(t)
	top := topLevel(t, root)
	for _, doc := range userDocs(t, root) {
		d := readDoc(t, filepath.Join(root, doc))
		for _, p := range repoPathCandidates(d, top) {
			if _, ok := docPathExceptions[p]; ok {
				continue
			}
			if m, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(p))); len(m) == 0 {
				t.Errorf("%s names `%s`, which is not a file of the repository", doc, p)
			}
		}
		for _, l := range d.links {
			target, _, _ := strings.Cut(l, "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(doc), filepath.FromSlash(target))); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, l)
			}
		}
	}
}

// TestAccessTokenHelpNamesOpenRoutes: --access-token's help names every
// route that answers without the token (server.Routes' Open ones).
func TestAccessTokenHelpNamesOpenRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; -short skips it")
	}
	out, _ := exec.Command(kilnBinary(t), "serve", "--help").CombinedOutput()
	var usage string
	for _, f := range parseHelp(string(out)) {
		if f.name == "access-token" {
			usage = f.usage
		}
	}
	if usage == "" {
		t.Fatalf("no --access-token in kiln serve --help:\n%s", out)
	}
	var missing []string
	for _, rt := range server.Routes() {
		if !rt.Open {
			continue
		}
		shown := strings.NewReplacer("{$}", "", "{file...}", "...").Replace(rt.Pattern)
		if !regexp.MustCompile(`(^|[\s(,])` + regexp.QuoteMeta(shown) + `([\s),;]|$)`).MatchString(usage) {
			missing = append(missing, shown)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("--access-token's help %q does not name the open routes %v", usage, missing)
	}
}

// issueRE finds a reference to the project's issue tracker.
var issueRE = regexp.MustCompile(`(?i)\bissue \d+`)

// TestDocsDescribeWhatShips: the user documentation describes the product
// as it is, not as a tracker issue will leave it ("arrive with issue 15"
// outlived the work it promised). BENCHMARKS.md's measurement log is
// history, dated, and may name the issue a measurement was made for.
func TestDocsDescribeWhatShips(t *testing.T) {
	root := repoRoot(t)
	for _, doc := range userDocs(t, root) {
		if doc == "BENCHMARKS.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := issueRE.FindString(line); m != "" {
				t.Errorf("%s:%d refers to %q: describe what the product does now", doc, i+1, m)
			}
		}
	}
}

// TestLatencyGuideExplainsEveryReason: the latency guide's stall-reason
// table has a row for every reason of the closed set (latency.Reason).
func TestLatencyGuideExplainsEveryReason(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "latency-guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	for r := range latency.NumReasons {
		if row := "| `" + r.String() + "` |"; !strings.Contains(string(b), row) {
			t.Errorf("docs/latency-guide.md has no stall-reason row %q", row)
		}
	}
}
