package graph

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The prompts these tests expect are python-svc's classify_intent
// (sdk/python/svc/upstream.py), as CPython prints them.

func TestClassifyIntentPromptAndMatch(t *testing.T) {
	intents := []Intent{
		{Name: "billing", Description: "invoices and refunds", Examples: []string{"Where is my refund?"}},
		{Name: "shipping", Description: "parcels"},
	}
	var reply any
	stub := newChatStub(t, func(int, map[string]any) any { return says(reply) })
	cases := []struct {
		reply any
		want  string
	}{
		{" Billing\n", "billing"},
		{"shipping", "shipping"},
		{"SHIPPING\u3000", "shipping"},
		{"no idea", "other"},
		{"billing.", "other"},
		{"Billing\u200b", "other"},
		{"", "other"},
	}
	for i, c := range cases {
		reply = c.reply
		got, err := ClassifyIntent(context.Background(), "classify", stubModel(), intents, "Where is my refund?", "other")
		if err != nil || got != c.want {
			t.Fatalf("reply %q: got %q, %v; want %q", c.reply, got, err, c.want)
		}
		equalJSON(t, "request", stub.request(t, i), map[string]any{
			"model": "stub-model", "temperature": 0.0, "max_tokens": 64.0,
			"messages": []any{
				chatMsg("system", "Classify the user's message into exactly one of these intents:\n- billing: invoices and refunds\n"+
					"  Examples: \"Where is my refund?\"\n- shipping: parcels\n"+
					"Answer with the intent's name only. If none of them fits, answer \"other\"."),
				chatMsg("user", "Where is my refund?"),
			},
		})
	}
}

func TestClassifyIntentUnicode(t *testing.T) {
	intents := []Intent{
		{Name: "Rückgabe", Description: "Waren zurück", Examples: []string{`Wo ist mein "Geld"?`, "", "é<\x1b"}},
		{Name: "ΟΔΟΣ"},
		{Name: "billing"},
		{Name: " Billing "}, // the first intent of a key wins
	}
	var reply any
	stub := newChatStub(t, func(int, map[string]any) any { return says(reply) })
	cases := []struct {
		reply any
		want  string
	}{
		{"ΟΔΟΣ", "ΟΔΟΣ"},
		{"οδος", "ΟΔΟΣ"}, // final sigma, as Python lower-cases
		{"\u3000rückgabe\x1c", "Rückgabe"},
		{"RÜCKGABE", "Rückgabe"},
		{"BILLING", "billing"},
		{"nichts", "andere Säule"},
	}
	for _, c := range cases {
		reply = c.reply
		got, err := ClassifyIntent(context.Background(), "classify", stubModel(), intents, "", "andere Säule")
		if err != nil || got != c.want {
			t.Fatalf("reply %q: got %q, %v; want %q", c.reply, got, err, c.want)
		}
	}
	// Examples are written as json.dumps with ensure_ascii=False, the
	// fallback with ensure_ascii=True; the user message is sent even empty.
	equalJSON(t, "messages", stub.messagesOf(t, 0), []any{
		chatMsg("system", "Classify the user's message into exactly one of these intents:\n- Rückgabe: Waren zurück\n"+
			"  Examples: \"Wo ist mein \\\"Geld\\\"?\"; \"\"; \"é<\\u001b\"\n- ΟΔΟΣ\n- billing\n-  Billing \n"+
			"Answer with the intent's name only. If none of them fits, answer \"andere S\\u00e4ule\"."),
		chatMsg("user", ""),
	})
}

func TestClassifyIntentFailures(t *testing.T) {
	intents := []Intent{{Name: "billing"}}
	recordSleeps(t)
	cases := []struct {
		reply   any
		details map[string]any
		message string
	}{
		{says(nil), map[string]any{"node": "classify", "reason": "invalid_json", "model": "stub-model", "attempts": 1}, `node "classify": the model reply has no choices[0].message.content`},
		{says(3), map[string]any{"node": "classify", "reason": "invalid_json", "model": "stub-model", "attempts": 1}, `node "classify": the model reply has no choices[0].message.content`},
		{map[string]any{"choices": []any{}}, map[string]any{"node": "classify", "reason": "invalid_json", "model": "stub-model", "attempts": 1}, `node "classify": the model reply has no choices[0].message`},
		{503, map[string]any{"node": "classify", "reason": "status", "status": 503, "model": "stub-model", "attempts": 3}, `node "classify": the upstream answered 503`},
	}
	for _, c := range cases {
		newChatStub(t, func(int, map[string]any) any { return c.reply })
		_, err := ClassifyIntent(context.Background(), "classify", stubModel(), intents, "x", "other")
		wantError(t, err, 502, "upstream_error", c.details, c.message)
	}
	newChatStub(t, func(int, map[string]any) any {
		time.Sleep(300 * time.Millisecond)
		return says("billing")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := ClassifyIntent(ctx, "classify", stubModel(), intents, "x", "other"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the run's deadline, got %v", err)
	}
}
