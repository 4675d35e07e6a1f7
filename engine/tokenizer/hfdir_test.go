package tokenizer

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The reference HF directories describe the same tokenizer as the GGUF
// files of the same model: the same specials, BOS policy, stop ids and
// chat template.
func TestFromHFDirMatchesGGUF(t *testing.T) {
	dir := sharedDir(t, "models/ref")
	const chatML = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
	tests := []struct {
		hf, gguf string
		want     HFMeta
	}{
		{"tiny-llama.hf", "tiny-llama.F32.gguf", HFMeta{AddBOS: true, BOS: 596, EOS: 598, Pad: 596, EOSIDs: []int{598}, CleanUpSpaces: true, ChatTemplate: chatML}},
		{"tiny-llama3rope.hf", "tiny-llama3rope.F32.gguf", HFMeta{AddBOS: true, BOS: 596, EOS: 598, Pad: 596, EOSIDs: []int{598}, CleanUpSpaces: true, ChatTemplate: chatML}},
		{"tiny-qwen2.hf", "tiny-qwen2.F32.gguf", HFMeta{AddBOS: false, BOS: 596, EOS: 598, Pad: 596, EOSIDs: []int{598}, ChatTemplate: chatML}},
		{"tiny-qwen3.hf", "tiny-qwen3.F32.gguf", HFMeta{AddBOS: false, BOS: 596, EOS: 598, Pad: 596, EOSIDs: []int{598}, ChatTemplate: chatML}},
	}
	type facts struct {
		Vocab, BOS, EOS int
		AddBOS, Clean   bool
		Stop            []int
		Template        string
	}
	factsOf := func(tok *Tokenizer) facts {
		return facts{tok.VocabSize(), tok.BOS(), tok.EOS(), tok.AddBOS(), tok.CleansSpaces(), tok.StopIDs(), tok.ChatTemplate()}
	}
	for _, tt := range tests {
		t.Run(tt.hf, func(t *testing.T) {
			tok, meta, err := FromHFDir(filepath.Join(dir, tt.hf))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, meta); diff != "" {
				t.Errorf("meta (-want +got):\n%s", diff)
			}
			want := factsOf(openGGUFTokenizer(t, filepath.Join(dir, tt.gguf)))
			if diff := cmp.Diff(want, factsOf(tok)); diff != "" {
				t.Errorf("HF directory vs GGUF (-gguf +hf):\n%s", diff)
			}
		})
	}
}

