// Command loadgen sends the same POST over keep-alive connections for a
// fixed time and prints requests per second and latency percentiles as
// JSON. It is the one load tool of every svc throughput benchmark.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func main() {
	url := flag.String("url", "", "target URL")
	body := flag.String("body", "", "request body")
	conc := flag.Int("c", 16, "concurrent connections")
	dur := flag.Duration("d", 5*time.Second, "duration")
	expect := flag.String("expect", "", "a 2xx reply must contain this text, else it counts as wrong")
	var hdrs headers
	flag.Var(&hdrs, "H", "header `Name: value` (repeatable)")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "usage: loadgen -url URL -body JSON [-H 'K: V'] [-c N] [-d 5s] [-expect TEXT]")
		os.Exit(2)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conc, MaxConnsPerHost: *conc}}
	payload := []byte(*body)
	deadline := time.Now().Add(*dur)
	var mu sync.Mutex
	var latencies []time.Duration
	var errors, non2xx, wrong int
	want := []byte(*expect)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			var errs, bad, off int
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodPost, *url, bytes.NewReader(payload))
				req.Header.Set("Content-Type", "application/json")
				for _, h := range hdrs {
					if k, v, ok := strings.Cut(h, ":"); ok {
						req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
					}
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					errs++
					continue
				}
				var got []byte
				if len(want) > 0 {
					got, _ = io.ReadAll(resp.Body)
				} else {
					_, _ = io.Copy(io.Discard, resp.Body)
				}
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					bad++
				} else if len(want) > 0 && !bytes.Contains(got, want) {
					off++
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			latencies = append(latencies, local...)
			errors += errs
			non2xx += bad
			wrong += off
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	out := map[string]any{
		"requests": len(latencies), "errors": errors, "non2xx": non2xx, "wrong": wrong,
		"rps":    float64(len(latencies)) / elapsed.Seconds(),
		"p50_ms": pct(0.50), "p95_ms": pct(0.95), "p99_ms": pct(0.99),
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
	if errors > 0 || non2xx > 0 || wrong > 0 {
		os.Exit(1)
	}
}
