package server

import (
	"net/http"
	"testing"
)

func TestOnlyAnAskedForEventStreamStreams(t *testing.T) {
	cases := map[string]bool{
		"":                                    false,
		"*/*":                                 false,
		"application/json":                    false,
		"text/event-stream":                   true,
		"TEXT/Event-Stream; charset=utf-8":    true,
		"application/json, text/event-stream": true,
		"text/event-stream;q=0, application/json": false,
		"text/event-stream;q=0.5":                 true,
	}
	for accept, want := range cases {
		r, _ := http.NewRequest(http.MethodPost, "/invoke", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := wantsEventStream(r); got != want {
			t.Errorf("Accept %q: streams %v, want %v", accept, got, want)
		}
	}
}
