package graph

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// slackNotifyServer answers with status after delay and records the last body.
func slackNotifyServer(t *testing.T, status int, delay time.Duration, body *map[string]any) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, body)
		time.Sleep(delay)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func slackNotifyReason(t *testing.T, err error) string {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != "upstream_error" || e.Details["node"] != "post" {
		t.Fatalf("want an upstream_error of node post, got %v", err)
	}
	reason, _ := e.Details["reason"].(string)
	return reason
}

func TestSlackNotifyPostsTheFilledMessage(t *testing.T) {
	var body map[string]any
	url := slackNotifyServer(t, 200, 0, &body)
	t.Setenv("SLACK_NOTIFY_TEST_URL", url+"/hook")
	state := State{"ticket": "disk full", "n": 3}
	patch, err := slackNotifyPost(context.Background(), "post", "env:SLACK_NOTIFY_TEST_URL",
		"New ticket: {{ticket}} ({{ n }}, {{missing}}) {{open", 1000, "posted", state)
	if err != nil {
		t.Fatal(err)
	}
	want := "New ticket: disk full (3, ) {{open"
	if body["text"] != want || patch["posted"] != want {
		t.Fatalf("sent %v, patch %v", body, patch)
	}
	patch, err = slackNotifyPost(context.Background(), "post", url, "x", 1000, "", state)
	if err != nil || len(patch) != 0 {
		t.Fatalf("without an output key: %v %v", patch, err)
	}
}

func TestSlackNotifyFailuresAreUpstreamErrors(t *testing.T) {
	var body map[string]any
	failing := slackNotifyServer(t, 500, 0, &body)
	if _, err := slackNotifyPost(context.Background(), "post", failing, "x", 1000, "", State{}); slackNotifyReason(t, err) != "status" {
		t.Fatalf("a 500 is not status: %v", err)
	}
	slow := slackNotifyServer(t, 200, 300*time.Millisecond, &body)
	if _, err := slackNotifyPost(context.Background(), "post", slow, "x", 50, "", State{}); slackNotifyReason(t, err) != "timeout" {
		t.Fatalf("a slow webhook is not timeout: %v", err)
	}
	t.Setenv("SLACK_NOTIFY_UNSET", "")
	_, err := slackNotifyPost(context.Background(), "post", "env:SLACK_NOTIFY_UNSET", "x", 1000, "", State{})
	if slackNotifyReason(t, err) != "connect" {
		t.Fatalf("an unset variable is not connect: %v", err)
	}
	if _, err := slackNotifyPost(context.Background(), "post", "http://127.0.0.1:1/", "x", 1000, "", State{}); slackNotifyReason(t, err) != "connect" {
		t.Fatalf("a closed port is not connect: %v", err)
	}
}
