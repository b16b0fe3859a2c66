package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	svc "svc.dev/runtime/graph"
	"svc.dev/runtime/server"
)

// /mcp through the official Go client, and the answers of the contract
// before it (python-svc: sdk/python/tests/test_mcp_server.py).

const mcpTestKey = "mcp-test-key-7c1d"

// The stub graph (graph/svcstub.go) published as one MCP tool, as a
// project's mcp_expose.go publishes its graph.
func init() {
	Expose(ExposeOptions{ToolName: "answer_question", ServerName: "svcstub", ServerVersion: "0.1.0"})
}

// startMCPService serves the handler on a loopback port with auth ("api_key"
// or "bearer") and returns the URL of /mcp.
func startMCPService(t *testing.T, auth string) string {
	t.Helper()
	srv := httptest.NewServer(server.New(server.Config{Auth: auth, Key: mcpTestKey}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// mcpTestHeader adds one header to every request of an MCP client.
type mcpTestHeader struct{ name, value string }

func (h mcpTestHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpTestSession is a session of the official client with the credential
// header, or an error when the service refuses it.
func mcpTestSession(t *testing.T, url, header, value string) (*mcpsdk.ClientSession, error) {
	t.Helper()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil)
	transport := &mcpsdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: mcpTestHeader{header, value}}}
	cs, err := client.Connect(context.Background(), transport, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func TestStateSchema(t *testing.T) {
	fields := []svc.Field{
		{Name: "text", Type: svc.TypeString, Required: true},
		{Name: "mode", Type: svc.TypeString, Default: func() any { return "normal" }},
		{Name: "count", Type: svc.TypeInteger, Default: func() any { return 0 }},
		{Name: "tags", Type: svc.TypeArray, Items: &svc.Item{Type: svc.TypeString}, Append: true,
			Default: func() any { return []any{} }},
		{Name: "chat", Type: svc.TypeMessages},
		{Name: "reply", Type: svc.TypeString},
	}
	message := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"role": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}},
		"required": []any{"role", "content"}, "additionalProperties": false,
	}
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"text":  map[string]any{"type": "string"},
			"mode":  map[string]any{"type": "string", "default": "normal"},
			"count": map[string]any{"type": "integer", "default": 0},
			"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "default": []any{}},
			"chat":  map[string]any{"type": "array", "items": message},
			"reply": map[string]any{"type": "string"},
		},
		"required":             []string{"text"},
		"additionalProperties": false,
	}
	if got := stateSchema(fields, false); !reflect.DeepEqual(got, want) {
		t.Errorf("input schema:\n%v\nwant\n%v", got, want)
	}
	out := stateSchema(fields, true)
	if !reflect.DeepEqual(out["required"], []string{"text", "mode", "count", "tags", "chat", "reply"}) {
		t.Errorf("output schema's required: %v", out["required"])
	}
	if got := out["properties"].(map[string]any)["count"]; !reflect.DeepEqual(got, map[string]any{"type": []any{"integer", "null"}}) {
		t.Errorf("output schema of count: %v", got)
	}
	if _, ok := out["additionalProperties"]; ok {
		t.Error("the output schema closes the result")
	}
}

