package graph

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// The anthropic provider: Anthropic's Messages API. Only the wire format
// of one attempt differs from chat completions: the runtime's messages,
// tools, replies and stream chunks stay chat-completions shaped (agents,
// bound tools, supervisors and intent classifiers read them as they are),
// and are converted here as a request is sent and as its reply is read.
// Retries, fallbacks, usage and budget (callModel) are the same.
func init() {
	wires[providerAnthropic] = wire{request: anthropicRequest, reply: anthropicReply, stream: anthropicEvents}
}

const (
	providerAnthropic = "anthropic"
	anthropicBaseURL  = "https://api.anthropic.com"
	anthropicVersion  = "2023-06-01"
	// The API requires max_tokens; this is what a model without MaxTokens
	// asks for.
	anthropicMaxTokens = 4096
)

// anthropicRequest is the Messages API request of the model m: POST
// <base>/v1/messages (the base URL variable, else api.anthropic.com), the
// key as x-api-key (never Authorization) and the API version the mapping
// is written against; the body has the system messages as the top-level
// system and the other messages and the tools in the API's form. The API
// has no response format: a schema is asked for as a tool the model must
// call (tool_choice), whose input is the answer (anthropicReply makes it
// a tool call, which ChatJSON reads).
func anthropicRequest(node string, m Model, messages, tools []any, schema map[string]any) (request, error) {
	system, turns := anthropicMessages(messages)
	maxTokens := m.MaxTokens
	if maxTokens <= 0 {
		maxTokens = anthropicMaxTokens
	}
	body := map[string]any{"model": m.Name, "max_tokens": maxTokens, "messages": turns}
	if system != "" {
		body["system"] = system
	}
	offered := anthropicTools(tools)
	if schema != nil {
		offered = append(offered, map[string]any{"name": structuredOutput,
			"description": "Answer with this tool's input.", "input_schema": schema})
		body["tool_choice"] = map[string]any{"type": "tool", "name": structuredOutput}
	}
	if len(offered) > 0 {
		body["tools"] = offered
	}
	if m.Temperature != nil {
		body["temperature"] = *m.Temperature
	}
	base := os.Getenv(m.BaseURLEnv)
	if base == "" {
		base = anthropicBaseURL
	}
	endpoint, err := resolveEndpoint(node, strings.TrimRight(base, "/")+"/v1/messages")
	if err != nil {
		return request{}, err
	}
	headers := map[string]string{"anthropic-version": anthropicVersion}
	if key := os.Getenv(m.APIKeyEnv); key != "" {
		headers["x-api-key"] = key
	}
	return request{providerAnthropic, endpoint, headers, body}, nil
}

// anthropicMessages are chat-completions messages in the Messages API's
// form: the system messages' text joined by a blank line, and the other
// messages in order, as content blocks: an assistant's text (when not
// empty) and a tool_use block per tool call; a tool message a user's
// tool_result block. The API wants the roles to alternate, so consecutive
// messages of one role (a turn's tool results) are one message; a user's
// lone text is written as a plain string.
func anthropicMessages(messages []any) (string, []any) {
	var system []string
	type turn struct {
		role   string
		blocks []any
	}
	var turns []*turn
	for _, raw := range messages {
		msg, _ := raw.(map[string]any)
		text, _ := msg["content"].(string)
		role, blocks := "user", []any{}
		switch msg["role"] {
		case "system":
			system = append(system, text)
			continue
		case "assistant":
			role = "assistant"
			if text != "" {
				blocks = append(blocks, map[string]any{"type": "text", "text": text})
			}
			calls, _ := msg["tool_calls"].([]any)
			for _, c := range calls {
				call, _ := c.(map[string]any)
				fn, _ := call["function"].(map[string]any)
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": call["id"], "name": fn["name"], "input": toolInput(fn["arguments"])})
			}
		case "tool":
			blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": msg["tool_call_id"], "content": text})
		default:
			blocks = append(blocks, map[string]any{"type": "text", "text": text})
		}
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
		} else {
			turns = append(turns, &turn{role, blocks})
		}
	}
	out := make([]any, len(turns))
	for i, t := range turns {
		var content any = t.blocks
		if t.role == "user" && len(t.blocks) == 1 {
			if only := t.blocks[0].(map[string]any); only["type"] == "text" {
				content = only["text"]
			}
		}
		out[i] = map[string]any{"role": t.role, "content": content}
	}
	return strings.Join(system, "\n\n"), out
}

// toolInput is a tool call's arguments as the object tool_use.input must
// be: an empty object when they are not one (no arguments: "" or null).
func toolInput(arguments any) map[string]any {
	s, _ := arguments.(string)
	input, _ := decodeJSON(s)
	if obj, ok := input.(map[string]any); ok {
		return obj
	}
	return map[string]any{}
}

// anthropicTools are chat-completions function tools as the API's tools:
// the function's parameters are the input_schema.
func anthropicTools(tools []any) []any {
	out := make([]any, len(tools))
	for i, t := range tools {
		spec, _ := t.(map[string]any)
		fn, _ := spec["function"].(map[string]any)
		out[i] = map[string]any{"name": fn["name"], "description": fn["description"], "input_schema": fn["parameters"]}
	}
	return out
}

