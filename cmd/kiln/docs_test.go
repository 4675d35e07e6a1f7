package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// helpFlag is one flag as `kiln serve --help` prints it.
type helpFlag struct {
	name, def string // def "" when the help prints no default
	usage     string
}

var defaultRE = regexp.MustCompile(`\(default (.*)\)$`)

// parseHelp reads Go flag's PrintDefaults format: "  -name type" then an
// indented usage line ending in "(default X)" when the default is not zero.
func parseHelp(out string) []helpFlag {
	var flags []helpFlag
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  -") {
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "  -"), " ")
			flags = append(flags, helpFlag{name: name})
			continue
		}
		if len(flags) > 0 && strings.HasPrefix(line, "    \t") {
			f := &flags[len(flags)-1]
			f.usage = strings.TrimSpace(line)
			if m := defaultRE.FindStringSubmatch(f.usage); m != nil {
				f.def = strings.Trim(m[1], `"`)
			}
		}
	}
	return flags
}

// docRows reads the flag table of docs/configuration.md: flag -> its
// variable and default cells.
func docRows(t *testing.T) map[string][2]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][2]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		cells := strings.Split(line, " | ")
		if len(cells) < 4 {
			t.Errorf("configuration.md row has %d cells: %s", len(cells), line)
			continue
		}
		name := strings.Trim(strings.TrimPrefix(cells[0], "| "), "`-")
		rows[name] = [2]string{cells[1], cells[2]}
	}
	return rows
}

// TestConfigurationDoc checks docs/configuration.md against the real
// `kiln serve --help`: every flag has a row with its KILN_ variable and the
// default the help prints (— when it prints none), and no row names a flag
// that does not exist. A failure prints the rows to add.
func TestConfigurationDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; -short skips it")
	}
	out, err := exec.Command(kilnBinary(t), "serve", "--help").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "Flags:") {
		t.Fatalf("kiln serve --help: %v\n%s", err, out)
	}
	flags := parseHelp(string(out))
	if len(flags) < 10 {
		t.Fatalf("parsed %d flags from kiln serve --help:\n%s", len(flags), out)
	}
	rows := docRows(t)
	var missing []string
	for _, f := range flags {
		row, ok := rows[f.name]
		delete(rows, f.name)
		wantDef := "—"
		if f.def != "" {
			wantDef = "`" + f.def + "`"
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("| `--%s` | `%s` | %s | %s |", f.name, envName(f.name), wantDef, strings.TrimSpace(defaultRE.ReplaceAllString(f.usage, ""))))
			continue
		}
		if want := "`" + envName(f.name) + "`"; row[0] != want {
			t.Errorf("--%s: variable cell %q, want %q", f.name, row[0], want)
		}
		explained := f.def == "" && strings.HasPrefix(row[1], "— ") // "— (what zero means)"
		if row[1] != wantDef && !explained {
			t.Errorf("--%s: default cell %q, want %s (what --help prints)", f.name, row[1], wantDef)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/configuration.md lacks these flags of kiln serve --help; add rows like:\n%s", strings.Join(missing, "\n"))
	}
	var extra []string
	for name := range rows {
		extra = append(extra, name)
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("docs/configuration.md lists flags kiln serve does not have: %v", extra)
	}
}
