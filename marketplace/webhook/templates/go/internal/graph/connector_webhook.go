package graph

// The svc/webhook connector (marketplace/webhook): a node POSTs state
// fields as a JSON object to a URL and may keep the parsed JSON reply.
// The call is the Go runtime's (upstream.go, which the connector asks the
// backend for as the runtime helper `upstream`), so every way it can fail
// is an upstream_error with the reason an HTTP tool would give: connect,
// timeout, status, too_large and (only when the reply is kept)
// invalid_json.

import (
	"context"
	"os"
	"runtime"
	"strings"
	"time"
)

// webhookConfig is one webhook node's configuration.
type webhookConfig struct {
	// Node names the node in errors; "" takes it from the calling
	// function, which the connector contract names node_<id>.
	Node string
	// URL is env:NAME (read when the node runs) or an http(s) URL that
	// may hold {{field}} placeholders.
	URL string
	// Fields are the state fields sent; nil sends the whole state.
	Fields []string
	// Headers are added to the request; a value is env:NAME or text
	// that may hold {{field}} placeholders.
	Headers map[string]string
	// TimeoutMs bounds the whole call, reply included.
	TimeoutMs int
	// OutputKey receives the parsed reply; "" leaves the reply unread
	// as JSON and writes nothing.
	OutputKey string
}

// webhookSend runs one webhook node and returns its state patch.
func webhookSend(ctx context.Context, cfg webhookConfig, state State) (State, error) {
	node := cfg.Node
	if node == "" {
		node = webhookCaller()
	}
	endpoint, err := resolveURL(node, "webhook", cfg.URL, state)
	if err != nil {
		return nil, err
	}
	body := make(map[string]any, len(state))
	if cfg.Fields == nil {
		for k, v := range state {
			body[k] = v
		}
	} else {
		for _, k := range cfg.Fields {
			body[k] = state[k]
		}
	}
	headers := make(map[string]string, len(cfg.Headers))
	for k, v := range cfg.Headers {
		headers[k] = webhookValue(v, state)
	}
	reply, err := upstreamCall{
		Node: node, Service: "webhook", Endpoint: endpoint, Headers: headers,
		Timeout: time.Duration(cfg.TimeoutMs) * time.Millisecond, Body: body,
		KeepReply: cfg.OutputKey != "",
	}.post(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.OutputKey == "" {
		return State{}, nil
	}
	return State{cfg.OutputKey: reply}, nil
}

// webhookCaller is the id of the node whose function called webhookSend
// (node_<id>), or "webhook" when the caller is named otherwise.
func webhookCaller() string {
	pcs := make([]uintptr, 1)
	if runtime.Callers(3, pcs) == 0 {
		return "webhook"
	}
	frame, _ := runtime.CallersFrames(pcs).Next()
	i := strings.LastIndex(frame.Function, ".node_")
	if i < 0 {
		return "webhook"
	}
	id, _, _ := strings.Cut(frame.Function[i+len(".node_"):], ".")
	return id
}

// webhookValue is a header value: env:NAME reads the environment ("" when
// unset), anything else is a template.
func webhookValue(raw string, state State) string {
	if name, ok := strings.CutPrefix(raw, "env:"); ok {
		return os.Getenv(name)
	}
	return fillFields(raw, state)
}
