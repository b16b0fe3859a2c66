package graph

// The svc/slack-notify connector (marketplace/slack-notify): a node posts a
// message, its {{field}} references filled from the state, to a Slack-style
// incoming webhook as {"text": ...}. Any 2xx reply is success (Slack answers
// "ok" as plain text); every failure is an upstream_error with the reason
// connect, timeout or status.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// slackNotifyClient is shared by every node, so connections are reused.
var slackNotifyClient = &http.Client{}

// slackNotifyPost runs one slack-notify node and returns its state patch:
// the message sent under outputKey, or nothing when outputKey is "".
func slackNotifyPost(ctx context.Context, node, target, message string, timeoutMs int, outputKey string, state State) (State, error) {
	endpoint := target
	if name, ok := strings.CutPrefix(target, "env:"); ok {
		// The URL of an incoming webhook is a secret: never in a message.
		endpoint = os.Getenv(name)
		if endpoint == "" {
			return nil, upstreamError(node, ReasonConnect,
				fmt.Sprintf("node %q: the webhook URL variable %s is not set", node, name))
		}
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, upstreamError(node, ReasonConnect, fmt.Sprintf("node %q: the webhook URL is not an http(s) URL", node))
	}
	text := slackNotifyFill(message, state)
	payload, err := json.Marshal(map[string]string{"text": text})
	if err != nil {
		return nil, fmt.Errorf("node %q: cannot encode the message: %v", node, err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutMs)*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, upstreamError(node, ReasonConnect, fmt.Sprintf("node %q: invalid webhook URL", node))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := slackNotifyClient.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, upstreamError(node, ReasonTimeout, fmt.Sprintf("node %q: the webhook call timed out", node))
		}
		return nil, upstreamError(node, ReasonConnect, fmt.Sprintf("node %q: cannot reach the webhook", node))
	}
	defer resp.Body.Close()
	// The reply is not used; reading a little lets the connection be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := upstreamError(node, ReasonStatus, fmt.Sprintf("node %q: the webhook answered %d", node, resp.StatusCode))
		e.Details["status"] = resp.StatusCode
		return nil, e
	}
	if outputKey == "" {
		return State{}, nil
	}
	return State{outputKey: text}, nil
}

// slackNotifyFill replaces each {{field}} with the state's value as text;
// an unclosed {{ stays as it is.
func slackNotifyFill(message string, state State) string {
	var b strings.Builder
	rest := message
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
