package graph

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// The texts these tests expect are python-svc's (sdk/python/svc/agents/run.py),
// except where a comment says why Go differs (object keys sorted).

// useAgents installs a registry for one test (generated code defines the
// real one).
func useAgents(t *testing.T, as map[string]*Agent, tools map[string]AgentTool) {
	t.Helper()
	oldAgents, oldTools := registeredAgents, registeredTools
	RegisterAgents(as, tools)
	t.Cleanup(func() { RegisterAgents(oldAgents, oldTools) })
}

// toolMessages are the contents of the tool messages of a request, in order.
func toolMessages(body map[string]any) []string {
	var out []string
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		if m, _ := m.(map[string]any); m["role"] == "tool" {
			s, _ := m["content"].(string)
			out = append(out, s)
		}
	}
	return out
}

// recorder is a tool that records its arguments and returns result.
type recorder struct {
	mu   sync.Mutex
	args []map[string]any
}

func (r *recorder) tool(name, description string, result func(args map[string]any) (any, error)) AgentTool {
	return AgentTool{Name: name, Description: description, Call: func(ctx context.Context, args map[string]any) (any, error) {
		r.mu.Lock()
		r.args = append(r.args, args)
		r.mu.Unlock()
		return result(args)
	}}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.args)
}

// httpTool is an HTTP tool as generated code registers one: the arguments
// are POSTed to the URL in env, errors name the tool.
func httpTool(name, description, env string) AgentTool {
	return AgentTool{Name: name, Description: description, Call: func(ctx context.Context, args map[string]any) (any, error) {
		endpoint, err := resolveEndpoint(name, "env:"+env)
		if err != nil {
			return nil, err
		}
		return postJSON(ctx, name, endpoint, nil, 5*time.Second, args)
	}}
}

// crmServer answers {"source": "crm", "asked": <the request>} and records
// the requests.
func crmServer(t *testing.T, env string) *[]any {
	t.Helper()
	var mu sync.Mutex
	got := []any{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got = append(got, body)
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"source": "crm", "asked": body})
	}))
	t.Cleanup(srv.Close)
	t.Setenv(env, srv.URL)
	return &got
}

const researchCalls = `[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"word\":\"refund\"}"}},` +
	`{"id":"c2","type":"function","function":{"name":"crm","arguments":"{\"q\":\"refund\"}"},"extra":[1.5,{"k":null}]}]`

func TestAgentWorkerRunsNativeAndHTTPTools(t *testing.T) {
	crmGot := crmServer(t, "SVC_TEST_CRM_URL")
	lookups := &recorder{}
	useAgents(t, map[string]*Agent{
		"researcher": {Name: "researcher", Kind: "worker", Description: "finds facts",
			Instructions: "You are the analyst. Answer in a concise tone.\n\nYou research.",
			Tools:        []string{"lookup", "crm"}, Model: stubModel(), MaxTurns: 4},
	}, map[string]AgentTool{
		"lookup": lookups.tool("lookup", "Looks a word up.", func(args map[string]any) (any, error) {
			return State{"word": args["word"], "meaning": "money back"}, nil
		}),
		"crm": httpTool("crm", "Asks the CRM.", "SVC_TEST_CRM_URL"),
	})
	ask := asksTools(t, researchCalls)
	stub := newChatStub(t, func(n int, body map[string]any) any {
		if results := toolMessages(body); len(results) > 0 {
			return says("researched: " + strings.Join(results, " + "))
		}
		return ask
	})

	out, err := RunAgent(context.Background(), "ask_worker", "researcher", "What is a refund?", nil)
	if err != nil {
		t.Fatal(err)
	}
	// python-svc keeps the CRM reply's key order ("source" first); Go sorts.
	want := `researched: {"meaning": "money back", "word": "refund"} + {"asked": {"q": "refund"}, "source": "crm"}`
	if out != want {
		t.Fatalf("answer:\ngot  %q\nwant %q", out, want)
	}
	if stub.calls() != 2 {
		t.Fatalf("model calls: %d, want 2", stub.calls())
	}
	if stub.paths[0] != "/v1/chat/completions" {
		t.Errorf("path %q", stub.paths[0])
	}
	h := stub.headers[0]
	if h.Get("Authorization") != "Bearer sk-test" || h.Get("Content-Type") != "application/json" || h.Get("Accept") != "application/json" {
		t.Errorf("headers %v", h)
	}
	system := chatMsg("system", "You are the analyst. Answer in a concise tone.\n\nYou research.")
	user := chatMsg("user", "What is a refund?")
	tools := mustJSON(t, `[
		{"type":"function","function":{"name":"lookup","description":"Looks a word up.","parameters":{"type":"object"}}},
		{"type":"function","function":{"name":"crm","description":"Asks the CRM.","parameters":{"type":"object"}}}]`)
	equalJSON(t, "first request", stub.request(t, 0), map[string]any{
		"model": "stub-model", "temperature": 0.0, "max_tokens": 64.0,
		"messages": []any{system, user}, "tools": tools,
	})
	equalJSON(t, "second request", stub.request(t, 1), map[string]any{
		"model": "stub-model", "temperature": 0.0, "max_tokens": 64.0, "tools": tools,
		"messages": []any{system, user,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": mustJSON(t, researchCalls)},
			map[string]any{"role": "tool", "tool_call_id": "c1", "content": `{"meaning": "money back", "word": "refund"}`},
			map[string]any{"role": "tool", "tool_call_id": "c2", "content": `{"asked": {"q": "refund"}, "source": "crm"}`},
		},
	})
	equalJSON(t, "the CRM's requests", *crmGot, []any{map[string]any{"q": "refund"}})
	equalJSON(t, "lookup's arguments", lookups.args, []map[string]any{{"word": "refund"}})
}

