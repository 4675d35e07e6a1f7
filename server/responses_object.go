package server

import (
	"sort"
	"strconv"
)

// The Responses response object and its output items, streamed (in
// response.created and the terminal event) or whole.

// whole writes the response of a request that was not streamed
// (outlineOf gives its items).
func (w *responsesWire) whole(cs []*choice) error {
	c := cs[0]
	w.out = *outlineOf(c)
	for _, it := range w.out.items {
		it.id = newID(itemPrefixes[it.kind])
	}
	b := w.appendResponse(make([]byte, 0, 1024+c.text.Len()), c, w.out.items, true)
	b = append(b, '\n')
	w.keep(c)
	return c.resp.out.writeWhole(b)
}

// keep stores the response for previous_response_id and item_reference
// when the request said store (OpenAI's default) and it completed.
func (w *responsesWire) keep(c *choice) {
	rc := w.call
	if !rc.store || responseStatus(c.finishReason) == "failed" {
		return
	}
	conv := append([]chatMessage(nil), rc.conversation(c.req.Messages)...)
	items := map[string][]chatMessage{}
	answer := chatMessage{Role: "assistant"}
	for _, it := range w.out.items {
		switch it.kind {
		case itemText:
			answer.Content = it.text.String()
			items[it.id] = []chatMessage{{Role: "assistant", Content: answer.Content}}
		case itemCall:
			c := toolCall{ID: it.callID, Name: it.name, Arguments: it.text.String()}
			answer.ToolCalls = append(answer.ToolCalls, c)
			items[it.id] = []chatMessage{{Role: "assistant", ContentNull: true, ToolCalls: []toolCall{c}}}
		}
	}
	answer.ContentNull = answer.Content == "" && len(answer.ToolCalls) > 0
	body := append(w.appendResponse(nil, c, w.out.items, true), '\n')
	w.store.put(c.resp.id, body, append(conv, answer), items)
}

// appendResponse appends the response object: in progress (final false:
// no output, no usage) or at its end.
func (w *responsesWire) appendResponse(b []byte, c *choice, items []*outItem, final bool) []byte {
	rc := w.call
	status := "in_progress"
	if final {
		status = responseStatus(c.finishReason)
	}
	b = append(b, `{"id":`...)
	b = appendJSONString(b, c.resp.id)
	b = append(b, `,"object":"response","created_at":`...)
	b = appendInt(b, c.resp.created)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","error":`...)
	if status == "failed" {
		b = append(b, `{"code":"server_error","message":`...)
		b = appendJSONString(b, "the generation ended early: "+c.finishReason)
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
		b = appendJSONString(b, rc.instructions)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"max_output_tokens":`...)
	b = appendNullableInt(b, c.req.MaxTokens) // 0: max_output_tokens was not given
	b = append(b, `,"model":`...)
	b = appendJSONString(b, c.resp.model)
	b = append(b, `,"output":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendItem(b, it, "completed")
	}
	b = append(b, `],"parallel_tool_calls":`...)
	b = strconv.AppendBool(b, c.req.Agent.Parallel)
	b = append(b, `,"previous_response_id":`...)
	b = appendNullableString(b, rc.previous)
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
	b = appendNullableString(b, c.req.User)
	b = append(b, `,"metadata":`...)
	b = appendResponsesMetadata(b, rc.metadata, c, final)
	return append(b, '}')
}

