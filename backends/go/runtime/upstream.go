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
	"time"
)

// MaxUpstreamBytes caps what an HTTP tool or model provider may send back.
const MaxUpstreamBytes = 4 << 20

var upstreamClient = &http.Client{}

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
	if name, ok := cutPrefix(endpoint, "env:"); ok {
		endpoint = os.Getenv(name)
		if endpoint == "" {
			return "", upstreamError(node, ReasonConnect,
				fmt.Sprintf("the endpoint variable %s is not set", name))
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", upstreamError(node, ReasonConnect, fmt.Sprintf("invalid endpoint %q", endpoint))
	}
	return endpoint, nil
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}

// postJSON sends body as JSON and decodes the reply, mapping every way it
// can fail to an upstream error of the contract.
func postJSON(ctx context.Context, node, endpoint string, headers map[string]string, timeout time.Duration, body any) (any, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, nodeError(node, fmt.Sprintf("node %q: cannot encode the request: %v", node, err))
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, upstreamError(node, ReasonConnect, fmt.Sprintf("invalid endpoint %q", endpoint))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, expandEnv(v))
	}
	resp, err := upstreamClient.Do(req)
	if err != nil {
		return nil, transportError(ctx, node, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxUpstreamBytes+1))
	if err != nil {
		return nil, transportError(ctx, node, err)
	}
	if len(data) > MaxUpstreamBytes {
		return nil, upstreamError(node, ReasonTooLarge,
			fmt.Sprintf("node %q: the reply is larger than %d bytes", node, MaxUpstreamBytes))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := upstreamError(node, ReasonStatus, fmt.Sprintf("node %q: upstream answered %d", node, resp.StatusCode))
		e.Details["status"] = resp.StatusCode
		return nil, e
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil || dec.More() {
		return nil, upstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the reply is not valid JSON", node))
	}
	return out, nil
}

func transportError(ctx context.Context, node string, err error) error {
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return upstreamError(node, ReasonTimeout, fmt.Sprintf("node %q: the upstream call timed out", node))
	default:
		return upstreamError(node, ReasonConnect, fmt.Sprintf("node %q: cannot reach the upstream: %v", node, err))
	}
}
