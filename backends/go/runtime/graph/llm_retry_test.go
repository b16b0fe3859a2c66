package graph

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// Retries, per-attempt timeouts and fallbacks of model calls (a model's
// timeoutMs, retry and fallbacks in the IR). Waits are asserted as the
// delays asked of sleep (recordSleeps), real ones only as lower bounds.

// recordSleeps makes the waits between attempts end at once and records
// the delays asked for.
func recordSleeps(t *testing.T) *[]time.Duration {
	t.Helper()
	saved := sleep
	t.Cleanup(func() { sleep = saved })
	asked := &[]time.Duration{}
	sleep = func(_ context.Context, d time.Duration) { *asked = append(*asked, d) }
	return asked
}

// fixJitter makes the random part of every delay pick(limit), and records
// the limits it was drawn under.
func fixJitter(t *testing.T, pick func(limit time.Duration) time.Duration) *[]time.Duration {
	t.Helper()
	saved := jitter
	t.Cleanup(func() { jitter = saved })
	limits := &[]time.Duration{}
	jitter = func(limit time.Duration) time.Duration {
		*limits = append(*limits, limit)
		return pick(limit)
	}
	return limits
}

// answer is a reply of the chat stub: status with the headers given in
// pairs (a 2xx status answers "ok").
func answer(status int, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if status/100 == 2 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`))
			return
		}
		w.WriteHeader(status)
	}
}

// cutConnection closes the connection without a reply.
func cutConnection(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// script answers the calls in order, the last reply repeating.
func script(replies ...any) func(int, map[string]any) any {
	return func(n int, _ map[string]any) any { return replies[min(n, len(replies)-1)] }
}

func withRetry(m Model, r Retry) Model {
	m.Retry = r
	return m
}

func upstreamDetails(reason string, status int, model string, attempts int) map[string]any {
	d := map[string]any{"node": "ask", "reason": reason, "model": model, "attempts": attempts}
	if status != 0 {
		d["status"] = status
	}
	return d
}

func TestRetryAfterIsWaitedFor(t *testing.T) {
	var arrivals []time.Time
	newChatStub(t, func(n int, _ map[string]any) any {
		arrivals = append(arrivals, time.Now())
		if n == 0 {
			return answer(http.StatusTooManyRequests, "Retry-After", "1")
		}
		return answer(200)
	})
	m := withRetry(stubModel(), Retry{MaxDelay: 2 * time.Second})
	out, err := Chat(context.Background(), "ask", m, "", "hi")
	if err != nil || out != "ok" || len(arrivals) != 2 {
		t.Fatalf("got %q, %v after %d attempts", out, err, len(arrivals))
	}
	if gap := arrivals[1].Sub(arrivals[0]); gap < time.Second {
		t.Fatalf("the second attempt came %v after the first, before Retry-After", gap)
	}
}

func TestRetriesSpentFailWithTheLastError(t *testing.T) {
	sleeps := recordSleeps(t)
	stub := newChatStub(t, script(http.StatusServiceUnavailable))
	_, err := Chat(context.Background(), "ask", stubModel(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("status", 503, "stub-model", 3), `node "ask": the upstream answered 503`)
	if stub.calls() != 3 || len(*sleeps) != 2 {
		t.Fatalf("%d attempts, waits %v", stub.calls(), *sleeps)
	}
}

func TestStatusesNotRetried(t *testing.T) {
	sleeps := recordSleeps(t)
	for _, status := range []int{400, 401, 403, 404, 422} {
		stub := newChatStub(t, script(answer(status), answer(200)))
		_, err := Chat(context.Background(), "ask", stubModel(), "", "hi")
		wantError(t, err, 502, "upstream_error", upstreamDetails("status", status, "stub-model", 1),
			`node "ask": the upstream answered `+strconv.Itoa(status))
		if stub.calls() != 1 {
			t.Fatalf("%d: %d attempts", status, stub.calls())
		}
	}
	// A malformed reply is the model's answer, not a failure that passes.
	stub := newChatStub(t, script("{not json", answer(200)))
	_, err := Chat(context.Background(), "ask", stubModel(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("invalid_json", 0, "stub-model", 1), `node "ask": the upstream reply is not valid JSON`)
	if stub.calls() != 1 || len(*sleeps) != 0 {
		t.Fatalf("%d attempts, waits %v", stub.calls(), *sleeps)
	}
}

func TestRetriedStatuses(t *testing.T) {
	recordSleeps(t)
	for _, status := range []int{408, 429, 500, 502, 503, 504, 529} {
		stub := newChatStub(t, script(answer(status), answer(200)))
		if out, err := Chat(context.Background(), "ask", stubModel(), "", "hi"); err != nil || out != "ok" || stub.calls() != 2 {
			t.Fatalf("%d: %q, %v after %d attempts", status, out, err, stub.calls())
		}
	}
}

func TestFallbackModels(t *testing.T) {
	sleeps := recordSleeps(t)
	stub := newChatStub(t, func(n int, body map[string]any) any {
		if body["model"] == "stub-model" {
			return http.StatusServiceUnavailable
		}
		return answer(200)
	})
	// The fallback's own variables: the stub's URL under another path, and
	// another key.
	t.Setenv("SVC_TEST_FALLBACK_URL", stub.url+"/fallback/v1")
	t.Setenv("SVC_TEST_FALLBACK_KEY", "sk-fallback")
	fallback := Model{Name: "fallback-model", MaxTokens: 9, BaseURLEnv: "SVC_TEST_FALLBACK_URL", APIKeyEnv: "SVC_TEST_FALLBACK_KEY"}
	m := withRetry(stubModel(), Retry{MaxAttempts: 2})
	m.Fallbacks = []Model{fallback}
	out, err := Chat(context.Background(), "ask", m, "", "hi")
	if err != nil || out != "ok" || stub.calls() != 3 {
		t.Fatalf("got %q, %v after %d attempts", out, err, stub.calls())
	}
	// No wait before the fallback: only the one between the primary's two
	// attempts.
	if len(*sleeps) != 1 {
		t.Fatalf("waits %v", *sleeps)
	}
	if got := stub.request(t, 2); got["model"] != "fallback-model" || got["max_tokens"] != 9.0 || got["temperature"] != nil {
		t.Fatalf("the fallback's request %v", got)
	}
	if stub.paths[2] != "/fallback/v1/chat/completions" || stub.headers[2].Get("Authorization") != "Bearer sk-fallback" {
		t.Fatalf("the fallback's request went to %s with %q", stub.paths[2], stub.headers[2].Get("Authorization"))
	}

	// All spent: the fallback failed last, after 2 + 3 attempts.
	stub = newChatStub(t, script(http.StatusBadGateway))
	t.Setenv("SVC_TEST_FALLBACK_URL", stub.url+"/fallback/v1")
	_, err = Chat(context.Background(), "ask", m, "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("status", 502, "fallback-model", 5), `node "ask": the upstream answered 502`)

	// A failure that is not retried ends the call: no fallback.
	stub = newChatStub(t, script(http.StatusUnauthorized))
	t.Setenv("SVC_TEST_FALLBACK_URL", stub.url+"/fallback/v1")
	_, err = Chat(context.Background(), "ask", m, "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("status", 401, "stub-model", 1), `node "ask": the upstream answered 401`)
	if stub.calls() != 1 {
		t.Fatalf("%d attempts", stub.calls())
	}
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	recordSleeps(t)
	// An attempt not cut would succeed after 2 s.
	stub := newChatStub(t, script(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
			answer(200)(w, r)
		}
	})))
	m := withRetry(stubModel(), Retry{MaxAttempts: 2})
	m.Timeout = 100 * time.Millisecond
	start := time.Now()
	_, err := Chat(context.Background(), "ask", m, "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("timeout", 0, "stub-model", 2), `node "ask": the upstream call timed out`)
	if spent := time.Since(start); stub.calls() != 2 || spent < 200*time.Millisecond {
		t.Fatalf("%d attempts in %v", stub.calls(), spent)
	}
}

func TestCutConnectionIsRetried(t *testing.T) {
	recordSleeps(t)
	stub := newChatStub(t, script(http.HandlerFunc(cutConnection), answer(200)))
	if out, err := Chat(context.Background(), "ask", stubModel(), "", "hi"); err != nil || out != "ok" || stub.calls() != 2 {
		t.Fatalf("got %q, %v after %d attempts", out, err, stub.calls())
	}
	stub = newChatStub(t, script(http.HandlerFunc(cutConnection)))
	_, err := Chat(context.Background(), "ask", stubModel(), "", "hi")
	e, ok := err.(*Error)
	if !ok || e.Details["reason"] != ReasonConnect || e.Details["attempts"] != 3 || stub.calls() != 3 {
		t.Fatalf("%v %v after %d attempts", err, e, stub.calls())
	}
}

func TestBackoffDelays(t *testing.T) {
	sleeps := recordSleeps(t)
	newChatStub(t, script(http.StatusServiceUnavailable))
	// The caps double from InitialDelay up to MaxDelay; the delay is what
	// jitter draws under each.
	limits := fixJitter(t, func(limit time.Duration) time.Duration { return limit / 3 })
	m := withRetry(stubModel(), Retry{MaxAttempts: 7, InitialDelay: 100 * time.Millisecond, MaxDelay: time.Second})
	_, _ = Chat(context.Background(), "ask", m, "", "hi")
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	if len(*limits) != len(want) || len(*sleeps) != len(want) {
		t.Fatalf("limits %v, waits %v", *limits, *sleeps)
	}
	for i, ms := range want {
		if limit := ms * time.Millisecond; (*limits)[i] != limit || (*sleeps)[i] != limit/3 {
			t.Fatalf("wait %d: %v under %v, want %v under %v", i, (*sleeps)[i], (*limits)[i], limit/3, limit)
		}
	}
	// The defaults: 500 ms, then 1 s.
	*limits = nil
	_, _ = Chat(context.Background(), "ask", stubModel(), "", "hi")
	if len(*limits) != 2 || (*limits)[0] != 500*time.Millisecond || (*limits)[1] != time.Second {
		t.Fatalf("default limits %v", *limits)
	}
}

func TestFullJitter(t *testing.T) {
	for _, limit := range []time.Duration{0, 1, 3, 500 * time.Millisecond} {
		seen := map[time.Duration]bool{}
		for range 2000 {
			d := jitter(limit)
			if d < 0 || d > limit {
				t.Fatalf("%v drawn under %v", d, limit)
			}
			seen[d] = true
		}
		// Both ends can be drawn (the interval is closed).
		if limit < 10 && (!seen[0] || !seen[limit]) {
			t.Fatalf("under %v drawn %v", limit, seen)
		}
	}
	sleeps := recordSleeps(t)
	newChatStub(t, script(http.StatusServiceUnavailable))
	m := withRetry(stubModel(), Retry{MaxAttempts: 10, InitialDelay: 10 * time.Millisecond, MaxDelay: 300 * time.Millisecond})
	_, _ = Chat(context.Background(), "ask", m, "", "hi")
	limit := 10 * time.Millisecond
	for i, d := range *sleeps {
		if d < 0 || d > limit {
			t.Fatalf("wait %d: %v outside [0, %v]", i, d, limit)
		}
		limit = min(2*limit, 300*time.Millisecond)
	}
	if len(*sleeps) != 9 {
		t.Fatalf("waits %v", *sleeps)
	}
}

func TestRetryAfterValues(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"3", 3 * time.Second, true},
		{" 0.25 ", 250 * time.Millisecond, true},
		{"0", 0, true},
		{"1e9", 24 * time.Hour, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"", 0, false},
		{"soon", 0, false},
	}
	for _, c := range cases {
		if got, ok := retryAfter(c.value, now); got != c.want || ok != c.ok {
			t.Errorf("Retry-After %q: %v %v, want %v %v", c.value, got, ok, c.want, c.ok)
		}
	}

	// The wait is the longer of the jitter and Retry-After, up to MaxDelay.
	sleeps := recordSleeps(t)
	fixJitter(t, func(limit time.Duration) time.Duration { return limit })
	m := withRetry(stubModel(), Retry{MaxAttempts: 2, InitialDelay: 400 * time.Millisecond, MaxDelay: 2 * time.Second})
	for _, c := range []struct {
		retryAfter string
		min, max   time.Duration
	}{
		{"1.5", 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"0.1", 400 * time.Millisecond, 400 * time.Millisecond}, // shorter than the jitter's
		{"30", 2 * time.Second, 2 * time.Second},                // capped at MaxDelay
		{time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), 2 * time.Second, 2 * time.Second},
		// A date is whole seconds: 2 s ahead asks for a wait of about 1 to 2 s.
		{time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat), 500 * time.Millisecond, 2 * time.Second},
		{"Wed, 21 Oct 2015 07:28:00 GMT", 400 * time.Millisecond, 400 * time.Millisecond},
	} {
		*sleeps = nil
		newChatStub(t, script(answer(http.StatusServiceUnavailable, "Retry-After", c.retryAfter), answer(200)))
		if _, err := Chat(context.Background(), "ask", m, "", "hi"); err != nil || len(*sleeps) != 1 {
			t.Fatalf("Retry-After %q: %v, waits %v", c.retryAfter, err, *sleeps)
		}
		if d := (*sleeps)[0]; d < c.min || d > c.max {
			t.Errorf("Retry-After %q: waited %v, want [%v, %v]", c.retryAfter, d, c.min, c.max)
		}
	}
}

func TestNoAttemptPastTheDeadline(t *testing.T) {
	sleeps := recordSleeps(t)
	// The wait Retry-After asks for ends past the run's deadline: the call
	// fails with the reply it has, at once.
	stub := newChatStub(t, script(answer(http.StatusServiceUnavailable, "Retry-After", "2"), answer(200)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := Chat(ctx, "ask", stubModel(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("status", 503, "stub-model", 1), `node "ask": the upstream answered 503`)
	if stub.calls() != 1 || len(*sleeps) != 0 {
		t.Fatalf("%d attempts, waits %v", stub.calls(), *sleeps)
	}

	// A deadline already passed: no attempt, the usual timeout.
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err = Chat(ctx, "ask", stubModel(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("timeout", 0, "stub-model", 0), `node "ask": the upstream call timed out`)
	if stub.calls() != 1 {
		t.Fatalf("%d attempts", stub.calls())
	}
}

func TestCancelStopsTheWait(t *testing.T) {
	stub := newChatStub(t, script(http.StatusServiceUnavailable))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A real wait of a minute, which the run's cancellation, 50 ms into it,
	// ends: no second attempt.
	fixJitter(t, func(limit time.Duration) time.Duration {
		time.AfterFunc(50*time.Millisecond, cancel)
		return limit
	})
	m := withRetry(stubModel(), Retry{InitialDelay: time.Minute, MaxDelay: time.Minute})
	start := time.Now()
	_, err := Chat(ctx, "ask", m, "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("status", 503, "stub-model", 1), `node "ask": the upstream answered 503`)
	// Not a timing bound: a wait not ended would last the whole minute.
	if spent := time.Since(start); stub.calls() != 1 || spent > 30*time.Second {
		t.Fatalf("%d attempts in %v", stub.calls(), spent)
	}
}

func TestStreamedRetriesBeforeTheFirstToken(t *testing.T) {
	recordSleeps(t)
	useAgents(t, helperAgents(), map[string]AgentTool{})
	hello := sse(true, deltaChunk(map[string]any{"content": "Hel"}), deltaChunk(map[string]any{"content": "lo"}))
	// A 503, then a stream cut before any text (a role only): both retried.
	cutEarly := sse(false, deltaChunk(map[string]any{"role": "assistant"}))
	stub := newChatStub(t, script(http.StatusServiceUnavailable, cutEarly, hello))
	rc, events := observedRun(t, context.Background())
	if out, err := Chat(rc, "ask", stubModel(), "", "hi"); err != nil || out != "Hello" || stub.calls() != 3 {
		t.Fatalf("llm: %q, %v after %d attempts", out, err, stub.calls())
	}
	wantOutline(t, *events, "token ask Hel", "token ask lo")

	stub = newChatStub(t, script(http.StatusServiceUnavailable, cutEarly, hello))
	rc, events = observedRun(t, context.Background())
	if out, err := RunAgent(rc, "ask", "helper", "task", nil); err != nil || out != "Hello" || stub.calls() != 3 {
		t.Fatalf("agent: %q, %v after %d attempts", out, err, stub.calls())
	}
	wantOutline(t, *events, "token ask Hel", "token ask lo")

	// A cut once a token was sent is not retried: the text would repeat.
	cutLate := sse(false, deltaChunk(map[string]any{"content": "Hel"}))
	stub = newChatStub(t, script(cutLate, hello))
	rc, events = observedRun(t, context.Background())
	_, err := Chat(rc, "ask", stubModel(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("connect", 0, "stub-model", 1), `node "ask": the model's stream ended before [DONE]`)
	if stub.calls() != 1 {
		t.Fatalf("llm: %d attempts", stub.calls())
	}
	wantOutline(t, *events, "token ask Hel")

	stub = newChatStub(t, script(http.StatusBadGateway, cutLate, hello))
	rc, events = observedRun(t, context.Background())
	_, err = RunAgent(rc, "ask", "helper", "task", nil)
	e, ok := err.(*Error)
	if !ok || e.Details["reason"] != ReasonConnect || e.Details["attempts"] != 2 || stub.calls() != 2 {
		t.Fatalf("agent: %v %v after %d attempts", err, e, stub.calls())
	}
	wantOutline(t, *events, "token ask Hel")
}

