package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"svc.dev/runtime/graph"
	"svc.dev/runtime/server"
)

// The graph's A2A agent (docs/http-contract.md, "A2A"): the card at both
// paths, the answers of the contract before JSON-RPC, the official a2a-go
// client reaching the graph over A2A 1.0 and 0.3, and who may call it (the
// callers of settings.a2a.tokens and their roles, or the service's key).

// The stub graph (graph/svcstub.go) published as an A2A agent, as a
// project's a2a_agent.go publishes its graph: the agent card's title,
// description and skills, and the state field a message's text goes to.
func init() {
	Publish(Spec{
		Title:       "Stub desk",
		Description: "Echoes the question.",
		Version:     "0.1.0",
		InputField:  "question",
		Skills: []Skill{
			{ID: "echo", Name: "Echo", Description: "Echoes one question.", Tags: []string{"echo"}},
		},
	})
}

const a2aTestKey = "a2a-test-key-5e2"

// a2aTestToken is the token the tests give the i-th caller of the graph's
// settings.a2a.tokens.
func a2aTestToken(i int) string { return fmt.Sprintf("a2a-test-token-%d", i) }

func startA2AService(t *testing.T) *httptest.Server {
	t.Helper()
	for i, tok := range a2aAgent.Tokens {
		t.Setenv(tok.Env, a2aTestToken(i))
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	handler, release, err := server.Open(context.Background(), server.Config{Auth: "api_key", Key: a2aTestKey, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(func() { srv.Close(); release() })
	return srv
}

// a2aTestCaller is a credential /a2a takes (the header and its value) and
// a skill it may call: the service's key and the first skill, or with a
// token table the first caller allowed a skill.
func a2aTestCaller(t *testing.T) (string, string, string) {
	t.Helper()
	if len(a2aAgent.Tokens) == 0 {
		return "X-API-Key", a2aTestKey, a2aAgent.Skills[0].ID
	}
	for i, tok := range a2aAgent.Tokens {
		id := &a2aIdentity{caller: graph.A2ACaller{Subject: tok.Subject, Roles: tok.Roles}}
		for j := range a2aAgent.Skills {
			if !id.mayCall(&a2aAgent.Skills[j]) {
				continue
			}
			if tok.Scheme == "bearer" {
				return "Authorization", "Bearer " + a2aTestToken(i), a2aAgent.Skills[j].ID
			}
			return "X-API-Key", a2aTestToken(i), a2aAgent.Skills[j].ID
		}
	}
	t.Skip("no caller of settings.a2a.tokens may call any skill")
	return "", "", ""
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
		// Only read (package server answers the method).
		post, err := http.Post(srv.URL+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		post.Body.Close()
		if post.StatusCode != http.StatusMethodNotAllowed || post.Header.Get("Allow") != "GET, HEAD" {
			t.Fatalf("POST %s: %d %v", path, post.StatusCode, post.Header)
		}
	}
	if !bytes.Equal(cards[0], cards[1]) {
		t.Fatalf("two cards:\n%s\n%s", cards[0], cards[1])
	}
	// The SDK's own parser reads it, both layouts (its scopes as plain
	// lists, a2aproject/a2a-go#430).
	card, err := parseCard(cards[0])
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
	// The schemes /a2a takes: the service's key, or those of the token table.
	want := map[string]bool{}
	for _, tok := range a2aAgent.Tokens {
		want[tok.Scheme] = true
	}
	if len(want) == 0 {
		want["api_key"] = true
	}
	if len(card.SecuritySchemes) != len(want) {
		t.Fatalf("the schemes: %#v (want %v)", card.SecuritySchemes, want)
	}
	if scheme, ok := card.SecuritySchemes["api_key"].(a2asdk.APIKeySecurityScheme); want["api_key"] && (!ok || scheme.Name != "X-API-Key") {
		t.Fatalf("the key's scheme: %#v", card.SecuritySchemes)
	}
	if scheme, ok := card.SecuritySchemes["bearer"].(a2asdk.HTTPAuthSecurityScheme); want["bearer"] && (!ok || scheme.Scheme != "Bearer") {
		t.Fatalf("the bearer scheme: %#v", card.SecuritySchemes)
	}
}

func TestA2AAnswersOfTheContract(t *testing.T) {
	srv := startA2AService(t)
	header, credential, skill := a2aTestCaller(t)
	url := srv.URL + "/a2a"
	send := `{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "m1",
		"role": "ROLE_USER", "parts": [{"text": "hi"}], "metadata": {"skillId": "no-such-skill"}}}}`
	v1 := map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0", header: credential}

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
	status, body, _ = a2aTestPost(t, url, v1, `{"pad": "`+strings.Repeat("x", server.MaxRequestBytes)+`"}`)
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
	if c := rpcCode(map[string]string{header: credential}, send); c != -32009 {
		t.Fatalf("a 1.0 method without A2A-Version: %v", c)
	}
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

// a2aTestCredential adds a credential to every request.
type a2aTestCredential struct{ header, value string }

func (c a2aTestCredential) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(c.header, c.value)
	return http.DefaultTransport.RoundTrip(r)
}

// The official client reaches the graph over both protocol versions: the
// answer is the reply message, or the run's own failure as a JSON-RPC
// error carrying the contract's code (a graph that needs a model has none
// here).
func TestA2AOfficialClientReachesTheGraph(t *testing.T) {
	srv := startA2AService(t)
	header, credential, skill := a2aTestCaller(t)
	hc := &http.Client{Transport: a2aTestCredential{header, credential}}
	resp, err := http.Get(srv.URL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	card, err := parseCard(buf.Bytes())
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
		msg := a2asdk.NewMessage(a2asdk.MessageRoleUser, a2asdk.NewTextPart("Hello"))
		msg.SetMeta("skillId", skill)
		res, err := client.SendMessage(context.Background(), &a2asdk.SendMessageRequest{Message: msg})
		var rpc *a2asdk.Error
		switch {
		case err == nil:
			reply, ok := res.(*a2asdk.Message)
			if !ok || reply.Role != a2asdk.MessageRoleAgent || len(reply.Parts) != 1 || reply.Parts[0].Text() == "" {
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

// a2aRecorder stands in for the JSON-RPC handlers: it notes the caller
// each request reached them with.
type a2aRecorder struct{ callers []*graph.A2ACaller }

func (rec *a2aRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.callers = append(rec.callers, graph.Caller(r.Context()))
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":1,"jsonrpc":"2.0","result":{}}`)
}

// a2aTestSpec is the graph's agent with two skills, one for the role
// "billing", and a2aTestTable's callers.
func a2aTestSpec(tokens []Token) Spec {
	spec := a2aAgent
	spec.Skills = []Skill{
		{ID: "open", Name: "Open", Description: "Open", Tags: []string{"open"}},
		{ID: "refund", Name: "Refund", Description: "Refund", Tags: []string{"refund"}, Roles: []string{"billing", "finance"}},
	}
	spec.Tokens = tokens
	return spec
}

var a2aTestTable = []Token{
	{Subject: "alice", Roles: []string{"billing"}, Env: "ALICE_TOKEN", Scheme: "bearer"},
	{Subject: "bob", Roles: []string{"support"}, Env: "BOB_KEY", Scheme: "api_key"},
}

func a2aTestEnv(values map[string]string) func(string) string {
	return func(name string) string { return values[name] }
}

// a2aTestServer publishes spec (with the table's tokens from env) on a
// service with cfg.
func a2aTestServer(t *testing.T, cfg server.Config, spec Spec, env map[string]string) *a2aServer {
	t.Helper()
	table, err := loadA2ATokens(spec.Tokens, a2aTestEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	return newA2AServer(cfg, spec, table)
}

// a2aTestRecording serves spec (with the table's tokens from env) on a
// service with cfg, its JSON-RPC handlers replaced by a recorder.
func a2aTestRecording(t *testing.T, cfg server.Config, spec Spec, env map[string]string) (string, *a2aRecorder) {
	t.Helper()
	a := a2aTestServer(t, cfg, spec, env)
	rec := &a2aRecorder{}
	a.current, a.legacy = rec, rec
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return srv.URL + "/a2a", rec
}

func a2aTestSend(method, skill string) string {
	part := `{"text": "hi"}`
	if strings.Contains(method, "/") {
		part = `{"kind": "text", "text": "hi"}`
	}
	return fmt.Sprintf(`{"jsonrpc": "2.0", "id": 1, "method": %q, "params": {"message": {"messageId": "m1",
		"role": "ROLE_USER", "parts": [%s], "metadata": {"skillId": %q}}}}`, method, part, skill)
}

// The tokens come from the environment: an unset or empty variable, or two
// callers with one token, stop the service, naming the entry and variable.
func TestA2ATokensComeFromTheEnvironment(t *testing.T) {
	ok := map[string]string{"ALICE_TOKEN": "a-1", "BOB_KEY": "b-2"}
	table, err := loadA2ATokens(a2aTestTable, a2aTestEnv(ok))
	if err != nil || len(table) != 2 || table[1].caller.Subject != "bob" || table[1].scheme != "api_key" {
		t.Fatalf("%v %+v", err, table)
	}
	for _, c := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"BOB_KEY": "b-2"}, []string{"settings.a2a.tokens[0] (alice)", "ALICE_TOKEN, which is not set", "Authorization: Bearer"}},
		{map[string]string{"ALICE_TOKEN": "a-1", "BOB_KEY": ""}, []string{"settings.a2a.tokens[1] (bob)", "BOB_KEY, which is not set", "X-API-Key"}},
		{map[string]string{"ALICE_TOKEN": "same", "BOB_KEY": "same"}, []string{"tokens[1] (bob, from BOB_KEY) has the same token as settings.a2a.tokens[0] (alice, from ALICE_TOKEN)"}},
	} {
		_, err := loadA2ATokens(a2aTestTable, a2aTestEnv(c.env))
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Fatalf("%v: want %q in %v", c.env, w, err)
			}
		}
	}
	// Open reads the graph's own table so, before anything listens.
	if len(a2aAgent.Tokens) == 0 {
		return
	}
	for i, tok := range a2aAgent.Tokens {
		t.Setenv(tok.Env, a2aTestToken(i))
	}
	first := a2aAgent.Tokens[0]
	t.Setenv(first.Env, "")
	_, _, err = server.Open(context.Background(), server.Config{Auth: "api_key", Key: a2aTestKey})
	want := fmt.Sprintf("settings.a2a.tokens[0] (%s) reads its token from %s, which is not set", first.Subject, first.Env)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open without %s: %v", first.Env, err)
	}
}

// With a token table: each caller by its scheme, roles limiting the
// skills (403 forbidden naming the skill), the service's own key refused,
// and the caller reaching the run's context.
func TestA2ACallersAndRoles(t *testing.T) {
	env := map[string]string{"ALICE_TOKEN": "alice-tok", "BOB_KEY": "bob-key"}
	url, rec := a2aTestRecording(t, server.Config{Auth: "api_key", Key: a2aTestKey}, a2aTestSpec(a2aTestTable), env)
	alice := map[string]string{"Authorization": "Bearer alice-tok", "A2A-Version": "1.0"}
	bob := map[string]string{"X-API-Key": "bob-key", "A2A-Version": "1.0"}
	for name, headers := range map[string]map[string]string{
		"no credential":            {"A2A-Version": "1.0"},
		"the service's own key":    {"X-API-Key": a2aTestKey},
		"a wrong token":            {"Authorization": "Bearer nope"},
		"bob's key as bearer":      {"Authorization": "Bearer bob-key"},
		"alice's token as a key":   {"X-API-Key": "alice-tok"},
		"the token without Bearer": {"Authorization": "alice-tok"},
	} {
		status, body, h := a2aTestPost(t, url, headers, a2aTestSend("SendMessage", "open"))
		e, _ := body["error"].(map[string]any)
		if status != http.StatusUnauthorized || e["code"] != "unauthorized" || h.Get("WWW-Authenticate") != "Bearer" {
			t.Fatalf("%s: %d %v %v", name, status, body, h)
		}
	}
	if len(rec.callers) != 0 {
		t.Fatalf("a refused request reached the handler: %v", rec.callers)
	}
	for _, method := range []string{"SendMessage", "message/stream"} {
		status, body, _ := a2aTestPost(t, url, bob, a2aTestSend(method, "refund"))
		e, _ := body["error"].(map[string]any)
		details, _ := e["details"].(map[string]any)
		msg, _ := e["message"].(string)
		if status != http.StatusForbidden || e["code"] != "forbidden" || details["skill"] != "refund" ||
			msg != `the skill "refund" is for the roles billing, finance; "bob" holds support` {
			t.Fatalf("%s: bob on refund: %d %v", method, status, body)
		}
	}
	for _, c := range []struct {
		headers map[string]string
		method  string
		skill   string
		want    graph.A2ACaller
	}{
		{alice, "SendMessage", "refund", graph.A2ACaller{Subject: "alice", Roles: []string{"billing"}}},
		{alice, "message/send", "open", graph.A2ACaller{Subject: "alice", Roles: []string{"billing"}}},
		{bob, "SendStreamingMessage", "open", graph.A2ACaller{Subject: "bob", Roles: []string{"support"}}},
		// An unknown skill is the JSON-RPC handler's to answer (-32602).
		{bob, "SendMessage", "nope", graph.A2ACaller{Subject: "bob", Roles: []string{"support"}}},
	} {
		rec.callers = nil
		status, body, _ := a2aTestPost(t, url, c.headers, a2aTestSend(c.method, c.skill))
		if status != http.StatusOK || len(rec.callers) != 1 || rec.callers[0] == nil || !reflect.DeepEqual(*rec.callers[0], c.want) {
			t.Fatalf("%s %s: %d %v, caller %v", c.method, c.skill, status, body, rec.callers)
		}
	}
}

// A skill's roles hold for the message the SDK reads: a body with bytes
// after its JSON (which the SDK's decoder leaves unread) is refused 403 as
// the same body without them, and the responder itself refuses a message
// for a skill the caller lacks the roles of, whatever the check before
// dispatch saw.
func TestA2ARolesHoldForTheMessageTheSDKReads(t *testing.T) {
	env := map[string]string{"ALICE_TOKEN": "alice-tok", "BOB_KEY": "bob-key"}
	a := a2aTestServer(t, server.Config{Auth: "api_key", Key: a2aTestKey}, a2aTestSpec(a2aTestTable), env)
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	bob := map[string]string{"X-API-Key": "bob-key", "A2A-Version": "1.0"}
	for _, method := range []string{"SendMessage", "SendStreamingMessage", "message/send", "message/stream"} {
		for _, tail := range []string{"x", " {}", "\n]"} {
			status, body, _ := a2aTestPost(t, srv.URL+"/a2a", bob, a2aTestSend(method, "refund")+tail)
			e, _ := body["error"].(map[string]any)
			if status != http.StatusForbidden || e["code"] != "forbidden" {
				t.Fatalf("%s with %q after the JSON: %d %v", method, tail, status, body)
			}
		}
	}
	msg := a2asdk.NewMessage(a2asdk.MessageRoleUser, a2asdk.NewTextPart("hi"))
	msg.SetMeta("skillId", "refund")
	req := &a2asdk.SendMessageRequest{Message: msg}
	id := a.creds.identify(httptest.NewRequest(http.MethodPost, "/a2a", nil))
	if id != nil {
		t.Fatalf("no credential identified as %+v", id)
	}
	asBob := httptest.NewRequest(http.MethodPost, "/a2a", nil)
	asBob.Header.Set("X-API-Key", "bob-key")
	id = a.creds.identify(asBob)
	ctx := context.WithValue(graph.WithCaller(context.Background(), id.caller), a2aIdentityKey{}, id)
	_, err := a.responder.answer(ctx, req)
	var rpc *a2asdk.Error
	if !errors.As(err, &rpc) || !errors.Is(err, a2asdk.ErrInvalidRequest) || rpc.Message != `the skill "refund" is not for this caller` {
		t.Fatalf("bob's message for refund, in the responder: %v", err)
	}
	if _, err := a.responder.answer(context.Background(), req); !errors.Is(err, a2asdk.ErrInternalError) {
		t.Fatalf("a message without a caller: %v", err)
	}
}

// Without a table: the service's own key is the caller "service", whom no
// skill's roles limit; with security.auth none, anyone is "anonymous",
// who holds no role.
func TestA2AWithoutTokensTheServiceKeyOrAnyone(t *testing.T) {
	spec := a2aTestSpec(nil)
	url, rec := a2aTestRecording(t, server.Config{Auth: "bearer", Key: a2aTestKey}, spec, nil)
	status, body, h := a2aTestPost(t, url, map[string]string{"X-API-Key": a2aTestKey}, a2aTestSend("SendMessage", "refund"))
	if status != http.StatusUnauthorized || h.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("an API key on a bearer service: %d %v", status, body)
	}
	headers := map[string]string{"Authorization": "Bearer " + a2aTestKey, "A2A-Version": "1.0"}
	status, body, _ = a2aTestPost(t, url, headers, a2aTestSend("SendMessage", "refund"))
	want := graph.A2ACaller{Subject: "service", Roles: []string{}}
	if status != http.StatusOK || len(rec.callers) != 1 || !reflect.DeepEqual(*rec.callers[0], want) {
		t.Fatalf("the service's key: %d %v %v", status, body, rec.callers)
	}
	url, rec = a2aTestRecording(t, server.Config{Auth: "none"}, spec, nil)
	status, body, _ = a2aTestPost(t, url, map[string]string{"A2A-Version": "1.0"}, a2aTestSend("SendMessage", "refund"))
	if status != http.StatusForbidden || len(rec.callers) != 0 {
		t.Fatalf("anonymous on a skill with roles: %d %v", status, body)
	}
	status, body, _ = a2aTestPost(t, url, map[string]string{"A2A-Version": "1.0"}, a2aTestSend("SendMessage", "open"))
	want = graph.A2ACaller{Subject: "anonymous", Roles: []string{}}
	if status != http.StatusOK || len(rec.callers) != 1 || !reflect.DeepEqual(*rec.callers[0], want) {
		t.Fatalf("no credential asked: %d %v %v", status, body, rec.callers)
	}
}

// The card declares the table's schemes, and each skill's roles as the
// scopes of its requirements, as python-svc writes them.
func TestA2ACardDeclaresTheTablesSchemes(t *testing.T) {
	env := map[string]string{"ALICE_TOKEN": "alice-tok", "BOB_KEY": "bob-key"}
	a := a2aTestServer(t, server.Config{Auth: "api_key", Key: a2aTestKey}, a2aTestSpec(a2aTestTable), env)
	card := cardOf(a.spec, "http://x/a2a", a.creds.schemes)
	text, _ := json.Marshal(card)
	var raw map[string]any
	_ = json.Unmarshal(text, &raw)
	schemes, _ := raw["securitySchemes"].(map[string]any)
	if len(schemes) != 2 || schemes["bearer"] == nil || schemes["api_key"] == nil {
		t.Fatalf("schemes: %s", text)
	}
	skills := raw["skills"].([]any)
	refund, _ := json.Marshal(skills[1].(map[string]any)["securityRequirements"])
	if string(refund) != `[{"schemes":{"bearer":{"list":["billing","finance"]}}},{"schemes":{"api_key":{"list":["billing","finance"]}}}]` {
		t.Fatalf("refund's requirements: %s", refund)
	}
	if _, ok := skills[0].(map[string]any)["securityRequirements"]; ok {
		t.Fatalf("a skill without roles has requirements: %s", text)
	}
	parsed, err := parseCard(text)
	if err != nil || len(parsed.Skills) != 2 {
		t.Fatalf("%v: %s", err, text)
	}
}
