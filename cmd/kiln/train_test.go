package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTrainCLI trains kiln-tiny for two steps and checks the progress
// lines (one per step, with the bar and the loss) and the PEFT files.
func TestTrainCLI(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.jsonl")
	if err := os.WriteFile(data, []byte(`{"messages":[{"role":"user","content":"hello there"},{"role":"assistant","content":"the cat sat"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "adapter")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"train", "--data", data, "--out", out, "--epochs", "2", "--lora-rank", "2", "--threads", "2"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	lines := regexp.MustCompile(`(?m)^\[[#.]{20}\] step (\d)/2 epoch (\d) loss \d+\.\d{4} `).FindAllStringSubmatch(stderr.String(), -1)
	if len(lines) != 2 || lines[0][1] != "1" || lines[1][1] != "2" || lines[1][2] != "2" {
		t.Errorf("progress lines %q, want steps 1/2 and 2/2 (epoch 2); stderr:\n%s", lines, stderr.String())
	}
	for _, f := range []string{"adapter_config.json", "adapter_model.safetensors"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestTrainCLIErrors(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.jsonl")
	if err := os.WriteFile(data, []byte(`{"messages":[{"role":"user","content":"hi"}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--out", dir}, exitUsage, "--data is required"},
		{[]string{"--data", data}, exitUsage, "--out is required"},
		{[]string{"--data", data, "--out", dir, "--lora-rank", "0"}, exitUsage, "train: --lora-rank: 0 out of range"},
		{[]string{"--data", data, "--out", dir, "--learning-rate", "-1"}, exitUsage, "train: --learning-rate: -1 out of range"},
		{[]string{"--data", data, "--out", dir, "--target-modules", "q,x"}, exitUsage, `train: --target-modules: unknown target module "x"`},
		{[]string{"--data", data, "--out", dir, "--optimizer", "lion"}, exitUsage, `train: --optimizer: "lion" unknown`},
		{[]string{"--data", data, "--out", dir}, exitFail, "no assistant turn"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"train"}, tc.args...), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("train %v: exit %d, stderr %q; want exit %d with %q", tc.args, code, stderr.String(), tc.code, tc.msg)
		}
	}
}
