package server_test

// The graph's test cases (NAME.tests.json beside the graph document, copied
// into testdata/svc-cases.json by svc compile; docs/testing.md of svc), run
// against this service as `svc test` runs them: the same stand-ins on
// loopback for the model (scripted replies, else an echo) and the HTTP tools,
// the same expectations. Regenerate the project to change them.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"svc.dev/runtime/server"
)

type casesFile struct {
	Auth          string              `json:"auth"`
	Skip          string              `json:"skip"`
	MCPVars       map[string]string   `json:"mcpVars"`
	MCPTools      map[string][]string `json:"mcpTools"`
	Streaming     bool                `json:"streaming"`
	ModelBaseVars []string            `json:"modelBaseVars"`
	ModelKeyVars  []string            `json:"modelKeyVars"`
	ToolVars      map[string]string   `json:"toolVars"`
	Env           map[string]string   `json:"env"`
	Cases         []casesCase         `json:"cases"`
}

type casesCase struct {
	Name    string `json:"name"`
	Request struct {
		State    map[string]any    `json:"state"`
		ThreadOf string            `json:"threadOf"`
		Resume   json.RawMessage   `json:"resume"`
		Headers  map[string]string `json:"headers"`
	} `json:"request"`
	Model  *[]casesReply                         `json:"model"`
	Tools  map[string]json.RawMessage            `json:"tools"`
	MCP    map[string]map[string]json.RawMessage `json:"mcp"`
	Expect struct {
		Status *int           `json:"status"`
		Result map[string]any `json:"result"`
		Error  *struct {
			Code    *string        `json:"code"`
			Message *string        `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
		Interrupt *struct {
			Node  *string         `json:"node"`
			Value json.RawMessage `json:"value"`
		} `json:"interrupt"`
		Visited *[]string      `json:"visited"`
		Usage   map[string]any `json:"usage"`
	} `json:"expect"`
}

// casesReply is what one request to the stand-in model gets: a reply
// (content, tool calls, the usage it reports) or a failed attempt (a
// status, a cut), after DelayMs.
type casesReply struct {
	When      *string `json:"when"`
	Content   *string `json:"content"`
	ToolCalls []struct {
		ID        string         `json:"id"`
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"toolCalls"`
	Usage *struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
	} `json:"usage"`
	Status     *int    `json:"status"`
	RetryAfter *string `json:"retryAfter"`
	Cut        bool    `json:"cut"`
	DelayMs    int     `json:"delayMs"`
}

type casesToolReply struct {
	Status  *int            `json:"status"`
	JSON    json.RawMessage `json:"json"`
	DelayMs int             `json:"delayMs"`
}

const casesKey = "svc-cases-credential"

func TestCases(t *testing.T) {
	raw, err := os.ReadFile("testdata/svc-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file casesFile
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("testdata/svc-cases.json: %v", err)
	}
	if file.Skip != "" {
		t.Skip(file.Skip)
	}
	model := &casesModel{key: "svc-cases-model-key"}
	modelServer := httptest.NewServer(model)
	defer modelServer.Close()
	tools := &casesTools{}
	toolServer := httptest.NewServer(tools)
	defer toolServer.Close()
	for _, name := range file.ModelBaseVars {
		t.Setenv(name, modelServer.URL+"/v1")
	}
	for _, name := range file.ModelKeyVars {
		t.Setenv(name, model.key)
	}
	for name, id := range file.ToolVars {
		t.Setenv(name, toolServer.URL+"/tools/"+id)
	}
	mcpServers := &casesMCP{tools: file.MCPTools}
	mcpServer := httptest.NewServer(mcpServers)
	defer mcpServer.Close()
	for name, id := range file.MCPVars {
		t.Setenv(name, mcpServer.URL+"/mcp/"+id)
	}
	for name, value := range file.Env {
		t.Setenv(name, value)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	handler, closeService, err := server.Open(context.Background(), server.Config{Auth: file.Auth, Key: casesKey, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer closeService()
	service := httptest.NewServer(handler)
	defer service.Close()
	threads := map[string]string{}
	for _, c := range file.Cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			if problem := casesRun(&c, &file, service.URL, model, tools, mcpServers, threads); problem != "" {
				t.Fatal(problem)
			}
		})
	}
}

// casesRun sends one case and returns its first problem ("" when it passes).
func casesRun(c *casesCase, file *casesFile, url string, model *casesModel, tools *casesTools, mcpServers *casesMCP, threads map[string]string) string {
	body := map[string]any{}
	if c.Request.State != nil {
		body["state"] = c.Request.State
	}
	if c.Request.ThreadOf != "" {
		thread, ok := threads[c.Request.ThreadOf]
		if !ok {
			return fmt.Sprintf("case `%s` left no thread to continue (it failed, or its answer had no threadId)", c.Request.ThreadOf)
		}
		body["threadId"] = thread
	}
	if c.Request.Resume != nil {
		body["resume"] = c.Request.Resume
	}
	model.script(c.Model)
	if problem := tools.script(c.Tools); problem != "" {
		return problem
	}
	mcpServers.script(c.MCP)
	payload, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url+"/invoke", strings.NewReader(string(payload)))
	req.Header.Set("Content-Type", "application/json")
	switch file.Auth {
	case "bearer":
		req.Header.Set("Authorization", "Bearer "+casesKey)
	case "api_key":
		req.Header.Set("X-API-Key", casesKey)
	}
	if file.Streaming {
		req.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range c.Request.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "POST /invoke: " + err.Error()
	}
	defer resp.Body.Close()
	status, answer, events, err := casesAnswer(resp)
	if err != nil {
		return err.Error()
	}
	if thread, ok := answer["threadId"].(string); ok {
		threads[c.Name] = thread
	}
	if problem := model.unanswered(); problem != "" {
		return problem
	}
	if problem := tools.unanswered(); problem != "" {
		return problem
	}
	if problem := mcpServers.unanswered(); problem != "" {
		return problem
	}
	if problem := casesExpect(c, status, answer, events); problem != "" {
		return problem
	}
	return model.unused()
}

