package graph

// The svc/slack-notify connector (marketplace/slack-notify): a node posts a
// message, its {{field}} references filled from the state, to a Slack-style
// incoming webhook as {"text": ...}. Any 2xx reply is success (Slack answers
// "ok" as plain text). The call is the Go runtime's (upstream.go, the
// runtime helper `upstream`), so every failure is an upstream_error with the
// reason connect, timeout or status.

import (
	"context"
	"time"
)

// slackNotifyPost runs one slack-notify node and returns its state patch:
// the message sent under outputKey, or nothing when outputKey is "".
func slackNotifyPost(ctx context.Context, node, target, message string, timeoutMs int, outputKey string, state State) (State, error) {
	// The URL of an incoming webhook is a secret: resolveURL never puts
	// a value read from the environment in a message.
	endpoint, err := resolveURL(node, "webhook", target, nil)
	if err != nil {
		return nil, err
	}
	text := fillFields(message, state)
	_, err = upstreamCall{
		Node: node, Service: "webhook", Endpoint: endpoint,
		Timeout: time.Duration(timeoutMs) * time.Millisecond,
		Body:    map[string]string{"text": text},
	}.post(ctx)
	if err != nil {
		return nil, err
	}
	if outputKey == "" {
		return State{}, nil
	}
	return State{outputKey: text}, nil
}
