package graph

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The graph has settings.streaming: a model call of a streamed run streams.
func init() { chatStreamed = chatStream }

// chatStream is chat for a streamed run: the provider is asked for a stream
// ("stream": true) and each non-empty choices[0].delta.content is sent to
// observe as a token event as it arrives. The text returned is the deltas
// joined, so the node writes what a whole reply would have made it write.
func chatStream(ctx context.Context, node, endpoint string, headers map[string]string, body map[string]any, observe Observer) (string, error) {
	body["stream"] = true
	call := upstreamCall{Node: node, Service: "upstream", Endpoint: endpoint, Headers: headers, Body: body}
	resp, err := call.send(ctx, "text/event-stream")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		e := upstreamError(node, ReasonStatus, fmt.Sprintf("node %q: the upstream answered %d", node, resp.StatusCode))
		e.Details["status"] = resp.StatusCode
		return "", e
	}
	lines := bufio.NewReaderSize(io.LimitReader(resp.Body, MaxUpstreamBytes*2), 16<<10)
	var text strings.Builder
	for {
		line, err := lines.ReadString('\n')
		if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
			if errors.Is(err, io.EOF) {
				return "", upstreamError(node, ReasonConnect,
					fmt.Sprintf("node %q: the model's stream ended before [DONE]", node))
			}
			return "", call.transportError(ctx, err)
		}
		data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			return text.String(), nil
		}
		delta, perr := deltaText(data)
		if perr != nil {
			return "", upstreamError(node, ReasonInvalidJSON,
				fmt.Sprintf("node %q: a chunk of the model's stream is not a chat-completion chunk", node))
		}
		if delta == "" {
			continue
		}
		if text.Len()+len(delta) > MaxUpstreamBytes {
			return "", upstreamError(node, ReasonTooLarge,
				fmt.Sprintf("node %q: the model's text is larger than %d bytes", node, MaxUpstreamBytes))
		}
		text.WriteString(delta)
		observe(Event{Type: "token", Node: node, Data: map[string]any{"delta": delta}})
	}
}

// deltaText is choices[0].delta.content of one chunk ("" when the chunk
// carries none: a role, a finish reason, usage).
func deltaText(data string) (string, error) {
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content *string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(data), &chunk); err != nil {
		return "", err
	}
	if len(chunk.Choices) == 0 || chunk.Choices[0].Delta.Content == nil {
		return "", nil
	}
	return *chunk.Choices[0].Delta.Content, nil
}