// casesAnswer reads the JSON answer, or rebuilds it from the terminal event
// of a streamed run.
func casesAnswer(resp *http.Response) (int, map[string]any, []map[string]any, error) {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var answer map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			return 0, nil, nil, fmt.Errorf("the answer of /invoke is not a JSON object: %v", err)
		}
		return resp.StatusCode, answer, nil, nil
	}
	var events []map[string]any
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		if data, ok := strings.CutPrefix(scanner.Text(), "data:"); ok {
			var event map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(data, " ")), &event); err != nil {
				return 0, nil, nil, fmt.Errorf("an event of /invoke is not JSON: %v", err)
			}
			events = append(events, event)
		}
	}
	if len(events) == 0 {
		return 0, nil, nil, fmt.Errorf("the event stream of /invoke ended with no event")
	}
	last := events[len(events)-1]
	data, _ := last["data"].(map[string]any)
	answer := map[string]any{}
	if thread, ok := data["threadId"]; ok && last["type"] != "run_failed" {
		answer["threadId"] = thread
	}
	if usage, ok := data["usage"]; ok {
		answer["usage"] = usage
	}
	switch last["type"] {
	case "run_finished":
		answer["result"] = data["result"]
		return 200, answer, events, nil
	case "interrupted":
		answer["interrupt"] = map[string]any{"node": last["node"], "value": data["value"]}
		return 200, answer, events, nil
	case "run_failed":
		e := map[string]any{"code": data["code"], "message": data["message"]}
		if d, ok := data["details"]; ok {
			e["details"] = d
		}
		answer["error"] = e
		status, _ := data["status"].(float64)
		return int(status), answer, events, nil
	}
	return 0, nil, nil, fmt.Errorf("the event stream of /invoke ended without its terminal event (last: %v)", last["type"])
}

