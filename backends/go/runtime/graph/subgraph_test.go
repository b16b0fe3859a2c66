package graph

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// The schemas are the tests' own, so they hold whatever the project's
// fields are.

// childSchema is a child graph: a required input, a scratch field with a
// default and an output.
func childSchema() *Schema {
	return NewSchema([]Field{
		{Name: "q", Type: TypeString, Required: true},
		{Name: "scratch", Type: TypeObject, Default: func() any { return map[string]any{"n": 0} }},
		{Name: "meta", Type: TypeObject},
		{Name: "reply", Type: TypeString},
	})
}

// unreached is a child run that must not start.
func unreached(t *testing.T) func(context.Context, State) (State, error) {
	return func(context.Context, State) (State, error) {
		t.Fatal("the child ran")
		return nil, nil
	}
}

func TestDeepCopy(t *testing.T) {
	parent := func() map[string]any {
		return map[string]any{
			"list": []any{"a", map[string]any{"k": []any{1}}},
			"obj":  map[string]any{"x": []any{"y"}},
			"s":    "t",
			"none": []any(nil),
		}
	}
	orig := parent()
	c := deepCopy(orig).(map[string]any)
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("copy %v, want %v", c, orig)
	}
	c["list"].([]any)[0] = "changed"
	c["list"].([]any)[1].(map[string]any)["k"].([]any)[0] = 2
	c["obj"].(map[string]any)["x"] = "changed"
	c["obj"].(map[string]any)["new"] = true
	c["s"] = "changed"
	if !reflect.DeepEqual(orig, parent()) {
		t.Fatalf("the copy shares a container with the original: %v", orig)
	}
	if none, ok := c["none"].([]any); !ok || none != nil {
		t.Fatalf("a nil list must stay a nil list (null), got %#v", c["none"])
	}
}

func TestRunChildIsolatesTheParentState(t *testing.T) {
	meta := map[string]any{"tags": []any{"a"}}
	out, err := RunChild(context.Background(), "sub", childSchema(), func(ctx context.Context, st State) (State, error) {
		st.Map("meta")["tags"] = append(st.Map("meta")["tags"].([]any), "b")
		st.Map("meta")["new"] = true
		return st, nil
	}, map[string]any{"q": "hi", "meta": meta})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(meta, map[string]any{"tags": []any{"a"}}) {
		t.Fatalf("the child wrote to the parent's map: %v", meta)
	}
	if want := (map[string]any{"tags": []any{"a", "b"}, "new": true}); !reflect.DeepEqual(out["meta"], want) {
		t.Fatalf("child meta %v, want %v", out["meta"], want)
	}
}

func TestRunChildMissingRequiredField(t *testing.T) {
	for _, values := range []map[string]any{{"q": nil}, {}} {
		_, err := RunChild(context.Background(), "sub", childSchema(), unreached(t), values)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%v: want an *Error, got %T %v", values, err, err)
		}
		want := &Error{Status: 500, Code: "execution_error",
			Message: `subgraph "sub": required state field "q" is missing`,
			Details: map[string]any{"node": "sub"}}
		if !reflect.DeepEqual(e, want) {
			t.Fatalf("%v: got %+v, want %+v", values, e, want)
		}
	}
}

