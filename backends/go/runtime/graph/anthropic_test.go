package graph

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The anthropic provider (anthropic.go) against a stub of the Messages
// API: the request each kind of call sends, the reply it reads, whole and
// streamed, and the retries and fallbacks of callModel across providers.

const (
	anthropicURLEnv = "SVC_TEST_ANTHROPIC_URL"
	anthropicKeyEnv = "SVC_TEST_ANTHROPIC_KEY"
)

// newMessagesStub is a stub of the Messages API whose base URL (with a
// trailing /, which the request drops) and key are claude()'s variables.
func newMessagesStub(t *testing.T, reply func(call int, body map[string]any) any) *chatStub {
	t.Helper()
	s := newChatStub(t, reply)
	t.Setenv(anthropicURLEnv, s.url+"/")
	t.Setenv(anthropicKeyEnv, "sk-ant-test")
	return s
}

// claude is the anthropic model of the tests, without max tokens.
func claude() Model {
	return Model{Provider: "anthropic", Name: "claude-test", BaseURLEnv: anthropicURLEnv, APIKeyEnv: anthropicKeyEnv}
}

func toolUse(id, name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}
}

// wholeReply is a whole Messages API reply: input 5 and output 7 tokens.
func wholeReply(stop string, blocks ...any) map[string]any {
	return map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content": blocks, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 5, "output_tokens": 7}}
}

// sseOf is a Messages API stream: each event as its event: and data:
// lines.
func sseOf(evs ...map[string]any) string {
	var b strings.Builder
	for _, e := range evs {
		data, _ := json.Marshal(e)
		b.WriteString("event: " + e["type"].(string) + "\ndata: " + string(data) + "\n\n")
	}
	return b.String()
}

var (
	messageStart = map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message",
		"role": "assistant", "content": []any{}, "model": "claude-test", "stop_reason": nil,
		"usage": map[string]any{"input_tokens": 5, "output_tokens": 1}}}
	ping        = map[string]any{"type": "ping"}
	messageStop = map[string]any{"type": "message_stop"}
)

func blockDelta(index int, delta map[string]any) map[string]any {
	return map[string]any{"type": "content_block_delta", "index": index, "delta": delta}
}

func textDelta(index int, text string) map[string]any {
	return blockDelta(index, map[string]any{"type": "text_delta", "text": text})
}

func streamError(kind, message string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": message}}
}

// streamOf streams what wholeReply(stop, blocks...) says, as the API does: a
// text block in two deltas, a tool_use block's input in two pieces of
// JSON, and the output tokens (7) in message_delta.
func streamOf(stop string, blocks ...any) []map[string]any {
	out := []map[string]any{messageStart, ping}
	for i, b := range blocks {
		block := b.(map[string]any)
		switch block["type"] {
		case "text":
			text := block["text"].(string)
			out = append(out,
				map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}},
				textDelta(i, text[:len(text)/2]), textDelta(i, text[len(text)/2:]))
		case "tool_use":
			input, _ := json.Marshal(block["input"])
			h := len(input) / 2
			out = append(out,
				map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{
					"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}},
				blockDelta(i, map[string]any{"type": "input_json_delta", "partial_json": string(input[:h])}),
				blockDelta(i, map[string]any{"type": "input_json_delta", "partial_json": string(input[h:])}))
		}
		out = append(out, map[string]any{"type": "content_block_stop", "index": i})
	}
	return append(out,
		map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 7}},
		messageStop)
}

