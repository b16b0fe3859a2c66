package graph

import (
	"reflect"
	"testing"
)

func TestListShape(t *testing.T) {
	if got := AsList(`["a", "b"]`); !reflect.DeepEqual(got, []any{"a", "b"}) {
		t.Errorf("JSON array reply: %v", got)
	}
	if got := AsList("first\n\n  second  \n"); !reflect.DeepEqual(got, []any{"first", "second"}) {
		t.Errorf("line reply: %v", got)
	}
	if got := AsList("[not json"); !reflect.DeepEqual(got, []any{"[not json"}) {
		t.Errorf("broken JSON reply: %v", got)
	}
}

func TestReplyText(t *testing.T) {
	reply := map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "hi"}}}}
	if got, err := replyText("n", reply); err != nil || got != "hi" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := replyText("n", map[string]any{}); err == nil {
		t.Fatal("a reply without choices must fail")
	}
}