func TestAgentWorkerMessages(t *testing.T) {
	useAgents(t, map[string]*Agent{
		"quiet": {Name: "quiet", Kind: "worker", Instructions: " \n\u3000\x1c", Model: Model{Name: "m", BaseURLEnv: stubModelURLEnv, APIKeyEnv: "SVC_TEST_UNSET_KEY"}, MaxTurns: 8},
	}, map[string]AgentTool{})
	t.Setenv("SVC_TEST_UNSET_KEY", "")
	replies := []any{
		says(nil),
		completion(map[string]any{"content": "done", "tool_calls": []any{}}),
		completion(map[string]any{"tool_calls": nil}),
		says(7),
	}
	stub := newChatStub(t, func(n int, body map[string]any) any { return replies[n] })
	for i, want := range []string{"", "done", "", ""} {
		out, err := RunAgent(context.Background(), "n", "quiet", "", nil)
		if err != nil || out != want {
			t.Fatalf("reply %d: got %q, %v; want %q", i, out, err, want)
		}
	}
	// A blank system prompt is left out, an empty task is sent, no tools
	// key, no temperature or max_tokens when the model has none, no key.
	for i := 0; i < 4; i++ {
		equalJSON(t, "request", stub.request(t, i), map[string]any{"model": "m", "messages": []any{chatMsg("user", "")}})
		if h := stub.headers[i].Get("Authorization"); h != "" {
			t.Errorf("Authorization %q without a key", h)
		}
	}
}

func TestToolLoopLLMNode(t *testing.T) {
	lookups := &recorder{}
	useAgents(t, map[string]*Agent{}, map[string]AgentTool{
		"lookup": lookups.tool("lookup", "", func(args map[string]any) (any, error) { return "found " + args["word"].(string), nil }),
	})
	ask := asksTools(t, `[{"id":"l1","type":"function","function":{"name":"lookup","arguments":"{\"word\":\"again\"}"}}]`)
	stub := newChatStub(t, func(n int, body map[string]any) any {
		if n == 0 {
			return ask
		}
		return says("answer: " + strings.Join(toolMessages(body), ","))
	})
	out, err := ToolLoop(context.Background(), "ask", "Be brief.", []string{"lookup"}, stubModel(), 8, "question")
	if err != nil || out != "answer: found again" {
		t.Fatalf("got %q, %v", out, err)
	}
	equalJSON(t, "first request", stub.request(t, 0), map[string]any{
		"model": "stub-model", "temperature": 0.0, "max_tokens": 64.0,
		"messages": []any{chatMsg("system", "Be brief."), chatMsg("user", "question")},
		// A tool without a description still has the key.
		"tools": mustJSON(t, `[{"type":"function","function":{"name":"lookup","description":"","parameters":{"type":"object"}}}]`),
	})
}

func TestToolLoopMaxTurns(t *testing.T) {
	lookups := &recorder{}
	useAgents(t, map[string]*Agent{
		"looper": {Name: "looper", Kind: "worker", Instructions: "You loop.", Tools: []string{"lookup"}, Model: stubModel(), MaxTurns: 2},
	}, map[string]AgentTool{
		"lookup": lookups.tool("lookup", "Looks a word up.", func(map[string]any) (any, error) { return map[string]any{"child": true}, nil }),
	})
	ask := asksTools(t, `[{"id":"l1","type":"function","function":{"name":"lookup","arguments":"{\"word\":\"again\"}"}}]`)
	stub := newChatStub(t, func(int, map[string]any) any { return ask })

	_, err := RunAgent(context.Background(), "ask_looper", "looper", "Hello", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "looper", "reason": "max_turns"},
		`agent "looper" did not answer within 2 model calls (max_turns)`)
	// The tools of the last turn ran too.
	if stub.calls() != 2 || lookups.count() != 2 {
		t.Fatalf("model calls %d, lookups %d; want 2 and 2", stub.calls(), lookups.count())
	}
	if got := len(stub.messagesOf(t, 1)); got != 4 {
		t.Errorf("the second request has %d messages, want 4 (system, user, assistant, tool)", got)
	}

	_, err = ToolLoop(context.Background(), "ask", "", []string{"lookup"}, stubModel(), 8, "q")
	wantError(t, err, 500, "execution_error", map[string]any{"node": "ask", "reason": "max_turns"},
		`agent "ask" did not answer within 8 model calls (max_turns)`)
	if stub.calls() != 10 || lookups.count() != 10 {
		t.Fatalf("model calls %d, lookups %d; want 10 and 10", stub.calls(), lookups.count())
	}
}

