package graph

import (
	"context"
	"strconv"
)

// The graph has settings.streaming: /invoke streams the events of a run to
// a client that asks for text/event-stream (internal/server/stream.go).

// RunObserved runs a state that NewState validated, sending the node and
// token events to observe; its results are those of Invoke.
func RunObserved(ctx context.Context, st State, observe Observer) (State, *Usage, error) {
	out, used, err := runFrom(ctx, st, compiled.Entry, observe, Usage{})
	return out, used.reported(), err
}

// StepObserved is step in a streaming graph: with an Observer it sends
// node_started before the node and node_finished, with the patch the node
// returned, once the patch is applied. A node that fails has no
// node_finished.
func StepObserved(ctx context.Context, st State, node, kind string, fn NodeFunc, native bool) error {
	observe := observerOf(ctx)
	if observe == nil {
		return Step(ctx, st, node, fn, native)
	}
	observe(Event{Type: "node_started", Node: node, Data: map[string]any{"kind": kind}})
	var patch State
	err := Step(ctx, st, node, func(ctx context.Context, s State) (State, error) {
		p, err := fn(ctx, s)
		patch = p
		return p, err
	}, native)
	if err != nil {
		return err
	}
	if patch == nil {
		patch = State{}
	}
	observe(Event{Type: "node_finished", Node: node, Data: map[string]any{"kind": kind, "patch": patch}})
	return nil
}

// Routed sends a router's node_started and node_finished (a router writes
// nothing) when the run is streamed.
func Routed(ctx context.Context, node string) {
	if observe := observerOf(ctx); observe != nil {
		observe(Event{Type: "node_started", Node: node, Data: map[string]any{"kind": "router"}})
		observe(Event{Type: "node_finished", Node: node, Data: map[string]any{"kind": "router", "patch": State{}}})
	}
}

// AppendEvent appends one event as a JSON object, keys sorted:
// {"branch" (when the event has one), "data", "node" (when the event has
// one), "run_id", "seq", "type"}.
func AppendEvent(buf []byte, runID string, seq int, ev Event) ([]byte, error) {
	buf = append(buf, '{')
	if ev.Branch != "" {
		buf = append(buf, `"branch":`...)
		var err error
		if buf, err = appendValue(buf, ev.Branch); err != nil {
			return nil, err
		}
		buf = append(buf, ',')
	}
	buf = append(buf, `"data":{`...)
	for i, k := range sortedKeys(ev.Data) {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendValue(buf, k); err != nil {
			return nil, err
		}
		buf = append(buf, ':')
		if r, ok := ev.Data[k].(Result); ok {
			buf, err = AppendJSON(buf, State(r))
		} else {
			buf, err = appendValue(buf, ev.Data[k])
		}
		if err != nil {
			return nil, err
		}
	}
	buf = append(buf, '}')
	var err error
	if ev.Node != "" {
		buf = append(buf, `,"node":`...)
		if buf, err = appendValue(buf, ev.Node); err != nil {
			return nil, err
		}
	}
	buf = append(buf, `,"run_id":`...)
	if buf, err = appendValue(buf, runID); err != nil {
		return nil, err
	}
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendInt(buf, int64(seq), 10)
	buf = append(buf, `,"type":`...)
	if buf, err = appendValue(buf, ev.Type); err != nil {
		return nil, err
	}
	return append(buf, '}'), nil
}
