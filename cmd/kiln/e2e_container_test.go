package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The container image builds kiln with scripts/build-static and probes it
// with `kiln health`; these tests run both outside Docker (CI has no
// daemon): the static binary is really static and runs, the Dockerfile
// still uses the script, and the health probe answers as the HEALTHCHECK
// needs.

// TestStaticBuild builds with scripts/build-static, checks the ELF has no
// interpreter and no shared libraries (it runs on distroless/static or
// scratch), and runs `version`.
func TestStaticBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; -short skips it")
	}
	root := repoRoot(t)
	bin := filepath.Join(t.TempDir(), "kiln")
	cmd := exec.Command(filepath.Join(root, "scripts", "build-static"), bin)
	cmd.Env = append(os.Environ(), "KILN_VERSION=v0.0.0-static-test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/build-static: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary asks for a dynamic loader (PT_INTERP): not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary links shared libraries %v", libs)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("static kiln version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "v0.0.0-static-test") {
		t.Errorf("kiln version printed %q, want the stamped KILN_VERSION", out)
	}
}

// TestDockerfile keeps the image honest without a daemon: it builds with
// the script CI runs, ships on a static base as a non-root user, listens
// beyond loopback and probes /health with the binary itself.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^RUN .*\./scripts/build-static /out/kiln$`),
		regexp.MustCompile(`(?m)^FROM gcr\.io/distroless/static\S*$`),
		regexp.MustCompile(`(?m)^USER nonroot(:nonroot)?$`),
		regexp.MustCompile(`(?m)^ENV KILN_ADDR=0\.0\.0\.0:8420$`),
		regexp.MustCompile(`(?m)^\s*CMD \["/kiln", "health"`),
		regexp.MustCompile(`(?m)^ENTRYPOINT \["/kiln"\]$`),
	} {
		if !want.MatchString(df) {
			t.Errorf("Dockerfile does not match %v", want)
		}
	}
}

// TestHealthCommand: healthy against a ready server (by --url and by
// KILN_ADDR, as in the image), exit 1 with one line when nothing listens.
func TestHealthCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	srv := startServe(t)
	bin := kilnBinary(t)
	if out, err := exec.Command(bin, "health", "--url", srv.URL+"/health").CombinedOutput(); err != nil {
		t.Errorf("kiln health --url: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "health", "--quiet")
	cmd.Env = append(os.Environ(), "KILN_ADDR="+strings.TrimPrefix(srv.URL, "http://"))
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("kiln health --quiet with KILN_ADDR: %v, output %q (want exit 0, silent)", err, out)
	}

	dead := "http://" + freeAddr(t) + "/health"
	out, err := exec.Command(bin, "health", "--url", dead, "--timeout", "3s").CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("kiln health on a closed port: %v, want exit 1\n%s", err, out)
	}
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "nothing is listening") {
		t.Errorf("kiln health on a closed port said %q, want one line saying nothing is listening", out)
	}
}
