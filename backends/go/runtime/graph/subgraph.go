package graph

import (
	"context"
	"fmt"
)

// Subgraph nodes, with python-svc's semantics (run_child): the child graph
// runs as one step of its parent, on a state of its own, and only the
// node's output mapping reaches the parent.

// RunChild runs sc's graph (run) as the child of the subgraph node `node`:
// on a fresh state from values, deep-copied so the child never shares a list
// or map with its parent, with the child's defaults filled in; run holds the
// child's own step limit, and ctx the parent's deadline. A streamed run's
// observer is hidden from the child, so its nodes send no events and its
// model calls are not streamed (python-svc streams the document's own graph
// only), and in a parallel branch its patches are no write of the branch.
// Errors of the child pass unchanged.
func RunChild(ctx context.Context, node string, sc *Schema, run func(context.Context, State) (State, error), values map[string]any) (State, error) {
	st, err := sc.newState(deepCopy(values).(map[string]any))
	if err != nil {
		// Types are checked at compile time: what is left is a required
		// child field the parent never set.
		return nil, nodeError(node, fmt.Sprintf("subgraph \"%s\": %s", node, err))
	}
	return run(childContext(ctx), st)
}

// childContext is ctx for a child graph's run (a subgraph node's, a map
// item's): its nodes send no events, as python-svc streams the document's
// own graph only, and their patches go to the child's state, so they are
// no write of the branch the node is in. The deadline and cancellation
// still come from the parent's run.
func childContext(ctx context.Context) context.Context {
	if observerOf(ctx) != nil {
		ctx = context.WithValue(ctx, observerKey{}, Observer(nil))
	}
	if writesOf(ctx) != nil {
		ctx = context.WithValue(ctx, writesKey{}, writes(nil))
	}
	return ctx
}

// ChildOutput is the patch of a subgraph node: its output values with the
// nil ones left out, so an output the child never set leaves the parent's
// field as it is.
func ChildOutput(out map[string]any) State {
	patch := make(State, len(out))
	for k, v := range out {
		if v != nil {
			patch[k] = v
		}
	}
	return patch
}
