package graph

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Calls made several at a time to one host keep their connections for the
// next calls: with net/http's default of two idle connections per host,
// each round of eight concurrent calls would dial six again.
func TestConcurrentCallsToOneHostReuseTheirConnections(t *testing.T) {
	var dialed atomic.Int32
	release := make(chan struct{})
	var arrived sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release // every call of a round is in flight at once
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok": true}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialed.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	const calls = 8
	round := func() {
		arrived.Add(calls)
		var done sync.WaitGroup
		for range calls {
			done.Add(1)
			go func() {
				defer done.Done()
				if _, err := postJSON(context.Background(), "n", srv.URL, nil, 0, map[string]any{}); err != nil {
					t.Error(err)
				}
			}()
		}
		arrived.Wait()
		for range calls {
			release <- struct{}{}
		}
		done.Wait()
	}
	round()
	first := dialed.Load()
	for range 3 {
		round()
	}
	if first != calls || dialed.Load() != first {
		t.Fatalf("dialed %d connections for the first round of %d calls and %d for the next three, want %d and none", first, calls, dialed.Load()-first, calls)
	}
}
