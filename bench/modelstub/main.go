// Command modelstub is the model provider of bench/model_calls.py: an
// OpenAI-compatible chat-completions endpoint that answers every request
// at once (or after -delay, a model's think time for bench/parallel.py)
// with the same short reply and its usage, so a benchmark measures the
// service's model layer and not the model. It serves on a loopback port
// and prints that port on its first line.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

const reply = `{"id":"chatcmpl-bench","object":"chat.completion","model":"bench-model",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"It ships today."},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`

func main() {
	delay := flag.Duration("delay", 0, "how long each reply waits")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	http.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		// Read the whole request, as a provider does, before answering.
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(*delay)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	})
	if err := http.Serve(ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
