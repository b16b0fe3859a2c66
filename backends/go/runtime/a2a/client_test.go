package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	svc "svc.dev/runtime/graph"
)

// Agents of kind a2a against peers made of the a2a-go SDK's own server
// parts (its request handler and JSON-RPC transport), with a card in the
// layout a2a-sdk for Python writes ({"list": [...]} scopes).

// a2aTestPeer answers with JSON naming the text, the skill and the key it
// got; "fail" fails the task, "work" leaves it working a while, then
// completes it with an artifact.
type a2aTestPeer struct{}

func (a2aTestPeer) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {
		text := ""
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		key := ""
		if v, ok := ec.ServiceParams.Get("x-api-key"); ok && len(v) > 0 {
			key = v[0]
		}
		switch text {
		case "fail":
			task := a2asdk.NewSubmittedTask(ec, ec.Message)
			task.Status = a2asdk.TaskStatus{State: a2asdk.TaskStateFailed,
				Message: a2asdk.NewMessage(a2asdk.MessageRoleAgent, a2asdk.NewTextPart("asked to fail"))}
			yield(task, nil)
			return
		case "big":
			yield(a2asdk.NewMessage(a2asdk.MessageRoleAgent, a2asdk.NewTextPart(strings.Repeat("x", svc.MaxUpstreamBytes+10))), nil)
			return
		case "slow":
			select {
			case <-ctx.Done():
			case <-time.After(3 * time.Second):
			}
		}
		reply, _ := json.Marshal(map[string]any{"text": text, "skill": ec.Message.Metadata["skillId"], "key": key})
		yield(a2asdk.NewMessage(a2asdk.MessageRoleAgent, a2asdk.NewTextPart(string(reply))), nil)
	}
}

func (a2aTestPeer) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {}
}

// startA2APeer serves the peer: its card at cardPath (the endpoint's URL
// is endpoint(base) when given, else base/rpc) and JSON-RPC at /rpc;
// /status answers 401.
func startA2APeer(t *testing.T, cardPath string, endpoint func(base string) string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	rpc := srv.URL + "/rpc"
	if endpoint != nil {
		rpc = endpoint(srv.URL)
	}
	card := fmt.Sprintf(`{"name": "peer", "description": "d", "version": "1",
		"supportedInterfaces": [{"url": %q, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
		"capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
		"securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}},
		"securityRequirements": [{"schemes": {"key": {}}}],
		"skills": [{"id": "convert", "name": "Convert", "description": "c", "tags": ["fx"],
			"securityRequirements": [{"schemes": {"key": {"list": ["fx"]}}}]}]}`, rpc)
	mux.HandleFunc(cardPath, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-Key") != "" {
			http.Error(w, "a card is fetched without a credential", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(card))
	})
	mux.Handle("/rpc", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(a2aTestPeer{})))
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	})
	return srv
}

func a2aTestAgent(cardURL string) *svc.Agent {
	return &svc.Agent{Name: "peer", Kind: "a2a", CardURL: cardURL, KeyEnv: "A2A_TEST_PEER_KEY",
		SkillID: "convert", Timeout: 2 * time.Second}
}

func TestA2AAgentSendsTheTextTheSkillAndTheKey(t *testing.T) {
	t.Setenv("A2A_TEST_PEER_KEY", "peer-key-1")
	peer := startA2APeer(t, a2aCardPath, nil)
	// A URL without a path: the well-known card path.
	out, err := runA2A(context.Background(), "ask", a2aTestAgent(peer.URL), "100 EUR in CHF?")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]any{"text": "100 EUR in CHF?", "skill": "convert", "key": "peer-key-1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestA2AAgentFallsBackToTheLegacyCardPath(t *testing.T) {
	t.Setenv("A2A_TEST_PEER_KEY", "peer-key-1")
	peer := startA2APeer(t, a2aLegacyCardPath, nil)
	if _, err := runA2A(context.Background(), "ask", a2aTestAgent(peer.URL+"/"), "hi"); err != nil {
		t.Fatal(err)
	}
	// The 404 of the first path is not the failure of a later call.
	a2aCards.Clear()
	if r, _ := a2aTestReason(t, a2aTestAgent(peer.URL), "fail"); r != ReasonA2AError {
		t.Fatalf("a failed task after the fallback: %s", r)
	}
}

