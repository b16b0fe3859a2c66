package graph

// The Go runtime's cost per tool-calling round (bench/agent_rounds.py drops
// this file into a copy of the runtime module, backends/go/runtime, and runs
// it there with the tag svcstub; it is not part of the runtime). One loopback chat-completions stub answers every request at
// once: a tool call while the conversation has fewer than agentRounds tool
// results, then the answer. Two clients run the same conversations against
// it, alternating batches:
//
//   - svc: ToolLoop, as an llm node with a bound tool runs it;
//   - direct: the same requests written by hand with one http.Client and
//     encoding/json, the tool called directly (what the runtime cannot do
//     with less).
//
// A round is one model call (agentRounds tool rounds plus the answer per
// conversation); the overhead per round is (svc - direct) / model calls,
// from the medians over the batches. Prints one JSON line.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"
)

const agentRounds = 4

func roundsStub() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []map[string]any `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		done := 0
		for _, m := range body.Messages {
			if m["role"] == "tool" {
				done++
			}
		}
		var message map[string]any
		if done < agentRounds {
			args, _ := json.Marshal(map[string]any{"q": fmt.Sprintf("fact %d", done)})
			message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "c" + strconv.Itoa(done), "type": "function",
				"function": map[string]any{"name": "lookup", "arguments": string(args)}}}}
		} else {
			message = map[string]any{"role": "assistant", "content": fmt.Sprintf("found %d facts", done)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": message}}})
	}))
}

func lookupFact(args map[string]any) any {
	return map[string]any{"fact": args["q"], "source": "bench"}
}

// direct is the conversation written by hand: what any client must do.
func direct(client *http.Client, url string) (string, error) {
	messages := []any{
		map[string]any{"role": "system", "content": "You answer."},
		map[string]any{"role": "user", "content": "q"},
	}
	tools := []any{map[string]any{"type": "function", "function": map[string]any{
		"name": "lookup", "description": "", "parameters": map[string]any{"type": "object"}}}}
	for turn := 0; turn < 8; turn++ {
		payload, err := json.Marshal(map[string]any{"model": "stub-model", "messages": messages, "tools": tools})
		if err != nil {
			return "", err
		}
		resp, err := client.Post(url, "application/json", bytes.NewReader(payload))
		if err != nil {
			return "", err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return "", err
		}
		var reply struct {
			Choices []struct {
				Message map[string]any `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &reply); err != nil {
			return "", err
		}
		msg := reply.Choices[0].Message
		calls, _ := msg["tool_calls"].([]any)
		if len(calls) == 0 {
			content, _ := msg["content"].(string)
			return content, nil
		}
		messages = append(messages, map[string]any{"role": "assistant", "content": msg["content"], "tool_calls": calls})
		for _, c := range calls {
			call := c.(map[string]any)
			fn := call["function"].(map[string]any)
			var args map[string]any
			if err := json.Unmarshal([]byte(fn["arguments"].(string)), &args); err != nil {
				return "", err
			}
			result, err := json.Marshal(lookupFact(args))
			if err != nil {
				return "", err
			}
			messages = append(messages, map[string]any{"role": "tool", "tool_call_id": call["id"], "content": string(result)})
		}
	}
	return "", fmt.Errorf("no answer")
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func TestAgentRoundCost(t *testing.T) {
	if os.Getenv("SVC_AGENT_ROUNDS") == "" {
		t.Skip("a benchmark: bench/agent_rounds.py runs it")
	}
	batches, runs := 7, 400
	if n, err := strconv.Atoi(os.Getenv("SVC_AGENT_ROUNDS")); err == nil && n > 0 {
		runs = n
	}
	stub := roundsStub()
	defer stub.Close()
	t.Setenv("BENCH_MODEL_URL", stub.URL+"/v1")
	RegisterAgents(nil, map[string]AgentTool{"lookup": {Name: "lookup", Call: func(_ context.Context, args map[string]any) (any, error) {
		return lookupFact(args), nil
	}}})
	model := Model{Name: "stub-model", BaseURLEnv: "BENCH_MODEL_URL", APIKeyEnv: "BENCH_MODEL_KEY"}
	client := &http.Client{}
	svc := func() error {
		answer, err := ToolLoop(context.Background(), "bench", "You answer.", []string{"lookup"}, model, 8, "q")
		if err == nil && answer != fmt.Sprintf("found %d facts", agentRounds) {
			err = fmt.Errorf("answer %q", answer)
		}
		return err
	}
	hand := func() error {
		answer, err := direct(client, stub.URL+"/v1/chat/completions")
		if err == nil && answer != fmt.Sprintf("found %d facts", agentRounds) {
			err = fmt.Errorf("answer %q", answer)
		}
		return err
	}
	timed := func(f func() error) float64 {
		start := time.Now()
		for i := 0; i < runs; i++ {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(runs)
	}
	timed(svc) // warm-up
	timed(hand)
	var svcNs, directNs []float64
	for b := 0; b < batches; b++ {
		svcNs = append(svcNs, timed(svc))
		directNs = append(directNs, timed(hand))
	}
	calls := float64(agentRounds + 1)
	out, _ := json.Marshal(map[string]any{
		"platform": "go", "batches": batches, "conversations_per_batch": runs,
		"model_calls_per_conversation": agentRounds + 1,
		"svc_ms_per_conversation":      median(svcNs) / 1e6,
		"direct_ms_per_conversation":   median(directNs) / 1e6,
		"overhead_ms_per_round":        (median(svcNs) - median(directNs)) / calls / 1e6,
	})
	fmt.Println("RESULT " + string(out))
}
