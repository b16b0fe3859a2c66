package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Streamed runs of agents and tool-calling llm nodes (docs/http-contract.md,
// "Agents and tool-calling llm nodes"). The model stubs answer a request
// asking for a stream with SSE chunks and any other with a whole reply, so
// a streamed run can be held to the JSON run of the same script.

// observedRun is a streamed run's context whose events are recorded.
func observedRun(t *testing.T, parent context.Context) (*runContext, *[]Event) {
	events := &[]Event{}
	rc := newRunContext(parent, deadlineFar())
	rc.observe = func(e Event) { *events = append(*events, e) }
	t.Cleanup(rc.release)
	return rc, events
}

// outline is the events as "<type> <node> <delta or reason>".
func outline(events []Event) []string {
	out := []string{}
	for _, e := range events {
		switch e.Type {
		case "token":
			out = append(out, fmt.Sprintf("token %s %s", e.Node, e.Data["delta"]))
		case "tokens_discarded":
			out = append(out, fmt.Sprintf("tokens_discarded %s %s", e.Node, e.Data["reason"]))
		default:
			out = append(out, e.Type+" "+e.Node)
		}
	}
	return out
}

// writtenByTokens is what a client keeps of node's text: the deltas after
// its last tokens_discarded.
func writtenByTokens(events []Event, node string) string {
	var b strings.Builder
	for _, e := range events {
		if e.Node != node {
			continue
		}
		switch e.Type {
		case "token":
			b.WriteString(e.Data["delta"].(string))
		case "tokens_discarded":
			b.Reset()
		}
	}
	return b.String()
}

func wantOutline(t *testing.T, events []Event, want ...string) {
	t.Helper()
	if got := outline(events); !reflect.DeepEqual(got, append([]string{}, want...)) {
		t.Fatalf("events\n got  %q\n want %q", got, want)
	}
}

// sse is a model's stream of chunks: a string is written as it is, any
// other value as JSON; it ends with data: [DONE] when done.
func sse(done bool, chunks ...any) string {
	var b strings.Builder
	b.WriteString(": a comment, then an event name and an id, all ignored\nevent: chunk\nid: 1\n")
	for _, c := range chunks {
		line, ok := c.(string)
		if !ok {
			raw, _ := json.Marshal(c)
			line = string(raw)
		}
		b.WriteString("data: " + line + "\n\n")
	}
	if done {
		b.WriteString("data: [DONE]\n\n")
	}
	return b.String()
}

// deltaChunk is a chunk carrying delta.
func deltaChunk(delta map[string]any) map[string]any {
	return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}}
}

// chunksOf streams a whole message as providers do: a role, the content in
// two pieces, each call's head (id, type, name), then the arguments in
// halves interleaved across the calls, and the finish reason.
func chunksOf(msg map[string]any) []any {
	out := []any{deltaChunk(map[string]any{"role": "assistant"})}
	if content, _ := msg["content"].(string); content != "" {
		h := len(content) / 2
		out = append(out, deltaChunk(map[string]any{"content": content[:h]}), deltaChunk(map[string]any{"content": content[h:]}))
	}
	calls, _ := msg["tool_calls"].([]any)
	args := []string{}
	for i, c := range calls {
		call := c.(map[string]any)
		fn := call["function"].(map[string]any)
		out = append(out, deltaChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": call["id"], "type": call["type"], "function": map[string]any{"name": fn["name"], "arguments": ""}}}}))
		args = append(args, fn["arguments"].(string))
	}
	for half := 0; half < 2; half++ {
		for i, a := range args {
			part := a[:len(a)/2]
			if half == 1 {
				part = a[len(a)/2:]
			}
			out = append(out, deltaChunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}))
		}
	}
	return append(out, map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
}

// replyWith answers a request with msg: streamed when it asks for a stream.
func replyWith(body map[string]any, msg map[string]any) any {
	if body["stream"] == true {
		return sse(true, chunksOf(msg)...)
	}
	return completion(msg)
}

func assistant(content any, calls ...any) map[string]any {
	msg := map[string]any{"role": "assistant", "content": content}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	return msg
}

