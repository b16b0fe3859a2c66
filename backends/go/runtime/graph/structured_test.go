package graph

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// Structured output (structured.go, schema.go): the request each provider
// gets, the reply read and checked, the second ask and the failure after
// it, and a request's state checked against a field's schema.

// orderSchema is a field's schema as the generated code writes it.
var orderSchema = map[string]any{"type": "object", "description": "An order.",
	"properties": map[string]any{
		"total": map[string]any{"type": "integer"},
		"items": map[string]any{"type": "array", "items": map[string]any{"type": "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}, "paid": map[string]any{"type": "boolean"}},
			"required":   []any{"name", "paid"}, "additionalProperties": false}},
		"note": map[string]any{"type": "string", "description": "Anything else."},
	},
	"required": []any{"total", "items", "note"}, "additionalProperties": false}

const validOrder = `{"total": 3, "items": [{"name": "pen", "paid": true}], "note": "ok"}`

// priced is a chat-completions reply of content, reporting 3 input and 5
// output tokens.
func priced(content string) map[string]any {
	reply := says(content)
	reply["usage"] = map[string]any{"prompt_tokens": 3, "completion_tokens": 5}
	return reply
}

// askedAgain is the message of a second ask.
func askedAgain(path, problem string) string {
	return `The reply did not match the JSON schema at "` + path + `": ` + problem +
		`. Answer again with only JSON that matches the schema.`
}

var openAIFormat = map[string]any{"type": "json_schema",
	"json_schema": map[string]any{"name": "structured_output", "strict": true, "schema": orderSchema}}

func wantOrder(t *testing.T, got map[string]any, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "output", got, must(decodeJSON(validOrder))(t))
}

func TestStructuredReply(t *testing.T) {
	stub := newChatStub(t, script(priced(validOrder)))
	out, err := ChatJSON(context.Background(), "extract", stubModel(), "Be exact.", "Read the order.", orderSchema)
	wantOrder(t, out, err)
	equalJSON(t, "request", stub.request(t, 0), map[string]any{
		"model": "stub-model", "temperature": 0.0, "max_tokens": 64.0, "response_format": openAIFormat,
		"messages": []any{chatMsg("system", "Be exact."), chatMsg("user", "Read the order.")},
	})
}

// A reply that does not match is asked for again, with two more messages.
func TestStructuredReplyAskedAgain(t *testing.T) {
	for first, problem := range map[string][2]string{
		`{"total": 3.5, "items": [], "note": ""}`: {"/total", "expected integer"},
		"Sure! " + validOrder:                     {"", "not JSON"},
	} {
		stub := newChatStub(t, script(priced(first), priced(validOrder)))
		out, err := ChatJSON(context.Background(), "extract", stubModel(), "", "Read the order.", orderSchema)
		wantOrder(t, out, err)
		if stub.calls() != 2 {
			t.Fatalf("%d calls", stub.calls())
		}
		second := stub.request(t, 1)
		equalJSON(t, "the second ask's messages", second["messages"], []any{
			chatMsg("user", "Read the order."), chatMsg("assistant", first), chatMsg("user", askedAgain(problem[0], problem[1])),
		})
		equalJSON(t, "the second ask's format", second["response_format"], openAIFormat)
	}
}

// A second reply that does not match fails the run; both asks are counted.
func TestStructuredReplyInvalidTwice(t *testing.T) {
	stub := newChatStub(t, script(priced(`{"total": 1}`), priced(`{"total": 1, "items": [{"name": "pen"}], "note": ""}`)))
	useGraph(t, Budget{}, func(ctx context.Context, st State, _ string) (State, error) {
		_, err := ChatJSON(ctx, "extract", stubModel(), "", "Read the order.", orderSchema)
		return st, err
	})
	_, usage, err := Invoke(bg, askState)
	wantError(t, err, 502, "upstream_error", map[string]any{"node": "extract", "reason": "invalid_output",
		"path": "/items/0/paid", "problem": "missing", "model": "stub-model"},
		`node "extract": the model's reply did not match the output schema at "/items/0/paid": missing`)
	wantUsage(t, usage, Usage{InputTokens: 6, OutputTokens: 10, ModelCalls: 2, Attempts: 2})
	if got := lastUser(stub.request(t, 1)); got != askedAgain("/items", "missing") {
		t.Fatalf("the second ask: %q", got)
	}
}

