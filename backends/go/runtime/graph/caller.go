package graph

import (
	"context"
	"slices"
)

// A2ACaller is who called the graph's A2A agent (settings.a2a): a caller
// of settings.a2a.tokens with its roles, "service" (the service's own
// credential, no roles) or, with security.auth none, "anonymous".
type A2ACaller struct {
	Subject string
	Roles   []string
}

type callerKey struct{}

// WithCaller is ctx carrying the A2A caller of the run it starts (package
// a2a sets it for each message).
func WithCaller(ctx context.Context, c A2ACaller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// Caller is the A2A caller of the run under way, for a native body:
// nil outside an A2A call (an /invoke request, an MCP call). The roles are
// the body's own copy.
func Caller(ctx context.Context) *A2ACaller {
	c, ok := ctx.Value(callerKey{}).(A2ACaller)
	if !ok {
		return nil
	}
	c.Roles = slices.Clone(c.Roles)
	if c.Roles == nil {
		c.Roles = []string{}
	}
	return &c
}