// casesExpect returns the first field where the answer differs from the
// case's expectations.
func casesExpect(c *casesCase, status int, answer map[string]any, events []map[string]any) string {
	e := &c.Expect
	want := 200
	if e.Status != nil {
		want = *e.Status
	}
	if (e.Status != nil || e.Error == nil) && status != want {
		summary := ""
		if got, ok := answer["error"].(map[string]any); ok {
			summary = fmt.Sprintf(" (%v: %v)", got["code"], got["message"])
		}
		return fmt.Sprintf("status: expected %d, got %d%s", want, status, summary)
	}
	if e.Error != nil {
		got, ok := answer["error"].(map[string]any)
		if !ok {
			return "/error: expected an error, got " + casesJSON(answer)
		}
		if e.Error.Code != nil && got["code"] != *e.Error.Code {
			return fmt.Sprintf("/error/code: expected %s, got %s", casesJSON(*e.Error.Code), casesJSON(got["code"]))
		}
		if e.Error.Message != nil {
			if message, _ := got["message"].(string); !strings.Contains(message, *e.Error.Message) {
				return fmt.Sprintf("/error/message: expected it to contain %s, got %s", casesJSON(*e.Error.Message), casesJSON(got["message"]))
			}
		}
		if e.Error.Details != nil {
			if d := casesSubset(e.Error.Details, got["details"], "/error/details"); d != "" {
				return d
			}
		}
	}
	if e.Result != nil {
		got, ok := answer["result"]
		if !ok {
			return "/result: expected a result, got " + casesJSON(answer)
		}
		if d := casesSubset(e.Result, got, "/result"); d != "" {
			return d
		}
	}
	if e.Interrupt != nil {
		got, ok := answer["interrupt"].(map[string]any)
		if !ok {
			return "/interrupt: expected the run to pause, got " + casesJSON(answer)
		}
		if e.Interrupt.Node != nil && got["node"] != *e.Interrupt.Node {
			return fmt.Sprintf("/interrupt/node: expected %s, got %s", casesJSON(*e.Interrupt.Node), casesJSON(got["node"]))
		}
		if e.Interrupt.Value != nil {
			var want any
			_ = json.Unmarshal(e.Interrupt.Value, &want)
			if d := casesSubset(want, got["value"], "/interrupt/value"); d != "" {
				return d
			}
		}
	}
	if e.Usage != nil {
		if d := casesSubset(e.Usage, answer["usage"], "/usage"); d != "" {
			return d
		}
	}
	if e.Visited != nil {
		visited := []string{}
		for _, event := range events {
			if event["type"] == "node_started" {
				if node, ok := event["node"].(string); ok {
					visited = append(visited, node)
				}
			}
		}
		if !reflect.DeepEqual(visited, *e.Visited) {
			return fmt.Sprintf("visited: expected %q, got %q", *e.Visited, visited)
		}
	}
	return ""
}

// casesSubset: objects by the keys want has, arrays element by element
// (same length), anything else equal (JSON numbers are all float64 here).
func casesSubset(want, got any, at string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		for _, k := range casesSorted(keys) {
			here := at + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			gv, present := g[k]
			if !present {
				return fmt.Sprintf("%s: expected %s, missing", here, casesJSON(w[k]))
			}
			if d := casesSubset(w[k], gv, here); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		for i := range w {
			if d := casesSubset(w[i], g[i], fmt.Sprintf("%s/%d", at, i)); d != "" {
				return d
			}
		}
		return ""
	default:
		if reflect.DeepEqual(want, got) {
			return ""
		}
	}
	return fmt.Sprintf("%s: expected %s, got %s", at, casesJSON(want), casesJSON(got))
}

func casesSorted(keys []string) []string {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func casesJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// casesTools stands in for the graph's HTTP tools at /tools/<id>: the case's
// reply for every call, or its list of replies one per call.
type casesTools struct {
	mu      sync.Mutex
	replies map[string][]casesToolReply
	always  map[string]bool
	calls   map[string]int
	missing []string
}

func (s *casesTools) script(raw map[string]json.RawMessage) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies, s.always, s.calls, s.missing = map[string][]casesToolReply{}, map[string]bool{}, map[string]int{}, nil
	for id, r := range raw {
		var list []casesToolReply
		if err := json.Unmarshal(r, &list); err == nil {
			s.replies[id] = list
			continue
		}
		var one casesToolReply
		if err := json.Unmarshal(r, &one); err != nil {
			return fmt.Sprintf("tools.%s: %v", id, err)
		}
		s.replies[id], s.always[id] = []casesToolReply{one}, true
	}
	return ""
}

