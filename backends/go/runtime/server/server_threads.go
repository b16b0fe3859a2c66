package server

import (
	"context"
	"fmt"
	"net/http"
	"unicode/utf8"

	"svc.dev/runtime/graph"
)

// The graph has a checkpointer: /invoke runs on threads, which pause at
// hitl nodes and are resumed (docs/http-contract.md, "Interrupt and
// resume").
func init() { openThreaded = openThreads }

// openThreads opens the graph's thread store (its database, for sqlite and
// postgres: an unset variable or a database out of reach stops the
// service, naming the variable).
func openThreads(ctx context.Context, cfg Config) (http.Handler, func(), error) {
	threads, err := graph.OpenThreads(ctx, cfg.Logger)
	if err != nil {
		return nil, nil, err
	}
	return NewThreaded(cfg, threads), func() { _ = threads.Close() }, nil
}

// NewThreaded returns the service's handler, its threads kept in threads.
func NewThreaded(cfg Config, threads graph.Threads) http.Handler {
	s := newServer(cfg)
	s.threaded = func(w http.ResponseWriter, r *http.Request, body []byte) {
		invokeThread(w, r, body, threads)
	}
	return s
}

// A threadRequest is a new state on a thread (state not nil; threadID ""
// for a new thread) or the resume of a paused one.
type threadRequest struct {
	threadID string
	state    map[string]any
	resuming bool
	resume   any
}

// parseThreadRequest accepts {"state": {...}} with an optional "threadId",
// and {"threadId": "...", "resume": <value>}; nothing else (no legacy
// form: its answer, the raw state, has no room for the thread).
func parseThreadRequest(body []byte) (threadRequest, *graph.Error) {
	var req threadRequest
	obj, e := parseObject(body, false)
	if e != nil {
		return req, e
	}
	if v, ok := obj["threadId"]; ok {
		id, isString := v.(string)
		if !isString || id == "" || utf8.RuneCountInString(id) > graph.MaxThreadID {
			return req, badRequest(fmt.Sprintf("`threadId` must be a non-empty string of at most %d characters",
				graph.MaxThreadID))
		}
		req.threadID = id
	}
	if v, ok := obj["resume"]; ok {
		if req.threadID == "" {
			return req, badRequest("a resume needs the `threadId` of the paused thread")
		}
		if len(obj) != 2 {
			return req, badRequest(`a resume is {"threadId": "...", "resume": <value>} and nothing else`)
		}
		req.resuming, req.resume = true, v
		return req, nil
	}
	st, ok := obj["state"]
	if !ok {
		return req, badRequest(`send {"state": {...}}, with "threadId" to name the thread, ` +
			`or {"threadId": "...", "resume": <value>}`)
	}
	if _, named := obj["threadId"]; len(obj) != 1 && !(named && len(obj) == 2) {
		return req, badRequest("a request with `state` may have `threadId` and no other field")
	}
	if req.state, ok = st.(map[string]any); !ok {
		return req, badRequest("`state` must be a JSON object")
	}
	return req, nil
}

// invokeThread answers /invoke on a thread: the checks up to taking the
// thread are answered as JSON (400, 422, 404, 409, 503); then the run,
// streamed to a client that asks for it.
func invokeThread(w http.ResponseWriter, r *http.Request, body []byte, threads graph.Threads) {
	req, e := parseThreadRequest(body)
	if e != nil {
		writeError(w, e)
		return
	}
	var run *graph.ThreadRun
	var err error
	if req.resuming {
		run, err = graph.ResumeThread(r.Context(), threads, req.threadID, req.resume)
	} else {
		run, err = graph.StartThread(r.Context(), threads, req.threadID, req.state)
	}
	if err != nil {
		writeError(w, asError(err))
		return
	}
	if streamEvents != nil && streamEvents(w, r, run.First, func(ctx context.Context, observe graph.Observer) (graph.Event, *graph.Usage, error) {
		st, in, usage, err := run.Run(ctx, observe)
		if err != nil {
			return graph.Event{}, usage, err
		}
		if in != nil {
			return graph.Event{Type: "interrupted", Node: in.Node,
				Data: map[string]any{"value": in.Value, "threadId": run.ThreadID}}, usage, nil
		}
		return graph.Event{Type: "run_finished",
			Data: map[string]any{"result": graph.Result(st), "threadId": run.ThreadID}}, usage, nil
	}) {
		return
	}
	st, in, usage, err := run.Run(r.Context(), nil)
	switch {
	case err != nil:
		writeFailure(w, err, usage)
	case in != nil:
		answer := map[string]any{"interrupt": map[string]any{"node": in.Node, "value": in.Value}, "threadId": run.ThreadID}
		if usage != nil {
			answer["usage"] = usage
		}
		writeJSON(w, http.StatusOK, answer)
	default:
		writeState(w, st, false, run.ThreadID, usage)
	}
}