func TestAgentBadToolCalls(t *testing.T) {
	lookups := &recorder{}
	useAgents(t, map[string]*Agent{
		"w":    {Name: "w", Kind: "worker", Tools: []string{"lookup", "crm"}, Model: stubModel(), MaxTurns: 3},
		"bare": {Name: "bare", Kind: "worker", Model: stubModel(), MaxTurns: 3},
	}, map[string]AgentTool{
		"lookup": lookups.tool("lookup", "", func(map[string]any) (any, error) { return "ok", nil }),
		"crm":    lookups.tool("crm", "", func(map[string]any) (any, error) { return "ok", nil }),
	})
	bad := func(message string) map[string]any {
		return map[string]any{"status": 500, "code": "execution_error", "details": map[string]any{"node": "w", "reason": "bad_tool_call"}, "message": message}
	}
	cases := []struct {
		name, agent, calls string
		want               map[string]any
	}{
		// python-svc writes a malformed call's dict in its document order; Go sorts its keys.
		{"no id", "w", `[{"type":"function","function":{"name":"lookup","arguments":"{}"}}]`,
			bad(`agent "w": a malformed tool call {'function': {'arguments': '{}', 'name': 'lookup'}, 'type': 'function'}`)},
		{"function is a string", "w", `[{"id":"c","function":"lookup"}]`,
			bad(`agent "w": a malformed tool call {'function': 'lookup', 'id': 'c'}`)},
		{"no name", "w", `[{"id":"c","function":{"arguments":"{}"}}]`,
			bad(`agent "w": a malformed tool call {'function': {'arguments': '{}'}, 'id': 'c'}`)},
		{"call is a string", "w", `["it's"]`, bad(`agent "w": a malformed tool call "it's"`)},
		{"call is null", "w", `[null]`, bad(`agent "w": a malformed tool call None`)},
		{"tool_calls is an object", "w", `{"b":1,"a":2}`, bad(`agent "w": a malformed tool call 'a'`)},
		{"tool_calls is a string", "w", `"xy"`, bad(`agent "w": a malformed tool call 'x'`)},
		{"unknown tool", "w", `[{"id":"c","function":{"name":"search"}}]`,
			bad(`agent "w" called "search", which is not one of its tools (lookup, crm)`)},
		{"names are case-sensitive", "w", `[{"id":"c","function":{"name":"Lookup"}}]`,
			bad(`agent "w" called "Lookup", which is not one of its tools (lookup, crm)`)},
		{"name is a number", "w", `[{"id":"c","function":{"name":7}}]`,
			bad(`agent "w" called "7", which is not one of its tools (lookup, crm)`)},
		{"name is null", "w", `[{"id":"c","function":{"name":null}}]`,
			bad(`agent "w" called "None", which is not one of its tools (lookup, crm)`)},
		{"a worker without tools", "bare", `[{"id":"c","function":{"name":"lookup"}}]`,
			map[string]any{"status": 500, "code": "execution_error", "details": map[string]any{"node": "bare", "reason": "bad_tool_call"},
				"message": `agent "bare" called "lookup", which is not one of its tools (none)`}},
		{"arguments are a list", "w", `[{"id":"c","function":{"name":"lookup","arguments":"[1]"}}]`,
			bad(`agent "w": the arguments of "lookup" are not a JSON object: '[1]'`)},
		{"arguments are not JSON", "w", `[{"id":"c","function":{"name":"lookup","arguments":"{not json"}}]`,
			bad(`agent "w": the arguments of "lookup" are not a JSON object: '{not json'`)},
		{"arguments with extra data", "w", `[{"id":"c","function":{"name":"lookup","arguments":"{} {}"}}]`,
			bad(`agent "w": the arguments of "lookup" are not a JSON object: '{} {}'`)},
		{"arguments are a JSON list", "w", `[{"id":"c","function":{"name":"lookup","arguments":[1,"a"]}}]`,
			bad(`agent "w": the arguments of "lookup" are not a JSON object: [1, 'a']`)},
		{"arguments are a number", "w", `[{"id":"c","function":{"name":"lookup","arguments":2.50}}]`,
			bad(`agent "w": the arguments of "lookup" are not a JSON object: 2.5`)},
		{"a second call is bad", "w", `[{"id":"c","function":{"name":"lookup"}},{"id":"d","function":{"name":"nope"}}]`,
			bad(`agent "w" called "nope", which is not one of its tools (lookup, crm)`)},
		{"tool_calls is a number", "w", `5`,
			map[string]any{"status": 500, "code": "execution_error", "details": map[string]any{"node": "helper"},
				"message": `node "helper" failed: TypeError: 'int' object is not iterable`}},
		{"tool_calls is true", "w", `true`,
			map[string]any{"status": 500, "code": "execution_error", "details": map[string]any{"node": "helper"},
				"message": `node "helper" failed: TypeError: 'bool' object is not iterable`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ask := asksTools(t, c.calls)
			stub := newChatStub(t, func(int, map[string]any) any { return ask })
			_, err := RunAgent(context.Background(), "helper", c.agent, "task", nil)
			wantError(t, err, c.want["status"].(int), c.want["code"].(string), c.want["details"].(map[string]any), c.want["message"].(string))
			if stub.calls() != 1 {
				t.Errorf("model calls %d, want 1", stub.calls())
			}
		})
	}
	if lookups.count() != 1 {
		t.Errorf("the tools ran %d times, want once (the good first call)", lookups.count())
	}
}

func TestAgentToolArguments(t *testing.T) {
	lookups := &recorder{}
	useAgents(t, map[string]*Agent{
		"w": {Name: "w", Kind: "worker", Tools: []string{"lookup"}, Model: stubModel(), MaxTurns: 2},
	}, map[string]AgentTool{
		"lookup": lookups.tool("lookup", "", func(map[string]any) (any, error) { return "ok", nil }),
	})
	// A missing, null or otherwise falsy value is {}; a string is parsed;
	// an object is used as it is.
	calls := `[{"id":"a","function":{"name":"lookup"}},
		{"id":"b","function":{"name":"lookup","arguments":null}},
		{"id":"c","function":{"name":"lookup","arguments":""}},
		{"id":"d","function":{"name":"lookup","arguments":false}},
		{"id":"e","function":{"name":"lookup","arguments":0}},
		{"id":"f","function":{"name":"lookup","arguments":[]}},
		{"id":"g","function":{"name":"lookup","arguments":{}}},
		{"id":"h","function":{"name":"lookup","arguments":" {\"n\": 1.50, \"n\": 2, \"s\": \"x\"} "}},
		{"id":"i","function":{"name":"lookup","arguments":{"word":"w"}}}]`
	ask := asksTools(t, calls)
	newChatStub(t, func(n int, body map[string]any) any {
		if n == 0 {
			return ask
		}
		return says("done")
	})
	if out, err := RunAgent(context.Background(), "helper", "w", "task", nil); err != nil || out != "done" {
		t.Fatalf("got %q, %v", out, err)
	}
	empty := map[string]any{}
	want := []map[string]any{empty, empty, empty, empty, empty, empty, empty,
		{"n": json.Number("2"), "s": "x"}, {"word": "w"}}
	if !reflect.DeepEqual(lookups.args, want) {
		t.Fatalf("arguments %#v, want %#v", lookups.args, want)
	}
}

func TestAgentToolResults(t *testing.T) {
	results := []any{
		"plain <text> & \"quotes\"",
		nil,
		State(nil),
		[]any{1.0, "é\u2028", json.Number("1.50"), json.Number("10")},
		map[string]any{"z": 1, "a": []string{"x"}},
		true,
		3.0,
	}
	want := []string{
		"plain <text> & \"quotes\"",
		"null",
		"null",
		"[1.0, \"é\u2028\", 1.5, 10]",
		`{"a": ["x"], "z": 1}`,
		"true",
		"3.0",
	}
	useAgents(t, map[string]*Agent{
		"w": {Name: "w", Kind: "worker", Tools: []string{"pick"}, Model: stubModel(), MaxTurns: 2},
	}, map[string]AgentTool{
		"pick": {Name: "pick", Call: func(ctx context.Context, args map[string]any) (any, error) {
			return results[args["i"].(json.Number).String()[0]-'0'], nil
		}},
	})
	// Ids are echoed as they are, whatever their type.
	calls := `[{"id":"r0","function":{"name":"pick","arguments":"{\"i\":0}"}},
		{"id":7,"function":{"name":"pick","arguments":"{\"i\":1}"}},
		{"id":null,"function":{"name":"pick","arguments":"{\"i\":2}"}},
		{"id":"r3","function":{"name":"pick","arguments":"{\"i\":3}"}},
		{"id":"r4","function":{"name":"pick","arguments":"{\"i\":4}"}},
		{"id":"r5","function":{"name":"pick","arguments":"{\"i\":5}"}},
		{"id":"r6","function":{"name":"pick","arguments":"{\"i\":6}"}}]`
	ask := asksTools(t, calls)
	stub := newChatStub(t, func(n int, body map[string]any) any {
		if n == 0 {
			return ask
		}
		return says("done")
	})
	if _, err := RunAgent(context.Background(), "helper", "w", "task", nil); err != nil {
		t.Fatal(err)
	}
	if got := toolMessages(stub.request(t, 1)); !reflect.DeepEqual(got, want) {
		t.Fatalf("tool results:\ngot  %q\nwant %q", got, want)
	}
	msgs := stub.messagesOf(t, 1)
	ids := []any{}
	for _, m := range msgs[2:] {
		if m := m.(map[string]any); m["role"] == "tool" {
			ids = append(ids, m["tool_call_id"])
		}
	}
	equalJSON(t, "tool_call_ids", ids, []any{"r0", 7.0, nil, "r3", "r4", "r5", "r6"})
	// The raw text on the wire holds the result's text as a JSON string.
	if !strings.Contains(string(stub.raws[1]), `"content":"[1.0, \"é`) {
		t.Errorf("raw body: %s", stub.raws[1])
	}
}