// appendSettings appends temperature, text, tool_choice, tools and
// top_p as the request set them (OpenAI's defaults otherwise).
func (w *responsesWire) appendSettings(b []byte, c *choice) []byte {
	req := c.req
	b = append(b, `,"temperature":`...)
	b = appendOptFloat(b, req.Temperature, 1)
	b = append(b, `,"text":{"format":`...)
	switch f := req.Agent.Format; f.Type {
	case "json_object":
		b = append(b, `{"type":"json_object"}`...)
	case "json_schema":
		b = append(b, `{"type":"json_schema","name":`...)
		b = appendJSONString(b, f.Name)
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
	if a := req.Agent; a.ToolChoice == toolChoiceNamed {
		b = append(b, `{"type":"function","name":`...)
		b = appendJSONString(b, a.ToolChoiceName)
		b = append(b, '}')
	} else {
		b = appendJSONString(b, a.ToolChoice)
	}
	b = append(b, `,"tools":[`...)
	for i, t := range req.Agent.Tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"function","name":`...)
		b = appendJSONString(b, t.Name)
		b = append(b, `,"description":`...)
		b = appendNullableString(b, t.Description)
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
func (c *choice) appendItem(b []byte, it *outItem, status string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, it.id)
	b = append(b, `,"type":"`...)
	b = append(b, itemTypes[it.kind]...)
	b = append(b, '"')
	switch it.kind {
	case itemText:
		b = append(b, `,"status":"`...)
		b = append(b, status...)
		b = append(b, `","role":"assistant","content":[`...)
		if status == "completed" {
			b = c.appendTextPart(b, it)
		}
		b = append(b, ']')
	case itemCall:
		b = append(b, `,"status":"`...)
		b = append(b, status...)
		b = append(b, `","call_id":`...)
		b = appendJSONString(b, it.callID)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, it.name)
		b = append(b, `,"arguments":`...)
		args := ""
		if status == "completed" {
			args = it.text.String()
		}
		b = appendJSONString(b, args)
	case itemReasoning:
		b = append(b, `,"summary":[],"content":[`...)
		if status == "completed" {
			b = append(b, `{"type":"reasoning_text","text":`...)
			b = appendJSONString(b, it.text.String())
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendTextPart appends a message's output_text part.
func (c *choice) appendTextPart(b []byte, it *outItem) []byte {
	b = append(b, `{"type":"output_text","text":`...)
	b = appendJSONString(b, it.text.String())
	b = append(b, `,"annotations":[],"logprobs":`...)
	b = c.appendLogprobArray(b, it.lps)
	return append(b, '}')
}

// appendLogprobArray appends the entries of lps ([] when not asked).
func (c *choice) appendLogprobArray(b []byte, lps []tokenLogprob) []byte {
	b = append(b, '[')
	for i := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendLogprobEntry(b, &lps[i])
	}
	return append(b, ']')
}

// appendItemRef appends an event's item_id and output_index (and
// content_index, 0, for a message's or a reasoning's part).
func (w *responsesWire) appendItemRef(b []byte, it *outItem) []byte {
	b = append(b, `,"item_id":`...)
	b = appendJSONString(b, it.id)
	b = w.appendOutputIndex(b, it)
	if it.kind != itemCall {
		b = append(b, `,"content_index":0`...)
	}
	return b
}

func (w *responsesWire) appendOutputIndex(b []byte, it *outItem) []byte {
	b = append(b, `,"output_index":`...)
	return appendInt(b, int64(w.out.index(it)))
}

// appendResponsesUsage appends usage: the prompt's tokens with what the
// prefix cache gave, and the output's.
func appendResponsesUsage(b []byte, c *choice) []byte {
	b = append(b, `{"input_tokens":`...)
	b = appendInt(b, int64(c.promptLen))
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = appendInt(b, int64(c.prefix.Cached))
	b = append(b, `},"output_tokens":`...)
	b = appendInt(b, int64(c.completion))
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
	b = appendInt(b, int64(c.promptLen+c.completion))
	return append(b, '}')
}

// appendResponsesMetadata appends the request's metadata and, at the end
// when the performance object applies, metadata.performance.
func appendResponsesMetadata(b []byte, md map[string]string, c *choice, final bool) []byte {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	perf := final && c.perf.ok
	n := 0
	for _, k := range keys {
		if perf && k == "performance" {
			continue // the server's object takes the key
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, md[k])
	}
	if perf {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `"performance":`...)
		b = c.perf.appendJSON(b)
	}
	return append(b, '}')
}

func appendNullableInt(b []byte, v int) []byte {
	if v == 0 {
		return append(b, "null"...)
	}
	return appendInt(b, int64(v))
}

func appendOptFloat(b []byte, v *float64, def float64) []byte {
	f := def
	if v != nil {
		f = *v
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
