package train

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadJSONL(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Example
		err      string
	}{
		{name: "two", in: `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}` + "\n\n" +
			`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`,
			want: []Example{
				{Messages: []Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "yo"}}},
				{Messages: []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}}},
			}},
		{name: "unknown field", in: `{"messages":[],"extra":1}`, err: "line 1"},
		{name: "no assistant", in: `{"messages":[{"role":"user","content":"hi"}]}`, err: ErrNoAssistant.Error()},
		{name: "empty conversation", in: `{"messages":[]}`, err: ErrEmptyExample.Error()},
		{name: "bad role", in: `{"messages":[{"role":"robot","content":"x"},{"role":"assistant","content":"y"}]}`, err: "role"},
		{name: "empty dataset", in: "\n \n", err: "no examples"},
		{name: "trailing value", in: `{"messages":[{"role":"assistant","content":"y"}]} {}`, err: "more than one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadJSONL(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func FuzzReadJSONL(f *testing.F) {
	f.Add(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`)
	f.Add(`{"messages":[]}` + "\n" + `{"x":1}`)
	f.Fuzz(func(t *testing.T, in string) {
		exs, err := ReadJSONL(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, ex := range exs {
			if err := ex.Validate(); err != nil || errors.Is(err, ErrNoAssistant) {
				t.Fatalf("ReadJSONL returned an invalid example: %v", err)
			}
		}
	})
}
