package graph

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// A run's usage and budget (settings.budget): what the run's model calls
// are counted as, and where the budget stops them. The answers that carry
// the usage are package server's tests.

// useGraph registers, for one test, a graph of the stub's fields whose run
// is run, with budget.
func useGraph(t *testing.T, budget Budget, run func(ctx context.Context, st State, from string) (State, error)) {
	saved := compiled
	t.Cleanup(func() { Register(saved) })
	Register(Compiled{ID: "usage", Fields: saved.Fields, Entry: "first", Run: run, MaxSteps: 25,
		RequestTimeout: time.Minute, Budget: budget})
}

// costs is a reply of the chat stub reporting its tokens.
func costs(input, output int) map[string]any {
	reply := says("ok")
	reply["usage"] = map[string]any{"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}
	return reply
}

// askTwice is a run of two llm nodes, first and second.
func askTwice(ctx context.Context, st State, _ string) (State, error) {
	for _, node := range []string{"first", "second"} {
		if _, err := Chat(ctx, node, stubModel(), "", "hi"); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// askState is a state of the stub's fields.
var askState = map[string]any{"question": "q"}

func wantUsage(t *testing.T, got *Usage, want Usage) {
	t.Helper()
	if got == nil || *got != want {
		t.Fatalf("usage %+v, want %+v", got, want)
	}
}

func TestUsageSumsTheRunsCalls(t *testing.T) {
	newChatStub(t, script(costs(3, 5), costs(7, 11)))
	useGraph(t, Budget{}, askTwice)
	_, usage, err := Invoke(bg, askState)
	if err != nil {
		t.Fatal(err)
	}
	wantUsage(t, usage, Usage{InputTokens: 10, OutputTokens: 16, ModelCalls: 2, Attempts: 2})
}

// Retries and fallbacks are attempts of one call; a failed attempt
// reports no tokens.
func TestARetriedCallIsOneCall(t *testing.T) {
	recordSleeps(t)
	newChatStub(t, script(answer(http.StatusServiceUnavailable), costs(3, 5)))
	useGraph(t, Budget{}, func(ctx context.Context, st State, _ string) (State, error) {
		_, err := Chat(ctx, "first", stubModel(), "", "hi")
		return st, err
	})
	_, usage, err := Invoke(bg, askState)
	if err != nil {
		t.Fatal(err)
	}
	wantUsage(t, usage, Usage{InputTokens: 3, OutputTokens: 5, ModelCalls: 1, Attempts: 2})
}

func TestAModelFreeRunHasNoUsage(t *testing.T) {
	if _, usage, err := Invoke(bg, askState); err != nil || usage != nil {
		t.Fatalf("the stub graph: usage %+v, %v", usage, err)
	}
}

// A subgraph node's child runs in its parent's run.
func TestAChildGraphsCallsCountInTheParentsUsage(t *testing.T) {
	newChatStub(t, script(costs(3, 5), costs(7, 11)))
	useGraph(t, Budget{}, func(ctx context.Context, st State, _ string) (State, error) {
		if _, err := Chat(ctx, "first", stubModel(), "", "hi"); err != nil {
			return nil, err
		}
		_, err := RunChild(ctx, "sub", childSchema(), func(ctx context.Context, child State) (State, error) {
			_, err := Chat(ctx, "inner", stubModel(), "", "hi")
			return child, err
		}, map[string]any{"q": "hi"})
		return st, err
	})
	_, usage, err := Invoke(bg, askState)
	if err != nil {
		t.Fatal(err)
	}
	wantUsage(t, usage, Usage{InputTokens: 10, OutputTokens: 16, ModelCalls: 2, Attempts: 2})
}

// A streamed call asks for the usage chunk and counts what it reports.
func TestAStreamedCallCountsItsUsageChunk(t *testing.T) {
	stub := newChatStub(t, script(sse(true, deltaChunk(map[string]any{"content": "ok"}),
		map[string]any{"choices": []any{}, "usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 5}})))
	useGraph(t, Budget{}, func(ctx context.Context, st State, _ string) (State, error) {
		_, err := Chat(ctx, "first", stubModel(), "", "hi")
		return st, err
	})
	var tokens int
	_, usage, err := RunObserved(bg, State(askState), func(e Event) {
		if e.Type == "token" {
			tokens++
		}
	})
	if err != nil || tokens != 1 {
		t.Fatalf("%d tokens sent: %v", tokens, err)
	}
	wantUsage(t, usage, Usage{InputTokens: 3, OutputTokens: 5, ModelCalls: 1, Attempts: 1})
	equalJSON(t, "stream_options", stub.request(t, 0)["stream_options"], map[string]any{"include_usage": true})
}

// An agent's turns count whether they stream or not.
func TestAnAgentsTurnsCount(t *testing.T) {
	useAgents(t, helperAgents(), nil)
	newChatStub(t, func(_ int, body map[string]any) any {
		if body["stream"] == true {
			return sse(true, deltaChunk(map[string]any{"content": "ok"}),
				map[string]any{"choices": []any{}, "usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 5}})
		}
		return costs(3, 5)
	})
	useGraph(t, Budget{}, func(ctx context.Context, st State, _ string) (State, error) {
		_, err := RunAgent(ctx, "ask", "helper", "hi", nil)
		return st, err
	})
	for _, stream := range []Observer{nil, func(Event) {}} {
		_, usage, err := RunObserved(bg, State(askState), stream)
		if err != nil {
			t.Fatal(err)
		}
		wantUsage(t, usage, Usage{InputTokens: 3, OutputTokens: 5, ModelCalls: 1, Attempts: 1})
	}
}

func TestTheBudgetStopsTheRun(t *testing.T) {
	budgetError := func(node, budget string, limit, used int64) map[string]any {
		return map[string]any{"node": node, "reason": "budget_exceeded", "budget": budget, "limit": limit, "used": used}
	}
	cases := []struct {
		name    string
		budget  Budget
		details map[string]any
		message string
		usage   Usage
	}{
		{"the calls are spent: the second never starts", Budget{MaxModelCalls: 1},
			budgetError("second", "maxModelCalls", 1, 1), `node "second": the run's budget is spent (maxModelCalls 1, used 1)`,
			Usage{InputTokens: 3, OutputTokens: 5, ModelCalls: 1, Attempts: 1}},
		{"the first reply passes maxTokens", Budget{MaxTokens: 7},
			budgetError("first", "maxTokens", 7, 8), `node "first": the run's budget is spent (maxTokens 7, used 8)`,
			Usage{InputTokens: 3, OutputTokens: 5, ModelCalls: 1, Attempts: 1}},
		{"the tokens reached maxTokens: the second never starts", Budget{MaxTokens: 8},
			budgetError("second", "maxTokens", 8, 8), `node "second": the run's budget is spent (maxTokens 8, used 8)`,
			Usage{InputTokens: 3, OutputTokens: 5, ModelCalls: 1, Attempts: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stub := newChatStub(t, script(costs(3, 5)))
			useGraph(t, c.budget, askTwice)
			_, usage, err := Invoke(bg, askState)
			wantError(t, err, 500, "execution_error", c.details, c.message)
			wantUsage(t, usage, c.usage)
			if stub.calls() != 1 {
				t.Fatalf("the model got %d calls", stub.calls())
			}
		})
	}
}

// A failed run's usage counts the calls before the failure and the failed
// call's attempt.
func TestAFailedRunHasItsUsage(t *testing.T) {
	newChatStub(t, script(costs(3, 5), answer(http.StatusBadRequest)))
	useGraph(t, Budget{}, askTwice)
	_, usage, err := Invoke(bg, askState)
	if code(err) != "upstream_error" {
		t.Fatalf("the second call: %v", err)
	}
	wantUsage(t, usage, Usage{InputTokens: 3, OutputTokens: 5, ModelCalls: 2, Attempts: 2})
}

// A run paused at a hitl node and resumed is one run: its counts go on
// from the pause, in every store; a new state on the thread is a new run.
func TestAResumedThreadGoesOnCounting(t *testing.T) {
	eachKind(t, func(t *testing.T, open opener) {
		s := open(ThreadOptions{})
		newChatStub(t, script(costs(3, 5), costs(7, 11), costs(1, 1)))
		useGraph(t, Budget{}, func(ctx context.Context, st State, from string) (State, error) {
			if from == "first" {
				if _, err := Chat(ctx, "first", stubModel(), "", "hi"); err != nil {
					return nil, err
				}
			}
			if err := Step(ctx, st, "review", func(ctx context.Context, _ State) (State, error) {
				return HITL(ctx, "review", "reply", map[string]any{"ok?": true})
			}, false); err != nil {
				return nil, err
			}
			_, err := Chat(ctx, "second", stubModel(), "", "hi")
			return st, err
		})
		run := must(StartThread(bg, s, "t1", askState))(t)
		_, in, usage, err := run.Run(bg, nil)
		if err != nil || in == nil {
			t.Fatalf("the run did not pause: %v", err)
		}
		wantUsage(t, usage, Usage{InputTokens: 3, OutputTokens: 5, ModelCalls: 1, Attempts: 1})

		run = must(ResumeThread(bg, s, "t1", "yes"))(t)
		if _, _, usage, err = run.Run(bg, nil); err != nil {
			t.Fatal(err)
		}
		wantUsage(t, usage, Usage{InputTokens: 10, OutputTokens: 16, ModelCalls: 2, Attempts: 2})

		// A new run counts from 0.
		run = must(StartThread(bg, s, "t1", askState))(t)
		if _, _, usage, _ = run.Run(bg, nil); usage == nil || usage.ModelCalls != 1 {
			t.Fatalf("a new state on the thread: usage %+v", usage)
		}
	})
}

func TestTheBudgetHoldsAcrossAResume(t *testing.T) {
	s := NewMemoryThreads(ThreadOptions{})
	stub := newChatStub(t, script(costs(3, 5)))
	useGraph(t, Budget{MaxModelCalls: 1}, func(ctx context.Context, st State, from string) (State, error) {
		if from == "first" {
			if _, err := Chat(ctx, "first", stubModel(), "", "hi"); err != nil {
				return nil, err
			}
			return nil, &Interrupt{Node: "review", Field: "reply", Value: "ok?"}
		}
		_, err := Chat(ctx, "second", stubModel(), "", "hi")
		return st, err
	})
	run := must(StartThread(bg, s, "t1", askState))(t)
	if _, in, _, err := run.Run(bg, nil); in == nil {
		t.Fatalf("the run did not pause: %v", err)
	}
	run = must(ResumeThread(bg, s, "t1", "yes"))(t)
	_, _, usage, err := run.Run(bg, nil)
	wantError(t, err, 500, "execution_error",
		map[string]any{"node": "second", "reason": "budget_exceeded", "budget": "maxModelCalls", "limit": int64(1), "used": int64(1)},
		`node "second": the run's budget is spent (maxModelCalls 1, used 1)`)
	wantUsage(t, usage, Usage{InputTokens: 3, OutputTokens: 5, ModelCalls: 1, Attempts: 1})
	if stub.calls() != 1 {
		t.Fatalf("the model got %d calls", stub.calls())
	}
}

// Answers write usage by hand; encoding/json must read the same.
func TestUsageAppendsAsEncodingJSONWrites(t *testing.T) {
	for _, u := range []Usage{{}, {InputTokens: 12, OutputTokens: 3, ModelCalls: 2, Attempts: 5}, {InputTokens: -1, Attempts: 1 << 40}} {
		want, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(u.AppendJSON([]byte("x"))); got != "x"+string(want) {
			t.Errorf("AppendJSON = %s, want x%s", got, want)
		}
	}
}
