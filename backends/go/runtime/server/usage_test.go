package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"svc.dev/runtime/graph"
)

// Every answer of a run that asked a model carries the run's usage: the
// result, the interrupt, the error envelope, the terminal events of a
// stream. (How calls are counted, and the budget: graph's usage_test.go.)

// usageModel is the model of these tests, served by modelStub.
var usageModel = graph.Model{Name: "m", BaseURLEnv: "SVC_TEST_USAGE_MODEL_URL"}

// costs is a reply of modelStub: the tokens it reports.
type costs struct{ input, output int }

// modelStub answers the n-th chat call with replies[n]: a status, or a
// reply reporting its costs, whole or, when asked for a stream, as a
// token and then the usage chunk. It returns the requests it got.
func modelStub(t *testing.T, replies ...any) func() []map[string]any {
	var mu sync.Mutex
	var requests []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		requests = append(requests, body)
		reply := replies[len(requests)-1]
		mu.Unlock()
		c, ok := reply.(costs)
		if !ok {
			w.WriteHeader(reply.(int))
			return
		}
		usage := fmt.Sprintf(`"usage":{"prompt_tokens":%d,"completion_tokens":%d}`, c.input, c.output)
		if body["stream"] == true {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: {\"choices\":[],%s}\n\ndata: [DONE]\n\n", usage)
			return
		}
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":"ok"}}],%s}`, usage)
	}))
	t.Cleanup(srv.Close)
	t.Setenv(usageModel.BaseURLEnv, srv.URL)
	return func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return requests
	}
}

// useGraph registers, for one test, a graph of the stub's fields whose run
// is run, with budget.
func useGraph(t *testing.T, budget graph.Budget, run func(ctx context.Context, st graph.State, from string) (graph.State, error)) {
	saved := *graph.Registered()
	t.Cleanup(func() { graph.Register(saved) })
	graph.Register(graph.Compiled{ID: "usage", Fields: saved.Fields, Entry: "first", Run: run, MaxSteps: 25,
		RequestTimeout: time.Minute, Budget: budget})
}

// askTwice is a run of two llm nodes.
func askTwice(ctx context.Context, st graph.State, _ string) (graph.State, error) {
	for _, node := range []string{"first", "second"} {
		if _, err := graph.Chat(ctx, node, usageModel, "", "hi"); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// askPauseAsk calls the model, pauses at the hitl node review and, resumed,
// calls it again.
func askPauseAsk(ctx context.Context, st graph.State, from string) (graph.State, error) {
	if from == "first" {
		if _, err := graph.Chat(ctx, "first", usageModel, "", "hi"); err != nil {
			return nil, err
		}
	}
	if err := graph.Step(ctx, st, "review", func(ctx context.Context, _ graph.State) (graph.State, error) {
		return graph.HITL(ctx, "review", "reply", map[string]any{"ok?": true})
	}, false); err != nil {
		return nil, err
	}
	_, err := graph.Chat(ctx, "second", usageModel, "", "hi")
	return st, err
}

// post sends body to /invoke, as a stream when stream, and returns the
// status and the JSON answer, or the data of the stream's last event.
func post(t *testing.T, h http.Handler, body string, stream bool) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/invoke", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if stream {
		r.Header.Set("Accept", "text/event-stream")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var answer map[string]any
	if !stream {
		if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil {
			t.Fatalf("%d %q: %v", w.Code, w.Body, err)
		}
		return w.Code, answer
	}
	for lines := bufio.NewScanner(w.Body); lines.Scan(); {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			var event map[string]any
			if err := json.Unmarshal([]byte(data), &event); err != nil {
				t.Fatal(err)
			}
			answer = event
		}
	}
	data, _ := answer["data"].(map[string]any)
	data["type"] = answer["type"]
	return w.Code, data
}

// usage is a usage as an answer writes it, decoded.
func usage(input, output, calls, attempts float64) map[string]any {
	return map[string]any{"inputTokens": input, "outputTokens": output, "modelCalls": calls, "attempts": attempts}
}

func wantAnswer(t *testing.T, what string, got any, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s:\ngot  %s\nwant %s", what, g, w)
	}
}

const askBody = `{"state": {"question": "q"}}`