func toolCall(id, name, arguments string) any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": arguments}}
}

// asksStream reports whether the i-th request asked for a stream, and
// fails on a "stream" other than true.
func asksStream(t *testing.T, stub *chatStub, i int) bool {
	t.Helper()
	v, ok := stub.request(t, i)["stream"]
	if ok && v != true {
		t.Fatalf("request %d: stream %v", i, v)
	}
	return ok
}

func helperAgents(tools ...string) map[string]*Agent {
	return map[string]*Agent{
		"helper": {Name: "helper", Kind: "worker", Instructions: "You help.", Tools: tools, Model: stubModel(), MaxTurns: 4},
	}
}

func lookupTool() map[string]AgentTool {
	return map[string]AgentTool{"lookup": {Name: "lookup", Description: "Looks a word up.",
		Call: func(_ context.Context, args map[string]any) (any, error) {
			return "meaning of " + Text(args["word"]), nil
		}}}
}

func TestTurnStreamReassemblesToolCalls(t *testing.T) {
	useAgents(t, helperAgents("lookup"), lookupTool())
	asked := assistant("Let me check.",
		toolCall("h1", "lookup", `{"word": "refund"}`), toolCall("h2", "lookup", `{"word": "return"}`))
	stub := newChatStub(t, func(n int, body map[string]any) any {
		if results := toolMessages(body); len(results) > 0 {
			return replyWith(body, assistant("helped: "+strings.Join(results, " + ")))
		}
		return replyWith(body, asked)
	})
	whole, err := RunAgent(context.Background(), "ask", "helper", "What is a refund?", nil)
	if err != nil {
		t.Fatal(err)
	}
	rc, events := observedRun(t, context.Background())
	out, err := RunAgent(rc, "ask", "helper", "What is a refund?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out != whole || out != "helped: meaning of refund + meaning of return" {
		t.Fatalf("streamed %q, whole %q", out, whole)
	}
	// The tokens are the graph node's; the preamble is withdrawn when the
	// calls start.
	wantOutline(t, *events,
		"token ask Let me", "token ask  check.", "tokens_discarded ask tool_calls",
		"token ask helped: meaning of ref", "token ask und + meaning of return")
	if got := writtenByTokens(*events, "ask"); got != out {
		t.Fatalf("the tokens write %q, the node %q", got, out)
	}
	// The echoed message is the JSON run's, byte for byte once decoded.
	if asksStream(t, stub, 0) || asksStream(t, stub, 1) || !asksStream(t, stub, 2) || !asksStream(t, stub, 3) {
		t.Fatal("only the streamed run's requests ask for a stream")
	}
	equalJSON(t, "echoed message", stub.messagesOf(t, 3)[2], stub.messagesOf(t, 1)[2])
	equalJSON(t, "echoed message", stub.messagesOf(t, 3)[2], mustJSON(t, `{"role":"assistant","content":"Let me check.","tool_calls":[`+
		`{"id":"h1","type":"function","function":{"name":"lookup","arguments":"{\"word\": \"refund\"}"}},`+
		`{"id":"h2","type":"function","function":{"name":"lookup","arguments":"{\"word\": \"return\"}"}}]}`))
	if h := stub.headers[2]; h.Get("Accept") != "text/event-stream" || h.Get("Authorization") != "Bearer sk-test" {
		t.Fatalf("streamed request headers %v", h)
	}
}