// a2aTestReason runs the agent and returns its error's reason.
func a2aTestReason(t *testing.T, a *svc.Agent, text string) (string, *svc.Error) {
	t.Helper()
	_, err := runA2A(context.Background(), "ask", a, text)
	e, ok := err.(*svc.Error)
	if !ok || e.Code != "upstream_error" || e.Status != http.StatusBadGateway || e.Details["node"] != "peer" {
		t.Fatalf("want an upstream_error naming the agent, got %#v", err)
	}
	reason, _ := e.Details["reason"].(string)
	return reason, e
}

func TestA2AAgentFailures(t *testing.T) {
	t.Setenv("A2A_TEST_PEER_KEY", "peer-key-1")
	peer := startA2APeer(t, a2aCardPath, nil)
	a := a2aTestAgent(peer.URL)
	if r, e := a2aTestReason(t, a, "fail"); r != ReasonA2AError || !strings.Contains(e.Message, "failed: asked to fail") {
		t.Fatalf("a failed task: %s %q", r, e.Message)
	}
	if r, _ := a2aTestReason(t, a, "big"); r != svc.ReasonTooLarge {
		t.Fatalf("a reply over 4 MiB: %s", r)
	}
	a.Timeout = 300 * time.Millisecond
	if r, _ := a2aTestReason(t, a, "slow"); r != svc.ReasonTimeout {
		t.Fatalf("a slow peer: %s", r)
	}
	// The endpoint answers 401: the status is in the details.
	refusing := startA2APeer(t, a2aCardPath, func(base string) string { return base + "/status" })
	r, e := a2aTestReason(t, a2aTestAgent(refusing.URL), "hi")
	if r != svc.ReasonStatus || e.Details["status"] != http.StatusUnauthorized {
		t.Fatalf("a 401: %s %v", r, e.Details)
	}
	// A card naming another origin: nothing is sent there.
	elsewhere := startA2APeer(t, a2aCardPath, func(string) string { return peer.URL + "/rpc" })
	if r, e := a2aTestReason(t, a2aTestAgent(elsewhere.URL), "hi"); r != svc.ReasonConnect || !strings.Contains(e.Message, "origin") {
		t.Fatalf("a card pointing elsewhere: %s %q", r, e.Message)
	}
	// No card: its status.
	if r, e := a2aTestReason(t, a2aTestAgent(peer.URL+"/nothing.json"), "hi"); r != svc.ReasonStatus || e.Details["status"] != http.StatusNotFound {
		t.Fatalf("no card: %s %v", r, e.Details)
	}
	// A peer that is gone.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if r, _ := a2aTestReason(t, a2aTestAgent(gone.URL), "hi"); r != svc.ReasonConnect {
		t.Fatalf("a peer that is gone: %s", r)
	}
}

func TestA2AAgentNeedsItsVariables(t *testing.T) {
	a := a2aTestAgent("env:A2A_TEST_UNSET_URL")
	_, err := runA2A(context.Background(), "ask", a, "hi")
	if err == nil || !strings.Contains(err.Error(), "A2A_TEST_UNSET_URL") {
		t.Fatalf("an unset card URL variable: %v", err)
	}
	t.Setenv("A2A_TEST_PEER_KEY", "")
	a = a2aTestAgent("http://127.0.0.1:9")
	_, err = runA2A(context.Background(), "ask", a, "hi")
	if err == nil || !strings.Contains(err.Error(), "A2A_TEST_PEER_KEY") {
		t.Fatalf("an unset key variable: %v", err)
	}
}

func TestA2ACardScopesInEitherForm(t *testing.T) {
	for _, scopes := range []string{`{"list": ["a"]}`, `["a"]`, `{}`} {
		card, err := parseCard([]byte(`{"name": "p", "supportedInterfaces": [],
			"securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
			"securityRequirements": [{"schemes": {"bearer": ` + scopes + `}}], "skills": []}`))
		if err != nil {
			t.Fatalf("%s: %v", scopes, err)
		}
		if got := a2aCredential(card, "k"); got["Authorization"] != "Bearer k" {
			t.Fatalf("%s: a bearer-only card gets the key as a bearer token, got %v", scopes, got)
		}
	}
}
