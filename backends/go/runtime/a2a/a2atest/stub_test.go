package a2atest_test

import (
	"context"
	"testing"
	"time"

	_ "svc.dev/runtime/a2a"
	"svc.dev/runtime/a2a/a2atest"
	svc "svc.dev/runtime/graph"
)

// The stand-in answers an agent of kind a2a as a project's tests run it:
// the graph's agent registered, package a2a imported for effect, the card
// URL written in the graph (its host sent to the stand-in) or read from a
// variable set to the stand-in's URL.
func TestStubAnswersTheGraphsA2AAgents(t *testing.T) {
	stub := a2atest.StartStub(t)
	t.Setenv("A2A_STUB_TEST_KEY", "stub-key")
	t.Setenv("A2A_STUB_TEST_URL", stub.URL)
	a2atest.StubHosts(t, stub, "rates.example.com")
	agents := map[string]*svc.Agent{
		"rates": {Name: "rates", Kind: "a2a", CardURL: "https://rates.example.com", KeyEnv: "A2A_STUB_TEST_KEY",
			SkillID: "convert", Timeout: 5 * time.Second},
		"local": {Name: "local", Kind: "a2a", CardURL: "env:A2A_STUB_TEST_URL", Timeout: 5 * time.Second},
	}
	svc.RegisterAgents(agents, map[string]svc.AgentTool{})
	t.Cleanup(func() { svc.RegisterAgents(nil, nil) })
	for name := range agents {
		out, err := svc.RunAgent(context.Background(), "ask", name, "100 EUR in CHF?", nil)
		if err != nil || out != "stub reply to: 100 EUR in CHF?" {
			t.Fatalf("%s: %q %v", name, out, err)
		}
	}
}