func TestTheGraphIsOneMCPTool(t *testing.T) {
	cs, err := mcpTestSession(t, startMCPService(t, "api_key"), "X-API-Key", mcpTestKey)
	if err != nil {
		t.Fatal(err)
	}
	if info := cs.InitializeResult().ServerInfo; info.Name != mcpExpose.ServerName || info.Version != mcpExpose.ServerVersion {
		t.Errorf("server info: %+v", info)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != mcpExpose.ToolName {
		t.Fatalf("tools: %+v", tools.Tools)
	}
	// The schema as it travels: JSON, as the client reads it.
	var want any
	data, _ := json.Marshal(stateSchema(svc.Fields(), false))
	_ = json.Unmarshal(data, &want)
	if got := tools.Tools[0].InputSchema; !reflect.DeepEqual(got, want) {
		t.Errorf("input schema: %v, want %v", got, want)
	}
	// Every graph refuses a field it does not declare: an error result
	// with the contract's envelope, never a JSON-RPC error.
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: mcpExpose.ToolName,
		Arguments: map[string]any{"svc_no_such_field": 1}})
	if err != nil {
		t.Fatal(err)
	}
	envelope, _ := res.StructuredContent.(map[string]any)
	e, _ := envelope["error"].(map[string]any)
	if !res.IsError || e["code"] != "invalid_state" ||
		!reflect.DeepEqual(e["details"], map[string]any{"field": "svc_no_such_field"}) {
		t.Fatalf("an unknown field: %+v", res)
	}
	var text any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcpsdk.TextContent).Text), &text); err != nil || !reflect.DeepEqual(text, envelope) {
		t.Fatalf("the text is not the envelope: %v", res.Content)
	}
	// Duplicate keys are refused as /invoke refuses them.
	res, err = cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: mcpExpose.ToolName,
		Arguments: json.RawMessage(`{"svc_x": 1, "svc_x": 2}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcpsdk.TextContent).Text, `"bad_request"`) {
		t.Fatalf("duplicate keys: %v %+v", err, res)
	}
}

func TestAFinalStateIsStructuredContentAndText(t *testing.T) {
	st := svc.State{}
	for _, f := range svc.Fields() {
		st[f.Name] = nil
	}
	res := mcpFinalState(st)
	want, _ := svc.AppendJSON(nil, st)
	if res.IsError || string(res.StructuredContent.(json.RawMessage)) != string(want) ||
		res.Content[0].(*mcpsdk.TextContent).Text != string(want) {
		t.Fatalf("final state: %+v", res)
	}
}

func TestMCPNeedsTheCredential(t *testing.T) {
	const initialize = `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", ` +
		`"capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}`
	send := func(url, method string, header map[string]string, body string) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var decoded map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&decoded)
		return resp, decoded
	}
	url := startMCPService(t, "api_key")
	for _, header := range []map[string]string{{}, {"X-API-Key": "bogus-9q"}, {"Authorization": "Bearer " + mcpTestKey}} {
		resp, body := send(url, "POST", header, initialize)
		want := map[string]any{"error": map[string]any{"code": "unauthorized", "message": "missing or wrong credential"}}
		if resp.StatusCode != http.StatusUnauthorized || !reflect.DeepEqual(body, want) ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%v: %d %v", header, resp.StatusCode, body)
		}
	}
	if _, err := mcpTestSession(t, url, "X-API-Key", "bogus-9q"); err == nil {
		t.Error("the official client got a session with a wrong key")
	}
	resp, body := send(url, "POST", map[string]string{"X-API-Key": mcpTestKey}, initialize)
	if result, _ := body["result"].(map[string]any); resp.StatusCode != http.StatusOK || result["serverInfo"] == nil {
		t.Errorf("initialize with the key: %d %v", resp.StatusCode, body)
	}
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("an answer as %q, not JSON", resp.Header.Get("Content-Type"))
	}
	for _, method := range []string{"GET", "DELETE", "PUT"} {
		resp, body := send(url, method, map[string]string{"X-API-Key": mcpTestKey}, "")
		e, _ := body["error"].(map[string]any)
		if resp.StatusCode != http.StatusMethodNotAllowed || e["code"] != "method_not_allowed" || resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s: %d %v", method, resp.StatusCode, body)
		}
	}
	big := "[" + strings.Repeat(" ", server.MaxRequestBytes) + "]"
	resp, body = send(url, "POST", map[string]string{"X-API-Key": mcpTestKey}, big)
	if e, _ := body["error"].(map[string]any); resp.StatusCode != http.StatusRequestEntityTooLarge || e["code"] != "payload_too_large" {
		t.Errorf("1 MiB + 1: %d %v", resp.StatusCode, body)
	}
	if resp, _ := send(url, "POST", nil, big); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an oversized body without the key: %d, want 401 first", resp.StatusCode)
	}
	if resp, _ := send(url+"/", "POST", map[string]string{"X-API-Key": mcpTestKey}, initialize); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/mcp/: %d", resp.StatusCode)
	}

	bearer := startMCPService(t, "bearer")
	resp, _ = send(bearer, "POST", map[string]string{"X-API-Key": mcpTestKey}, initialize)
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("bearer with an API key: %d %v", resp.StatusCode, resp.Header)
	}
	if _, err := mcpTestSession(t, bearer, "Authorization", "Bearer "+mcpTestKey); err != nil {
		t.Errorf("bearer with the token: %v", err)
	}
}