func TestStreamedTurnAssembly(t *testing.T) {
	var turn streamedTurn
	feed := func(data string) (string, bool) {
		t.Helper()
		content, starts, err := turn.add([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		return content, starts
	}
	if c, starts := feed(`{"choices":[{"delta":{"role":"assistant","content":"Hi"}}]}`); c != "Hi" || starts {
		t.Fatalf("content %q, starts calling %v", c, starts)
	}
	// An empty list or a null piece is no call.
	if _, starts := feed(`{"choices":[{"delta":{"tool_calls":[]}}]}`); starts {
		t.Fatal("no piece starts calling")
	}
	if _, starts := feed(`{"choices":[{"delta":{"tool_calls":[null]}}]}`); starts {
		t.Fatal("a null piece starts calling")
	}
	// Pieces without an index take their position (a null one counts);
	// indexes sort the calls; the first non-empty id and type are kept;
	// names and arguments are joined.
	if c, starts := feed(`{"choices":[{"delta":{"content":" there","tool_calls":[null,{"id":"","function":{"name":"look"}}]}}]}`); c != " there" || !starts {
		t.Fatalf("content %q, starts calling %v", c, starts)
	}
	if _, starts := feed(`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b1","type":"","function":{"name":"up","arguments":"{\"a\""}},` +
		`{"index":0,"id":"a0","type":"custom","function":{"arguments":null}}]}}]}`); starts {
		t.Fatal("only the first pieces start calling")
	}
	feed(`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b2","type":"function","function":{"arguments":": 1}"}}]}}]}`)
	feed(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`)
	feed(`{"choices":[],"usage":{"total_tokens":9}}`)
	equalJSON(t, "message", turn.message(), map[string]any{"role": "assistant", "content": "Hi there", "tool_calls": []any{
		map[string]any{"id": "a0", "type": "custom", "function": map[string]any{}},
		map[string]any{"id": "b1", "type": "function", "function": map[string]any{"name": "lookup", "arguments": `{"a": 1}`}},
	}})
	if want := len("Hi there") + len("lookup") + len(`{"a": 1}`) + len("b1a0customb2function"); turn.size != want {
		t.Fatalf("size %d, want %d", turn.size, want)
	}

	// No content piece is a null content; a call nobody named keeps no id
	// ("" is none) or name, so it is a malformed call.
	var bare streamedTurn
	for _, data := range []string{`{"choices":[{"delta":{"role":"assistant","content":null}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"","type":"","function":{"arguments":"{}"}}]}}]}`} {
		if _, _, err := bare.add([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	equalJSON(t, "message", bare.message(), map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
		map[string]any{"type": "function", "function": map[string]any{"arguments": "{}"}},
	}})
	// Null is absent, everywhere; choices after the first are not read.
	var empty streamedTurn
	for _, data := range []string{`{}`, `{"choices":null}`, `{"choices":[null]}`, `{"choices":[{"delta":null}]}`, `{"choices":[{}, 3]}`,
		`{"choices":[{"delta":{"content":""}}]}`, `{"choices":[{"delta":{"tool_calls":null,"content":null}}]}`} {
		if c, starts, err := empty.add([]byte(data)); err != nil || c != "" || starts {
			t.Fatalf("%s: %q, %v, %v", data, c, starts, err)
		}
	}
	// An empty text is no text.
	equalJSON(t, "message", empty.message(), map[string]any{"role": "assistant", "content": nil})
}

func TestWorkerStreamsOnlyItsReply(t *testing.T) {
	useAgents(t, helperAgents("lookup"), lookupTool())
	// A tool turn without content sends nothing, so nothing is discarded.
	stub := newChatStub(t, func(n int, body map[string]any) any {
		if results := toolMessages(body); len(results) > 0 {
			return replyWith(body, assistant("looked up: "+strings.Join(results, ", ")))
		}
		return replyWith(body, assistant(nil, toolCall("l1", "lookup", `{"word":"refund"}`)))
	})
	rc, events := observedRun(t, context.Background())
	out, err := ToolLoop(rc, "look_up", "You look up.", []string{"lookup"}, stubModel(), 8, "refund")
	if err != nil || out != "looked up: meaning of refund" {
		t.Fatalf("got %q, %v", out, err)
	}
	wantOutline(t, *events, "token look_up looked up: mea", "token look_up ning of refund")
	if !asksStream(t, stub, 0) || !asksStream(t, stub, 1) {
		t.Fatal("every turn of a streamed tool loop asks for a stream")
	}

	// A plain worker streams its reply.
	newChatStub(t, func(n int, body map[string]any) any { return replyWith(body, assistant("Hello there")) })
	rc, events = observedRun(t, context.Background())
	if out, err := RunAgent(rc, "ask", "helper", "Hi", nil); err != nil || out != "Hello there" {
		t.Fatalf("got %q, %v", out, err)
	}
	wantOutline(t, *events, "token ask Hello", "token ask  there")

	// max_turns still ends a loop that only calls tools.
	newChatStub(t, func(n int, body map[string]any) any {
		return replyWith(body, assistant("Again.", toolCall("l1", "lookup", `{}`)))
	})
	rc, events = observedRun(t, context.Background())
	_, err = RunAgent(rc, "ask", "helper", "Hi", nil)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "helper", "reason": "max_turns"},
		`agent "helper" did not answer within 4 model calls (max_turns)`)
	if n := strings.Count(strings.Join(outline(*events), "\n"), "tokens_discarded ask tool_calls"); n != 4 {
		t.Fatalf("%d discards for 4 preambles: %q", n, outline(*events))
	}

	// A JSON run has no replies: nothing to send, the turn is whole.
	if ctx := context.Background(); withReplies(ctx, "ask") != ctx {
		t.Fatal("a run that does not stream has replies")
	}
}

func TestSupervisorDiscardsBetweenMembers(t *testing.T) {
	useAgents(t, teamAgents(), map[string]AgentTool{})
	stub := newChatStub(t, func(n int, body map[string]any) any {
		user := lastUser(body)
		switch systemOf(body) {
		case "You research.":
			return replyWith(body, assistant("researched: "+user))
		case "You write.":
			return replyWith(body, assistant("written: "+strings.ReplaceAll(user, "\n", " | ")))
		}
		if _, ok := body["stream"]; ok {
			return http.StatusInternalServerError
		}
		switch {
		case strings.Contains(user, "writer answered"):
			return says("finish")
		case strings.Contains(user, "researcher answered"):
			return says("writer")
		}
		return says("researcher")
	})
	rc, events := observedRun(t, context.Background())
	out, err := RunAgent(rc, "ask_team", "team", "Q?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out != "written: Q? |  | researched: Q?" {
		t.Fatalf("answer %q", out)
	}
	wantOutline(t, *events,
		"token ask_team researc", "token ask_team hed: Q?", "tokens_discarded ask_team next_member",
		"token ask_team written: Q? |  ", "token ask_team | researched: Q?")
	if got := writtenByTokens(*events, "ask_team"); got != out {
		t.Fatalf("the tokens write %q, the node %q", got, out)
	}
	for i := 0; i < stub.calls(); i++ {
		routing := strings.HasPrefix(systemOf(stub.request(t, i)), "Route the task.")
		if asksStream(t, stub, i) == routing {
			t.Fatalf("request %d (routing %v) asks for a stream: %v", i, routing, !routing)
		}
	}

	// A member that sent nothing leaves nothing to discard.
	as := teamAgents()
	as["team"].Route = func(_ context.Context, s State) (string, error) {
		return map[string]string{"": "researcher", "researcher": "writer", "writer": "finish"}[s.String("last_member")], nil
	}
	useAgents(t, as, map[string]AgentTool{})
	newChatStub(t, func(n int, body map[string]any) any {
		if systemOf(body) == "You research." {
			return replyWith(body, assistant(nil))
		}
		return replyWith(body, assistant("done"))
	})
	rc, events = observedRun(t, context.Background())
	if out, err := RunAgent(rc, "ask_team", "team", "Q?", nil); err != nil || out != "done" {
		t.Fatalf("got %q, %v", out, err)
	}
	wantOutline(t, *events, "token ask_team do", "token ask_team ne")
}

func TestRemoteAgentAnswerIsOneToken(t *testing.T) {
	peer := newPeer(t)
	as := teamAgents()
	as["peer"] = &Agent{Name: "peer", Kind: "remote", URL: peer.srv.URL, InputField: "question", OutputField: "answer", Timeout: 5 * time.Second}
	as["team"].Members = []string{"researcher", "peer"}
	as["team"].Route = func(_ context.Context, s State) (string, error) {
		return map[string]string{"": "researcher", "researcher": "peer", "peer": "finish"}[s.String("last_member")], nil
	}
	useAgents(t, as, map[string]AgentTool{})
	newChatStub(t, func(n int, body map[string]any) any { return replyWith(body, assistant("researched: "+lastUser(body))) })

	peer.answer(200, `{"result":{"answer":"peer says Hello"}}`)
	rc, events := observedRun(t, context.Background())
	if out, err := RunAgent(rc, "ask_peer", "peer", "Hello", nil); err != nil || out != "peer says Hello" {
		t.Fatalf("got %q, %v", out, err)
	}
	wantOutline(t, *events, "token ask_peer peer says Hello")

	// A supervisor whose last member is remote: its answer stands.
	rc, events = observedRun(t, context.Background())
	out, err := RunAgent(rc, "ask_team", "team", "Q", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOutline(t, *events, "token ask_team resear", "token ask_team ched: Q",
		"tokens_discarded ask_team next_member", "token ask_team peer says Hello")
	if got := writtenByTokens(*events, "ask_team"); got != out {
		t.Fatalf("the tokens write %q, the node %q", got, out)
	}

	// An empty answer or a failure sends nothing.
	for _, reply := range []string{`{"result":{"answer":""}}`, `{"result":{}}`} {
		peer.answer(200, reply)
		rc, events = observedRun(t, context.Background())
		_, _ = RunAgent(rc, "ask_peer", "peer", "Hello", nil)
		wantOutline(t, *events)
	}
}

func TestTurnStreamFailures(t *testing.T) {
	useAgents(t, helperAgents(), map[string]AgentTool{})
	sleeps := recordSleeps(t)
	notAChunk := `node "helper": a chunk of the model's stream is not a chat-completion chunk`
	piece := func(p string) string { return `{"choices":[{"delta":{"tool_calls":[` + p + `]}}]}` }
	bigArgs := piece(`{"index":0,"id":"c","function":{"name":"f","arguments":"` + strings.Repeat("a", 3<<20) + `"}}`)
	bigContent := `{"choices":[{"delta":{"content":"` + strings.Repeat("c", 1100<<10) + `"}}]}`
	cases := []struct {
		name, reason, message string
		reply                 any
	}{
		{"index as text", "invalid_json", notAChunk, sse(true, piece(`{"index":"0"}`))},
		{"negative index", "invalid_json", notAChunk, sse(true, piece(`{"index":-1}`))},
		{"index true", "invalid_json", notAChunk, sse(true, piece(`{"index":true}`))},
		{"float index", "invalid_json", notAChunk, sse(true, piece(`{"index":1.5}`))},
		{"index 1.0", "invalid_json", notAChunk, sse(true, piece(`{"index":1.0}`))},
		{"index past int32", "invalid_json", notAChunk, sse(true, piece(`{"index":2147483648}`))},
		{"function 3", "invalid_json", notAChunk, sse(true, piece(`{"index":0,"function":3}`))},
		{"arguments object", "invalid_json", notAChunk, sse(true, piece(`{"index":0,"function":{"arguments":{}}}`))},
		{"name number", "invalid_json", notAChunk, sse(true, piece(`{"index":0,"function":{"name":1}}`))},
		{"id number", "invalid_json", notAChunk, sse(true, piece(`{"index":0,"id":5}`))},
		{"type bool", "invalid_json", notAChunk, sse(true, piece(`{"index":0,"type":false}`))},
		{"piece not an object", "invalid_json", notAChunk, sse(true, piece(`3`))},
		{"tool_calls object", "invalid_json", notAChunk, sse(true, `{"choices":[{"delta":{"tool_calls":{}}}]}`)},
		{"content number", "invalid_json", notAChunk, sse(true, `{"choices":[{"delta":{"content":3}}]}`)},
		{"delta text", "invalid_json", notAChunk, sse(true, `{"choices":[{"delta":"hi"}]}`)},
		{"choice not an object", "invalid_json", notAChunk, sse(true, `{"choices":[3]}`)},
		{"choices object", "invalid_json", notAChunk, sse(true, `{"choices":{}}`)},
		{"chunk null", "invalid_json", notAChunk, sse(true, `null`)},
		{"chunk list", "invalid_json", notAChunk, sse(true, `[1]`)},
		{"not JSON", "invalid_json", notAChunk, sse(true, `{"choices":`)},
		{"empty data", "invalid_json", notAChunk, sse(true, ``)},
		{"no [DONE]", "connect", `node "helper": the model's stream ended before [DONE]`,
			sse(false, deltaChunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "c1", "function": map[string]any{"name": "f"}}}}))},
		{"reply over 4 MiB", "too_large", `node "helper": the model's reply is larger than 4194304 bytes`, sse(true, bigContent, bigArgs)},
		{"line over 4 MiB", "too_large", `node "helper": a line of the model's stream is larger than 4194304 bytes`,
			sse(true, `{"choices":[{"delta":{"content":"`+strings.Repeat("x", 4<<20)+`"}}]}`)},
		{"status", "status", `node "helper": the upstream answered 503`, http.StatusServiceUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			newChatStub(t, func(int, map[string]any) any { return c.reply })
			rc, _ := observedRun(t, context.Background())
			_, err := RunAgent(rc, "ask", "helper", "task", nil)
			// A reply that is not a chat-completion stream is not tried
			// again; a cut stream (no [DONE]) and a 503 are, 3 times.
			details := map[string]any{"node": "helper", "reason": c.reason, "model": "stub-model", "attempts": 1}
			if c.reason == "status" {
				details["status"] = http.StatusServiceUnavailable
			}
			if c.reason == "status" || c.reason == "connect" {
				details["attempts"] = 3
			}
			wantError(t, err, 502, "upstream_error", details, c.message)
		})
	}

	if len(*sleeps) != 4 {
		t.Fatalf("waits between attempts: %v", *sleeps)
	}

	// The run's deadline cuts a stream under way: the run's end.
	newChatStub(t, func(int, map[string]any) any {
		time.Sleep(300 * time.Millisecond)
		return sse(true, deltaChunk(map[string]any{"content": "late"}))
	})
	rc := newRunContext(context.Background(), time.Now().Add(50*time.Millisecond))
	rc.observe = func(Event) {}
	defer rc.release()
	if _, err := RunAgent(rc, "ask", "helper", "task", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
}

