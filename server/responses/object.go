package responses

import (
	"sort"
	"strconv"

	"github.com/kiln-ai/kiln/server/wire"
)

// The Responses response object and its output items, streamed (in
// response.created and the terminal event) or whole.

// Whole writes the response of a request that was not streamed
// (wire.OutlineOf gives its items).
func (w *Wire) Whole(cs []*wire.Choice) error {
	c := cs[0]
	w.out = *wire.OutlineOf(c)
	for _, it := range w.out.Items {
		it.ID = wire.NewID(itemPrefixes[it.Kind])
	}
	b := w.appendResponse(make([]byte, 0, 1024+c.Text.Len()), c, w.out.Items, true)
	b = append(b, '\n')
	w.keep(c)
	return c.Resp.Out.WriteWhole(b)
}

// keep stores the response for previous_response_id and item_reference
// when the request said store (OpenAI's default) and it completed.
func (w *Wire) keep(c *wire.Choice) {
	rc := w.call
	if !rc.store || responseStatus(c.FinishReason) == "failed" {
		return
	}
	conv := append([]wire.Message(nil), rc.conversation(c.Req.Messages)...)
	items := map[string][]wire.Message{}
	answer := wire.Message{Role: "assistant"}
	for _, it := range w.out.Items {
		switch it.Kind {
		case wire.ItemText:
			answer.Content = it.Text.String()
			items[it.ID] = []wire.Message{{Role: "assistant", Content: answer.Content}}
		case wire.ItemCall:
			c := wire.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Text.String()}
			answer.ToolCalls = append(answer.ToolCalls, c)
			items[it.ID] = []wire.Message{{Role: "assistant", ContentNull: true, ToolCalls: []wire.ToolCall{c}}}
		}
	}
	answer.ContentNull = answer.Content == "" && len(answer.ToolCalls) > 0
	body := append(w.appendResponse(nil, c, w.out.Items, true), '\n')
	w.store.put(c.Resp.ID, body, append(conv, answer), items)
}

