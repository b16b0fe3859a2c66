package graph

import (
	"context"
	"time"
)

// HTTPTool is a registry tool: the tool input is POSTed as JSON and the
// parsed reply is the tool's result.
type HTTPTool struct {
	// ID is the tool's id, the name of its calls' spans.
	ID       string
	Endpoint string
	Timeout  time.Duration
	Headers  map[string]string
}

// CallHTTPTool is a tool node's call, in a span of its own.
func CallHTTPTool(ctx context.Context, node string, tool HTTPTool, input map[string]any) (out any, err error) {
	ctx, end := startSpan(ctx, SpanTool, tool.ID)
	defer func() { end(err) }()
	return PostHTTPTool(ctx, node, tool, input)
}

// PostHTTPTool is the call itself (an agent's, whose span callAgentTool opens).
func PostHTTPTool(ctx context.Context, node string, tool HTTPTool, input map[string]any) (any, error) {
	endpoint, err := resolveEndpoint(node, tool.Endpoint)
	if err != nil {
		return nil, err
	}
	return postJSON(ctx, node, endpoint, tool.Headers, tool.Timeout, input)
}