// The Messages API: the schema is a tool the model must call; its input
// is the reply, written back as JSON when asked again.
func TestStructuredReplyOfAnthropic(t *testing.T) {
	stub := newMessagesStub(t, script(
		wholeReply("tool_use", textBlock("Here it is."), toolUse("toolu_1", "structured_output",
			map[string]any{"total": "3", "items": []any{}, "note": ""})),
		wholeReply("tool_use", toolUse("toolu_2", "structured_output", must(decodeJSON(validOrder))(t).(map[string]any)))))
	out, err := ChatJSON(context.Background(), "extract", claude(), "Be exact.", "Read the order.", orderSchema)
	wantOrder(t, out, err)
	tools := []any{map[string]any{"name": "structured_output", "description": "Answer with this tool's input.", "input_schema": orderSchema}}
	choice := map[string]any{"type": "tool", "name": "structured_output"}
	equalJSON(t, "request", stub.request(t, 0), map[string]any{
		"model": "claude-test", "max_tokens": 4096.0, "system": "Be exact.", "tools": tools, "tool_choice": choice,
		"messages": []any{chatMsg("user", "Read the order.")},
	})
	equalJSON(t, "the second ask", stub.request(t, 1), map[string]any{
		"model": "claude-test", "max_tokens": 4096.0, "system": "Be exact.", "tools": tools, "tool_choice": choice,
		"messages": []any{chatMsg("user", "Read the order."),
			chatMsg("assistant", []any{map[string]any{"type": "text", "text": `{"items":[],"note":"","total":"3"}`}}),
			chatMsg("user", askedAgain("/total", "expected integer"))},
	})

	// A reply without the tool's call: its text is the reply.
	newMessagesStub(t, script(wholeReply("end_turn", textBlock(validOrder))))
	out, err = ChatJSON(context.Background(), "extract", claude(), "", "Read the order.", orderSchema)
	wantOrder(t, out, err)
}

// Each attempt asks in its model's provider's form; the failure names the
// model that answered the second ask.
func TestStructuredReplyFallsBackToTheOtherProvider(t *testing.T) {
	recordSleeps(t)
	fallback := newMessagesStub(t, script(wholeReply("tool_use", toolUse("toolu_1", "structured_output", map[string]any{"total": 1}))))
	primary := newChatStub(t, script(priced(`{}`), http.StatusServiceUnavailable))
	m := withRetry(stubModel(), Retry{MaxAttempts: 1})
	m.Fallbacks = []Model{claude()}
	_, err := ChatJSON(context.Background(), "extract", m, "", "Read the order.", orderSchema)
	wantError(t, err, 502, "upstream_error", map[string]any{"node": "extract", "reason": "invalid_output",
		"path": "/items", "problem": "missing", "model": "claude-test"},
		`node "extract": the model's reply did not match the output schema at "/items": missing`)
	if primary.calls() != 2 || fallback.calls() != 1 {
		t.Fatalf("%d + %d calls", primary.calls(), fallback.calls())
	}
	equalJSON(t, "the primary's format", primary.request(t, 1)["response_format"], openAIFormat)
	body := fallback.request(t, 0)
	if _, ok := body["response_format"]; ok || body["tool_choice"] == nil || body["tools"] == nil {
		t.Fatalf("the fallback's request %v", body)
	}
	if got := lastUser(body); got != askedAgain("/total", "missing") {
		t.Fatalf("the fallback's ask: %q", got)
	}
}

// A structured call of a streamed run is not streamed: no token events.
func TestStructuredReplyIsNeverStreamed(t *testing.T) {
	stub := newChatStub(t, script(priced(validOrder)))
	rc, events := observedRun(t, context.Background())
	out, err := ChatJSON(rc, "extract", stubModel(), "", "Read the order.", orderSchema)
	wantOrder(t, out, err)
	wantOutline(t, *events)
	if _, streamed := stub.request(t, 0)["stream"]; streamed {
		t.Fatal("the call asked for a stream")
	}
}