// A long reply streams many small chunks, each with its envelope: only a
// line and the text kept are bounded, not the stream.
func TestTurnStreamLongStreamIsNotConnect(t *testing.T) {
	useAgents(t, helperAgents(), map[string]AgentTool{})
	chunk, _ := json.Marshal(map[string]any{"id": "chatcmpl-0123456789abcdefghijklmnop", "object": "chat.completion.chunk",
		"created": 1700000000, "model": "stub-model", "system_fingerprint": "fp_0123456789",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": "x"}, "logprobs": nil, "finish_reason": nil}}})
	line := "data: " + string(chunk) + "\n\n"
	n := (10 << 20) / len(line)
	stream := strings.Repeat(line, n) + "data: [DONE]\n\n"
	newChatStub(t, func(int, map[string]any) any { return stream })

	rc, events := observedRun(t, context.Background())
	out, err := RunAgent(rc, "ask", "helper", "task", nil)
	if err != nil || out != strings.Repeat("x", n) || len(*events) != n {
		t.Fatalf("agent: %d bytes, %d events, %v", len(out), len(*events), err)
	}
	rc, events = observedRun(t, context.Background())
	text, err := Chat(rc, "answer", stubModel(), "", "task")
	if err != nil || text != strings.Repeat("x", n) || len(*events) != n {
		t.Fatalf("llm: %d bytes, %d events, %v", len(text), len(*events), err)
	}
}

func TestCancelledTurnStopsTheLoop(t *testing.T) {
	useAgents(t, helperAgents("lookup"), lookupTool())
	var requests atomic.Int32
	closed := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, sse(false, deltaChunk(map[string]any{"content": "Hel"}), deltaChunk(map[string]any{"content": "lo"})))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			select {
			case closed <- time.Now():
			default:
			}
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	t.Setenv(stubModelURLEnv, srv.URL)

	// The client leaves (the stream's writer cancels the run) after the
	// second token: the call is cut, and no later turn is asked for.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var left time.Time
	rc := newRunContext(ctx, deadlineFar())
	tokens := 0
	rc.observe = func(e Event) {
		if tokens++; tokens == 2 {
			left = time.Now()
			cancel()
		}
	}
	defer rc.release()
	if _, err := RunAgent(rc, "ask", "helper", "task", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("want the run's end, got %v", err)
	}
	select {
	case at := <-closed:
		if d := at.Sub(left); d > time.Second {
			t.Fatalf("the model's connection closed %v after the client left", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the model's connection stays open")
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}

	// A tool during which the client leaves: no further tool or model call.
	ran := 0
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	useAgents(t, helperAgents("leave"), map[string]AgentTool{"leave": {Name: "leave",
		Call: func(context.Context, map[string]any) (any, error) { ran++; cancel(); return "left", nil }}})
	stub := newChatStub(t, func(n int, body map[string]any) any {
		return replyWith(body, assistant(nil, toolCall("a", "leave", "{}"), toolCall("b", "leave", "{}")))
	})
	rc2, _ := observedRun(t, ctx)
	if _, err := RunAgent(rc2, "ask", "helper", "task", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("want the run's end, got %v", err)
	}
	if ran != 1 || stub.calls() != 1 {
		t.Fatalf("%d tool calls and %d model calls after the client left, want 1 and 1", ran, stub.calls())
	}
}

func TestToolsAndRoutersAreMuted(t *testing.T) {
	as := map[string]*Agent{
		"inner": {Name: "inner", Kind: "worker", Instructions: "You help inside.", Model: stubModel(), MaxTurns: 2},
		"outer": {Name: "outer", Kind: "worker", Instructions: "You help.", Tools: []string{"consult"}, Model: stubModel(), MaxTurns: 3},
		"boss": {Name: "boss", Kind: "supervisor", Members: []string{"outer"}, MaxRounds: 3,
			Route: func(ctx context.Context, s State) (string, error) {
				// A router that runs an agent sends nothing of it.
				if _, err := RunAgent(ctx, "route", "inner", "which?", nil); err != nil {
					return "", err
				}
				if s.String("last_member") == "" {
					return "outer", nil
				}
				return "finish", nil
			}},
	}
	useAgents(t, as, map[string]AgentTool{"consult": {Name: "consult",
		Call: func(ctx context.Context, args map[string]any) (any, error) {
			// Nor does a tool, whether it runs an agent or asks a model.
			said, err := RunAgent(ctx, "consult", "inner", "consulted", nil)
			if err != nil {
				return nil, err
			}
			asked, err := Chat(ctx, "consult", stubModel(), "", "again")
			return said + "/" + asked, err
		}}})
	stub := newChatStub(t, func(n int, body map[string]any) any {
		switch systemOf(body) {
		case "You help inside.":
			return replyWith(body, assistant("inner says"))
		case "You help.":
			if results := toolMessages(body); len(results) > 0 {
				return replyWith(body, assistant("outer: "+results[0]))
			}
			return replyWith(body, assistant(nil, toolCall("c", "consult", "{}")))
		}
		return replyWith(body, assistant("plain"))
	})
	rc, events := observedRun(t, context.Background())
	out, err := RunAgent(rc, "ask", "boss", "task", nil)
	if err != nil || out != "outer: inner says/plain" {
		t.Fatalf("got %q, %v", out, err)
	}
	wantOutline(t, *events, "token ask outer: inne", "token ask r says/plain")
	for i := 0; i < stub.calls(); i++ {
		if asksStream(t, stub, i) != (systemOf(stub.request(t, i)) == "You help.") {
			t.Fatalf("request %d: only the member's turns stream", i)
		}
	}

	// The replies follow the observer: a subgraph's child does not see it.
	hidden := context.WithValue(withReplies(rc, "ask"), observerKey{}, Observer(nil))
	if repliesOf(hidden) != nil || repliesOf(muted(withReplies(rc, "ask"))) != nil {
		t.Fatal("code that does not see the observer has replies")
	}
}
