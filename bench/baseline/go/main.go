// Command baseline is the hand-written reference for the Go throughput
// benchmark: a minimal net/http JSON handler doing the same work as the
// service generated from the ir-v2.md example (support_triage): API-key
// check, content type and size limits, state validation with defaults, the
// classify function, the router and the response templates. It serves with
// the read, header and idle timeouts the generated service sets (as a careful
// engineer's server would); -no-timeouts serves with http.ListenAndServe's
// defaults instead, a reference point for what those timeouts cost.
package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	noTimeouts := flag.Bool("no-timeouts", false, "serve without read, header and idle timeouts")
	flag.Parse()
	key := sha256.Sum256([]byte(os.Getenv("SVC_API_KEY")))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/invoke" || r.Method != http.MethodPost {
			http.Error(w, `{"error":{"code":"not_found","message":"no"}}`, http.StatusNotFound)
			return
		}
		got := sha256.Sum256([]byte(r.Header.Get("X-API-Key")))
		if subtle.ConstantTimeCompare(got[:], key[:]) != 1 {
			http.Error(w, `{"error":{"code":"unauthorized","message":"no"}}`, http.StatusUnauthorized)
			return
		}
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			http.Error(w, `{"error":{"code":"unsupported_media_type","message":"no"}}`, http.StatusUnsupportedMediaType)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, `{"error":{"code":"payload_too_large","message":"no"}}`, http.StatusRequestEntityTooLarge)
			return
		}
		var req struct {
			State map[string]any `json:"state"`
		}
		if json.Unmarshal(body, &req) != nil || req.State == nil {
			http.Error(w, `{"error":{"code":"bad_request","message":"no"}}`, http.StatusBadRequest)
			return
		}
		q, ok := req.State["question"].(string)
		if !ok {
			http.Error(w, `{"error":{"code":"invalid_state","message":"no"}}`, http.StatusUnprocessableEntity)
			return
		}
		st := map[string]any{"question": q, "category": "general", "answer": nil}
		if c, ok := req.State["category"].(string); ok {
			st["category"] = c
		}
		if strings.Contains(strings.ToLower(q), "invoice") {
			st["category"] = "billing"
		} else {
			st["category"] = "general"
		}
		if st["category"] == "billing" {
			st["answer"] = "Billing team will answer: " + q
		} else {
			st["answer"] = "General answer to: " + q
		}
		out, _ := json.Marshal(map[string]any{"result": st})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
	srv := &http.Server{Addr: net.JoinHostPort("127.0.0.1", os.Getenv("SVC_PORT")), Handler: h}
	if !*noTimeouts {
		srv.ReadHeaderTimeout = 10 * time.Second
		srv.ReadTimeout = 30 * time.Second
		srv.IdleTimeout = 120 * time.Second
	}
	if err := srv.ListenAndServe(); err != nil {
		os.Exit(1)
	}
}
