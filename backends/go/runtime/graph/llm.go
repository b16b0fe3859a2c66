package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Model is where an LLM node's requests go: an OpenAI-compatible
// chat-completions API, or Anthropic's Messages API, whose base URL and key
// come from the environment. Every call of it (callModel) is retried on
// failures that may pass, each attempt bounded by Timeout, and then falls
// back to the Fallbacks. Zero values are the defaults, so generated code
// writes only what differs.
type Model struct {
	// Provider is the API the requests speak: "" or "openai" (chat
	// completions), or one of wires ("anthropic": the Messages API).
	Provider    string
	Name        string
	Temperature *float64
	MaxTokens   int
	BaseURLEnv  string
	APIKeyEnv   string
	// Timeout bounds one attempt (0: 60 s), within the run's deadline.
	Timeout time.Duration
	Retry   Retry
	// Fallbacks are tried in order, each with its own settings, once this
	// model's attempts are spent on failures that may pass; a fallback's
	// own Fallbacks are never tried (the IR does not nest them).
	Fallbacks []Model
}

// Retry is how often a model is tried within one call and how long the
// waits between attempts are. Zero fields are the defaults: 3 attempts
// (1: no retry), 500 ms, 8 s.
type Retry struct {
	MaxAttempts int
	// InitialDelay caps the wait before the second attempt; each further
	// wait's cap doubles, up to MaxDelay (full jitter: the wait is drawn
	// uniformly from [0, cap]). A reply's longer Retry-After is obeyed, up
	// to MaxDelay.
	InitialDelay, MaxDelay time.Duration
}

const defaultBaseURL = "https://api.openai.com/v1"

const providerOpenAI = "openai"

// structuredOutput names the response format (openai) or the tool
// (anthropic) a call with a schema asks for (ChatJSON, structured.go).
const structuredOutput = "structured_output"

// A request is one attempt's request to a model: the runtime's messages
// are chat-completions messages whatever the provider, which body carries
// in the provider's wire format; the reply is read back by the same
// provider's rules (modelCall, readChunks) into a chat completion.
type request struct {
	provider string // providerOpenAI or a key of wires
	endpoint string
	headers  map[string]string
	body     map[string]any
}

// A wire is the wire format of a provider other than chat completions:
// how a request is written and its reply read as chat completions are.
type wire struct {
	request func(node string, m Model, messages, tools []any, schema map[string]any) (request, error)
	// reply is a whole reply as the chat completion it stands for.
	reply func(reply any) any
	// stream reads a streamed reply's events (readChunks' next), and names
	// the event that ends it.
	stream func(node string) (next func(data []byte) (chunk []byte, done bool, err error), end string)
}

// wires are the providers other than chat completions, by name: each
// file's init adds its own (anthropic.go), so that a project has the files
// of the providers its graph calls.
var wires = map[string]wire{}

// chatStreamed asks the model for a stream and sends its text as token
// events; nil unless the graph has settings.streaming (llm_stream.go).
var chatStreamed func(ctx context.Context, node string, req request, observe Observer) (string, tokens, error)

// Chat sends the non-empty prompt parts and returns the reply text.
func Chat(ctx context.Context, node string, m Model, system, user string) (string, error) {
	var text string
	err := callModel(ctx, node, m, prompt(system, user), nil, nil, func(ctx context.Context, req request) (used tokens, err error) {
		if observe := observerOf(ctx); observe != nil && chatStreamed != nil {
			text, used, err = chatStreamed(ctx, node, req, observe)
			return used, err
		}
		reply, err := modelCall(ctx, node, req)
		if err != nil {
			return tokens{}, err
		}
		text, err = replyText(node, reply)
		return replyTokens(reply), err
	})
	return text, err
}

// prompt is an llm node's messages: its system and user prompts, each
// when it is not blank.
func prompt(system, user string) []any {
	messages := []any{}
	if strings.TrimSpace(system) != "" {
		messages = append(messages, map[string]any{"role": "system", "content": system})
	}
	if strings.TrimSpace(user) != "" {
		messages = append(messages, map[string]any{"role": "user", "content": user})
	}
	return messages
}

// modelRequest is the request of the model m for messages and tools, in
// its provider's wire format; schema, when not nil, is the JSON Schema the
// reply must match (ChatJSON). A chat-completions request has its endpoint
// (the base URL variable, else the default, + /chat/completions), its
// headers (Authorization when the key variable is set) and its body:
// model, messages, tools (only when there are any), response_format (with
// a schema), temperature (when set) and max_tokens (when positive).
func modelRequest(node string, m Model, messages, tools []any, schema map[string]any) (request, error) {
	if w, ok := wires[m.Provider]; ok {
		return w.request(node, m, messages, tools, schema)
	}
	if m.Provider != "" && m.Provider != providerOpenAI {
		return request{}, nodeError(node, fmt.Sprintf("node %q failed: the model %q names the provider %q, which this service cannot call", node, m.Name, m.Provider))
	}
	body := map[string]any{"model": m.Name, "messages": messages}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	if schema != nil {
		body["response_format"] = map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": structuredOutput, "strict": true, "schema": schema}}
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
		return request{}, err
	}
	headers := map[string]string{}
	if key := os.Getenv(m.APIKeyEnv); key != "" {
		headers["Authorization"] = "Bearer " + key
	}
	return request{providerOpenAI, endpoint, headers, body}, nil
}

