package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readmeCommand returns the arguments (after `go run ./cmd/kiln`) of the
// README's command line that starts with prefix, its `\` continuations
// joined.
func readmeCommand(t *testing.T, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		cmd := line
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		return strings.Fields(strings.TrimPrefix(cmd, "go run ./cmd/kiln"))
	}
	t.Fatalf("README.md has no line starting %q", prefix)
	return nil
}

// setFlag replaces the value of --name in args (which must have it).
func setFlag(t *testing.T, args []string, name, value string) []string {
	t.Helper()
	i := slices.Index(args, "--"+name)
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("the README's command %v has no --%s", args, name)
	}
	args = slices.Clone(args)
	args[i+1] = value
	return args
}

// TestReadmeTrainExample runs the README's `kiln train` example as written,
// from the repository root and on the shipped examples/train file, but for
// one epoch and into a temporary --out, so that the example (its data file,
// its flags and their values) cannot rot.
func TestReadmeTrainExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; -short skips it")
	}
	args := readmeCommand(t, "go run ./cmd/kiln train ")
	data := args[slices.Index(args, "--data")+1]
	if !strings.HasPrefix(data, "examples/train/") {
		t.Errorf("the README trains on %q, want the shipped file under examples/train/", data)
	}
	out := filepath.Join(t.TempDir(), "mine")
	args = setFlag(t, setFlag(t, args, "out", out), "epochs", "1")
	cmd := exec.Command(kilnBinary(t), append(args, "--threads", "2")...)
	cmd.Dir = repoRoot(t)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kiln %v: %v\n%s", args, err, b)
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), data))
	if err != nil {
		t.Fatal(err)
	}
	convs := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) != "" {
			convs++
		}
	}
	if want := fmt.Sprintf("step %d/%d epoch 1", convs, convs); !strings.Contains(string(b), want) {
		t.Errorf("want %q, one step per conversation of %s:\n%s", want, data, b)
	}
	for _, f := range []string{"adapter_config.json", "adapter_model.safetensors"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