func TestFromHFFiles(t *testing.T) {
	added := []hfAddedToken{
		{ID: 300, Content: "<|im_end|>", Special: true}, {ID: 301, Content: "<|begin|>", Special: true},
		{ID: 302, Content: "<|eot|>", Special: true}, {ID: 303, Content: "<|pad|>", Special: true},
	}
	tokJSON := hfJSON(t, testMerges, added, true)
	tests := []struct {
		name               string
		config, gen, jinja string
		want               HFMeta
		wantStop           []int
	}{
		{"no config files", "", "", "",
			HFMeta{BOS: -1, EOS: -1, Pad: -1}, []int{300}},
		{"string specials, eos list", `{"bos_token":"<|begin|>","eos_token":"<|eot|>","pad_token":"<|pad|>","add_bos_token":true,"chat_template":"{{ x }}"}`,
			`{"eos_token_id":[300,302]}`, "",
			HFMeta{AddBOS: true, BOS: 301, EOS: 302, Pad: 303, EOSIDs: []int{300, 302}, ChatTemplate: "{{ x }}"}, []int{300, 302}},
		{"AddedToken objects, eos number", `{"bos_token":{"__type":"AddedToken","content":"<|begin|>"},"eos_token":{"content":"<|eot|>"},"pad_token":null,"clean_up_tokenization_spaces":true}`,
			`{"eos_token_id":300}`, "",
			HFMeta{BOS: 301, EOS: 302, Pad: -1, EOSIDs: []int{300}, CleanUpSpaces: true}, []int{300, 302}},
		{"ids from generation_config only", `{}`, `{"bos_token_id":301,"eos_token_id":302,"pad_token_id":303}`, "",
			HFMeta{BOS: 301, EOS: 302, Pad: 303, EOSIDs: []int{302}}, []int{300, 302}},
		{"named templates", `{"chat_template":[{"name":"tool_use","template":"T"},{"name":"default","template":"D"}]}`, "", "",
			HFMeta{BOS: -1, EOS: -1, Pad: -1, ChatTemplate: "D"}, []int{300}},
		{"chat_template.jinja wins", `{"chat_template":"old"}`, "", "new\n",
			HFMeta{BOS: -1, EOS: -1, Pad: -1, ChatTemplate: "new\n"}, []int{300}},
		{"add_bos_token without a bos", `{"add_bos_token":true}`, "", "",
			HFMeta{BOS: -1, EOS: -1, Pad: -1}, []int{300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := HFFiles{TokenizerJSON: tokJSON}
			for _, x := range []struct {
				src string
				dst *[]byte
			}{{tt.config, &f.TokenizerConfig}, {tt.gen, &f.GenerationConfig}, {tt.jinja, &f.ChatTemplateJinja}} {
				if x.src != "" {
					*x.dst = []byte(x.src)
				}
			}
			tok, meta, err := FromHFFiles(f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, meta); diff != "" {
				t.Errorf("meta (-want +got):\n%s", diff)
			}
			got := struct {
				BOS, EOS int
				AddBOS   bool
				Stop     []int
				Template string
				Clean    bool
			}{tok.BOS(), tok.EOS(), tok.AddBOS(), tok.StopIDs(), tok.ChatTemplate(), tok.CleansSpaces()}
			want := got
			want.BOS, want.EOS, want.AddBOS, want.Stop, want.Template, want.Clean = tt.want.BOS, tt.want.EOS, tt.want.AddBOS, tt.wantStop, tt.want.ChatTemplate, tt.want.CleanUpSpaces
			if diff := cmp.Diff(want, got, cmpNilEmpty); diff != "" {
				t.Errorf("tokenizer (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpNilEmpty = cmp.Transformer("nilEmpty", func(s []int) []int {
	if len(s) == 0 {
		return nil
	}
	return s
})

func TestFromHFFilesErrors(t *testing.T) {
	tokJSON := hfJSON(t, testMerges, []hfAddedToken{{ID: 300, Content: "<|im_end|>", Special: true}}, false)
	tests := []struct {
		name        string
		tok, config string
		gen         string
		want        error
	}{
		{"bad tokenizer.json", "{", "", "", ErrFormat},
		{"config not JSON", "", "{", "", ErrFormat},
		{"eos_token not in vocabulary", "", `{"eos_token":"<|nope|>"}`, "", ErrFormat},
		{"bos_token a number", "", `{"bos_token":5}`, "", ErrFormat},
		{"bos_token object without content", "", `{"bos_token":{"x":1}}`, "", ErrFormat},
		{"chat_template a number", "", `{"chat_template":5}`, "", ErrFormat},
		{"no default template", "", `{"chat_template":[{"name":"rag","template":"R"}]}`, "", ErrFormat},
		{"generation_config not JSON", "", "", "[", ErrFormat},
		{"eos id out of range", "", "", `{"eos_token_id":[1,100000]}`, ErrFormat},
		{"negative pad id", "", "", `{"pad_token_id":-1}`, ErrFormat},
		{"eos id a string", "", "", `{"eos_token_id":"2"}`, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := HFFiles{TokenizerJSON: tokJSON}
			if tt.tok != "" {
				f.TokenizerJSON = []byte(tt.tok)
			}
			if tt.config != "" {
				f.TokenizerConfig = []byte(tt.config)
			}
			if tt.gen != "" {
				f.GenerationConfig = []byte(tt.gen)
			}
			if _, _, err := FromHFFiles(f); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestFromHFDirMissing(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := FromHFDir(dir); err == nil {
		t.Fatal("FromHFDir of a directory without tokenizer.json succeeded")
	}
}
