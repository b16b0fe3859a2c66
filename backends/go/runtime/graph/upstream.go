package graph

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
	"regexp"
	"strings"
	"time"
)

// MaxUpstreamBytes caps what an HTTP tool or model provider may send back.
const MaxUpstreamBytes = 4 << 20

// upstreamClient makes every HTTP tool and model call. Its transport keeps
// up to 64 idle connections per host, not net/http's default 2: a service's
// calls mostly go to one model provider, and with more than two runs at
// once the default closes a connection after nearly every call and dials
// (with TLS, handshakes) a new one for the next, which cost a fifth of the
// CPU of an llm graph's request in bench/model_calls.py.
var upstreamClient = &http.Client{Transport: upstreamTransport()}

func upstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return t
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces ${NAME} with the environment variable NAME; secrets
// live in the environment, never in the graph.
func expandEnv(s string) string {
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		return os.Getenv(m[2 : len(m)-1])
	})
}

// resolveEndpoint reads `env:NAME` endpoints from the environment.
func resolveEndpoint(node, endpoint string) (string, error) {
	return ResolveURL(node, "upstream", endpoint, nil)
}

// ResolveURL is the http(s) URL of one call: `env:NAME` reads the
// variable (which is never repeated in a message: it may hold a secret),
// anything else is the URL, its {{field}} placeholders filled from state
// when state is not nil. service names the upstream in messages.
func ResolveURL(node, service, raw string, state State) (string, error) {
	endpoint, what := raw, ""
	if name, ok := strings.CutPrefix(raw, "env:"); ok {
		endpoint, what = os.Getenv(name), "the value of "+name
		if endpoint == "" {
			return "", UpstreamError(node, ReasonConnect,
				fmt.Sprintf("node %q: the %s URL variable %s is not set", node, service, name))
		}
	} else {
		if state != nil {
			endpoint = FillFields(raw, state)
		}
		what = fmt.Sprintf("%q", endpoint)
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", UpstreamError(node, ReasonConnect,
			fmt.Sprintf("node %q: the %s URL (%s) is not an http(s) URL", node, service, what))
	}
	return endpoint, nil
}

// postJSON sends body as JSON with the headers' ${NAME} references
// expanded, and decodes the reply, mapping every way it can fail to an
// upstream error of the contract.
func postJSON(ctx context.Context, node, endpoint string, headers map[string]string, timeout time.Duration, body any) (any, error) {
	expanded := make(map[string]string, len(headers))
	for k, v := range headers {
		expanded[k] = expandEnv(v)
	}
	return UpstreamCall{
		Node: node, Service: "upstream", Endpoint: endpoint, Headers: expanded,
		Timeout: timeout, Body: body, KeepReply: true,
	}.Post(ctx)
}

// UpstreamCall is one POST of a JSON body: an HTTP tool's, a model
// provider's, or a connector's (connectors ask for this file with the
// runtime helper `upstream`, marketplace/README.md).
type UpstreamCall struct {
	// Node names the node in errors.
	Node string
	// Service names the upstream in messages ("upstream", "webhook").
	Service  string
	Endpoint string
	// Headers are sent as they are.
	Headers map[string]string
	// Timeout bounds the whole call, reply included; 0 is no bound.
	Timeout time.Duration
	Body    any
	// KeepReply decodes the reply as JSON and returns it; otherwise any
	// 2xx reply (an empty 204, plain text) is success and is dropped.
	KeepReply bool
}

// Post makes the call; every way it can fail is an upstream error with
// the contract's reason: connect, timeout, status, too_large and (when the
// reply is kept) invalid_json.
func (c UpstreamCall) Post(ctx context.Context) (any, error) {
	node := c.Node
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	resp, err := c.send(ctx, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxUpstreamBytes+1))
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	if len(data) > MaxUpstreamBytes {
		return nil, UpstreamError(node, ReasonTooLarge,
			fmt.Sprintf("node %q: the %s reply is larger than %d bytes", node, c.Service, MaxUpstreamBytes))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.statusError(resp)
	}
	if !c.KeepReply {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out, extra any
	if err := dec.Decode(&out); err != nil || dec.Decode(&extra) != io.EOF {
		return nil, UpstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the %s reply is not valid JSON", node, c.Service))
	}
	return out, nil
}

// send POSTs the body as JSON, asking for `accept`, and returns the
// response whatever its status (post and a model's stream read it their
// way); a request that cannot be made or sent is an upstream error.
func (c UpstreamCall) send(ctx context.Context, accept string) (*http.Response, error) {
	payload, err := json.Marshal(c.Body)
	if err != nil {
		return nil, nodeError(c.Node, fmt.Sprintf("node %q: cannot encode the %s request: %v", c.Node, c.Service, err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, UpstreamError(c.Node, ReasonConnect, fmt.Sprintf("node %q: invalid %s URL", c.Node, c.Service))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if tracing != nil {
		tracing.Inject(ctx, req.Header)
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	resp, err := upstreamClient.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	return resp, nil
}

// statusError is the failure of a reply whose status is not 2xx, with
// details.status, keeping the reply's Retry-After for a model call's
// retries.
func (c UpstreamCall) statusError(resp *http.Response) *Error {
	e := UpstreamError(c.Node, ReasonStatus, fmt.Sprintf("node %q: the %s answered %d", c.Node, c.Service, resp.StatusCode))
	e.Details["status"] = resp.StatusCode
	e.retryAfter = resp.Header.Get("Retry-After")
	return e
}

func (c UpstreamCall) transportError(ctx context.Context, err error) error {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) {
		return UpstreamError(c.Node, ReasonTimeout, fmt.Sprintf("node %q: the %s call timed out", c.Node, c.Service))
	}
	// A *url.Error repeats the URL, which may hold a secret.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return UpstreamError(c.Node, ReasonConnect, fmt.Sprintf("node %q: cannot reach the %s: %v", c.Node, c.Service, err))
}