// replyOf answers body with what wholeReply(stop, blocks...) says: streamed
// when it asks for a stream.
func replyOf(body map[string]any, stop string, blocks ...any) any {
	if body["stream"] == true {
		return sseOf(streamOf(stop, blocks...)...)
	}
	return wholeReply(stop, blocks...)
}

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func TestAnthropicRequestAndReply(t *testing.T) {
	stub := newMessagesStub(t, script(wholeReply("end_turn", textBlock("Hello"), textBlock(" there"))))
	m := claude()
	m.Temperature = Ptr(0.25)
	var out string
	useGraph(t, Budget{}, func(ctx context.Context, st State, _ string) (State, error) {
		var err error
		out, err = Chat(ctx, "first", m, "Be brief.", "hi")
		return st, err
	})
	_, usage, err := Invoke(bg, askState)
	if err != nil || out != "Hello there" {
		t.Fatalf("got %q, %v", out, err)
	}
	wantUsage(t, usage, Usage{InputTokens: 5, OutputTokens: 7, ModelCalls: 1, Attempts: 1})
	h := stub.headers[0]
	if stub.paths[0] != "/v1/messages" || h.Get("x-api-key") != "sk-ant-test" || h.Get("anthropic-version") != "2023-06-01" ||
		h.Get("Authorization") != "" || h.Get("Content-Type") != "application/json" {
		t.Fatalf("path %s, headers %v", stub.paths[0], h)
	}
	equalJSON(t, "request", stub.request(t, 0), map[string]any{
		"model": "claude-test", "max_tokens": 4096.0, "temperature": 0.25, "system": "Be brief.",
		"messages": []any{map[string]any{"role": "user", "content": "hi"}},
	})
}

// The runtime's chat-completions messages in the API's form: roles
// alternate, tool results are a user's blocks, the system is top-level.
func TestAnthropicMessages(t *testing.T) {
	system, messages := anthropicMessages(mustJSON(t, `[
		{"role": "system", "content": "One."}, {"role": "system", "content": "Two."},
		{"role": "user", "content": "task"},
		{"role": "assistant", "content": "Let me see.", "tool_calls": [
			{"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": "{\"word\": \"refund\"}"}},
			{"id": "t2", "type": "function", "function": {"name": "now", "arguments": ""}}]},
		{"role": "tool", "tool_call_id": "t1", "content": "money back"},
		{"role": "tool", "tool_call_id": "t2", "content": "noon"},
		{"role": "user", "content": "and?"},
		{"role": "assistant", "content": null, "tool_calls": [
			{"id": "t3", "type": "function", "function": {"name": "now", "arguments": "{}"}}]}
	]`).([]any))
	if system != "One.\n\nTwo." {
		t.Fatalf("system %q", system)
	}
	equalJSON(t, "messages", messages, mustJSON(t, `[
		{"role": "user", "content": "task"},
		{"role": "assistant", "content": [{"type": "text", "text": "Let me see."},
			{"type": "tool_use", "id": "t1", "name": "lookup", "input": {"word": "refund"}},
			{"type": "tool_use", "id": "t2", "name": "now", "input": {}}]},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "money back"},
			{"type": "tool_result", "tool_use_id": "t2", "content": "noon"},
			{"type": "text", "text": "and?"}]},
		{"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "now", "input": {}}]}
	]`))
}

// An intent classifier's prompt is the system; its reply's text is matched
// as an OpenAI reply's is.
func TestAnthropicIntentClassifier(t *testing.T) {
	stub := newMessagesStub(t, script(wholeReply("end_turn", textBlock(" Billing\n"))))
	got, err := ClassifyIntent(context.Background(), "classify", claude(), []Intent{{Name: "billing"}, {Name: "shipping"}}, "Where is my refund?", "other")
	if err != nil || got != "billing" {
		t.Fatalf("got %q, %v", got, err)
	}
	equalJSON(t, "request", stub.request(t, 0), map[string]any{
		"model": "claude-test", "max_tokens": 4096.0,
		"system": "Classify the user's message into exactly one of these intents:\n- billing\n- shipping\n" +
			"Answer with the intent's name only. If none of them fits, answer \"other\".",
		"messages": []any{map[string]any{"role": "user", "content": "Where is my refund?"}},
	})
}

