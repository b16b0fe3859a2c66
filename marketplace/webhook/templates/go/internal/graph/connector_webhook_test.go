package graph

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// webhookServer answers every request with handler and records what the
// last one carried.
type webhookServer struct {
	*httptest.Server
	path    string
	headers http.Header
	body    map[string]any
}

func newWebhookServer(t *testing.T, handler func(w http.ResponseWriter, r *http.Request)) *webhookServer {
	t.Helper()
	s := &webhookServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.path = r.URL.Path
		s.headers = r.Header.Clone()
		data, _ := io.ReadAll(r.Body)
		s.body = nil
		_ = json.Unmarshal(data, &s.body)
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func webhookReply(status int, body string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// webhookReason is the upstream_error reason of err.
func webhookReason(t *testing.T, err error) string {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want an upstream_error, got %v", err)
	}
	if e.Code != "upstream_error" || e.Details["node"] != "notify" {
		t.Fatalf("want an upstream_error of node notify, got %s %v", e.Code, e.Details)
	}
	reason, _ := e.Details["reason"].(string)
	return reason
}

func TestWebhookSendsChosenFieldsAndKeepsTheReply(t *testing.T) {
	t.Setenv("SVC_TEST_WEBHOOK_TOKEN", "secret")
	srv := newWebhookServer(t, webhookReply(200, `{"ok": true, "id": 7}`))
	t.Setenv("SVC_TEST_WEBHOOK_URL", srv.URL+"/hook")
	state := State{"question": "hi", "other": "not sent"}
	patch, err := webhookSend(context.Background(), webhookConfig{
		Node:      "notify",
		URL:       "env:SVC_TEST_WEBHOOK_URL",
		Fields:    []string{"question"},
		Headers:   map[string]string{"Authorization": "env:SVC_TEST_WEBHOOK_TOKEN", "X-Question": "q={{ question }}"},
		TimeoutMs: 5000,
		OutputKey: "receipt",
	}, state)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.body) != 1 || srv.body["question"] != "hi" {
		t.Errorf("sent %v", srv.body)
	}
	if got := srv.headers.Get("Authorization"); got != "secret" {
		t.Errorf("Authorization = %q", got)
	}
	if got := srv.headers.Get("X-Question"); got != "q=hi" {
		t.Errorf("X-Question = %q", got)
	}
	if got := srv.headers.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	receipt, ok := patch["receipt"].(map[string]any)
	if !ok || receipt["ok"] != true || receipt["id"] != json.Number("7") || len(patch) != 1 {
		t.Errorf("patch = %v", patch)
	}
}

func TestWebhookSendsTheWholeStateAndFillsTheURL(t *testing.T) {
	srv := newWebhookServer(t, webhookReply(200, `{}`))
	state := State{"question": "hi", "id": 42, "missing": nil}
	patch, err := webhookSend(context.Background(), webhookConfig{
		Node:      "notify",
		URL:       srv.URL + "/hooks/{{id}}",
		TimeoutMs: 5000,
	}, state)
	if err != nil {
		t.Fatal(err)
	}
	if len(patch) != 0 {
		t.Errorf("patch = %v", patch)
	}
	if srv.path != "/hooks/42" {
		t.Errorf("path = %q", srv.path)
	}
	if len(srv.body) != 3 || srv.body["question"] != "hi" || srv.body["id"] != float64(42) {
		t.Errorf("sent %v", srv.body)
	}
}

func TestWebhookIgnoresTheReplyWithoutAnOutputKey(t *testing.T) {
	srv := newWebhookServer(t, webhookReply(202, "accepted, not JSON"))
	patch, err := webhookSend(context.Background(), webhookConfig{Node: "notify", URL: srv.URL, TimeoutMs: 5000}, State{})
	if err != nil || len(patch) != 0 {
		t.Fatalf("patch %v, err %v", patch, err)
	}
}

func TestWebhookFailuresHaveTheirReasons(t *testing.T) {
	big := strings.Repeat("x", MaxUpstreamBytes+1)
	cases := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request)
		output  string
		reason  string
	}{
		{"status", webhookReply(503, `{"error": "busy"}`), "receipt", ReasonStatus},
		{"invalid json", webhookReply(200, `{"ok": `), "receipt", ReasonInvalidJSON},
		{"trailing data", webhookReply(200, `{} {}`), "receipt", ReasonInvalidJSON},
		{"too large", webhookReply(200, big), "", ReasonTooLarge},
		{"too large before status", webhookReply(500, big), "receipt", ReasonTooLarge},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, "", ReasonTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newWebhookServer(t, c.handler)
			cfg := webhookConfig{Node: "notify", URL: srv.URL, TimeoutMs: 200, OutputKey: c.output}
			_, err := webhookSend(context.Background(), cfg, State{"question": "hi"})
			if got := webhookReason(t, err); got != c.reason {
				t.Errorf("reason = %q, want %q (%v)", got, c.reason, err)
			}
			if c.reason == ReasonStatus {
				var e *Error
				errors.As(err, &e)
				if e.Details["status"] != 503 {
					t.Errorf("details = %v", e.Details)
				}
			}
		})
	}
}

func TestWebhookConnectFailures(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/hook"
	l.Close()
	t.Setenv("SVC_TEST_WEBHOOK_UNSET", "")
	t.Setenv("SVC_TEST_WEBHOOK_FTP", "ftp://example.com/secret-token")
	for _, url := range []string{closed, "env:SVC_TEST_WEBHOOK_UNSET", "env:SVC_TEST_WEBHOOK_FTP", "http://"} {
		_, err := webhookSend(context.Background(), webhookConfig{Node: "notify", URL: url, TimeoutMs: 2000}, State{})
		if got := webhookReason(t, err); got != ReasonConnect {
			t.Errorf("%s: reason = %q (%v)", url, got, err)
		}
		if strings.Contains(err.Error(), "secret-token") {
			t.Errorf("%s: the message repeats the URL: %v", url, err)
		}
	}
}

// node_webhookProbe stands for a generated connector node function.
func node_webhookProbe(ctx context.Context, state State) (State, error) {
	return webhookSend(ctx, webhookConfig{URL: "env:SVC_TEST_WEBHOOK_UNSET", TimeoutMs: 1000}, state)
}

func TestWebhookNamesTheCallingNode(t *testing.T) {
	t.Setenv("SVC_TEST_WEBHOOK_UNSET", "")
	_, err := node_webhookProbe(context.Background(), State{})
	var e *Error
	if !errors.As(err, &e) || e.Details["node"] != "webhookProbe" {
		t.Fatalf("want an error of node webhookProbe, got %v", err)
	}
}