func TestAgentToolErrors(t *testing.T) {
	t.Setenv("SVC_TEST_BAD_CRM_URL", "")
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	t.Setenv("SVC_TEST_DOWN_CRM_URL", failing.URL)
	contractErr := UpstreamError("other", ReasonTimeout, "kept as it is")
	useAgents(t, map[string]*Agent{
		"w": {Name: "w", Kind: "worker", Tools: []string{"boom", "panics", "contract", "down", "unset", "chan"}, Model: stubModel(), MaxTurns: 2},
	}, map[string]AgentTool{
		"boom":     {Name: "boom", Call: func(context.Context, map[string]any) (any, error) { return nil, errors.New("boom: it broke") }},
		"panics":   {Name: "panics", Call: func(context.Context, map[string]any) (any, error) { panic("kaput") }},
		"contract": {Name: "contract", Call: func(context.Context, map[string]any) (any, error) { return nil, contractErr }},
		"down":     httpTool("down", "", "SVC_TEST_DOWN_CRM_URL"),
		"unset":    httpTool("unset", "", "SVC_TEST_BAD_CRM_URL"),
		"chan":     {Name: "chan", Call: func(context.Context, map[string]any) (any, error) { return State{"c": make(chan int)}, nil }},
	})
	cases := []struct {
		tool    string
		status  int
		code    string
		details map[string]any
		message string
	}{
		{"boom", 500, "execution_error", map[string]any{"node": "w", "reason": "tool_error"}, `agent "w": tool "boom" failed: boom: it broke`},
		{"panics", 500, "execution_error", map[string]any{"node": "w", "reason": "tool_error"}, `agent "w": tool "panics" failed: kaput`},
		{"contract", 502, "upstream_error", map[string]any{"node": "other", "reason": "timeout"}, "kept as it is"},
		{"down", 502, "upstream_error", map[string]any{"node": "down", "reason": "status", "status": 503}, `node "down": the upstream answered 503`},
		{"unset", 502, "upstream_error", map[string]any{"node": "unset", "reason": "connect"}, `node "unset": the upstream URL variable SVC_TEST_BAD_CRM_URL is not set`},
		{"chan", 500, "execution_error", map[string]any{"node": "helper"}, `node "helper" failed: TypeError: Object of type chan int is not JSON serializable`},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			ask := asksTools(t, `[{"id":"x","function":{"name":"`+c.tool+`","arguments":"{}"}}]`)
			stub := newChatStub(t, func(int, map[string]any) any { return ask })
			_, err := RunAgent(context.Background(), "helper", "w", "task", nil)
			wantError(t, err, c.status, c.code, c.details, c.message)
			if stub.calls() != 1 {
				t.Errorf("a tool error is not fed back to the model: %d calls", stub.calls())
			}
		})
	}
}

func TestAgentForbidden(t *testing.T) {
	useAgents(t, map[string]*Agent{
		"vault": {Name: "vault", Kind: "worker", Instructions: "You guard.", Roles: []string{"admin"}, Model: stubModel(), MaxTurns: 8},
		"ops":   {Name: "ops", Kind: "worker", Roles: []string{"admin", "ops"}, Model: stubModel(), MaxTurns: 8},
	}, map[string]AgentTool{})
	stub := newChatStub(t, func(int, map[string]any) any { return says("opened") })
	cases := []struct {
		agent   string
		roles   []string
		message string
	}{
		{"vault", []string{"support"}, `agent "vault" runs only for the roles admin; the caller holds support`},
		{"vault", nil, `agent "vault" runs only for the roles admin; the caller holds none`},
		{"ops", []string{"zeta", "beta", "beta"}, `agent "ops" runs only for the roles admin, ops; the caller holds beta, beta, zeta`},
	}
	for _, c := range cases {
		_, err := RunAgent(context.Background(), "ask_vault", c.agent, "open", c.roles)
		wantError(t, err, 500, "execution_error", map[string]any{"node": c.agent, "reason": "forbidden"}, c.message)
	}
	if stub.calls() != 0 {
		t.Fatalf("a forbidden agent called the model %d times", stub.calls())
	}
	if out, err := RunAgent(context.Background(), "ask_vault", "ops", "open", []string{"support", "ops"}); err != nil || out != "opened" {
		t.Fatalf("one matching role suffices: %q, %v", out, err)
	}
}

// team builds the e2e's agents: researcher, writer (without a description)
// and the llm-routed supervisor team.
func teamAgents() map[string]*Agent {
	return map[string]*Agent{
		"researcher": {Name: "researcher", Kind: "worker", Description: "finds facts", Instructions: "You research.", Model: stubModel(), MaxTurns: 8},
		"writer":     {Name: "writer", Kind: "worker", Instructions: "You write.", Model: stubModel(), MaxTurns: 8},
		"team": {Name: "team", Kind: "supervisor", Members: []string{"researcher", "writer"}, Instructions: "Route the task.",
			Model: stubModel(), MaxRounds: 10},
	}
}

