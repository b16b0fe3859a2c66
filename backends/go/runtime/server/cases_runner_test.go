package server_test

// The stand-in model of the cases' runner, and its expectations of usage
// (this repository's test: projects get cases_test.go and
// cases_model_test.go, not this file).

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCasesModelScriptsFailedAttempts(t *testing.T) {
	model := &casesModel{key: "k"}
	server := httptest.NewServer(model)
	defer server.Close()
	var replies []casesReply
	if err := json.Unmarshal([]byte(`[
		{"status": 503},
		{"status": 429, "retryAfter": "1", "when": "rate"},
		{"cut": true},
		{"content": "late answer", "delayMs": 100, "usage": {"inputTokens": 3, "outputTokens": 5}},
		{"cut": true},
		{"content": "two words"}
	]`), &replies); err != nil {
		t.Fatal(err)
	}
	model.script(&replies)
	ask := func(text string, stream bool) (*http.Response, []byte, error) {
		body, _ := json.Marshal(map[string]any{"model": "m", "stream": stream,
			"messages": []any{map[string]any{"role": "user", "content": text}}})
		req, _ := http.NewRequest("POST", server.URL+"/v1/chat/completions", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		read, err := io.ReadAll(resp.Body)
		return resp, read, err
	}
	// The reply whose `when` fits comes first; each failure uses one up.
	resp, _, err := ask("a rate question", false)
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("429: %v %v", resp, err)
	}
	if resp, _, err = ask("a rate question", false); err != nil || resp.StatusCode != 503 {
		t.Fatalf("503: %v %v", resp, err)
	}
	if _, read, err := ask("q", false); err == nil {
		t.Fatalf("a cut reply was read whole: %s", read)
	}
	started := time.Now()
	_, read, err := ask("q", false)
	var completion struct {
		Usage map[string]int `json:"usage"`
	}
	if err != nil || json.Unmarshal(read, &completion) != nil || time.Since(started) < 100*time.Millisecond {
		t.Fatalf("late answer: %s %v", read, err)
	}
	if completion.Usage["prompt_tokens"] != 3 || completion.Usage["completion_tokens"] != 5 {
		t.Fatalf("usage: %v", completion.Usage)
	}
	// A stream is cut after its first event, the role: no token.
	if _, read, err = ask("q", true); err == nil || strings.Count(string(read), "\n\n") != 1 || !strings.Contains(string(read), `"delta":{"content":"","role":"assistant"}`) {
		t.Fatalf("a cut stream: %q %v", read, err)
	}
	// Unscripted usage counts words: in, the messages; out, the text.
	if _, read, err = ask("three words here", true); err != nil || !strings.Contains(string(read), `"usage":{"completion_tokens":2,"prompt_tokens":3,"total_tokens":5}`) {
		t.Fatalf("stream: %s %v", read, err)
	}
	if problem := model.unanswered() + model.unused(); problem != "" {
		t.Fatal(problem)
	}
}

func TestCasesExpectUsageAsASubsetBesideAResultOrAnError(t *testing.T) {
	var c casesCase
	_ = json.Unmarshal([]byte(`{"expect": {"status": 500, "error": {"code": "execution_error"}, "usage": {"attempts": 2, "modelCalls": 1}}}`), &c)
	usage := map[string]any{"inputTokens": 0.0, "outputTokens": 0.0, "modelCalls": 1.0, "attempts": 3.0}
	failed := map[string]any{"error": map[string]any{"code": "execution_error"}, "usage": usage}
	if got := casesExpect(&c, 500, failed, nil); got != "/usage/attempts: expected 2, got 3" {
		t.Fatal(got)
	}
	usage["attempts"] = 2.0
	if got := casesExpect(&c, 500, failed, nil); got != "" {
		t.Fatal(got)
	}
	delete(failed, "usage")
	if got := casesExpect(&c, 500, failed, nil); got != `/usage: expected {"attempts":2,"modelCalls":1}, got null` {
		t.Fatal(got)
	}
}