// chatMessage is one chat-completions call, never streamed, with tools
// offered when there are any; it returns the reply's choices[0].message,
// which may hold tool_calls (agents, tool-calling llm nodes, routers and
// intent classifiers). A reply without that message, or (wantText) whose
// message has no string content, fails the call as invalid_json.
func chatMessage(ctx context.Context, node string, m Model, messages []any, tools []any, wantText bool) (map[string]any, error) {
	var msg map[string]any
	err := callModel(ctx, node, m, messages, tools, nil, func(ctx context.Context, req request) (tokens, error) {
		reply, err := modelCall(ctx, node, req)
		if err != nil {
			return tokens{}, err
		}
		var ok bool
		if msg, ok = firstMessage(reply); !ok {
			return tokens{}, UpstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the model reply has no choices[0].message", node))
		}
		if _, ok = msg["content"].(string); wantText && !ok {
			return tokens{}, UpstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the model reply has no choices[0].message.content", node))
		}
		return replyTokens(reply), nil
	})
	return msg, err
}

// modelCall is one model call, not streamed, in its chat span; the reply
// is a chat completion whatever the provider.
func modelCall(ctx context.Context, node string, req request) (reply any, err error) {
	model, _ := req.body["model"].(string)
	ctx, end := chatSpan(ctx, req.provider, model)
	defer func() { end(err) }()
	reply, err = postJSON(ctx, node, req.endpoint, req.headers, 0, req.body)
	if w, ok := wires[req.provider]; ok && err == nil {
		reply = w.reply(reply)
	}
	if err == nil && tracing != nil {
		tracing.Reply(ctx, model, req.body["messages"], reply)
	}
	return reply, err
}

// chatSpan starts the chat span of a call of model, its provider kept in
// ctx for the span's gen_ai.provider.name (ModelProvider).
func chatSpan(ctx context.Context, provider, model string) (context.Context, func(error)) {
	if tracing == nil {
		return ctx, endNothing
	}
	return startSpan(context.WithValue(ctx, providerKey{}, provider), SpanChat, model)
}

// An attempt of a model call sends the request built for the model tried
// and reads its reply; it returns the tokens the reply reports. It returns
// a failure wrapped in final when no further attempt may follow (a
// streamed reply's tokens reached the client).
type attempt func(ctx context.Context, req request) (tokens, error)

// final is an attempt's failure that ends the call, whatever it is.
type final struct{ error }

// callModel is one model call (what a node, an agent's turn or a
// classifier asks once), its requests built for messages, tools and schema
// (modelRequest): the attempts of m, then of each fallback, until
// one succeeds. A failure that may pass (retryable) is tried again after a
// backoff or, once the model's attempts are spent, on the next model at
// once; any other failure, a request that cannot be built included, ends
// the call. Each attempt is bounded by its model's Timeout and by the run's
// deadline (ctx's); no attempt starts, and no wait begins, that the
// deadline would cut, and a cancelled run ends the wait: the call then
// fails with the last failure. The failure returned names in details the
// model that failed last and the attempts of the call over all models.
//
// The run's meter counts the call, every attempt and the tokens of the
// reply used (failed attempts used none), and fails the call, without an
// attempt, once the run's budget is spent, or when the reply's tokens
// pass it.
func callModel(ctx context.Context, node string, m Model, messages, tools []any, schema map[string]any, try attempt) error {
	run := meterOf(ctx)
	if err := run.start(node); err != nil {
		return err
	}
	var last error
	attempts, failed := 0, m.Name
	// The model, then its fallbacks, without a slice of them per call.
	for i := 0; i <= len(m.Fallbacks); i++ {
		model := m
		if i > 0 {
			model = m.Fallbacks[i-1]
		}
		req, err := modelRequest(node, model, messages, tools, schema)
		if err != nil {
			return modelFailure(err, model.Name, attempts)
		}
		retry, timeout := model.Retry.orDefaults(), model.Timeout
		if timeout <= 0 {
			timeout = 60 * time.Second
		}
		for n := 1; n <= retry.MaxAttempts; n++ {
			if ctx.Err() != nil {
				if last == nil {
					// What the request would have failed with (a
					// timeout once the deadline passed).
					last = UpstreamCall{Node: node, Service: "upstream"}.transportError(ctx, ctx.Err())
				}
				return modelFailure(last, failed, attempts)
			}
			attempts++
			run.attempt()
			used, err := tryWithin(ctx, timeout, req, try)
			last, failed = err, model.Name
			if last == nil {
				return run.replied(node, used)
			}
			if !retryable(last) {
				return modelFailure(last, failed, attempts)
			}
			if n == retry.MaxAttempts {
				break
			}
			delay := retry.backoff(n, last)
			if deadline, ok := ctx.Deadline(); ok && time.Now().Add(delay).After(deadline) {
				return modelFailure(last, failed, attempts)
			}
			sleep(ctx, delay)
		}
	}
	return modelFailure(last, failed, attempts)
}