func TestRunChildFillsFreshDefaults(t *testing.T) {
	sc := childSchema()
	want := State{"q": "hi", "scratch": map[string]any{"n": 0}, "meta": nil, "reply": nil}
	run := func(ctx context.Context, st State) (State, error) {
		if !reflect.DeepEqual(st, want) {
			t.Errorf("child state %v, want %v", st, want)
		}
		st.Map("scratch")["n"] = 1 // this run's default only
		return st, nil
	}
	for i := 0; i < 2; i++ {
		if _, err := RunChild(context.Background(), "sub", sc, run, map[string]any{"q": "hi", "scratch": nil}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRunChildErrorsPassUnchanged(t *testing.T) {
	kept := &Error{Status: 500, Code: "step_limit_exceeded", Message: "kept"}
	plain := errors.New("boom")
	for _, want := range []error{kept, plain, context.DeadlineExceeded} {
		_, err := RunChild(context.Background(), "sub", childSchema(), func(context.Context, State) (State, error) {
			return nil, want
		}, map[string]any{"q": "hi"})
		if err != want {
			t.Fatalf("got %v, want %v as it is", err, want)
		}
	}
}

func TestRunChildHidesTheObserver(t *testing.T) {
	rc := newRunContext(context.Background(), time.Now().Add(time.Minute))
	events := 0
	rc.observe = func(Event) { events++ }
	defer rc.release()
	_, err := RunChild(rc, "sub", childSchema(), func(ctx context.Context, st State) (State, error) {
		if observerOf(ctx) != nil {
			t.Error("the child sees the parent's observer")
		}
		if d, ok := ctx.Deadline(); !ok || !d.Equal(rc.deadline) {
			t.Errorf("child deadline %v, want the parent's %v", d, rc.deadline)
		}
		return st, nil
	}, map[string]any{"q": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if observerOf(rc) == nil || events != 0 {
		t.Fatalf("the parent's observer: %v, %d events", observerOf(rc) != nil, events)
	}

	// The parent's deadline ends the child.
	past := newRunContext(context.Background(), time.Now().Add(-time.Second))
	past.observe = func(Event) {}
	defer past.release()
	_, err = RunChild(past, "sub", childSchema(), func(ctx context.Context, st State) (State, error) {
		return nil, ctx.Err()
	}, map[string]any{"q": "hi"})
	if err != context.DeadlineExceeded {
		t.Fatalf("got %v, want the parent's deadline", err)
	}
}

func TestChildOutput(t *testing.T) {
	got := ChildOutput(map[string]any{"a": nil, "b": "x", "c": []any{}})
	if want := (State{"b": "x", "c": []any{}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestSchemaStepAppliesTheChildOutput(t *testing.T) {
	parent := NewSchema([]Field{
		{Name: "question", Type: TypeString},
		{Name: "log", Type: TypeArray, Items: &Item{Type: TypeString}, Append: true},
		{Name: "answer", Type: TypeString},
	})
	st, err := parent.newState(map[string]any{"question": "hi", "log": []any{"first"}, "answer": "kept"})
	if err != nil {
		t.Fatal(err)
	}
	sub := func(ctx context.Context, state State) (State, error) {
		out, err := RunChild(ctx, "sub", childSchema(), func(ctx context.Context, st State) (State, error) {
			st["meta"] = map[string]any{"log": []any{"a", "b"}}
			return st, nil
		}, map[string]any{"q": state["question"]})
		if err != nil {
			return nil, err
		}
		return ChildOutput(map[string]any{"answer": out["reply"], "log": out.Map("meta")["log"]}), nil
	}
	if err := parent.Step(context.Background(), st, "sub", sub, false); err != nil {
		t.Fatal(err)
	}
	// The parent's append reducer extends its list; the reply the child
	// never set leaves the answer alone.
	if want := (State{"question": "hi", "log": []any{"first", "a", "b"}, "answer": "kept"}); !reflect.DeepEqual(st, want) {
		t.Fatalf("state %v, want %v", st, want)
	}

	// The child's own step limit passes through the parent's step.
	err = parent.Step(context.Background(), st, "sub", func(ctx context.Context, state State) (State, error) {
		return RunChild(ctx, "sub", childSchema(), func(context.Context, State) (State, error) {
			return nil, StepLimit(3)
		}, map[string]any{"q": "hi"})
	}, false)
	want := &Error{Status: 500, Code: "step_limit_exceeded", Message: "the run took more than 3 steps",
		Details: map[string]any{"maxSteps": 3}}
	if !reflect.DeepEqual(err, want) {
		t.Fatalf("got %#v, want %#v", err, want)
	}
}
