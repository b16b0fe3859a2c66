package graph

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
)

// The expected texts below are what CPython 3.11 prints for the same values.

func TestPyJSONVectors(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"digest vector", map[string]any{"b": nil, "a": []any{1.0, 1e16, 1e-5, 0.1, "é<\x1b"}},
			`{"a": [1.0, 1e+16, 1e-05, 0.1, "é<\u001b"], "b": null}`},
		{"sorted keys, nested", State{"word": "refund", "meaning": "money back", "n": map[string]any{"z": true, "a": false}},
			`{"meaning": "money back", "n": {"a": false, "z": true}, "word": "refund"}`},
		{"empty containers", map[string]any{"l": []any{}, "m": map[string]any{}}, `{"l": [], "m": {}}`},
		{"nil State is None", State(nil), `null`},
		{"nil map is None", map[string]any(nil), `null`},
		{"nil", nil, `null`},
		{"string escapes", "q\" b\\ \n\r\t\b\f \x00\x1f\x7f <>& \u2028\u2029 😀",
			"\"q\\\" b\\\\ \\n\\r\\t\\b\\f \\u0000\\u001f\x7f <>& \u2028\u2029 😀\""},
		{"ints", []any{0, -7, int64(math.MaxInt64), uint64(math.MaxUint64), int8(-8)}, `[0, -7, 9223372036854775807, 18446744073709551615, -8]`},
		{"json numbers", []any{json.Number("10"), json.Number("-0"), json.Number("1.50"), json.Number("1E2"),
			json.Number("123456789012345678901234567890"), json.Number("1e400"), json.Number("-1e400"), json.Number("1e-400")},
			`[10, 0, 1.5, 100.0, 123456789012345678901234567890, Infinity, -Infinity, 0.0]`},
		{"floats", []any{100.0, 0.0001, 0.00012345, math.Copysign(0, -1), 9999999999999998.0, 1.5e16, 123456789012345678.0, 5e-324, 2.5e-7},
			`[100.0, 0.0001, 0.00012345, -0.0, 9999999999999998.0, 1.5e+16, 1.2345678901234568e+17, 5e-324, 2.5e-07]`},
		{"non-finite", []any{math.NaN(), math.Inf(1), math.Inf(-1)}, `[NaN, Infinity, -Infinity]`},
		{"float32", float32(0.1), `0.1`},
		{"other Go values", map[string]any{"s": []string{"a", "b"}, "m": map[string]int{"y": 2, "x": 1}},
			`{"m": {"x": 1, "y": 2}, "s": ["a", "b"]}`},
		{"bools", []any{true, false}, `[true, false]`},
	}
	for _, c := range cases {
		got, err := pyJSON(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: pyJSON = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestPyJSONUnencodable(t *testing.T) {
	if _, err := pyJSON(map[string]any{"c": make(chan int)}); err == nil ||
		err.Error() != "TypeError: Object of type chan int is not JSON serializable" {
		t.Errorf("a channel: %v", err)
	}
	cycle := map[string]any{}
	cycle["self"] = cycle
	if _, err := pyJSON(cycle); err == nil || err.Error() != "ValueError: Circular reference detected" {
		t.Errorf("a cycle: %v", err)
	}
}

func TestPyJSONASCII(t *testing.T) {
	cases := map[string]string{
		"other":       `"other"`,
		"autre chose": `"autre chose"`,
		"é":           `"\u00e9"`,
		"😀":           `"\ud83d\ude00"`,
		"\x7f<>&\x01": `"\u007f<>&\u0001"`,
		"a\"\\\n":     `"a\"\\\n"`,
		"\u2028ÿ":     `"\u2028\u00ff"`,
	}
	for in, want := range cases {
		if got, _ := pyJSONASCII(in); got != want {
			t.Errorf("pyJSONASCII(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPyRepr(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{" Writer\n", `' Writer\n'`},
		{"it's", `"it's"`},
		{`a"b`, `'a"b'`},
		{`it's "x"`, `'it\'s "x"'`},
		{"", `''`},
		{"back\\slash\ttab\rcr", `'back\\slash\ttab\rcr'`},
		{"\x00\x1b\x7f", `'\x00\x1b\x7f'`},
		{"\u00a0\u00ad\u0085", `'\xa0\xad\x85'`},
		{"\u200b\u2028\u3000\ufeff", `'\u200b\u2028\u3000\ufeff'`},
		{"\ue000\U0010ffff", `'\ue000\U0010ffff'`},
		{"é ΟΔΟΣ 😀 中", `'é ΟΔΟΣ 😀 中'`},
		{nil, `None`},
		{true, `True`},
		{json.Number("3"), `3`},
		{json.Number("1.50"), `1.5`},
		{json.Number("1e400"), `inf`},
		{[]any{json.Number("1"), "[1]", nil, false}, `[1, '[1]', None, False]`},
		{map[string]any{"id": "c", "function": "f"}, `{'function': 'f', 'id': 'c'}`},
		{map[string]any{}, `{}`},
	}
	for _, c := range cases {
		if got := pyRepr(c.in); got != c.want {
			t.Errorf("pyRepr(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := pyStr("plain 'text'"); got != "plain 'text'" {
		t.Errorf("pyStr of a string: %s", got)
	}
	if got := pyStr(nil); got != "None" {
		t.Errorf("pyStr(nil): %s", got)
	}
}

func TestPyStripAndLower(t *testing.T) {
	strips := map[string]string{
		" \t\n\v\f\r\x1c\x1d\x1e\x1f x \u0085\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000": "x",
		"\u200bx\u200b": "\u200bx\u200b", // ZERO WIDTH SPACE is not a space to Python
		"\ufeffx":       "\ufeffx",
		"  ":            "",
		"a b":           "a b",
	}
	for in, want := range strips {
		if got := pyStrip(in); got != want {
			t.Errorf("pyStrip(%q) = %q, want %q", in, got, want)
		}
	}
	lowers := map[string]string{
		"Writer":    "writer",
		"FINISH":    "finish",
		"İ":         "i\u0307",
		"WRİTER":    "wri\u0307ter",
		"ΟΔΟΣ":      "οδος",
		"Σ":         "σ",
		"ΑΣ.Σ":      "ασ.ς",
		"ΣΑ":        "σα",
		"AΣ\u0301B": "aσ\u0301b",
		"\u212a":    "k",
		"ẞ":         "ß",
		"Ǆ":         "ǆ",
	}
	for in, want := range lowers {
		if got := pyLower(in); got != want {
			t.Errorf("pyLower(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPyTruthy(t *testing.T) {
	for _, v := range []any{nil, false, "", json.Number("0"), json.Number("-0.0"), 0.0, 0, []any{}, map[string]any{}} {
		if pyTruthy(v) {
			t.Errorf("%#v must be falsy", v)
		}
	}
	for _, v := range []any{true, " ", json.Number("0.5"), json.Number("1e400"), 1.0, []any{nil}, map[string]any{"": nil}} {
		if !pyTruthy(v) {
			t.Errorf("%#v must be truthy", v)
		}
	}
}

// The helpers below are shared by agents_test.go and intent_test.go.

const (
	stubModelURLEnv = "SVC_TEST_STUB_MODEL_URL"
	stubModelKeyEnv = "SVC_TEST_STUB_MODEL_KEY"
)

// chatStub is an OpenAI-compatible chat-completions server: reply gives
// the reply of each call (numbered from 0) from its request body (a status,
// a text, a JSON value, or an http.HandlerFunc that answers itself); every
// request is recorded.
type chatStub struct {
	url      string
	mu       sync.Mutex
	paths    []string
	headers  []http.Header
	raws     [][]byte
	requests []map[string]any
}

// newChatStub starts the stub and points stubModel's base URL variable at
// it (with a trailing slash, which must be dropped), with a key.
func newChatStub(t *testing.T, reply func(call int, body map[string]any) any) *chatStub {
	t.Helper()
	s := &chatStub{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		n := len(s.requests)
		s.paths = append(s.paths, r.URL.Path)
		s.headers = append(s.headers, r.Header.Clone())
		s.raws = append(s.raws, raw)
		s.requests = append(s.requests, body)
		s.mu.Unlock()
		out := reply(n, body)
		if handle, ok := out.(http.HandlerFunc); ok {
			handle(w, r)
			return
		}
		if status, ok := out.(int); ok {
			w.WriteHeader(status)
			return
		}
		if text, ok := out.(string); ok {
			_, _ = io.WriteString(w, text)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	t.Setenv(stubModelURLEnv, srv.URL+"/v1/")
	t.Setenv(stubModelKeyEnv, "sk-test")
	return s
}

// stubModel is the model of the tests, served by newChatStub.
func stubModel() Model {
	return Model{Name: "stub-model", Temperature: Ptr(0.0), MaxTokens: 64, BaseURLEnv: stubModelURLEnv, APIKeyEnv: stubModelKeyEnv}
}

func (s *chatStub) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *chatStub) request(t *testing.T, i int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.requests) {
		t.Fatalf("the model got %d requests, not %d", len(s.requests), i+1)
	}
	return s.requests[i]
}

// messagesOf is the messages of the i-th request.
func (s *chatStub) messagesOf(t *testing.T, i int) []any {
	t.Helper()
	msgs, ok := s.request(t, i)["messages"].([]any)
	if !ok {
		t.Fatalf("request %d has no messages list", i)
	}
	return msgs
}

// completion is a chat-completions reply carrying message.
func completion(message map[string]any) map[string]any {
	return map[string]any{"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": "stop"}}}
}

// says is a reply whose message content is content.
func says(content any) map[string]any {
	return completion(map[string]any{"role": "assistant", "content": content})
}

// asksTools is a reply with a null content and the tool calls written as
// JSON.
func asksTools(t *testing.T, callsJSON string) map[string]any {
	t.Helper()
	return completion(map[string]any{"role": "assistant", "content": nil, "tool_calls": mustJSON(t, callsJSON)})
}

func mustJSON(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("bad JSON in the test: %v: %s", err, text)
	}
	return v
}

// chatMsg is one chat message as the stub decodes it.
func chatMsg(role string, content any) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// wantError checks an error of the contract.
func wantError(t *testing.T, err error, status int, code string, details map[string]any, message string) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("want a %d %s error, got %T %v", status, code, err, err)
	}
	if e.Status != status || e.Code != code || e.Message != message || !reflect.DeepEqual(e.Details, details) {
		t.Fatalf("got  %d %s %v %q\nwant %d %s %v %q", e.Status, e.Code, e.Details, e.Message, status, code, details, message)
	}
}

// equalJSON compares decoded JSON values and reports both as JSON.
func equalJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s:\ngot  %s\nwant %s", what, g, w)
	}
}

// lastUser is the content of the last user message of a request.
func lastUser(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "user" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}

// systemOf is the content of a request's first message when it is the
// system prompt.
func systemOf(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	if len(msgs) > 0 {
		if m, _ := msgs[0].(map[string]any); m["role"] == "system" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}
