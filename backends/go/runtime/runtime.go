package graph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Invoke runs the graph on a request's state. The state is validated and
// completed with defaults first; the run is bounded by the request deadline
// and the step limit, and a panicking node becomes an execution error.
func Invoke(ctx context.Context, input map[string]any) (State, error) {
	st, err := NewState(input)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	type outcome struct {
		st  State
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		out, err := run(ctx, st)
		done <- outcome{out, err}
	}()
	select {
	case o := <-done:
		if o.err != nil && errors.Is(o.err, context.DeadlineExceeded) {
			return nil, deadlineError()
		}
		return o.st, o.err
	case <-ctx.Done():
		// A node that ignores its context cannot hold the response back.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, deadlineError()
		}
		return nil, ctx.Err()
	}
}

func deadlineError() *Error {
	return &Error{Status: http.StatusGatewayTimeout, Code: "deadline_exceeded",
		Message: fmt.Sprintf("the run passed the request deadline of %s", RequestTimeout)}
}

func stepLimitError() *Error {
	return &Error{Status: http.StatusInternalServerError, Code: "step_limit_exceeded",
		Message: fmt.Sprintf("the run took more than %d steps", MaxSteps),
		Details: map[string]any{"maxSteps": MaxSteps}}
}

// NodeFunc is a node: it reads the state and returns a patch.
type NodeFunc func(ctx context.Context, state State) (State, error)

// step runs one node with panic recovery and merges its patch.
func step(ctx context.Context, st State, node string, fn NodeFunc) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = nodeError(node, fmt.Sprintf("node %q panicked: %v", node, r))
		}
	}()
	patch, err := fn(ctx, st.clone())
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return err
		}
		return nodeError(node, fmt.Sprintf("node %q failed: %v", node, err))
	}
	return apply(st, patch, node)
}

// clone gives a node its own top-level copy, so a body that mutates the map
// it was handed cannot bypass the reducers.
func (s State) clone() State {
	c := make(State, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

// Timeouts are given in milliseconds in the graph document.
func millis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