// teamModel is the e2e's scripted model.
func teamModel(router func(user string) any) func(int, map[string]any) any {
	return func(n int, body map[string]any) any {
		user := lastUser(body)
		switch systemOf(body) {
		case "You research.":
			return says("researched: " + user)
		case "You write.":
			return says("written: " + strings.ReplaceAll(user, "\n", " | "))
		}
		return router(user)
	}
}

func TestSupervisorLLMRouter(t *testing.T) {
	useAgents(t, teamAgents(), map[string]AgentTool{})
	stub := newChatStub(t, teamModel(func(user string) any {
		switch {
		case strings.Contains(user, "writer answered"):
			return says("finish")
		case strings.Contains(user, "researcher answered"):
			return says(" Writer\n")
		}
		return says("researcher")
	}))
	out, err := RunAgent(context.Background(), "ask_team", "team", "What is a refund?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "written: What is a refund? |  | researched: What is a refund?"; out != want {
		t.Fatalf("answer %q, want %q", out, want)
	}
	routing := "Route the task.\nAnswer with exactly one of these names:\n- researcher: finds facts\n- writer\n- finish: the task is done"
	want := [][2]string{
		{routing, "What is a refund?"},
		{"You research.", "What is a refund?"},
		{routing, "What is a refund?\n\nresearcher answered:\nresearched: What is a refund?"},
		{"You write.", "What is a refund?\n\nresearched: What is a refund?"},
		{routing, "What is a refund?\n\nwriter answered:\nwritten: What is a refund? |  | researched: What is a refund?"},
	}
	if stub.calls() != len(want) {
		t.Fatalf("model calls %d, want %d", stub.calls(), len(want))
	}
	for i, w := range want {
		body := stub.request(t, i)
		equalJSON(t, "messages", body["messages"], []any{chatMsg("system", w[0]), chatMsg("user", w[1])})
		if _, ok := body["tools"]; ok {
			t.Errorf("request %d offers tools", i)
		}
	}
}

func TestSupervisorRouterPromptOfTheSDK(t *testing.T) {
	useAgents(t, map[string]*Agent{
		"drafter":  {Name: "drafter", Kind: "worker", Description: "drafts", Instructions: "Draft.", Model: stubModel(), MaxTurns: 8},
		"polisher": {Name: "polisher", Kind: "worker", Description: "polishes", Model: stubModel(), MaxTurns: 8},
		"editor": {Name: "editor", Kind: "supervisor", Members: []string{"drafter", "polisher"}, Instructions: "Route the work.",
			Model: stubModel(), MaxRounds: 3},
	}, map[string]AgentTool{})
	stub := newChatStub(t, func(n int, body map[string]any) any {
		switch {
		case systemOf(body) == "Draft.":
			return says("draft 1")
		case n == 0:
			return says("drafter")
		}
		return says(" FINISH\n")
	})
	out, err := RunAgent(context.Background(), "n", "editor", "write", nil)
	if err != nil || out != "draft 1" {
		t.Fatalf("got %q, %v", out, err)
	}
	equalJSON(t, "first routing", stub.messagesOf(t, 0), []any{
		chatMsg("system", "Route the work.\nAnswer with exactly one of these names:\n- drafter: drafts\n- polisher: polishes\n- finish: the task is done"),
		chatMsg("user", "write"),
	})
	equalJSON(t, "second routing", stub.messagesOf(t, 2)[1], chatMsg("user", "write\n\ndrafter answered:\ndraft 1"))
}

func TestSupervisorBadRouteAndFinish(t *testing.T) {
	agentsNoInstructions := teamAgents()
	agentsNoInstructions["team"].Instructions = ""
	useAgents(t, agentsNoInstructions, map[string]AgentTool{})
	cases := []struct {
		reply any
		repr  string
	}{
		{"nobody", `'nobody'`},
		{"it's me", `"it's me"`},
		{nil, `''`},
		{"researcher\nwriter", `'researcher\nwriter'`},
		{"WRİTER", `'WRİTER'`},
		{"finish it", `'finish it'`},
	}
	for _, c := range cases {
		stub := newChatStub(t, func(int, map[string]any) any { return says(c.reply) })
		_, err := RunAgent(context.Background(), "ask_team", "team", "task", nil)
		wantError(t, err, 500, "execution_error", map[string]any{"node": "team", "reason": "bad_route"},
			`supervisor "team" routed to `+c.repr+`, which is neither one of its members (researcher, writer) nor 'finish'`)
		if stub.calls() != 1 {
			t.Errorf("%v: %d model calls", c.reply, stub.calls())
		}
		// Without instructions the prompt starts with the list.
		if got := systemOf(stub.request(t, 0)); !strings.HasPrefix(got, "Answer with exactly one of these names:\n") {
			t.Errorf("system prompt %q", got)
		}
	}
	// Finish before any member ran answers "".
	stub := newChatStub(t, func(int, map[string]any) any { return says("\u3000Finish\x1f") })
	if out, err := RunAgent(context.Background(), "ask_team", "team", "task", nil); err != nil || out != "" || stub.calls() != 1 {
		t.Fatalf("finish first: %q, %v, %d calls", out, err, stub.calls())
	}
}

func TestSupervisorMaxRounds(t *testing.T) {
	as := teamAgents()
	as["spinner"] = &Agent{Name: "spinner", Kind: "supervisor", Members: []string{"writer"}, MaxRounds: 2,
		Route: func(context.Context, State) (string, error) { return "writer", nil }}
	useAgents(t, as, map[string]AgentTool{})
	stub := newChatStub(t, teamModel(func(string) any { return says("unexpected") }))
	_, err := RunAgent(context.Background(), "ask_spinner", "spinner", "Hello", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "spinner", "reason": "max_rounds"},
		`supervisor "spinner" did not finish within 2 routing decisions (max_rounds)`)
	if stub.calls() != 2 {
		t.Fatalf("the writer ran %d times, want 2", stub.calls())
	}
	// The second run is given the task and the first output only.
	equalJSON(t, "second task", stub.messagesOf(t, 1)[1], chatMsg("user", "Hello\n\nwritten: Hello"))
}

