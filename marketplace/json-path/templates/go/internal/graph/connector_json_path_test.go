package graph

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func jsonPathState(t *testing.T) State {
	t.Helper()
	var payload any
	dec := json.NewDecoder(strings.NewReader(`{"items": [{"name": "Ada", "tags": ["a", "b"]}], "a b": {"c": null}}`))
	dec.UseNumber()
	if err := dec.Decode(&payload); err != nil {
		t.Fatal(err)
	}
	return State{"payload": payload}
}

func TestJSONPathExtractsKeysAndIndexes(t *testing.T) {
	state := jsonPathState(t)
	for _, c := range []struct {
		steps []any
		want  any
	}{
		{[]any{"items", 0, "name"}, "Ada"},
		{[]any{"items", -1, "tags", -1}, "b"},
		{[]any{"a b", "c"}, nil},
		{[]any{}, state["payload"]},
	} {
		patch, err := jsonPathExtract("extract", state, "payload", c.steps, "out", "")
		if err != nil || !reflect.DeepEqual(patch["out"], c.want) {
			t.Fatalf("%v: got %v, %v", c.steps, patch, err)
		}
	}
}

func TestJSONPathUnresolvedUsesTheDefaultOrFails(t *testing.T) {
	state := jsonPathState(t)
	patch, err := jsonPathExtract("extract", state, "payload", []any{"items", 3, "name"}, "out", `{"n": 1}`)
	if err != nil || !reflect.DeepEqual(patch["out"], map[string]any{"n": json.Number("1")}) {
		t.Fatalf("default: %v, %v", patch, err)
	}
	_, err = jsonPathExtract("extract", state, "payload", []any{"items", 0, "name", "first"}, "out", "")
	if err == nil || !strings.Contains(err.Error(), `$.items[0].name of "payload" has no value at $.items[0].name.first`) {
		t.Fatalf("want the step named, got %v", err)
	}
	_, err = jsonPathExtract("extract", state, "missing", []any{"a"}, "out", "")
	if err == nil || !strings.Contains(err.Error(), `"missing" is not set`) {
		t.Fatalf("want the field named, got %v", err)
	}
	for _, steps := range [][]any{{"items", "0"}, {"items", 0, 0}, {"a b", "c", "d"}} {
		if _, err := jsonPathExtract("extract", state, "payload", steps, "out", ""); err == nil {
			t.Fatalf("%v resolved", steps)
		}
	}
}