func TestTheResultCarriesTheUsage(t *testing.T) {
	// A model-free graph's answers (the stub graph's) have no usage.
	for _, body := range []string{askBody, `{"question": "q"}`} {
		if status, answer := post(t, New(Config{Auth: "none"}), body, false); status != 200 || answer["usage"] != nil {
			t.Fatalf("a model-free run: %d %v", status, answer)
		}
	}
	modelStub(t, costs{3, 5}, costs{7, 11})
	useGraph(t, graph.Budget{}, askTwice)
	status, answer := post(t, New(Config{Auth: "none"}), askBody, false)
	if status != 200 || answer["result"] == nil {
		t.Fatalf("%d %v", status, answer)
	}
	wantAnswer(t, "usage", answer["usage"], usage(10, 16, 2, 2))
}

func TestTheErrorEnvelopeCarriesTheUsage(t *testing.T) {
	modelStub(t, costs{3, 5}, http.StatusBadRequest)
	useGraph(t, graph.Budget{}, askTwice)
	status, answer := post(t, New(Config{Auth: "none"}), askBody, false)
	if status != 502 || answer["error"].(map[string]any)["code"] != "upstream_error" {
		t.Fatalf("%d %v", status, answer)
	}
	wantAnswer(t, "usage", answer["usage"], usage(3, 5, 2, 2))

	// A spent budget, and an error before the run starts (no usage).
	modelStub(t, costs{3, 5})
	useGraph(t, graph.Budget{MaxModelCalls: 1}, askTwice)
	status, answer = post(t, New(Config{Auth: "none"}), askBody, false)
	wantAnswer(t, "a spent budget", []any{status, answer}, []any{500, map[string]any{
		"error": map[string]any{"code": "execution_error", "message": `node "second": the run's budget is spent (maxModelCalls 1, used 1)`,
			"details": map[string]any{"node": "second", "reason": "budget_exceeded", "budget": "maxModelCalls", "limit": 1.0, "used": 1.0}},
		"usage": usage(3, 5, 1, 1)}})
	if status, answer = post(t, New(Config{Auth: "none"}), `{"state": {}}`, false); status != 422 || answer["usage"] != nil {
		t.Fatalf("an invalid state: %d %v", status, answer)
	}
}

// The terminal events carry it: run_finished, run_failed, interrupted.
func TestTheStreamsLastEventCarriesTheUsage(t *testing.T) {
	requests := modelStub(t, costs{3, 5}, costs{7, 11})
	useGraph(t, graph.Budget{}, askTwice)
	_, data := post(t, New(Config{Auth: "none"}), askBody, true)
	if data["type"] != "run_finished" || data["result"] == nil {
		t.Fatalf("last event %v", data)
	}
	wantAnswer(t, "run_finished usage", data["usage"], usage(10, 16, 2, 2))
	for i, r := range requests() {
		wantAnswer(t, fmt.Sprint("request ", i), r["stream_options"], map[string]any{"include_usage": true})
	}

	modelStub(t, costs{3, 5}, http.StatusBadRequest)
	if _, data = post(t, New(Config{Auth: "none"}), askBody, true); data["type"] != "run_failed" {
		t.Fatalf("last event %v", data)
	}
	wantAnswer(t, "run_failed usage", data["usage"], usage(3, 5, 2, 2))

	modelStub(t, costs{3, 5})
	useGraph(t, graph.Budget{}, askPauseAsk)
	if _, data = post(t, NewThreaded(Config{Auth: "none"}, graph.NewMemoryThreads(graph.ThreadOptions{})), askBody, true); data["type"] != "interrupted" {
		t.Fatalf("last event %v", data)
	}
	wantAnswer(t, "interrupted usage", data["usage"], usage(3, 5, 1, 1))
}

// A resumed thread's answer has the whole run's usage.
func TestAThreadsAnswersCarryTheWholeRunsUsage(t *testing.T) {
	modelStub(t, costs{3, 5}, costs{7, 11})
	useGraph(t, graph.Budget{}, askPauseAsk)
	h := NewThreaded(Config{Auth: "none"}, graph.NewMemoryThreads(graph.ThreadOptions{}))
	status, answer := post(t, h, askBody, false)
	if status != 200 || answer["interrupt"] == nil || answer["threadId"] == nil {
		t.Fatalf("%d %v", status, answer)
	}
	wantAnswer(t, "the interrupt's usage", answer["usage"], usage(3, 5, 1, 1))
	status, answer = post(t, h, fmt.Sprintf(`{"threadId": %q, "resume": "yes"}`, answer["threadId"]), false)
	if status != 200 || answer["result"] == nil {
		t.Fatalf("%d %v", status, answer)
	}
	wantAnswer(t, "the resumed run's usage", answer["usage"], usage(10, 16, 2, 2))
}
