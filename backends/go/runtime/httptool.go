package graph

import (
	"context"
	"time"
)

// HTTPTool is a registry tool: the tool input is POSTed as JSON and the
// parsed reply is the tool's result.
type HTTPTool struct {
	Endpoint string
	Timeout  time.Duration
	Headers  map[string]string
}

func callHTTPTool(ctx context.Context, node string, tool HTTPTool, input map[string]any) (any, error) {
	endpoint, err := resolveEndpoint(node, tool.Endpoint)
	if err != nil {
		return nil, err
	}
	return postJSON(ctx, node, endpoint, tool.Headers, tool.Timeout, input)
}