func TestSupervisorCustomRouter(t *testing.T) {
	as := teamAgents()
	var seen []State
	as["pipeline"] = &Agent{Name: "pipeline", Kind: "supervisor", Members: []string{"researcher", "writer"}, MaxRounds: 10,
		Route: func(ctx context.Context, state State) (string, error) {
			seen = append(seen, state.clone())
			state["last_output"] = "scribbled" // the router's copy only
			switch {
			case state.Int("round") == 0:
				return "researcher", nil
			case state.String("last_member") == "researcher":
				return " WRITER ", nil
			}
			return "finish", nil
		}}
	useAgents(t, as, map[string]AgentTool{})
	stub := newChatStub(t, teamModel(func(string) any { return says("unexpected") }))
	out, err := RunAgent(context.Background(), "ask_pipeline", "pipeline", "What is a refund?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "written: What is a refund? |  | researched: What is a refund?"; out != want {
		t.Fatalf("answer %q, want %q", out, want)
	}
	want := []State{
		{"input": "What is a refund?", "round": 0, "last_member": "", "last_output": ""},
		{"input": "What is a refund?", "round": 1, "last_member": "researcher", "last_output": "researched: What is a refund?"},
		{"input": "What is a refund?", "round": 2, "last_member": "writer", "last_output": out},
	}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("router states:\ngot  %v\nwant %v", seen, want)
	}
	if stub.calls() != 2 {
		t.Fatalf("model calls %d, want 2", stub.calls())
	}

	as["pipeline"].Route = func(context.Context, State) (string, error) { return "", errors.New("no way") }
	_, err = RunAgent(context.Background(), "ask_pipeline", "pipeline", "x", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "ask_pipeline"}, `node "ask_pipeline" failed: no way`)

	kept := &Error{Status: 418, Code: "teapot", Message: "kept"}
	as["pipeline"].Route = func(context.Context, State) (string, error) { return "", kept }
	if _, err = RunAgent(context.Background(), "ask_pipeline", "pipeline", "x", nil); err != kept {
		t.Fatalf("a contract error passes as it is: %v", err)
	}
}

func TestPrefixedRoute(t *testing.T) {
	var seen State
	decision, fail := "", error(nil)
	route := PrefixedRoute("sub__", func(ctx context.Context, state State) (string, error) {
		seen = state.clone()
		state["input"] = "scribbled" // the router's copy only
		return decision, fail
	})
	given := State{"input": "task", "round": 1, "last_member": "sub__writer", "last_output": "out"}
	cases := []struct{ decision, want string }{
		{" Finish\n", " Finish\n"},
		{"finish", "finish"},
		{" writer ", "sub__writer"},
		{"", "sub__"},
	}
	for _, c := range cases {
		decision = c.decision
		if got, err := route(context.Background(), given); err != nil || got != c.want {
			t.Fatalf("%q: got %q, %v, want %q", c.decision, got, err, c.want)
		}
	}
	if want := (State{"input": "task", "round": 1, "last_member": "writer", "last_output": "out"}); !reflect.DeepEqual(seen, want) {
		t.Fatalf("the router saw %v, want %v", seen, want)
	}
	if given["last_member"] != "sub__writer" || given["input"] != "task" {
		t.Fatalf("the caller's state changed: %v", given)
	}

	decision, fail = "writer", errors.New("no way")
	if got, err := route(context.Background(), given); err != fail || got != "writer" {
		t.Fatalf("an error passes as it is: %q, %v", got, err)
	}
}

// A supervisor in the subgraph "sub": the registry holds its members as
// sub__<id>, its router's body names them by their ids.
func TestSupervisorCustomRouterInASubgraph(t *testing.T) {
	team := teamAgents()
	as := map[string]*Agent{}
	for _, id := range []string{"researcher", "writer"} {
		a := *team[id]
		a.Name = "sub__" + id
		as[a.Name] = &a
	}
	var lasts []string
	body := func(ctx context.Context, state State) (string, error) {
		lasts = append(lasts, state.String("last_member"))
		switch state.String("last_member") {
		case "":
			return "researcher", nil
		case "researcher":
			return " writer ", nil
		}
		return "FINISH", nil
	}
	as["sub__team"] = &Agent{Name: "sub__team", Kind: "supervisor", Members: []string{"sub__researcher", "sub__writer"},
		MaxRounds: 10, Route: PrefixedRoute("sub__", body)}
	useAgents(t, as, map[string]AgentTool{})
	stub := newChatStub(t, teamModel(func(string) any { return says("unexpected") }))
	out, err := RunAgent(context.Background(), "sub__ask", "sub__team", "What is a refund?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "written: What is a refund? |  | researched: What is a refund?"; out != want {
		t.Fatalf("answer %q, want %q", out, want)
	}
	if want := []string{"", "researcher", "writer"}; !reflect.DeepEqual(lasts, want) {
		t.Fatalf("last members %q, want %q", lasts, want)
	}
	if stub.calls() != 2 {
		t.Fatalf("model calls %d, want 2", stub.calls())
	}

	// "" becomes the prefix alone, as python-svc's wrapper makes it.
	as["sub__team"].Route = PrefixedRoute("sub__", func(context.Context, State) (string, error) { return "", nil })
	_, err = RunAgent(context.Background(), "sub__ask", "sub__team", "x", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "sub__team", "reason": "bad_route"},
		`supervisor "sub__team" routed to 'sub__', which is neither one of its members (sub__researcher, sub__writer) nor 'finish'`)
}