// anthropicReply is a Messages API reply as the chat completion the
// runtime reads: one choice whose message's content is the text blocks
// joined ("" when none) and whose tool_calls are the tool_use blocks, and
// the usage's input and output tokens as prompt and completion tokens.
// Every stop_reason is a reply (a refusal too: its text is the answer). A
// reply without a content list is a completion without choices: the
// caller fails it as invalid_json.
func anthropicReply(reply any) any {
	obj, _ := reply.(map[string]any)
	blocks, ok := obj["content"].([]any)
	if !ok {
		return map[string]any{}
	}
	var text strings.Builder
	var calls []any
	for _, b := range blocks {
		block, _ := b.(map[string]any)
		switch block["type"] {
		case "text":
			s, _ := block["text"].(string)
			text.WriteString(s)
		case "tool_use":
			// Compact with keys sorted and no HTML escapes, as every target
			// writes a tool_use input as arguments.
			calls = append(calls, map[string]any{"id": block["id"], "type": "function",
				"function": map[string]any{"name": block["name"], "arguments": compactJSON(block["input"])}})
		}
	}
	msg := map[string]any{"role": "assistant", "content": text.String()}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	usage, _ := obj["usage"].(map[string]any)
	return map[string]any{
		"choices": []any{map[string]any{"message": msg}},
		"usage":   map[string]any{"prompt_tokens": usage["input_tokens"], "completion_tokens": usage["output_tokens"]},
	}
}

// anthropicEvents reads one Messages API stream, which message_stop ends.
func anthropicEvents(node string) (func(data []byte) ([]byte, bool, error), string) {
	return (&anthropicStream{node: node}).chunk, "message_stop"
}

// anthropicStream reads a Messages API stream (readChunks) as the
// chat-completion chunks it stands for: a text delta is a content chunk, a
// tool_use block's start and its input_json deltas are pieces of a tool
// call at the block's index, and message_stop ends the stream with the
// usage chunk (input tokens from message_start, output tokens from the
// last message_delta). Other events (ping, a block's stop, ones the API
// adds later) carry nothing the runtime reads.
type anthropicStream struct {
	node          string
	input, output json.Number
}

// anthropicEvent is what the runtime reads of a stream event's data.
type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
	Usage anthropicUsage `json:"usage"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type anthropicUsage struct {
	InputTokens  json.Number `json:"input_tokens"`
	OutputTokens json.Number `json:"output_tokens"`
}

// chunk is the chunk an event's data stands for (nil: none) and whether
// it ends the stream. An error event fails the attempt: overloaded_error
// as the 529 it is before a stream starts, so it is retried while no token
// reached the client; any other is not retried.
func (s *anthropicStream) chunk(data []byte) ([]byte, bool, error) {
	var e anthropicEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, false, UpstreamError(s.node, ReasonInvalidJSON,
			fmt.Sprintf("node %q: an event of the model's stream is not a Messages API event", s.node))
	}
	var chunk any
	switch e.Type {
	case "message_start":
		s.input = e.Message.Usage.InputTokens
	case "message_delta":
		s.output = e.Usage.OutputTokens
	case "content_block_start":
		if e.ContentBlock.Type == "tool_use" {
			chunk = chunkWithCall(map[string]any{"index": e.Index, "id": e.ContentBlock.ID, "type": "function",
				"function": map[string]any{"name": e.ContentBlock.Name, "arguments": ""}})
		}
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			chunk = chunkWith(map[string]any{"content": e.Delta.Text})
		case "input_json_delta":
			chunk = chunkWithCall(map[string]any{"index": e.Index, "function": map[string]any{"arguments": e.Delta.PartialJSON}})
		}
	case "message_stop":
		// A count the stream did not report encodes as 0.
		usage := map[string]any{"prompt_tokens": s.input, "completion_tokens": s.output}
		out, _ := json.Marshal(map[string]any{"choices": []any{}, "usage": usage})
		return out, true, nil
	case "error":
		failed := UpstreamError(s.node, ReasonStatus,
			fmt.Sprintf("node %q: the model's stream failed: %s: %s", s.node, e.Error.Type, e.Error.Message))
		if e.Error.Type == "overloaded_error" {
			failed.Details["status"] = 529
		}
		return nil, false, failed
	}
	if chunk == nil {
		return nil, false, nil
	}
	// Strings, ints and decoded numbers always encode.
	out, _ := json.Marshal(chunk)
	return out, false, nil
}

// chunkWith is the chat-completion chunk carrying delta.
func chunkWith(delta map[string]any) any {
	return map[string]any{"choices": []any{map[string]any{"delta": delta}}}
}

// chunkWithCall is the chunk carrying one piece of a tool call.
func chunkWithCall(piece map[string]any) any {
	return chunkWith(map[string]any{"tool_calls": []any{piece}})
}

// compactJSON is v as JSON without spaces or HTML escapes (json.Marshal
// escapes <, > and &); decoded JSON always encodes.
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}
