package server_test

// The stand-in model of cases_test.go: an OpenAI-compatible server that
// answers each request with the case's next scripted reply or failure, as
// svc test's stand-in does (docs/testing.md of svc).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// casesModel stands in for the model: an OpenAI-compatible chat-completions
// endpoint answering each call with the case's next scripted reply (the first
// unused one whose `when` is part of the last user message, else the first
// unused one without), or, with no script, an echo of the last user message.
type casesModel struct {
	key     string
	mu      sync.Mutex
	replies *[]casesReply
	used    []bool
	calls   int
	missing []string
}

func (m *casesModel) script(replies *[]casesReply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replies, m.calls, m.missing = replies, 0, nil
	m.used = nil
	if replies != nil {
		m.used = make([]bool, len(*replies))
	}
}

func (m *casesModel) unanswered() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.missing) > 0 {
		return m.missing[0]
	}
	return ""
}

func (m *casesModel) unused() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, u := range m.used {
		if !u {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	replies, calls := "replies", "calls"
	if n == 1 {
		replies = "reply"
	}
	if m.calls == 1 {
		calls = "call"
	}
	return fmt.Sprintf("%d scripted model %s went unused (the graph made %d model %s)", n, replies, m.calls, calls)
}

func (m *casesModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+m.key {
		http.Error(w, `{"error": {"message": "the stand-in model needs its key"}}`, http.StatusUnauthorized)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/embeddings") {
		casesEmbeddings(w, r)
		return
	}
	var call casesCall
	if err := json.NewDecoder(r.Body).Decode(&call); err != nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error": {"message": "the stand-in model serves POST /v1/chat/completions and /v1/embeddings"}}`, http.StatusBadRequest)
		return
	}
	last := ""
	for i := len(call.Messages) - 1; i >= 0; i-- {
		if call.Messages[i]["role"] == "user" {
			last = casesText(call.Messages[i]["content"])
			break
		}
	}
	reply, n, ok := m.next(last)
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error": {"message": "no scripted reply left"}}`))
		return
	}
	time.Sleep(time.Duration(reply.DelayMs) * time.Millisecond)
	switch {
	case reply.Status != nil:
		if reply.RetryAfter != nil {
			w.Header().Set("Retry-After", *reply.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(*reply.Status)
		_, _ = fmt.Fprintf(w, `{"error": {"message": "scripted %d"}}`, *reply.Status)
	case reply.Cut:
		casesCut(w, &call)
	default:
		contentType, body := casesCompletion(&call, reply, n)
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}
}

// casesCall is what the stand-in reads of a chat-completions request.
type casesCall struct {
	Model    string           `json:"model"`
	Messages []map[string]any `json:"messages"`
	Stream   bool             `json:"stream"`
}

// casesCut answers with a head that promises a whole (empty) reply, then
// half the JSON body, or a stream's first event alone (the role: no token
// reaches the service, and a stream cut after one is not retried), and
// closes the connection.
func casesCut(w http.ResponseWriter, call *casesCall) {
	contentType, body := casesCompletion(call, casesReply{}, 0)
	sent := len(body) / 2
	if end := bytes.Index(body, []byte("\n\n")); end >= 0 {
		sent = end + 2
	}
	conn, out, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = fmt.Fprintf(out, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", contentType, len(body))
	_, _ = out.Write(body[:sent])
	_ = out.Flush()
}

// casesCompletion is the chat completion of a scripted reply, whole or
// streamed, its tool calls named call_<n>_<call> unless given. Its usage is
// the reply's, else the words of the messages in and of the text out, and
// one per tool call.
func casesCompletion(call *casesCall, reply casesReply, n int) (string, []byte) {
	text := ""
	if reply.Content != nil {
		text = *reply.Content
	}
	var calls []map[string]any
	for i, c := range reply.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", n, i+1)
		}
		args, _ := json.Marshal(c.Arguments)
		if c.Arguments == nil {
			args = []byte("{}")
		}
		calls = append(calls, map[string]any{"index": i, "id": id, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(args)}})
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	input, output := 0, len(strings.Fields(text))+len(calls)
	for _, message := range call.Messages {
		if content, ok := message["content"].(string); ok {
			input += len(strings.Fields(content))
		}
	}
	if reply.Usage != nil {
		input, output = reply.Usage.InputTokens, reply.Usage.OutputTokens
	}
	usage := map[string]any{"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}
	if !call.Stream {
		message := map[string]any{"role": "assistant", "content": reply.Content}
		if len(calls) > 0 {
			message["tool_calls"] = calls
		}
		body, _ := json.Marshal(map[string]any{"id": "chatcmpl-svc", "object": "chat.completion", "model": call.Model,
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}}, "usage": usage})
		return "application/json", body
	}
	var out bytes.Buffer
	event := func(chunk map[string]any) {
		chunk["id"], chunk["object"], chunk["model"] = "chatcmpl-svc", "chat.completion.chunk", call.Model
		b, _ := json.Marshal(chunk)
		_, _ = fmt.Fprintf(&out, "data: %s\n\n", b)
	}
	delta := func(delta map[string]any, finish any) {
		event(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	delta(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, piece := range strings.SplitAfter(text, " ") {
		if piece != "" {
			delta(map[string]any{"content": piece}, nil)
		}
	}
	if len(calls) > 0 {
		delta(map[string]any{"tool_calls": calls}, nil)
	}
	delta(map[string]any{}, finish)
	event(map[string]any{"choices": []any{}, "usage": usage})
	out.WriteString("data: [DONE]\n\n")
	return "text/event-stream", out.Bytes()
}

// casesEmbeddings answers /v1/embeddings as svc test's stand-in does: each
// text's vector counts the letters a to z in it (either case), then a 1.
func casesEmbeddings(w http.ResponseWriter, r *http.Request) {
	var call struct {
		Model string `json:"model"`
		Input any    `json:"input"`
	}
	_ = json.NewDecoder(r.Body).Decode(&call)
	var texts []any
	switch input := call.Input.(type) {
	case string:
		texts = []any{input}
	case []any:
		texts = input
	default:
		http.Error(w, `{"error": {"message": "input must be a text or a list of texts"}}`, http.StatusBadRequest)
		return
	}
	data := []any{}
	for i, t := range texts {
		text, _ := t.(string)
		vector := make([]float64, 27)
		for _, b := range []byte(text) {
			switch {
			case b >= 'a' && b <= 'z':
				vector[b-'a']++
			case b >= 'A' && b <= 'Z':
				vector[b-'A']++
			}
		}
		vector[26] = 1
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vector})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": call.Model,
		"usage": map[string]any{"prompt_tokens": 0, "total_tokens": 0}})
}

// next is the reply to a call whose last user message is last, with its
// place in the case's list (from 1; 0 for the echo), which names its tool
// calls: call_<place>_<call>.
func (m *casesModel) next(last string) (casesReply, int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.replies == nil {
		echo := "echo: " + last
		return casesReply{Content: &echo}, 0, true
	}
	replies := *m.replies
	for pass := 0; pass < 2; pass++ {
		for i, r := range replies {
			if m.used[i] {
				continue
			}
			if (pass == 0 && r.When != nil && strings.Contains(last, *r.When)) || (pass == 1 && r.When == nil) {
				m.used[i] = true
				return r, i + 1, true
			}
		}
	}
	quoted, _ := json.Marshal(last)
	m.missing = append(m.missing, fmt.Sprintf("model call %d has no scripted reply left (last user message: %s)", m.calls, quoted))
	return casesReply{}, 0, false
}

func casesText(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		parts := []string{}
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}
