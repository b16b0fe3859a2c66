package graph

import (
	"context"
	"testing"
)

// Caller is nil outside an A2A call, and each body gets its own roles.
func TestCallerOfTheRun(t *testing.T) {
	if Caller(context.Background()) != nil {
		t.Fatal("a caller outside an A2A call")
	}
	ctx := WithCaller(context.Background(), A2ACaller{Subject: "alice", Roles: []string{"billing"}})
	first := Caller(ctx)
	first.Roles[0] = "changed"
	if again := Caller(ctx); again.Subject != "alice" || again.Roles[0] != "billing" {
		t.Fatalf("%+v", again)
	}
}
