package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Model is where an LLM node's requests go: an OpenAI-compatible
// chat-completions API whose base URL and key come from the environment.
type Model struct {
	Name        string
	Temperature *float64
	MaxTokens   int
	BaseURLEnv  string
	APIKeyEnv   string
}

const defaultBaseURL = "https://api.openai.com/v1"

// chatStreamed asks the model for a stream and sends its text as token
// events; nil unless the graph has settings.streaming (llm_stream.go).
var chatStreamed func(ctx context.Context, node, endpoint string, headers map[string]string, body map[string]any, observe Observer) (string, error)

// Chat sends the non-empty prompt parts and returns the reply text.
func Chat(ctx context.Context, node string, m Model, system, user string) (string, error) {
	messages := []map[string]string{}
	if strings.TrimSpace(system) != "" {
		messages = append(messages, map[string]string{"role": "system", "content": system})
	}
	if strings.TrimSpace(user) != "" {
		messages = append(messages, map[string]string{"role": "user", "content": user})
	}
	endpoint, headers, body, err := modelRequest(node, m, messages, nil)
	if err != nil {
		return "", err
	}
	if observe := observerOf(ctx); observe != nil && chatStreamed != nil {
		return chatStreamed(ctx, node, endpoint, headers, body, observe)
	}
	reply, err := modelCall(ctx, node, endpoint, headers, body)
	if err != nil {
		return "", err
	}
	return replyText(node, reply)
}

// modelRequest is one chat-completions request of the model m: its
// endpoint (the base URL variable, else the default, + /chat/completions),
// its headers (Authorization when the key variable is set) and its body:
// model, messages, tools (only when there are any), temperature (when set)
// and max_tokens (when positive).
func modelRequest(node string, m Model, messages any, tools []any) (string, map[string]string, map[string]any, error) {
	body := map[string]any{"model": m.Name, "messages": messages}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	if m.Temperature != nil {
		body["temperature"] = *m.Temperature
	}
	if m.MaxTokens > 0 {
		body["max_tokens"] = m.MaxTokens
	}
	base := os.Getenv(m.BaseURLEnv)
	if base == "" {
		base = defaultBaseURL
	}
	endpoint, err := resolveEndpoint(node, strings.TrimRight(base, "/")+"/chat/completions")
	if err != nil {
		return "", nil, nil, err
	}
	headers := map[string]string{}
	if key := os.Getenv(m.APIKeyEnv); key != "" {
		headers["Authorization"] = "Bearer " + key
	}
	return endpoint, headers, body, nil
}

// chatMessage is one chat-completions call, never streamed, with tools
// offered when there are any; it returns the reply's choices[0].message,
// which may hold tool_calls (agents, tool-calling llm nodes, routers and
// intent classifiers).
func chatMessage(ctx context.Context, node string, m Model, messages []any, tools []any) (map[string]any, error) {
	endpoint, headers, body, err := modelRequest(node, m, messages, tools)
	if err != nil {
		return nil, err
	}
	reply, err := modelCall(ctx, node, endpoint, headers, body)
	if err != nil {
		return nil, err
	}
	if msg, ok := firstMessage(reply); ok {
		return msg, nil
	}
	return nil, UpstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the model reply has no choices[0].message", node))
}

// modelCall is one chat-completions call, not streamed, in its chat span.
func modelCall(ctx context.Context, node, endpoint string, headers map[string]string, body map[string]any) (reply any, err error) {
	model, _ := body["model"].(string)
	ctx, end := startSpan(ctx, SpanChat, model)
	defer func() { end(err) }()
	reply, err = postJSON(ctx, node, endpoint, headers, 0, body)
	if err == nil && tracing != nil {
		tracing.Reply(ctx, model, body["messages"], reply)
	}
	return reply, err
}

// firstMessage is reply["choices"][0]["message"] when it is an object.
func firstMessage(reply any) (map[string]any, bool) {
	obj, _ := reply.(map[string]any)
	choices, _ := obj["choices"].([]any)
	if len(choices) == 0 {
		return nil, false
	}
	first, _ := choices[0].(map[string]any)
	msg, ok := first["message"].(map[string]any)
	return msg, ok
}

func replyText(node string, reply any) (string, error) {
	bad := UpstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the model reply has no choices[0].message.content", node))
	obj, ok := reply.(map[string]any)
	if !ok {
		return "", bad
	}
	choices, ok := obj["choices"].([]any)
	if !ok || len(choices) == 0 {
		return "", bad
	}
	first, _ := choices[0].(map[string]any)
	msg, _ := first["message"].(map[string]any)
	content, ok := msg["content"].(string)
	if !ok {
		return "", bad
	}
	return content, nil
}

// AsList keeps the list shape: a reply that is a JSON array is that list,
// otherwise every non-empty line is one item.
func AsList(reply string) []any {
	trimmed := strings.TrimSpace(reply)
	if strings.HasPrefix(trimmed, "[") {
		var list []any
		dec := json.NewDecoder(strings.NewReader(trimmed))
		dec.UseNumber()
		if dec.Decode(&list) == nil && !dec.More() {
			return list
		}
	}
	out := []any{}
	for _, line := range strings.Split(reply, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// TextItems renders every item as text, for list outputs of string fields.
func TextItems(list []any) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = Text(v)
	}
	return out
}

func Ptr[T any](v T) *T { return &v }

// runCut is err, unless the run's deadline has passed (or its request is
// gone): python-svc cuts the whole run at its deadline (504
// deadline_exceeded), whatever the call it was waiting on.
func runCut(ctx context.Context, err error) error {
	if err != nil {
		if cut := ctx.Err(); cut != nil {
			return cut
		}
	}
	return err
}
