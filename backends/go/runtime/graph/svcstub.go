//go:build svcstub

// Stand-ins for what a generated project declares in package graph
// (graph.go: the graph it registers), for the repository only:
// the backend never copies this file, nor ../server/testdata/svc-cases.json,
// the stub graph's test cases for server's cases_test.go (svc compile
// writes a project's). With them the runtime is vetted and
// tested as it is, `go test -tags svcstub ./...` in backends/go/runtime
// (tests/tests/e2e/runtimes.rs). The graph is one response_template node,
// echo, written as the backend writes it; tests that need agents, tools or
// MCP servers set their own.

package graph

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// MaxSteps bounds the node executions of one run (settings.maxSteps).
const MaxSteps = 25

// RequestTimeout bounds one run (settings.requestTimeoutMs).
const RequestTimeout = 30000 * time.Millisecond

// fields is the state schema of the graph.
var fields = []Field{
	{Name: "question", Type: TypeString, Required: true},
	{Name: "reply", Type: TypeString},
}

// nodeKind is the kind of a node, by registered name: the name of its spans.
func nodeKind(node string) string {
	switch node {
	case "echo":
		return "response_template"
	}
	return "node"
}

// openThreads opens the store of the graph's threads
// (settings.checkpointer: memory, in this process).
func openThreads(ctx context.Context, log *slog.Logger) (Threads, error) {
	return NewMemoryThreads(ThreadOptions{Log: log}), nil
}

// The graph this program runs (compiled.go).
func init() {
	Register(Compiled{ID: "svcstub", Fields: fields, Entry: "echo", Run: run, MaxSteps: MaxSteps, RequestTimeout: RequestTimeout, TraceNodes: true, NodeKind: nodeKind})
	RegisterThreads(openThreads)
}

// run walks the graph from the node current; each node is one step.
func run(ctx context.Context, st State, current string) (State, error) {
	for steps := 0; ; steps++ {
		if current == "end" {
			return st, nil
		}
		if steps == MaxSteps {
			return nil, StepLimitError()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch current {
		case "echo":
			if err := StepObserved(ctx, st, "echo", "response_template", node_echo, false); err != nil {
				return nil, err
			}
			current = "end"
		default:
			return nil, fmt.Errorf("unknown node %q", current)
		}
	}
}

// node_echo renders the response template "echo".
func node_echo(ctx context.Context, state State) (State, error) {
	return State{"reply": Concat("You asked: ", Text(state["question"]))}, nil
}

// The stub graph has no agents, tools or MCP servers and is published
// neither as an MCP tool nor as an A2A agent: tests that need them register
// their own (RegisterAgents; package mcp's Register and Expose, package
// a2a's Publish).