func (s *casesTools) unanswered() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.missing) > 0 {
		return s.missing[0]
	}
	return ""
}

func (s *casesTools) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	id := strings.TrimPrefix(r.URL.Path, "/tools/")
	s.mu.Lock()
	s.calls[id]++
	n := s.calls[id]
	list, known := s.replies[id]
	var reply *casesToolReply
	switch {
	case known && s.always[id]:
		reply = &list[0]
	case known && n <= len(list):
		reply = &list[n-1]
	case known:
		s.missing = append(s.missing, fmt.Sprintf("tool `%s` was called %d times; the case scripts fewer replies", id, n))
	default:
		s.missing = append(s.missing, fmt.Sprintf("tool `%s` was called; the case scripts no reply for it", id))
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if reply == nil {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error": "no scripted reply"}`))
		return
	}
	time.Sleep(time.Duration(reply.DelayMs) * time.Millisecond)
	status := 200
	if reply.Status != nil {
		status = *reply.Status
	}
	body := []byte(reply.JSON)
	if reply.JSON == nil {
		body = []byte("{}")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// casesMCP stands in for the graph's MCP servers at /mcp/<server id>: the
// streamable HTTP transport (JSON-RPC over POST, answered as JSON; GET is
// 405), listing each server's tools, each call answered with the case's
// reply for that server and tool.
type casesMCP struct {
	tools   map[string][]string
	mu      sync.Mutex
	replies map[string]map[string]json.RawMessage
	calls   map[string]int
	missing []string
}

type casesMCPReply struct {
	Text    *string        `json:"text"`
	JSON    map[string]any `json:"json"`
	IsError bool           `json:"isError"`
}

func (s *casesMCP) script(replies map[string]map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies, s.calls, s.missing = replies, map[string]int{}, nil
}

func (s *casesMCP) unanswered() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.missing) > 0 {
		return s.missing[0]
	}
	return ""
}

func (s *casesMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	server := strings.TrimPrefix(r.URL.Path, "/mcp/")
	tools, known := s.tools[server]
	if !known {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
			Name            string `json:"name"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	var failure map[string]any
	switch msg.Method {
	case "initialize":
		version := "2025-06-18"
		for _, v := range []string{"2025-06-18", "2025-03-26", "2024-11-05"} {
			if v == msg.Params.ProtocolVersion {
				version = v
			}
		}
		result = map[string]any{"protocolVersion": version, "capabilities": map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo": map[string]any{"name": "stand-in for " + server, "version": "1"}}
	case "ping":
		result = map[string]any{}
	case "tools/list":
		list := []any{}
		for _, name := range tools {
			list = append(list, map[string]any{"name": name, "description": "stand-in for " + server + "/" + name,
				"inputSchema": map[string]any{"type": "object"}})
		}
		result = map[string]any{"tools": list}
	case "tools/call":
		result = s.call(server, msg.Params.Name)
	default:
		failure = map[string]any{"code": -32601, "message": "the stand-in serves initialize, ping, tools/list and tools/call"}
	}
	answer := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
	if failure != nil {
		answer["error"] = failure
	} else {
		answer["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

func (s *casesMCP) call(server, tool string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := server + "/" + tool
	s.calls[key]++
	n := s.calls[key]
	raw, scripted := s.replies[server][tool]
	var reply *casesMCPReply
	if scripted {
		var list []casesMCPReply
		var one casesMCPReply
		if json.Unmarshal(raw, &list) == nil {
			if n <= len(list) {
				reply = &list[n-1]
			}
		} else if json.Unmarshal(raw, &one) == nil {
			reply = &one
		}
	}
	if reply == nil {
		why := fmt.Sprintf("MCP tool `%s` was called; the case scripts no reply for it", key)
		if scripted {
			why = fmt.Sprintf("MCP tool `%s` was called %d times; the case scripts fewer replies", key, n)
		}
		s.missing = append(s.missing, why)
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": why}}, "isError": true}
	}
	text := ""
	if reply.Text != nil {
		text = *reply.Text
	} else if reply.JSON != nil {
		text = casesJSON(reply.JSON)
	}
	result := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": reply.IsError}
	if reply.JSON != nil {
		result["structuredContent"] = reply.JSON
	}
	return result
}
