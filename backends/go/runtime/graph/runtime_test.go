package graph

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"
)

func TestConditions(t *testing.T) {
	n := json.Number("5")
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"eq string", CondEq("gold", "gold"), true},
		{"eq number kinds", CondEq(n, 5), true},
		{"eq absent", CondEq(nil, "x"), false},
		{"ne absent", CondNe(nil, "x"), true},
		{"gt", CondGt(n, 3), true},
		{"ge equal", CondGe(2.5, 2.5), true},
		{"lt strings", CondLt("a", "b"), true},
		{"le mixed types", CondLe("a", 1), false},
		{"in", CondIn("b", []any{"a", "b"}), true},
		{"in missing", CondIn(nil, []any{"a"}), false},
		{"exists", CondExists(""), true},
		{"exists absent", CondExists(nil), false},
		{"truthy zero", CondTruthy(json.Number("0")), false},
		{"truthy empty list", CondTruthy([]any{}), false},
		{"truthy word", CondTruthy("no"), true},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	if got := Concat("a ", Text(nil), Text(json.Number("2")), " ", Text(map[string]any{"k": true})); got != `a 2 {"k":true}` {
		t.Fatalf("got %q", got)
	}
}

func TestAccessors(t *testing.T) {
	s := State{"i": json.Number("7"), "f": 1.5, "s": "x", "b": true, "l": []any{1}, "m": map[string]any{}}
	if s.Int("i") != 7 || s.Float("f") != 1.5 || s.String("s") != "x" || !s.Bool("b") || len(s.List("l")) != 1 || s.Map("m") == nil {
		t.Fatalf("accessors disagree: %v", s)
	}
	if s.Int("absent") != 0 || s.String("i") != "" {
		t.Fatal("absent or mistyped fields must give zero values")
	}
}

func TestFillFields(t *testing.T) {
	state := State{"name": "Ada", "n": 3, "tags": []any{"a"}}
	cases := map[string]string{
		"":                      "",
		"plain":                 "plain",
		"Hi {{name}}!":          "Hi Ada!",
		"{{ name }}{{n}}":       "Ada3",
		"{{tags}} {{missing}}.": `["a"] .`,
		"open {{ name":          "open {{ name",
	}
	for in, want := range cases {
		if got := FillFields(in, state); got != want {
			t.Errorf("fillFields(%q) = %q, want %q", in, got, want)
		}
	}
}

// A run's context reports an error once its Done channel is closed, also
// when the run ended and released its timer: a context derived from it
// (a call's timeout) reads Err when Done closes, and the context package
// panics on nil (which took a service down under load).
func TestRunContextErrOnceDone(t *testing.T) {
	rc := newRunContext(context.Background(), time.Now().Add(time.Hour))
	child, cancel := context.WithTimeout(rc, time.Hour)
	defer cancel()
	rc.release()
	select {
	case <-rc.Done():
	case <-time.After(time.Second):
		t.Fatal("Done is not closed after release")
	}
	if !errors.Is(rc.Err(), context.Canceled) {
		t.Fatalf("Err after release: %v", rc.Err())
	}
	select {
	case <-child.Done():
	case <-time.After(time.Second):
		t.Fatal("a derived context is not cancelled with the run")
	}
	if !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("derived Err: %v", child.Err())
	}
}

// What packages register with RegisterStartup opens in order as the
// service starts and is released in reverse; a failure releases what
// opened before it.
func TestStartupsOpenInOrderAndReleaseInReverse(t *testing.T) {
	saved := startups
	t.Cleanup(func() { startups = saved })
	var events []string
	step := func(name string, fail bool) func(context.Context, *slog.Logger) (func(), error) {
		return func(context.Context, *slog.Logger) (func(), error) {
			if fail {
				return nil, errors.New(name + " failed")
			}
			events = append(events, "open "+name)
			return func() { events = append(events, "close "+name) }, nil
		}
	}
	startups = nil
	RegisterStartup(step("a", false))
	RegisterStartup(step("b", false))
	release, err := Start(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if want := []string{"open a", "open b", "close b", "close a"}; !reflect.DeepEqual(events, want) {
		t.Fatalf("events: %v, want %v", events, want)
	}
	events, startups = nil, nil
	RegisterStartup(step("a", false))
	RegisterStartup(step("b", true))
	if _, err := Start(context.Background(), nil); err == nil || err.Error() != "b failed" {
		t.Fatalf("start: %v", err)
	}
	if want := []string{"open a", "close a"}; !reflect.DeepEqual(events, want) {
		t.Fatalf("events after a failure: %v, want %v", events, want)
	}
}
