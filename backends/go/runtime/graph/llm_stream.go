package graph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The graph has settings.streaming: a model call of a streamed run streams.
func init() { chatStreamed = chatStream }

// chatStream is an attempt of Chat for a streamed run: the provider is
// asked for a stream ("stream": true) and each non-empty
// choices[0].delta.content is sent to observe as a token event as it
// arrives. The text returned is the deltas joined, so the node writes what
// a whole reply would have made it write. A failure once a token was sent
// is final: another attempt would send the text again.
func chatStream(ctx context.Context, node string, req request, observe Observer) (string, tokens, error) {
	var text strings.Builder
	used, err := streamChunks(ctx, node, req, func(data []byte) error {
		delta, err := deltaText(data)
		if err != nil || delta == "" {
			return err
		}
		if text.Len()+len(delta) > MaxUpstreamBytes {
			return UpstreamError(node, ReasonTooLarge,
				fmt.Sprintf("node %q: the model's text is larger than %d bytes", node, MaxUpstreamBytes))
		}
		text.WriteString(delta)
		observe(Event{Type: "token", Node: node, Data: map[string]any{"delta": delta}})
		return nil
	})
	if err != nil && text.Len() > 0 {
		return "", tokens{}, final{err}
	}
	if err != nil {
		return "", tokens{}, err
	}
	return text.String(), used, nil
}

// streamChunks is one streamed model call: the body is sent with
// "stream": true and every chat-completion chunk of the stream goes to
// each, in order: the data of every event up to data: [DONE], or what the
// events of another wire's stream stand for. An *Error from
// each ends the call as it is; any other error means the chunk is not a
// chat-completion chunk (invalid_json). Only a line is bounded (too_large
// past MaxUpstreamBytes), not the whole stream: every chunk repeats an
// envelope of a few hundred bytes, so a cap on the stream would cut a long
// reply that each caller's own bound on what it keeps allows. It returns
// the tokens the stream's last chunk reports: an OpenAI-compatible
// provider is asked for that chunk (stream_options), which carries the
// usage of the whole reply and no choices.
func streamChunks(ctx context.Context, node string, req request, each func(data []byte) error) (used tokens, err error) {
	model, _ := req.body["model"].(string)
	ctx, end := chatSpan(ctx, req.provider, model)
	defer func() { end(err) }()
	last, err := readChunks(ctx, node, req, each)
	if err != nil {
		return tokens{}, err
	}
	// A last chunk that is not the usage chunk reports no tokens.
	var chunk any
	dec := json.NewDecoder(bytes.NewReader(last))
	dec.UseNumber()
	_ = dec.Decode(&chunk)
	if tracing != nil {
		tracing.Reply(ctx, model, req.body["messages"], chunk)
	}
	return replyTokens(chunk), nil
}

// readChunks is streamChunks' call, in its chat span; it returns the last
// chunk.
func readChunks(ctx context.Context, node string, req request, each func(data []byte) error) ([]byte, error) {
	req.body["stream"] = true
	next, end := openAIChunk, "[DONE]"
	if w, ok := wires[req.provider]; ok {
		next, end = w.stream(node)
	} else {
		req.body["stream_options"] = map[string]any{"include_usage": true}
	}
	call := UpstreamCall{Node: node, Service: "upstream", Endpoint: req.endpoint, Headers: req.headers, Body: req.body}
	resp, err := call.send(ctx, "text/event-stream")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, call.statusError(resp)
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Split(sseLines)
	// A line of MaxUpstreamBytes still fits with its "\n".
	lines.Buffer(make([]byte, 0, 16<<10), MaxUpstreamBytes+1)
	// A copy: the scanner reuses its buffer.
	var last []byte
	for lines.Scan() {
		data, ok := bytes.CutPrefix(lines.Bytes(), []byte("data:"))
		if !ok {
			continue
		}
		chunk, done, err := next(bytes.TrimSpace(data))
		if err != nil {
			return nil, err
		}
		if chunk != nil {
			if err := each(chunk); err != nil {
				var e *Error
				if errors.As(err, &e) {
					return nil, e
				}
				return nil, UpstreamError(node, ReasonInvalidJSON,
					fmt.Sprintf("node %q: a chunk of the model's stream is not a chat-completion chunk", node))
			}
			last = append(last[:0], chunk...)
		}
		if done {
			return last, nil
		}
	}
	switch err := lines.Err(); {
	case err == nil:
		return nil, UpstreamError(node, ReasonConnect, fmt.Sprintf("node %q: the model's stream ended before %s", node, end))
	case errors.Is(err, bufio.ErrTooLong):
		return nil, UpstreamError(node, ReasonTooLarge,
			fmt.Sprintf("node %q: a line of the model's stream is larger than %d bytes", node, MaxUpstreamBytes))
	default:
		return nil, call.transportError(ctx, err)
	}
}

// sseLines splits a stream into its lines at "\n", a "\r" before it
// dropped. A last line without its "\n" is where the connection was cut:
// it is dropped, as server-sent events drop an event that did not end, so
// that the stream fails as one cut before its end (connect, retried while
// no token reached the client), not as a chunk that is not JSON.
func sseLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, bytes.TrimSuffix(data[:i], []byte("\r")), nil
	}
	if atEOF {
		return len(data), nil, nil
	}
	return 0, nil, nil
}

// openAIChunk reads an OpenAI-compatible stream: the data of each event is
// a chunk, up to the data [DONE] that ends the stream. Empty data is one
// too (not nil, which is none), so that it fails as no chunk of chat
// completions.
func openAIChunk(data []byte) (chunk []byte, done bool, err error) {
	if string(data) == "[DONE]" {
		return nil, true, nil
	}
	if data == nil {
		return []byte{}, false, nil
	}
	return data, false, nil
}

// deltaText is choices[0].delta.content of one chunk ("" when the chunk
// carries none: a role, a finish reason, usage).
func deltaText(data []byte) (string, error) {
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content *string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &chunk); err != nil {
		return "", err
	}
	if len(chunk.Choices) == 0 || chunk.Choices[0].Delta.Content == nil {
		return "", nil
	}
	return *chunk.Choices[0].Delta.Content, nil
}
