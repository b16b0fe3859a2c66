package graph

import (
	"context"
	"testing"
	"time"
)

func deadlineFar() time.Time { return time.Now().Add(time.Minute) }

func TestAppendEventWritesTheEnvelope(t *testing.T) {
	ev := Event{Type: "node_finished", Node: "ask", Data: map[string]any{"kind": "llm", "patch": State{"reply": "a\"b"}}}
	got, err := AppendEvent(nil, "r1", 3, ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"data":{"kind":"llm","patch":{"reply":"a\"b"}},"node":"ask","run_id":"r1","seq":3,"type":"node_finished"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// A whole state is written as /invoke writes its result: every field.
	got, err = AppendEvent(nil, "r1", 1, Event{Type: "run_started", Data: map[string]any{"state": Result(State{})}})
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := AppendJSON(nil, State{})
	if want := `{"data":{"state":` + string(empty) + `},"run_id":"r1","seq":1,"type":"run_started"}`; string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestObservedStepsSendNodeEventsOnlyWhenStreamed(t *testing.T) {
	var events []Event
	rc := newRunContext(context.Background(), deadlineFar())
	rc.observe = func(e Event) { events = append(events, e) }
	st := State{}
	write := func(ctx context.Context, s State) (State, error) { return State{}, nil }
	if err := StepObserved(rc, st, "n", "function", write, false); err != nil {
		t.Fatal(err)
	}
	Routed(rc, "r")
	if len(events) != 4 || events[0].Type != "node_started" || events[1].Type != "node_finished" ||
		events[2].Data["kind"] != "router" || events[3].Node != "r" {
		t.Fatalf("events: %+v", events)
	}
	// A JSON request has no Observer: nothing is sent, the node still runs.
	plain := newRunContext(context.Background(), deadlineFar())
	if err := StepObserved(plain, st, "n", "function", write, false); err != nil {
		t.Fatal(err)
	}
	Routed(plain, "r")
	if len(events) != 4 {
		t.Fatalf("a JSON run sent events: %+v", events[4:])
	}
}