// An agent's tool-use round, whole and streamed: the second request
// echoes the tool_use blocks and answers them with tool_result blocks of
// the same ids; the final text is the answer.
func TestAnthropicToolUseRound(t *testing.T) {
	agents := helperAgents("lookup")
	agents["helper"].Model = claude()
	useAgents(t, agents, lookupTool())
	stub := newMessagesStub(t, func(n int, body map[string]any) any {
		if n%2 == 0 {
			return replyOf(body, "tool_use", textBlock("Let me check."),
				toolUse("toolu_1", "lookup", map[string]any{"word": "refund"}), toolUse("toolu_2", "lookup", map[string]any{"word": "return"}))
		}
		return replyOf(body, "end_turn", textBlock("Refunds give money back."))
	})
	whole, err := RunAgent(context.Background(), "ask", "helper", "What is a refund?", nil)
	if err != nil || whole != "Refunds give money back." {
		t.Fatalf("got %q, %v", whole, err)
	}
	rc, events := observedRun(t, context.Background())
	out, err := RunAgent(rc, "ask", "helper", "What is a refund?", nil)
	if err != nil || out != whole {
		t.Fatalf("streamed %q, %v", out, err)
	}
	wantOutline(t, *events, "token ask Let me", "token ask  check.", "tokens_discarded ask tool_calls",
		"token ask Refunds give", "token ask  money back.")
	for _, i := range []int{1, 3} {
		body := stub.request(t, i)
		equalJSON(t, "system", body["system"], "You help.")
		equalJSON(t, "tools", body["tools"], mustJSON(t, `[{"name": "lookup", "description": "Looks a word up.", "input_schema": {"type": "object"}}]`))
		if _, forced := body["tool_choice"]; forced {
			t.Errorf("request %d forces a tool: %v", i, body["tool_choice"])
		}
		equalJSON(t, "the second turn's messages", body["messages"], mustJSON(t, `[
			{"role": "user", "content": "What is a refund?"},
			{"role": "assistant", "content": [{"type": "text", "text": "Let me check."},
				{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"word": "refund"}},
				{"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {"word": "return"}}]},
			{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "meaning of refund"},
				{"type": "tool_result", "tool_use_id": "toolu_2", "content": "meaning of return"}]}]`))
	}
}

// A streamed reply's text deltas are the client's tokens; its usage is
// message_start's input and message_delta's output tokens.
func TestAnthropicStreamedReply(t *testing.T) {
	stub := newMessagesStub(t, func(_ int, body map[string]any) any { return replyOf(body, "end_turn", textBlock("Hello")) })
	var out string
	useGraph(t, Budget{}, func(ctx context.Context, st State, _ string) (State, error) {
		var err error
		out, err = Chat(ctx, "first", claude(), "", "hi")
		return st, err
	})
	var tokens []string
	_, usage, err := RunObserved(bg, State(askState), func(e Event) {
		if e.Type == "token" {
			tokens = append(tokens, e.Data["delta"].(string))
		}
	})
	if err != nil || out != "Hello" || strings.Join(tokens, "|") != "He|llo" {
		t.Fatalf("got %q in tokens %q, %v", out, tokens, err)
	}
	wantUsage(t, usage, Usage{InputTokens: 5, OutputTokens: 7, ModelCalls: 1, Attempts: 1})
	// No system prompt, no stream_options (an OpenAI field).
	equalJSON(t, "request", stub.request(t, 0), map[string]any{
		"model": "claude-test", "max_tokens": 4096.0, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}},
	})
}

