package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"svc.dev/runtime/graph"
)

func TestOnlyAnAskedForEventStreamStreams(t *testing.T) {
	cases := map[string]bool{
		"":                                    false,
		"*/*":                                 false,
		"application/json":                    false,
		"text/event-stream":                   true,
		"TEXT/Event-Stream; charset=utf-8":    true,
		"application/json, text/event-stream": true,
		"text/event-stream;q=0, application/json": false,
		"text/event-stream;q=0.5":                 true,
	}
	for accept, want := range cases {
		r, _ := http.NewRequest(http.MethodPost, "/invoke", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := wantsEventStream(r); got != want {
			t.Errorf("Accept %q: streams %v, want %v", accept, got, want)
		}
	}
}

func TestAQuietRunGetsKeepAliveComments(t *testing.T) {
	saved := KeepAlive
	KeepAlive = 20 * time.Millisecond
	defer func() { KeepAlive = saved }()
	rec := httptest.NewRecorder()
	es := newEventStream(rec, func() {})
	// Read under the stream's lock, which every write holds; a loaded machine
	// may fire the timer late, so wait for two comments up to a bound.
	count := func() int {
		es.mu.Lock()
		defer es.mu.Unlock()
		return strings.Count(rec.Body.String(), ": keep-alive\n\n")
	}
	for deadline := time.Now().Add(5 * time.Second); count() < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	es.close()
	if n := count(); n < 2 {
		t.Fatalf("%d keep-alive comments in %q", n, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
}

func TestAnEventOverTheLimitEndsTheStream(t *testing.T) {
	rec := httptest.NewRecorder()
	stopped := false
	es := newEventStream(rec, func() { stopped = true })
	es.send(graph.Event{Type: "run_started", Data: map[string]any{}})
	es.send(graph.Event{Type: "token", Node: "n", Data: map[string]any{"delta": strings.Repeat("x", MaxResponseBytes)}})
	es.send(graph.Event{Type: "run_finished", Data: map[string]any{}})
	es.close()
	body := rec.Body.String()
	if strings.Contains(body, "xxxx") || strings.Contains(body, "run_finished") {
		t.Fatalf("the large event or a later one was sent: %.200q", body)
	}
	if !strings.Contains(body, "id: 2\nevent: run_failed\n") || !strings.Contains(body, `"reason":"response_too_large"`) {
		t.Fatalf("no run_failed with response_too_large as event 2: %q", body)
	}
	if !stopped {
		t.Fatal("the run goes on after its stream ended")
	}
}