// tryWithin runs one attempt bounded by timeout, and by the run's deadline
// when that comes first: then ctx bounds it already, and the attempt needs
// no context and timer of its own (most runs' deadlines are shorter than a
// model's timeout).
func tryWithin(ctx context.Context, timeout time.Duration, req request, try attempt) (tokens, error) {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= timeout {
		return try(ctx, req)
	}
	attemptCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return try(attemptCtx, req)
}

func (r Retry) orDefaults() Retry {
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 3
	}
	if r.InitialDelay <= 0 {
		r.InitialDelay = 500 * time.Millisecond
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = 8 * time.Second
	}
	return r
}

// retryable reports whether a failure may pass on another attempt: no
// connection, a cut one, a timeout, or a status asking to come back
// (529: Anthropic's "overloaded"). A reply that is not what a model
// answers, any other status and a failure that is not the provider's are
// not.
func retryable(err error) bool {
	var e *Error
	if _, done := err.(final); done || !errors.As(err, &e) || e.Code != "upstream_error" {
		return false
	}
	switch e.Details["reason"] {
	case ReasonConnect, ReasonTimeout:
		return true
	case ReasonStatus:
		switch e.Details["status"] {
		case 408, 429, 500, 502, 503, 504, 529:
			return true
		}
	}
	return false
}

// backoff is the wait after the failed attempt n (from 1): drawn from
// [0, min(MaxDelay, InitialDelay·2^(n-1))], or the failed reply's
// Retry-After when that asks for longer, up to MaxDelay.
func (r Retry) backoff(n int, err error) time.Duration {
	limit := r.InitialDelay
	for i := 1; i < n && limit < r.MaxDelay; i++ {
		limit *= 2
	}
	delay := jitter(min(limit, r.MaxDelay))
	var e *Error
	if errors.As(err, &e) {
		if asked, ok := retryAfter(e.retryAfter, time.Now()); ok && asked > delay {
			delay = min(asked, r.MaxDelay)
		}
	}
	return delay
}

// retryAfter is the wait a Retry-After value asks for: seconds (integer
// or decimal) or an HTTP date (a past one asks for none).
func retryAfter(value string, now time.Time) (time.Duration, bool) {
	if s, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
		// Also false for NaN; a day bounds what fits in a Duration (any
		// asked wait is capped at MaxDelay anyway).
		if !(s >= 0) {
			return 0, false
		}
		return time.Duration(min(s, 86400) * float64(time.Second)), true
	}
	if date, err := http.ParseTime(value); err == nil {
		return max(date.Sub(now), 0), true
	}
	return 0, false
}

// jitter is a uniform random duration in [0, limit]; a variable, so that
// tests choose it.
var jitter = func(limit time.Duration) time.Duration { return rand.N(limit + 1) }

// sleep waits d, or less when ctx ends first; a variable, so that tests
// record the waits instead of waiting.
var sleep = func(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// modelFailure is the failure of a model call as the attempt gave it,
// unwrapped, with details.model and details.attempts when it is an error
// of the contract.
func modelFailure(err error, model string, attempts int) error {
	if f, ok := err.(final); ok {
		err = f.error
	}
	var e *Error
	if errors.As(err, &e) {
		e.Details["model"], e.Details["attempts"] = model, attempts
	}
	return err
}

// replyTokens are the tokens a chat completion (or a stream's last chunk)
// reports: usage.prompt_tokens and usage.completion_tokens.
func replyTokens(reply any) tokens {
	obj, _ := reply.(map[string]any)
	usage, _ := obj["usage"].(map[string]any)
	return tokens{tokenCount(usage["prompt_tokens"]), tokenCount(usage["completion_tokens"])}
}

// tokenCount is a non-negative whole count of a reply decoded with
// UseNumber, else 0.
func tokenCount(v any) int64 {
	n, _ := v.(json.Number)
	if i, err := n.Int64(); err == nil && i > 0 {
		return i
	}
	return 0
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