func TestAnthropicRetries(t *testing.T) {
	sleeps := recordSleeps(t)
	hello := func(_ int, body map[string]any) any { return replyOf(body, "end_turn", textBlock("Hello")) }
	then := func(first any) func(int, map[string]any) any {
		return func(n int, body map[string]any) any {
			if n == 0 {
				return first
			}
			return hello(n, body)
		}
	}

	// 529 (overloaded) is retried.
	stub := newMessagesStub(t, then(529))
	if out, err := Chat(context.Background(), "ask", claude(), "", "hi"); err != nil || out != "Hello" || stub.calls() != 2 {
		t.Fatalf("after a 529: %q, %v after %d attempts", out, err, stub.calls())
	}

	// An overloaded_error event before any text is retried, and so is a
	// stream cut before message_stop.
	for what, first := range map[string]string{
		"overloaded": sseOf(messageStart, streamError("overloaded_error", "Overloaded")),
		"cut":        sseOf(messageStart, ping),
	} {
		stub = newMessagesStub(t, then(first))
		rc, events := observedRun(t, context.Background())
		if out, err := Chat(rc, "ask", claude(), "", "hi"); err != nil || out != "Hello" || stub.calls() != 2 {
			t.Fatalf("%s: %q, %v after %d attempts", what, out, err, stub.calls())
		}
		wantOutline(t, *events, "token ask He", "token ask llo")
	}

	// Once a token reached the client, an overloaded_error is final.
	stub = newMessagesStub(t, then(sseOf(messageStart, textDelta(0, "Hel"), streamError("overloaded_error", "Overloaded"))))
	rc, events := observedRun(t, context.Background())
	_, err := Chat(rc, "ask", claude(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("status", 529, "claude-test", 1),
		`node "ask": the model's stream failed: overloaded_error: Overloaded`)
	wantOutline(t, *events, "token ask Hel")

	// Other error events, statuses that are not retryable, a reply without
	// content: one attempt.
	stub = newMessagesStub(t, then(sseOf(messageStart, streamError("api_error", "Internal server error"))))
	rc, _ = observedRun(t, context.Background())
	_, err = Chat(rc, "ask", claude(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("status", 0, "claude-test", 1),
		`node "ask": the model's stream failed: api_error: Internal server error`)
	for _, status := range []int{400, 401, 403, 404} {
		stub = newMessagesStub(t, then(status))
		if _, err := Chat(context.Background(), "ask", claude(), "", "hi"); code(err) != "upstream_error" || stub.calls() != 1 {
			t.Fatalf("%d: %v after %d attempts", status, err, stub.calls())
		}
	}
	stub = newMessagesStub(t, then(map[string]any{"type": "message", "usage": map[string]any{"input_tokens": 5}}))
	_, err = Chat(context.Background(), "ask", claude(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("invalid_json", 0, "claude-test", 1),
		`node "ask": the model reply has no choices[0].message.content`)

	// A refusal is a reply.
	stub = newMessagesStub(t, then(wholeReply("refusal", textBlock("I can't help with that."))))
	if out, err := Chat(context.Background(), "ask", claude(), "", "hi"); err != nil || out != "I can't help with that." || stub.calls() != 1 {
		t.Fatalf("refusal: %q, %v after %d attempts", out, err, stub.calls())
	}
	if len(*sleeps) != 3 {
		t.Fatalf("waits %v, want one per retry", *sleeps)
	}
}

// A fallback may speak another provider: it gets its own request.
func TestOpenAIFallsBackToAnthropic(t *testing.T) {
	recordSleeps(t)
	fallback := newMessagesStub(t, script(wholeReply("end_turn", textBlock("from claude"))))
	primary := newChatStub(t, script(http.StatusServiceUnavailable))
	m := withRetry(stubModel(), Retry{MaxAttempts: 2})
	m.Fallbacks = []Model{claude()}
	out, err := Chat(context.Background(), "ask", m, "", "hi")
	if err != nil || out != "from claude" || primary.calls() != 2 || fallback.calls() != 1 {
		t.Fatalf("got %q, %v after %d + %d attempts", out, err, primary.calls(), fallback.calls())
	}
	if h := fallback.headers[0]; fallback.paths[0] != "/v1/messages" || h.Get("x-api-key") != "sk-ant-test" || h.Get("Authorization") != "" {
		t.Fatalf("the fallback's request: %s %v", fallback.paths[0], h)
	}
	equalJSON(t, "the fallback's request", fallback.request(t, 0), map[string]any{
		"model": "claude-test", "max_tokens": 4096.0, "messages": []any{map[string]any{"role": "user", "content": "hi"}},
	})
}

func TestAModelOfAnUnknownProvider(t *testing.T) {
	m := stubModel()
	m.Provider = "gemini"
	_, err := Chat(context.Background(), "ask", m, "", "hi")
	wantError(t, err, 500, "execution_error", map[string]any{"node": "ask", "model": "stub-model", "attempts": 0},
		`node "ask" failed: the model "stub-model" names the provider "gemini", which this service cannot call`)
}