// The first mismatch, in the order every target finds it.
func TestCheckSchemaOrder(t *testing.T) {
	tags := map[string]any{"type": "object", "properties": map[string]any{
		"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"n":    map[string]any{"type": "number"},
	}, "required": []any{"tags", "n"}, "additionalProperties": false}
	open := map[string]any{"type": "object", "properties": map[string]any{
		"meta": map[string]any{"type": "object"},
		"list": map[string]any{"type": "array"},
	}, "required": []any{"meta", "list"}, "additionalProperties": false}
	cases := []struct {
		schema      map[string]any
		value       string
		path, issue string
	}{
		{orderSchema, validOrder, "", ""},
		{orderSchema, `{"total": 3.0, "items": [], "note": ""}`, "", ""},
		{orderSchema, `{"total": 1e3, "items": [], "note": ""}`, "", ""},
		{orderSchema, `{"total": 12345678901234567890123, "items": [], "note": ""}`, "", ""},
		// The declared order: a nested problem before a later missing one.
		{orderSchema, `{"items": [{"name": 1}]}`, "/total", "missing"},
		{orderSchema, `{"total": 1, "items": [{"name": 1}]}`, "/items/0/name", "expected string"},
		{orderSchema, `{"total": 1, "items": [{"name": "a", "paid": true}, {"paid": 1}]}`, "/items/1/name", "missing"},
		// Unknown keys after the properties, the first in sorted order.
		{orderSchema, `{"zeta": 1, "total": "1", "items": [], "note": ""}`, "/total", "expected integer"},
		{orderSchema, `{"zeta": 1, "Alpha": 2, "total": 1, "items": [], "note": "", "alpha": 3}`, "/Alpha", "not allowed"},
		{orderSchema, `{"total": 1, "items": [], "note": "", "a/b~c": 1}`, "/a~1b~0c", "not allowed"},
		{orderSchema, `{"total": 1, "items": [{"name": "a", "paid": true, "x": 1}], "note": ""}`, "/items/0/x", "not allowed"},
		// Types: integer, booleans, null, the top level.
		{orderSchema, `{"total": 3.5, "items": [], "note": ""}`, "/total", "expected integer"},
		{orderSchema, `{"total": 1e400, "items": [], "note": ""}`, "/total", "expected integer"},
		{orderSchema, `{"total": true, "items": [], "note": ""}`, "/total", "expected integer"},
		{orderSchema, `{"total": null, "items": [], "note": ""}`, "/total", "expected integer"},
		{orderSchema, `{"total": 1, "items": [{"name": "a", "paid": 0}], "note": ""}`, "/items/0/paid", "expected boolean"},
		{orderSchema, `{"total": 1, "items": {}, "note": ""}`, "/items", "expected array"},
		{orderSchema, `[]`, "", "expected object"},
		{orderSchema, `null`, "", "expected object"},
		{tags, `{"tags": ["a", 2, null], "n": 1.5}`, "/tags/1", "expected string"},
		{tags, `{"tags": [], "n": true}`, "/n", "expected number"},
		{tags, `{"tags": [], "n": 1e400}`, "", ""},
		// A request field's schema may hold an open object or an untyped array.
		{open, `{"meta": {"any": 1}, "list": [1, "a", null]}`, "", ""},
		{open, `{"meta": {}, "list": [], "x": 1}`, "/x", "not allowed"},
	}
	for _, c := range cases {
		miss := CheckSchema(c.schema, must(decodeJSON(c.value))(t))
		if (miss == nil) != (c.issue == "") || (miss != nil && (miss.Path != c.path || miss.Problem != c.issue)) {
			t.Errorf("%s: got %+v, want %q %q", c.value, miss, c.path, c.issue)
		}
	}
	// Go values of other kinds than decoded JSON.
	for _, v := range []any{3, int64(3), 3.0} {
		if miss := CheckSchema(orderSchema, map[string]any{"total": v, "items": []any{}, "note": ""}); miss != nil {
			t.Errorf("%T %v: %+v", v, v, miss)
		}
	}
	if miss := CheckSchema(orderSchema, map[string]any{"total": 3.5, "items": []any{}, "note": ""}); miss == nil || miss.Path != "/total" {
		t.Errorf("3.5: %+v", miss)
	}
	for _, text := range []string{"Sure: {}", validOrder + " extra", ""} {
		if _, miss := parseStructured(orderSchema, text); miss == nil || *miss != (SchemaMismatch{"", "not JSON"}) {
			t.Errorf("%q: %+v", text, miss)
		}
	}
}

// A request's value for a field with a schema is checked against it after
// its type; so is a resume value.
func TestStateFieldSchema(t *testing.T) {
	fields := []Field{{Name: "question", Type: TypeString}, {Name: "order", Type: TypeObject, Schema: orderSchema}}
	sc := NewSchema(fields)
	state := func(order string) map[string]any {
		return map[string]any{"question": "q", "order": must(decodeJSON(order))(t)}
	}
	if _, err := sc.newState(state(validOrder)); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.newState(map[string]any{"question": "q"}); err != nil {
		t.Fatalf("an absent field: %v", err)
	}
	_, err := sc.newState(state(`{"total": 1, "items": [{"name": "pen", "paid": "yes"}], "note": ""}`))
	wantError(t, err, 422, "invalid_state", map[string]any{"field": "order", "path": "/items/0/paid"},
		`state field "order" does not match its schema at "/items/0/paid": expected boolean`)
	_, err = sc.newState(state(`[1]`))
	wantError(t, err, 422, "invalid_state", map[string]any{"field": "order"}, `state field "order" must be object`)

	saved := compiled
	t.Cleanup(func() { Register(saved) })
	Register(Compiled{ID: "structured", Fields: fields})
	var answer any
	_ = json.Unmarshal([]byte(`{"total": 1, "items": [], "note": "", "extra": 1}`), &answer)
	wantError(t, checkResume("order", answer), 422, "invalid_state", map[string]any{"field": "order", "path": "/extra"},
		`the resume value for state field "order" does not match its schema at "/extra": not allowed`)
	if err := checkResume("order", must(decodeJSON(validOrder))(t)); err != nil {
		t.Fatal(err)
	}
}
