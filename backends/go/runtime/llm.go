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

// chat sends the non-empty prompt parts and returns the reply text.
func chat(ctx context.Context, node string, m Model, system, user string) (string, error) {
	messages := []map[string]string{}
	if strings.TrimSpace(system) != "" {
		messages = append(messages, map[string]string{"role": "system", "content": system})
	}
	if strings.TrimSpace(user) != "" {
		messages = append(messages, map[string]string{"role": "user", "content": user})
	}
	body := map[string]any{"model": m.Name, "messages": messages}
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
		return "", err
	}
	headers := map[string]string{}
	if key := os.Getenv(m.APIKeyEnv); key != "" {
		headers["Authorization"] = "Bearer " + key
	}
	if observe := observerOf(ctx); observe != nil && chatStreamed != nil {
		return chatStreamed(ctx, node, endpoint, headers, body, observe)
	}
	reply, err := postJSON(ctx, node, endpoint, headers, 0, body)
	if err != nil {
		return "", err
	}
	return replyText(node, reply)
}

func replyText(node string, reply any) (string, error) {
	bad := upstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the model reply has no choices[0].message.content", node))
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

// asList keeps the list shape: a reply that is a JSON array is that list,
// otherwise every non-empty line is one item.
func asList(reply string) []any {
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

// textItems renders every item as text, for list outputs of string fields.
func textItems(list []any) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = text(v)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