// appendResponse appends the response object: in progress (final false:
// no output, no usage) or at its end.
func (w *Wire) appendResponse(b []byte, c *wire.Choice, items []*wire.Item, final bool) []byte {
	rc := w.call
	status := "in_progress"
	if final {
		status = responseStatus(c.FinishReason)
	}
	b = append(b, `{"id":`...)
	b = wire.AppendJSONString(b, c.Resp.ID)
	b = append(b, `,"object":"response","created_at":`...)
	b = wire.AppendInt(b, c.Resp.Created)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","error":`...)
	if status == "failed" {
		b = append(b, `{"code":"server_error","message":`...)
		b = wire.AppendJSONString(b, "the generation ended early: "+c.FinishReason)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":`...)
	if status == "incomplete" {
		b = append(b, `{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"instructions":`...)
	if rc.hasInstr {
		b = wire.AppendJSONString(b, rc.instructions)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"max_output_tokens":`...)
	b = appendNullableInt(b, c.Req.MaxTokens) // 0: max_output_tokens was not given
	b = append(b, `,"model":`...)
	b = wire.AppendJSONString(b, c.Resp.Model)
	b = append(b, `,"output":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, c, it, "completed")
	}
	b = append(b, `],"parallel_tool_calls":`...)
	b = strconv.AppendBool(b, c.Req.Agent.Parallel)
	b = append(b, `,"previous_response_id":`...)
	b = wire.AppendNullableString(b, rc.previous)
	b = append(b, `,"reasoning":{"effort":null,"summary":null},"store":`...)
	b = strconv.AppendBool(b, rc.store)
	b = w.appendSettings(b, c)
	b = append(b, `,"truncation":"disabled","usage":`...)
	if final {
		b = appendResponsesUsage(b, c)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"user":`...)
	b = wire.AppendNullableString(b, c.Req.User)
	b = append(b, `,"metadata":`...)
	b = appendResponsesMetadata(b, rc.metadata, c, final)
	return append(b, '}')
}

// appendSettings appends temperature, text, tool_choice, tools and
// top_p as the request set them (OpenAI's defaults otherwise).
func (w *Wire) appendSettings(b []byte, c *wire.Choice) []byte {
	req := c.Req
	b = append(b, `,"temperature":`...)
	b = appendOptFloat(b, req.Temperature, 1)
	b = append(b, `,"text":{"format":`...)
	switch f := req.Agent.Format; f.Type {
	case "json_object":
		b = append(b, `{"type":"json_object"}`...)
	case "json_schema":
		b = append(b, `{"type":"json_schema","name":`...)
		b = wire.AppendJSONString(b, f.Name)
		b = append(b, `,"schema":`...)
		if f.Schema == nil {
			b = append(b, "{}"...)
		} else {
			b = append(b, f.Schema...)
		}
		b = append(b, `,"strict":`...)
		b = strconv.AppendBool(b, f.Strict)
		b = append(b, '}')
	default:
		b = append(b, `{"type":"text"}`...)
	}
	b = append(b, `},"tool_choice":`...)
	if a := req.Agent; a.ToolChoice == wire.ToolChoiceNamed {
		b = append(b, `{"type":"function","name":`...)
		b = wire.AppendJSONString(b, a.ToolChoiceName)
		b = append(b, '}')
	} else {
		b = wire.AppendJSONString(b, a.ToolChoice)
	}
	b = append(b, `,"tools":[`...)
	for i, t := range req.Agent.Tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"function","name":`...)
		b = wire.AppendJSONString(b, t.Name)
		b = append(b, `,"description":`...)
		b = wire.AppendNullableString(b, t.Description)
		b = append(b, `,"parameters":`...)
		if t.Parameters == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, t.Parameters...)
		}
		b = append(b, `,"strict":`...)
		b = strconv.AppendBool(b, t.Strict)
		b = append(b, '}')
	}
	b = append(b, `],"top_p":`...)
	return appendOptFloat(b, req.TopP, 1)
}

// appendItem appends one output item.
func appendItem(b []byte, c *wire.Choice, it *wire.Item, status string) []byte {
	b = append(b, `{"id":`...)
	b = wire.AppendJSONString(b, it.ID)
	b = append(b, `,"type":"`...)
	b = append(b, itemTypes[it.Kind]...)
	b = append(b, '"')
	switch it.Kind {
	case wire.ItemText:
		b = append(b, `,"status":"`...)
		b = append(b, status...)
		b = append(b, `","role":"assistant","content":[`...)
		if status == "completed" {
			b = appendTextPart(b, c, it)
		}
		b = append(b, ']')
	case wire.ItemCall:
		b = append(b, `,"status":"`...)
		b = append(b, status...)
		b = append(b, `","call_id":`...)
		b = wire.AppendJSONString(b, it.CallID)
		b = append(b, `,"name":`...)
		b = wire.AppendJSONString(b, it.Name)
		b = append(b, `,"arguments":`...)
		args := ""
		if status == "completed" {
			args = it.Text.String()
		}
		b = wire.AppendJSONString(b, args)
	case wire.ItemReasoning:
		b = append(b, `,"summary":[],"content":[`...)
		if status == "completed" {
			b = append(b, `{"type":"reasoning_text","text":`...)
			b = wire.AppendJSONString(b, it.Text.String())
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendTextPart appends a message's output_text part.
func appendTextPart(b []byte, c *wire.Choice, it *wire.Item) []byte {
	b = append(b, `{"type":"output_text","text":`...)
	b = wire.AppendJSONString(b, it.Text.String())
	b = append(b, `,"annotations":[],"logprobs":`...)
	b = appendLogprobArray(b, c, it.Logprobs)
	return append(b, '}')
}

// appendLogprobArray appends the entries of lps ([] when not asked).
func appendLogprobArray(b []byte, c *wire.Choice, lps []wire.TokenLogprob) []byte {
	b = append(b, '[')
	for i := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.AppendLogprobEntry(b, &lps[i])
	}
	return append(b, ']')
}

// appendItemRef appends an event's item_id and output_index (and
// content_index, 0, for a message's or a reasoning's part).
func (w *Wire) appendItemRef(b []byte, it *wire.Item) []byte {
	b = append(b, `,"item_id":`...)
	b = wire.AppendJSONString(b, it.ID)
	b = w.appendOutputIndex(b, it)
	if it.Kind != wire.ItemCall {
		b = append(b, `,"content_index":0`...)
	}
	return b
}

func (w *Wire) appendOutputIndex(b []byte, it *wire.Item) []byte {
	b = append(b, `,"output_index":`...)
	return wire.AppendInt(b, int64(w.out.Index(it)))
}

// appendResponsesUsage appends usage: the prompt's tokens with what the
// prefix cache gave, and the output's.
func appendResponsesUsage(b []byte, c *wire.Choice) []byte {
	b = append(b, `{"input_tokens":`...)
	b = wire.AppendInt(b, int64(c.PromptLen))
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = wire.AppendInt(b, int64(c.Prefix.Cached))
	b = append(b, `},"output_tokens":`...)
	b = wire.AppendInt(b, int64(c.Completion))
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
	b = wire.AppendInt(b, int64(c.PromptLen+c.Completion))
	return append(b, '}')
}

// appendResponsesMetadata appends the request's metadata and, at the end
// when the performance object applies, metadata.performance.
func appendResponsesMetadata(b []byte, md map[string]string, c *wire.Choice, final bool) []byte {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	perf := final && c.Perf.OK
	n := 0
	for _, k := range keys {
		if perf && k == "performance" {
			continue // the server's object takes the key
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = wire.AppendJSONString(b, k)
		b = append(b, ':')
		b = wire.AppendJSONString(b, md[k])
	}
	if perf {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `"performance":`...)
		b = c.Perf.AppendJSON(b)
	}
	return append(b, '}')
}

func appendNullableInt(b []byte, v int) []byte {
	if v == 0 {
		return append(b, "null"...)
	}
	return wire.AppendInt(b, int64(v))
}

func appendOptFloat(b []byte, v *float64, def float64) []byte {
	f := def
	if v != nil {
		f = *v
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