// cutInALine sends text as the start of a chunked stream and closes the
// connection: the body's read fails (unexpected EOF) inside text's last line.
func cutInALine(text string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(text), text)
		_ = buf.Flush()
	}
}

// A stream that ends inside a line (a body that ends there, or a
// connection cut there) was cut: retried before the first token, and its
// last line never read as a chunk that is not JSON.
func TestStreamCutInALineIsACutConnection(t *testing.T) {
	recordSleeps(t)
	hello := sse(true, deltaChunk(map[string]any{"content": "Hel"}), deltaChunk(map[string]any{"content": "lo"}))
	for what, first := range map[string]any{
		"body ends in a chunk":   sse(false) + `data: {"choices":[{"del`,
		"body ends in [DONE]":    sse(false) + `data: [DO`,
		"connection cut":         cutInALine(sse(false) + `data: {"choices":[{"del`),
		"connection cut in line": cutInALine(`data: {"choices":[{"del`),
	} {
		stub := newChatStub(t, script(first, hello))
		rc, events := observedRun(t, context.Background())
		if out, err := Chat(rc, "ask", stubModel(), "", "hi"); err != nil || out != "Hello" || stub.calls() != 2 {
			t.Fatalf("%s: %q, %v after %d attempts", what, out, err, stub.calls())
		}
		wantOutline(t, *events, "token ask Hel", "token ask lo")
	}

	// After a token: the stream's end is missing, not a chunk.
	tokenThenCut := sse(false, deltaChunk(map[string]any{"content": "Hel"})) + `data: {"cho`
	stub := newChatStub(t, script(tokenThenCut, hello))
	rc, events := observedRun(t, context.Background())
	_, err := Chat(rc, "ask", stubModel(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("connect", 0, "stub-model", 1), `node "ask": the model's stream ended before [DONE]`)
	if stub.calls() != 1 {
		t.Fatalf("%d attempts", stub.calls())
	}
	wantOutline(t, *events, "token ask Hel")
	stub = newChatStub(t, script(cutInALine(tokenThenCut), hello))
	rc, _ = observedRun(t, context.Background())
	_, err = Chat(rc, "ask", stubModel(), "", "hi")
	wantError(t, err, 502, "upstream_error", upstreamDetails("connect", 0, "stub-model", 1), `node "ask": cannot reach the upstream: unexpected EOF`)

	// A Messages API stream cut inside an event's data.
	stub = newMessagesStub(t, func(n int, body map[string]any) any {
		if n == 0 {
			return sseOf(messageStart) + "event: content_block_delta\ndata: {\"type\":\"content_blo"
		}
		return replyOf(body, "end_turn", textBlock("Hello"))
	})
	rc, _ = observedRun(t, context.Background())
	if out, err := Chat(rc, "ask", claude(), "", "hi"); err != nil || out != "Hello" || stub.calls() != 2 {
		t.Fatalf("anthropic: %q, %v after %d attempts", out, err, stub.calls())
	}
}
