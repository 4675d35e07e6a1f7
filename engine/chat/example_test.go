package chat_test

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine/chat"
)

func ExampleChatML() {
	prompt, err := chat.ChatML().Render([]chat.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Hi!"},
	}, chat.Options{AddGenerationPrompt: true})
	fmt.Printf("%q %v\n", prompt, err)
	// Output: "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n" <nil>
}

// A model's own template, as found in tokenizer.chat_template (here
// Llama-3's), rendered with the tokenizer's BOS string.
func ExampleParse() {
	tmpl, err := chat.Parse("{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")
	if err != nil {
		fmt.Println(err)
		return
	}
	prompt, err := tmpl.Render([]chat.Message{{Role: "user", Content: " Hi! "}},
		chat.Options{BOS: "<|begin_of_text|>", AddGenerationPrompt: true})
	fmt.Printf("%q %v\n", prompt, err)
	// Output: "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n" <nil>
}
