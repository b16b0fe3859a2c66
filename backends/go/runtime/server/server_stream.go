package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"svc.dev/runtime/graph"
)

// KeepAlive is the longest a streamed run stays silent: a comment line is
// sent after that much quiet, which SSE clients ignore (a variable for the
// tests).
var KeepAlive = 15 * time.Second

// The graph has settings.streaming: /invoke streams to a client that asks
// for text/event-stream (docs/http-contract.md, "Streaming").
func init() {
	streamRun = stream
	streamEvents = serveEvents
}

// wantsEventStream reports whether Accept lists text/event-stream with a
// quality above 0 (`*/*` alone does not count).
func wantsEventStream(r *http.Request) bool {
	for _, accept := range r.Header.Values("Accept") {
		for _, part := range strings.Split(accept, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || mt != "text/event-stream" {
				continue
			}
			if q, ok := params["q"]; ok {
				if v, err := strconv.ParseFloat(q, 64); err != nil || v <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

// stream answers a request that asks for text/event-stream (and reports
// false for one that does not): a state that fails its check is answered
// as JSON; a valid one starts the run, and from then on every outcome is an
// event of the stream.
func stream(w http.ResponseWriter, r *http.Request, input map[string]any) bool {
	if !wantsEventStream(r) {
		return false
	}
	st, err := graph.NewState(input)
	if err != nil {
		writeError(w, asError(err))
		return true
	}
	first := graph.Event{Type: "run_started", Data: map[string]any{"state": graph.Result(st)}}
	return serveEvents(w, r, first, func(ctx context.Context, observe graph.Observer) (graph.Event, *graph.Usage, error) {
		out, usage, err := graph.RunObserved(ctx, st, observe)
		if err != nil {
			return graph.Event{}, usage, err
		}
		return graph.Event{Type: "run_finished", Data: map[string]any{"result": graph.Result(out)}}, usage, nil
	})
}

// serveEvents answers a request that asks for text/event-stream (and
// reports false for one that does not) with the events of a run that
// passed its checks: from then on every outcome is an event of the stream.
// The last one (run_finished, interrupted, run_failed) carries the run's
// usage when it asked a model.
func serveEvents(w http.ResponseWriter, r *http.Request, first graph.Event, exec runFunc) bool {
	if !wantsEventStream(r) {
		return false
	}
	// The run stops when the stream cannot go on (an event over the limit,
	// a client gone), not only when the request ends.
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	es := newEventStream(w, stop)
	defer es.close()
	es.send(first)
	last, usage, err := exec(ctx, es.send)
	if err != nil {
		e := asError(err)
		data := map[string]any{"status": e.Status, "code": e.Code, "message": e.Message}
		if len(e.Details) > 0 {
			data["details"] = e.Details
		}
		last = graph.Event{Type: "run_failed", Data: data}
	}
	if usage != nil {
		last.Data["usage"] = usage
	}
	es.send(last)
	return true
}

// eventStream writes one run's events: id (the sequence number), event (the
// type) and data (the event as one line of JSON), flushed at once, with a
// keep-alive comment after KeepAlive of quiet. Writes come from the run's
// goroutine and the keep-alive timer, hence the lock.
type eventStream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	runID   string
	seq     int
	done    bool
	timer   *time.Timer
	failed  bool
	scratch []byte
	// stop ends the run once nothing more can be sent.
	stop context.CancelFunc
}

func newEventStream(w http.ResponseWriter, stop context.CancelFunc) *eventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	es := &eventStream{w: w, rc: http.NewResponseController(w), runID: newRunID(), stop: stop}
	_ = es.rc.Flush()
	// keepAlive reads the timer under the lock, perhaps before AfterFunc
	// has returned.
	es.mu.Lock()
	es.timer = time.AfterFunc(KeepAlive, es.keepAlive)
	es.mu.Unlock()
	return es
}

func (es *eventStream) keepAlive() {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.done || es.failed {
		return
	}
	if _, err := es.w.Write([]byte(": keep-alive\n\n")); err != nil || es.rc.Flush() != nil {
		es.failed = true
		es.stop()
		return
	}
	es.timer.Reset(KeepAlive)
}

// send writes one event. An event over the response limit is not sent:
// the run's stream ends with run_failed (response_too_large) instead.
func (es *eventStream) send(ev graph.Event) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.done || es.failed {
		return
	}
	es.seq++
	buf, ok := es.encode(ev)
	if !ok {
		// The event is dropped, the run_failed takes its number, and the
		// run stops: nothing more of it can be sent.
		buf, _ = es.encode(graph.Event{Type: "run_failed", Data: map[string]any{
			"status": http.StatusInternalServerError, "code": "execution_error",
			"message": "an event is larger than 4 MiB", "details": map[string]any{"reason": "response_too_large"}}})
		es.done = true
		es.stop()
	}
	if _, err := es.w.Write(buf); err != nil || es.rc.Flush() != nil {
		es.failed = true
		es.stop()
		return
	}
	if ev.Type == "run_finished" || ev.Type == "run_failed" || ev.Type == "interrupted" {
		es.done = true
	}
	es.timer.Reset(KeepAlive)
}

func (es *eventStream) encode(ev graph.Event) ([]byte, bool) {
	data, err := graph.AppendEvent(es.scratch[:0], es.runID, es.seq, ev)
	if err != nil || len(data) > MaxResponseBytes {
		return nil, false
	}
	es.scratch = data
	out := make([]byte, 0, len(data)+64)
	out = append(out, "id: "...)
	out = strconv.AppendInt(out, int64(es.seq), 10)
	out = append(out, "\nevent: "...)
	out = append(out, ev.Type...)
	out = append(out, "\ndata: "...)
	out = append(out, data...)
	out = append(out, "\n\n"...)
	return out, true
}

func (es *eventStream) close() {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.done = true
	es.timer.Stop()
}

// newRunID is an opaque id, unique per run.
func newRunID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
