//go:build unix

package mcp

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What happens to stdio children: killed, dead while idle, stopped with
// the service, and the processes they started.

// processExists reports whether the process exists: a child of the
// service that ended exists until it is reaped.
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }

// processRunning reports whether the process exists and has not ended: where
// /proc tells, a zombie (ended, not yet reaped by its parent, which may be
// init) is not running.
func processRunning(pid int) bool {
	if !processExists(pid) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || !strings.Contains(string(stat), ") Z ")
}

func mcpChildPID(t *testing.T, server string) int {
	t.Helper()
	pid, err := strconv.Atoi(mcpCall(t, server, "pid", map[string]any{}).Text)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// mcpWaitFor waits up to 10s for done.
func mcpWaitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	for ends := time.Now().Add(10 * time.Second); !done(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(ends) {
			t.Fatalf("%s did not happen within 10s", what)
		}
	}
}

func TestMCPKilledChildFailsTheCallThenRespawns(t *testing.T) {
	useMCP(t, []Server{mcpStdioServer(t, "local")}, nil)
	pid := mcpChildPID(t, "local")
	time.AfterFunc(500*time.Millisecond, func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	e := mcpCallFails(t, "local", "slow", map[string]any{"seconds": 10})
	if e.Details["reason"] != "connect" || !strings.Contains(e.Message, "the session broke") {
		t.Fatalf("the mcpCall the child died under: %v", e)
	}
	respawned := mcpChildPID(t, "local")
	if respawned == pid || !processRunning(respawned) {
		t.Fatalf("not respawned: %d, then %d", pid, respawned)
	}
	mcpWaitFor(t, "reaping the killed child", func() bool { return !processExists(pid) })
}

func TestMCPChildThatDiedWhileIdleIsRespawnedByTheNextCall(t *testing.T) {
	useMCP(t, []Server{mcpStdioServer(t, "local")}, nil)
	pid := mcpChildPID(t, "local")
	_ = syscall.Kill(pid, syscall.SIGKILL)
	c, _ := mcpPool.client("local")
	mcpWaitFor(t, "noticing the dead child", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return !processExists(pid) && !c.current.usable()
	})
	// The session is known to be gone before anything is sent: no failed call.
	if mcpChildPID(t, "local") == pid {
		t.Fatal("the same child answered")
	}
}

func TestMCPStartUpOpensTheSessionsAndStopStopsTheChildren(t *testing.T) {
	useMCP(t, []Server{mcpStdioServer(t, "local")}, []Tool{{"local", "add"}})
	stop, err := openMCPClients(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The session start-up opened is the one calls use.
	pid := mcpChildPID(t, "local")
	if again := mcpChildPID(t, "local"); again != pid {
		t.Fatalf("a second child: %d, then %d", pid, again)
	}
	grandchild, err := strconv.Atoi(mcpCall(t, "local", "spawn", map[string]any{}).Text)
	if err != nil {
		t.Fatal(err)
	}
	// What agents show the model: the server's description and input schema.
	description, schema := Tool{"local", "add"}.Listed()
	required, _ := schema["required"].([]any)
	if description != "Adds two integers." || len(required) != 2 || required[0] != "a" {
		t.Fatalf("listed: %q %v", description, schema)
	}
	stop()
	if processExists(pid) || processRunning(grandchild) {
		t.Fatalf("left after stop: the child %v, its own child %v", processExists(pid), processRunning(grandchild))
	}
	stop() // idempotent
	// A call after stop starts afresh.
	if mcpChildPID(t, "local") == pid {
		t.Fatal("the stopped child answered")
	}
}
