package graph

// The svc/webhook connector (marketplace/webhook): a node POSTs state
// fields as a JSON object to a URL and may keep the parsed JSON reply.
// Every way the call can fail is an upstream_error with the reason an HTTP
// tool would give: connect, timeout, status, too_large and (only when the
// reply is kept) invalid_json.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"
)

// webhookMaxReplyBytes caps what a webhook may send back.
const webhookMaxReplyBytes = 4 << 20

// webhookClient is shared by every webhook node, so connections are reused.
var webhookClient = &http.Client{}

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
	endpoint, err := webhookEndpoint(node, cfg.URL, state)
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
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("node %q: cannot encode the webhook request: %v", node, err)
	}
	if cfg.TimeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(cfg.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, upstreamError(node, ReasonConnect, fmt.Sprintf("node %q: invalid webhook URL", node))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range cfg.Headers {
		req.Header.Set(k, webhookValue(v, state))
	}
	resp, err := webhookClient.Do(req)
	if err != nil {
		return nil, webhookTransportError(ctx, node, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, webhookMaxReplyBytes+1))
	if err != nil {
		return nil, webhookTransportError(ctx, node, err)
	}
	if len(data) > webhookMaxReplyBytes {
		return nil, upstreamError(node, ReasonTooLarge,
			fmt.Sprintf("node %q: the webhook reply is larger than %d bytes", node, webhookMaxReplyBytes))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := upstreamError(node, ReasonStatus, fmt.Sprintf("node %q: the webhook answered %d", node, resp.StatusCode))
		e.Details["status"] = resp.StatusCode
		return nil, e
	}
	if cfg.OutputKey == "" {
		return State{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var reply, extra any
	if err := dec.Decode(&reply); err != nil || dec.Decode(&extra) != io.EOF {
		return nil, upstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the webhook reply is not valid JSON", node))
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

// webhookEndpoint resolves the URL of one call. A URL read from the
// environment is never repeated in a message: it may hold a secret.
func webhookEndpoint(node, raw string, state State) (string, error) {
	var endpoint, what string
	if name, ok := strings.CutPrefix(raw, "env:"); ok {
		endpoint, what = os.Getenv(name), "the value of "+name
		if endpoint == "" {
			return "", upstreamError(node, ReasonConnect,
				fmt.Sprintf("node %q: the webhook URL variable %s is not set", node, name))
		}
	} else {
		endpoint = webhookRender(raw, state)
		what = fmt.Sprintf("%q", endpoint)
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", upstreamError(node, ReasonConnect,
			fmt.Sprintf("node %q: the webhook URL (%s) is not an http(s) URL", node, what))
	}
	return endpoint, nil
}

// webhookValue is a header value: env:NAME reads the environment ("" when
// unset), anything else is a template.
func webhookValue(raw string, state State) string {
	if name, ok := strings.CutPrefix(raw, "env:"); ok {
		return os.Getenv(name)
	}
	return webhookRender(raw, state)
}

// webhookRender fills {{field}} placeholders with state values, rendered as
// templates render them; an unclosed {{ is text.
func webhookRender(template string, state State) string {
	var b strings.Builder
	rest := template
	for {
		start := strings.Index(rest, "{{")
		if start < 0 {
			break
		}
		end := strings.Index(rest[start+2:], "}}")
		if end < 0 {
			break
		}
		b.WriteString(rest[:start])
		b.WriteString(text(state[strings.TrimSpace(rest[start+2:start+2+end])]))
		rest = rest[start+2+end+2:]
	}
	b.WriteString(rest)
	return b.String()
}

func webhookTransportError(ctx context.Context, node string, err error) error {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) {
		return upstreamError(node, ReasonTimeout, fmt.Sprintf("node %q: the webhook call timed out", node))
	}
	// A *url.Error repeats the URL, which may hold a secret.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return upstreamError(node, ReasonConnect, fmt.Sprintf("node %q: cannot reach the webhook: %v", node, err))
}
