package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestFlagMistakes: a mistyped or unknown flag is one line on stderr
// (exit 2) with the flag probably meant and where every flag is listed,
// never the whole usage; a duration without a unit says how to write one;
// help asked for goes to stdout (exit 0), so it can be piped to grep.
func TestFlagMistakes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"typo", []string{"serve", "--prefil-chunk", "64"}, []string{"not defined: -prefil-chunk", "did you mean --prefill-chunk?", "kiln serve --help"}},
		{"another server's flag", []string{"serve", "--port", "8080"}, []string{"did you mean --addr?"}},
		{"a prefix", []string{"serve", "--prefill", "3"}, []string{"did you mean --prefill-chunk?"}},
		{"nothing close", []string{"serve", "--zzzzzzzzzz"}, []string{"not defined: -zzzzzzzzzz (kiln serve --help lists every flag)"}},
		{"duration without a unit", []string{"serve", "--shutdown-grace", "30"}, []string{"-shutdown-grace", "use a Go duration such as 30s"}},
		{"prefix cache neither on nor off", []string{"serve", "--prefix-cache", "yes"}, []string{`-prefix-cache: "yes" is not on or off`, "kiln serve --help"}},
		{"prefix cache bytes not a size", []string{"serve", "--prefix-cache-bytes", "2G"}, []string{`-prefix-cache-bytes: "2G" is not a size`, "512MiB", "kiln serve --help"}},
		{"generate typo", []string{"generate", "--max-token", "3"}, []string{"did you mean --max-tokens?", "kiln generate --help"}},
		{"bench typo", []string{"bench", "--concurency", "3"}, []string{"did you mean --concurrency?", "kiln bench --help"}},
		{"health duration", []string{"health", "--timeout", "5"}, []string{"use a Go duration"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errb)
			msg := errb.String()
			if code != exitUsage || out.Len() != 0 || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, one line on stderr", code, out.String(), msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q lacks %q", msg, w)
				}
			}
		})
	}
}

// TestHelpToStdout: --help of every command prints its usage to stdout
// and exits 0, with nothing on stderr.
func TestHelpToStdout(t *testing.T) {
	for _, c := range []struct{ cmd, flag string }{
		{"serve", "-prefill-chunk"}, {"generate", "-max-tokens"}, {"bench", "-concurrency"}, {"train", "-epochs"}, {"health", "-timeout"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{c.cmd, "--help"}, &out, &errb); code != exitOK || errb.Len() != 0 || !strings.Contains(out.String(), c.flag) {
			t.Errorf("kiln %s --help: exit %d, stderr %q, stdout lacks %s: %q", c.cmd, code, errb.String(), c.flag, out.String())
		}
	}
}

// TestBenchNothingListening: kiln bench against a URL where nothing
// listens exits non-zero and says why, instead of a table of zeros and
// exit 0.
func TestBenchNothingListening(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"bench", "--url", "http://127.0.0.1:1", "--requests", "2", "--out", t.TempDir() + "/e.json"}, &out, &errb)
	if code == exitOK || !strings.Contains(errb.String(), "all 2 requests failed; the first:") {
		t.Errorf("exit %d, stderr %q; want a failure naming the first error", code, errb.String())
	}
}
