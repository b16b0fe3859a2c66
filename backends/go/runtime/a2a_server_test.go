package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"__SVC_GRAPH_IMPORT__"
)

// The graph's A2A agent (docs/http-contract.md, "A2A"): the card at both
// paths, the answers of the contract before JSON-RPC, and the official
// a2a-go client reaching the graph over A2A 1.0 and 0.3.

const a2aTestKey = "a2a-test-key-5e2"

func startA2AService(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(Config{Auth: "api_key", Key: a2aTestKey}))
	t.Cleanup(srv.Close)
	return srv
}

func a2aTestPost(t *testing.T, url string, headers map[string]string, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, resp.Header
}

func TestA2ACardAtBothPaths(t *testing.T) {
	srv := startA2AService(t)
	var cards [][]byte
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json"} {
		resp, err := http.Get(srv.URL + path) // no credential
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, resp.Header)
		}
		cards = append(cards, buf.Bytes())
		// The same card again: 304.
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
		again, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		again.Body.Close()
		if again.StatusCode != http.StatusNotModified {
			t.Fatalf("%s with its ETag: %d", path, again.StatusCode)
		}
	}
	if !bytes.Equal(cards[0], cards[1]) {
		t.Fatalf("two cards:\n%s\n%s", cards[0], cards[1])
	}
	// The SDK's own parser reads it, both layouts (its scopes as plain
	// lists, a2aproject/a2a-go#430).
	card, err := graph.ParseA2ACard(cards[0])
	if err != nil {
		t.Fatalf("%v: %s", err, cards[0])
	}
	if card.Name != a2aAgent.Title || len(card.Skills) != len(a2aAgent.Skills) {
		t.Fatalf("card %+v", card)
	}
	endpoint := srv.URL + "/a2a"
	if len(card.SupportedInterfaces) != 2 || card.SupportedInterfaces[0].URL != endpoint ||
		card.SupportedInterfaces[0].ProtocolVersion != "1.0" || card.SupportedInterfaces[1].ProtocolVersion != "0.3" {
		t.Fatalf("interfaces %+v", card.SupportedInterfaces)
	}
	var raw map[string]any
	_ = json.Unmarshal(cards[0], &raw)
	if raw["url"] != endpoint || raw["protocolVersion"] != "0.3" {
		t.Fatalf("the 0.3 fields: %v", raw)
	}
	if scheme, ok := card.SecuritySchemes["api_key"].(a2a.APIKeySecurityScheme); !ok || scheme.Name != "X-API-Key" {
		t.Fatalf("the key's scheme: %#v", card.SecuritySchemes)
	}
}

func TestA2AAnswersOfTheContract(t *testing.T) {
	srv := startA2AService(t)
	url := srv.URL + "/a2a"
	send := `{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "m1",
		"role": "ROLE_USER", "parts": [{"text": "hi"}], "metadata": {"skillId": "no-such-skill"}}}}`
	v1 := map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0", "X-API-Key": a2aTestKey}

	status, body, _ := a2aTestPost(t, url, map[string]string{"A2A-Version": "1.0"}, send)
	if e, _ := body["error"].(map[string]any); status != http.StatusUnauthorized || e["code"] != "unauthorized" {
		t.Fatalf("no credential: %d %v", status, body)
	}
	status, body, _ = a2aTestPost(t, url, map[string]string{"X-API-Key": "wrong"}, send)
	if status != http.StatusUnauthorized {
		t.Fatalf("a wrong key: %d %v", status, body)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("GET /a2a: %d", resp.StatusCode)
	}
	status, body, _ = a2aTestPost(t, url, v1, `{"pad": "`+strings.Repeat("x", MaxRequestBytes)+`"}`)
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over 1 MiB: %d %v", status, body)
	}
	rpcCode := func(headers map[string]string, body string) float64 {
		t.Helper()
		status, out, _ := a2aTestPost(t, url, headers, body)
		e, ok := out["error"].(map[string]any)
		if status != http.StatusOK || !ok {
			t.Fatalf("%s: %d %v", body, status, out)
		}
		return e["code"].(float64)
	}
	if c := rpcCode(v1, send); c != -32602 {
		t.Fatalf("an unknown skill: %v", c)
	}
	if c := rpcCode(map[string]string{"X-API-Key": a2aTestKey}, send); c != -32009 {
		t.Fatalf("a 1.0 method without A2A-Version: %v", c)
	}
	skill := a2aAgent.Skills[0].ID
	noText := strings.Replace(strings.Replace(send, `{"text": "hi"}`, `{"data": {"a": 1}}`, 1), "no-such-skill", skill, 1)
	if c := rpcCode(v1, noText); c != -32005 {
		t.Fatalf("a message without text: %v", c)
	}
	if c := rpcCode(v1, `{"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "t1"}}`); c != -32001 {
		t.Fatalf("GetTask: %v", c)
	}
	if c := rpcCode(v1, `{"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": "t1"}}`); c != -32001 {
		t.Fatalf("tasks/get (0.3): %v", c)
	}
	if c := rpcCode(v1, `{"jsonrpc": "2.0", "id": 4, "method": "GetExtendedAgentCard", "params": {}}`); c != -32007 {
		t.Fatalf("GetExtendedAgentCard: %v", c)
	}
}

// a2aTestKeyHeader adds the service's key to every request.
type a2aTestKeyHeader struct{}

func (a2aTestKeyHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", a2aTestKey)
	return http.DefaultTransport.RoundTrip(r)
}

// The official client reaches the graph over both protocol versions: the
// answer is the reply message, or the run's own failure as a JSON-RPC
// error carrying the contract's code (a graph that needs a model has none
// here).
func TestA2AOfficialClientReachesTheGraph(t *testing.T) {
	srv := startA2AService(t)
	hc := &http.Client{Transport: a2aTestKeyHeader{}}
	resp, err := http.Get(srv.URL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	card, err := graph.ParseA2ACard(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"1.0", "0.3"} {
		only := *card
		only.SupportedInterfaces = nil
		for _, i := range card.SupportedInterfaces {
			if string(i.ProtocolVersion) == version {
				only.SupportedInterfaces = append(only.SupportedInterfaces, i)
			}
		}
		client, err := a2aclient.NewFromCard(context.Background(), &only,
			a2aclient.WithJSONRPCTransport(hc), a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}))
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Hello"))
		msg.SetMeta("skillId", a2aAgent.Skills[0].ID)
		res, err := client.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: msg})
		var rpc *a2a.Error
		switch {
		case err == nil:
			reply, ok := res.(*a2a.Message)
			if !ok || reply.Role != a2a.MessageRoleAgent || len(reply.Parts) != 1 || reply.Parts[0].Text() == "" {
				t.Fatalf("%s: the reply %#v", version, res)
			}
		case errors.As(err, &rpc):
			if !strings.Contains(rpc.Message, "_error: ") {
				t.Fatalf("%s: the run's error names its code: %v", version, rpc)
			}
		default:
			t.Fatalf("%s: %v", version, err)
		}
	}
}
