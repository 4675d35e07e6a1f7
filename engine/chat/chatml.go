package chat

import "sync"

// chatMLSource is the ChatML layout (Qwen, SmolLM2, OpenHermes, ...):
// <|im_start|>role\ncontent<|im_end|>\n per message, then
// <|im_start|>assistant\n when a generation prompt is asked for.
//
// Tool calling follows the Hermes layout of Qwen2.5 and Qwen3 (whose
// outputs toolcall.Hermes parses): with tools, a system turn holds the
// system message, if any, then the tools as JSON within <tools></tools>
// and the instruction to answer with {"name", "arguments"} JSON within
// <tool_call></tool_call>; an assistant turn's calls follow its content
// as <tool_call> blocks; consecutive tool messages are one user turn of
// <tool_response> blocks. A conversation without tools, calls or tool
// messages renders as plain ChatML, as it always has.
const chatMLSource = `{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages and messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] + '\n\n' }}
    {%- endif %}
    {{- '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>' }}
    {%- for tool in tools %}
        {{- '\n' }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if tools and loop.first and message['role'] == 'system' %}
    {%- elif message['role'] == 'tool' %}
        {%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' + message['content'] + '\n</tool_response>' }}
        {%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- elif message['role'] == 'assistant' and message['tool_calls'] %}
        {{- '<|im_start|>assistant' }}
        {%- if message['content'] %}
            {{- '\n' + message['content'] }}
        {%- endif %}
        {%- for call in message['tool_calls'] %}
            {{- '\n<tool_call>\n{"name": "' + call['function']['name'] + '", "arguments": ' + call['function']['arguments'] | tojson + '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}`

var chatML = sync.OnceValue(func() *Template {
	t, err := Parse(chatMLSource)
	if err != nil {
		panic(err) // a constant that compiles in every test run
	}
	return t
})

// ChatML is the default template, for models that carry none.
func ChatML() *Template { return chatML() }
