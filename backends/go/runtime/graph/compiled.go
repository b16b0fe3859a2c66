package graph

import (
	"context"
	"time"
)

// Compiled is what svc compile writes about a project's graph for the
// runtime: the project's graph.go registers it as the program starts
// (Register), and the runtime reads it from here rather than from names
// the generated code must declare in this package.
type Compiled struct {
	// ID is the graph's id, the name of its runs' spans.
	ID string
	// Fields is the state schema of the document's own graph.
	Fields []Field
	// Entry is the node after start, where a new run begins.
	Entry string
	// Run walks the graph from the node from; each node is one step.
	Run func(ctx context.Context, st State, from string) (State, error)
	// MaxSteps bounds the node executions of one run (settings.maxSteps).
	MaxSteps int
	// RequestTimeout bounds one run (settings.requestTimeoutMs).
	RequestTimeout time.Duration
	// Budget bounds the model calls of one run (settings.budget).
	Budget Budget
	// TraceNodes is settings.tracing.trace_nodes: a span per node.
	TraceNodes bool
	// NodeKind is the kind of a node by its registered name, the name of
	// its spans (a traced graph's; "node" when nil).
	NodeKind func(node string) string
}

// compiled is the graph this program runs.
var compiled Compiled

// Register makes c the graph this program runs: a project's graph.go
// calls it once, from init.
func Register(c Compiled) {
	compiled = c
	schema = NewSchema(c.Fields)
	fieldKeys = jsonKeys(c.Fields)
}

// Registered is the graph this program runs (Register), for package otel
// to read; it is not to be changed through.
func Registered() *Compiled { return &compiled }

// KindOf is the kind of the node registered as node ("node" without
// NodeKind).
func (c *Compiled) KindOf(node string) string {
	if c.NodeKind == nil {
		return "node"
	}
	return c.NodeKind(node)
}

// Budget is settings.budget: what one run may spend on model calls
// (Compiled.Budget); a zero limit is none.
type Budget struct {
	MaxTokens     int64
	MaxModelCalls int64
}