func TestNestedSupervisor(t *testing.T) {
	as := teamAgents()
	as["guarded"] = &Agent{Name: "guarded", Kind: "worker", Instructions: "You research.", Roles: []string{"support"}, Model: stubModel(), MaxTurns: 8}
	as["inner"] = &Agent{Name: "inner", Kind: "supervisor", Members: []string{"guarded"}, MaxRounds: 3,
		Route: func(ctx context.Context, state State) (string, error) {
			if state.String("last_member") == "" {
				return "guarded", nil
			}
			return "finish", nil
		}}
	as["outer"] = &Agent{Name: "outer", Kind: "supervisor", Members: []string{"inner", "writer"}, Roles: []string{"support"},
		Instructions: "Route.", Model: stubModel(), MaxRounds: 4}
	useAgents(t, as, map[string]AgentTool{})
	stub := newChatStub(t, teamModel(func(user string) any {
		switch {
		case strings.Contains(user, "writer answered"):
			return says("finish")
		case strings.Contains(user, "inner answered"):
			return says("writer")
		}
		return says("inner")
	}))
	out, err := RunAgent(context.Background(), "ask_outer", "outer", "Q", []string{"support"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "written: Q |  | researched: Q"; out != want {
		t.Fatalf("answer %q, want %q", out, want)
	}
	// A member without a description is listed by its name alone.
	if got := systemOf(stub.request(t, 0)); got != "Route.\nAnswer with exactly one of these names:\n- inner\n- writer\n- finish: the task is done" {
		t.Errorf("routing prompt %q", got)
	}
	equalJSON(t, "second routing", stub.messagesOf(t, 2)[1], chatMsg("user", "Q\n\ninner answered:\nresearched: Q"))

	// The caller's roles are checked again for every member, at any depth.
	as["outer"].Roles = nil
	_, err = RunAgent(context.Background(), "ask_outer", "outer", "Q", []string{"billing"})
	wantError(t, err, 500, "execution_error", map[string]any{"node": "guarded", "reason": "forbidden"},
		`agent "guarded" runs only for the roles support; the caller holds billing`)
}

// peerServer is another svc service: reply gives its answer to each
// request, which is recorded.
type peerServer struct {
	mu      sync.Mutex
	paths   []string
	keys    []string
	bodies  []any
	reply   func(w http.ResponseWriter, r *http.Request)
	srv     *httptest.Server
	baseURL string
}

func newPeer(t *testing.T) *peerServer {
	p := &peerServer{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body any
		_ = json.Unmarshal(raw, &body)
		p.mu.Lock()
		p.paths = append(p.paths, r.URL.Path)
		p.keys = append(p.keys, r.Header.Get("X-API-Key"))
		p.bodies = append(p.bodies, body)
		reply := p.reply
		p.mu.Unlock()
		reply(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *peerServer) answer(status int, body string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reply = func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func TestRemoteAgent(t *testing.T) {
	peer := newPeer(t)
	t.Setenv("SVC_TEST_PEER_URL", peer.srv.URL+"/base//")
	t.Setenv("SVC_TEST_PEER_KEY", "peer-key-93ab")
	as := map[string]*Agent{
		"peer": {Name: "peer", Kind: "remote", URL: "env:SVC_TEST_PEER_URL", KeyEnv: "SVC_TEST_PEER_KEY",
			InputField: "question", OutputField: "answer", Timeout: 20 * time.Second},
		"literal": {Name: "literal", Kind: "remote", URL: peer.srv.URL, InputField: "input", OutputField: "output", Timeout: 20 * time.Second},
	}
	useAgents(t, as, map[string]AgentTool{})
	ctx := context.Background()

	peer.answer(200, `{"result":{"answer":"peer says Hello","question":"Hello"}}`)
	out, err := RunAgent(ctx, "ask_peer", "peer", "Hello", nil)
	if err != nil || out != "peer says Hello" {
		t.Fatalf("got %q, %v", out, err)
	}
	if peer.paths[0] != "/base/invoke" || peer.keys[0] != "peer-key-93ab" {
		t.Errorf("path %q, key %q", peer.paths[0], peer.keys[0])
	}
	equalJSON(t, "request", peer.bodies[0], map[string]any{"state": map[string]any{"question": "Hello"}})

	peer.answer(200, `{"result":{"output":{"b":[1.50,true,"é<"],"a":null}}}`)
	if out, err = RunAgent(ctx, "n", "literal", "Hi", nil); err != nil || out != `{"a": null, "b": [1.5, true, "é<"]}` {
		t.Fatalf("a non-string output: %q, %v", out, err)
	}
	if peer.paths[1] != "/invoke" || peer.keys[1] != "" {
		t.Errorf("path %q, key %q", peer.paths[1], peer.keys[1])
	}
	equalJSON(t, "request", peer.bodies[1], map[string]any{"state": map[string]any{"input": "Hi"}})

	failures := []struct {
		status  int
		body    string
		details map[string]any
		message string
	}{
		{200, `{"result":{}}`, map[string]any{"node": "peer", "reason": "invalid_json"}, `agent "peer": the reply has no result.answer`},
		{200, `{"result":{"answer":null}}`, map[string]any{"node": "peer", "reason": "invalid_json"}, `agent "peer": the reply has no result.answer`},
		{200, `{"result":"peer says"}`, map[string]any{"node": "peer", "reason": "invalid_json"}, `agent "peer": the reply has no result.answer`},
		{200, `[1]`, map[string]any{"node": "peer", "reason": "invalid_json"}, `agent "peer": the reply has no result.answer`},
		{200, `{"result":`, map[string]any{"node": "peer", "reason": "invalid_json"}, `node "peer": the upstream reply is not valid JSON`},
		{401, `{"error":{}}`, map[string]any{"node": "peer", "reason": "status", "status": 401}, `node "peer": the upstream answered 401`},
	}
	for _, f := range failures {
		peer.answer(f.status, f.body)
		_, err := RunAgent(ctx, "ask_peer", "peer", "Hello", nil)
		wantError(t, err, 502, "upstream_error", f.details, f.message)
	}

	// The agent's own timeout.
	peer.mu.Lock()
	peer.reply = func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}
	peer.mu.Unlock()
	as["peer"].Timeout = 50 * time.Millisecond
	_, err = RunAgent(ctx, "ask_peer", "peer", "Hello", nil)
	wantError(t, err, 502, "upstream_error", map[string]any{"node": "peer", "reason": "timeout"}, `node "peer": the upstream call timed out`)

	t.Setenv("SVC_TEST_PEER_URL", "ftp://peer")
	_, err = RunAgent(ctx, "ask_peer", "peer", "Hello", nil)
	wantError(t, err, 502, "upstream_error", map[string]any{"node": "peer", "reason": "connect"},
		`node "peer": the upstream URL (the value of SVC_TEST_PEER_URL) is not an http(s) URL`)

	// Unset variables are the node's configuration errors. The URL is
	// checked before the credential.
	t.Setenv("SVC_TEST_PEER_KEY", "")
	_, err = RunAgent(ctx, "ask_peer", "peer", "Hello", nil)
	wantError(t, err, 502, "upstream_error", map[string]any{"node": "peer", "reason": "connect"},
		`node "peer": the upstream URL (the value of SVC_TEST_PEER_URL) is not an http(s) URL`)
	t.Setenv("SVC_TEST_PEER_URL", peer.srv.URL)
	_, err = RunAgent(ctx, "ask_peer", "peer", "Hello", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "ask_peer"},
		`node "ask_peer" failed: ConfigError: the credential of agent "peer" is not set: it reads the environment variable SVC_TEST_PEER_KEY; set it in the environment`)
	t.Setenv("SVC_TEST_PEER_URL", "")
	_, err = RunAgent(ctx, "ask_peer", "peer", "Hello", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "ask_peer"},
		`node "ask_peer" failed: ConfigError: the URL of agent "peer" is not set: it reads the environment variable SVC_TEST_PEER_URL; set it in the environment`)

	// Roles apply to remote agents too.
	as["literal"].Roles = []string{"admin"}
	_, err = RunAgent(ctx, "n", "literal", "Hi", []string{"support"})
	wantError(t, err, 500, "execution_error", map[string]any{"node": "literal", "reason": "forbidden"},
		`agent "literal" runs only for the roles admin; the caller holds support`)
}

func TestAgentModelFailures(t *testing.T) {
	useAgents(t, teamAgents(), map[string]AgentTool{})
	recordSleeps(t)
	// Every failure names the model and the attempts made: a reply that is
	// not a chat completion is not tried again, a 500 or a 429 is, 3 times.
	cases := []struct {
		agent   string
		reply   any
		details map[string]any
		message string
	}{
		{"writer", map[string]any{"id": "x"}, map[string]any{"node": "writer", "reason": "invalid_json", "model": "stub-model", "attempts": 1}, `node "writer": the model reply has no choices[0].message`},
		{"writer", map[string]any{"choices": []any{}}, map[string]any{"node": "writer", "reason": "invalid_json", "model": "stub-model", "attempts": 1}, `node "writer": the model reply has no choices[0].message`},
		{"writer", completion(nil), map[string]any{"node": "writer", "reason": "invalid_json", "model": "stub-model", "attempts": 1}, `node "writer": the model reply has no choices[0].message`},
		{"writer", map[string]any{"choices": []any{map[string]any{"message": "hi"}}}, map[string]any{"node": "writer", "reason": "invalid_json", "model": "stub-model", "attempts": 1}, `node "writer": the model reply has no choices[0].message`},
		{"writer", "not json", map[string]any{"node": "writer", "reason": "invalid_json", "model": "stub-model", "attempts": 1}, `node "writer": the upstream reply is not valid JSON`},
		{"writer", 500, map[string]any{"node": "writer", "reason": "status", "status": 500, "model": "stub-model", "attempts": 3}, `node "writer": the upstream answered 500`},
		{"team", 429, map[string]any{"node": "team", "reason": "status", "status": 429, "model": "stub-model", "attempts": 3}, `node "team": the upstream answered 429`},
		{"team", map[string]any{}, map[string]any{"node": "team", "reason": "invalid_json", "model": "stub-model", "attempts": 1}, `node "team": the model reply has no choices[0].message`},
	}
	for _, c := range cases {
		newChatStub(t, func(int, map[string]any) any { return c.reply })
		_, err := RunAgent(context.Background(), "helper", c.agent, "task", nil)
		wantError(t, err, 502, "upstream_error", c.details, c.message)
	}
	// An unset base URL variable falls back to the default endpoint; an
	// invalid one is a connect error naming the agent, before any attempt.
	t.Setenv(stubModelURLEnv, "not a url")
	_, err := RunAgent(context.Background(), "helper", "writer", "task", nil)
	wantError(t, err, 502, "upstream_error", map[string]any{"node": "writer", "reason": "connect", "model": "stub-model", "attempts": 0},
		`node "writer": the upstream URL ("not a url/chat/completions") is not an http(s) URL`)
}

func TestAgentRunDeadline(t *testing.T) {
	useAgents(t, teamAgents(), map[string]AgentTool{})
	newChatStub(t, func(int, map[string]any) any {
		time.Sleep(300 * time.Millisecond)
		return says("late")
	})
	// The run's deadline cuts the model call: the run's end, not an
	// upstream error (python-svc answers 504 deadline_exceeded).
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := RunAgent(ctx, "ask", "writer", "task", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := ToolLoop(ctx, "ask", "", nil, stubModel(), 8, "task"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
}

func TestAgentUnknown(t *testing.T) {
	useAgents(t, map[string]*Agent{"fx": {Name: "fx", Kind: "telepathy"}}, map[string]AgentTool{})
	_, err := RunAgent(context.Background(), "ask", "nobody", "task", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "ask"}, `node "ask" failed: no agent is registered as "nobody"`)
	_, err = RunAgent(context.Background(), "ask", "fx", "task", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "ask"}, `node "ask" failed: agent "fx" has the kind "telepathy", which this service cannot run`)
}

// Agents of kind a2a run through what package a2a registers
// (RegisterA2ACall), its reply the agent's; without it they are of a kind
// this service cannot run.
func TestA2AAgentsRunThroughTheRegisteredCall(t *testing.T) {
	peer := &Agent{Name: "peer", Kind: "a2a", CardURL: "http://peer.example", SkillID: "convert"}
	useAgents(t, map[string]*Agent{"peer": peer}, map[string]AgentTool{})
	saved := callA2A
	t.Cleanup(func() { callA2A = saved })
	callA2A = nil
	_, err := RunAgent(context.Background(), "ask", "peer", "task", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "ask"}, `node "ask" failed: agent "peer" has the kind "a2a", which this service cannot run`)
	RegisterA2ACall(func(ctx context.Context, node string, a *Agent, task string) (string, error) {
		if node != "ask" || a != peer || task != "100 EUR in CHF?" {
			t.Fatalf("called with %q %+v %q", node, a, task)
		}
		return "91 CHF", nil
	})
	out, err := RunAgent(context.Background(), "ask", "peer", "100 EUR in CHF?", nil)
	if err != nil || out != "91 CHF" {
		t.Fatalf("%q %v", out, err)
	}
	RegisterA2ACall(func(context.Context, string, *Agent, string) (string, error) {
		return "", UpstreamError("peer", ReasonConnect, "A2A agent \"peer\": cannot reach it")
	})
	_, err = RunAgent(context.Background(), "ask", "peer", "task", nil)
	wantError(t, err, 502, "upstream_error", map[string]any{"node": "peer", "reason": "connect"}, `A2A agent "peer": cannot reach it`)
}
