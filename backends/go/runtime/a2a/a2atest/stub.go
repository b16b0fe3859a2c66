// Package a2atest holds what a generated project's own tests use of the
// runtime's A2A: a stand-in for the remote A2A agents its graph calls
// (agents of kind a2a, called through package a2a). Only tests import it:
// a service does not link the SDK's server parts it is made of, nor package
// testing.
package a2atest

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// A stand-in for the A2A agents the graph calls, made of the a2a-go SDK's
// own server parts: its card at any path but /rpc (the API key scheme),
// JSON-RPC at /rpc; it answers "stub reply to: <text>". Agents whose card
// URL is written in the graph reach it through StubHosts.

type a2aStubAgent struct{}

func (a2aStubAgent) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {
		text := ""
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		yield(a2asdk.NewMessage(a2asdk.MessageRoleAgent, a2asdk.NewTextPart("stub reply to: "+text)), nil)
	}
}

func (a2aStubAgent) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {}
}

// StartStub serves the stand-in; its URL is the card URL to give every
// A2A agent. Its card names the endpoint on the origin the card was asked
// from (X-Stub-Origin, set by StubHosts), so the credential may go there.
func StartStub(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("X-Stub-Origin")
		if origin == "" {
			origin = srv.URL
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name": "stub", "description": "A stand-in.", "version": "1",
			"supportedInterfaces": [{"url": %q, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
			"capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
			"securitySchemes": {"api_key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}},
			"skills": []}`, origin+"/rpc")
	})
	mux.Handle("/rpc", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(a2aStubAgent{})))
	return srv
}

// StubHosts sends every request for hosts (those of card URLs written in
// the graph) to the stand-in, for the rest of the test.
func StubHosts(t *testing.T, stub *httptest.Server, hosts ...string) {
	t.Helper()
	target, _ := url.Parse(stub.URL)
	orig := http.DefaultTransport
	http.DefaultTransport = a2aStubHosts{target: target, hosts: hosts, base: orig}
	t.Cleanup(func() { http.DefaultTransport = orig })
}

type a2aStubHosts struct {
	target *url.URL
	hosts  []string
	base   http.RoundTripper
}

func (h a2aStubHosts) RoundTrip(r *http.Request) (*http.Response, error) {
	if !slices.Contains(h.hosts, r.URL.Host) {
		return h.base.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("X-Stub-Origin", r.URL.Scheme+"://"+r.URL.Host)
	r2.URL.Scheme, r2.URL.Host, r2.Host = h.target.Scheme, h.target.Host, ""
	return h.base.RoundTrip(r2)
}
