// Package server is the HTTP face of the graph: the svc HTTP contract.
package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"svc.dev/runtime/graph"
)

// Limits of the contract.
const (
	MaxRequestBytes  = 1 << 20
	MaxResponseBytes = 4 << 20
)

// Config is what the service needs to answer requests.
type Config struct {
	// Auth is "none", "api_key" or "bearer".
	Auth string
	// Key is the expected credential (never logged).
	Key    string
	Logger *slog.Logger
	// OpenAPI is the document served at GET /openapi.json, without a
	// credential (it describes the contract and holds no data).
	OpenAPI []byte
	// a2a makes the handler of the A2A paths, its callers' tokens read
	// (Open sets it for a graph published as an A2A agent: HandleA2A).
	a2a func(cfg Config) http.Handler
}

type server struct {
	cfg Config
	// authorized checks the service's own credential (CredentialCheck).
	authorized func(r *http.Request) bool
	// threaded answers /invoke, given the body, for a graph with a
	// checkpointer (server_threads.go); nil for every other graph.
	threaded func(w http.ResponseWriter, r *http.Request, body []byte)
	// mcp answers /mcp for a graph published as an MCP tool (HandleMCP);
	// nil for every other graph.
	mcp http.Handler
	// a2a answers /a2a and the agent card's paths for a graph published as
	// an A2A agent (HandleA2A); nil for every other graph.
	a2a http.Handler
	// debugRuntime serves GET /debug/runtime (SVC_DEBUG_RUNTIME=1).
	debugRuntime bool
}

// Prepare readies the graph before the service listens (see graph.Prepare).
func Prepare(ctx context.Context) error {
	return graph.Prepare(ctx)
}

// Open readies the service before it listens: the tokens of its A2A
// agent's callers (HandleA2A), the graph (graph.Start: its rag indexes,
// the sessions to its MCP servers) and, for a graph with a checkpointer,
// its thread store. It returns the handler and what closes it at shutdown;
// an error stops the service.
func Open(ctx context.Context, cfg Config) (http.Handler, func(), error) {
	if openA2A != nil {
		a2a, err := openA2A()
		if err != nil {
			return nil, nil, err
		}
		cfg.a2a = a2a
	}
	release, err := graph.Start(ctx, cfg.Logger)
	if err != nil {
		return nil, nil, err
	}
	if openThreaded != nil {
		handler, closeThreads, err := openThreaded(ctx, cfg)
		if err != nil {
			release()
			return nil, nil, err
		}
		return graph.Traced(handler), func() { closeThreads(); release() }, nil
	}
	return graph.Traced(New(cfg)), release, nil
}

// openThreaded opens the thread store of a graph with a checkpointer and
// returns its handler (server_threads.go sets it); nil for every other
// graph.
var openThreaded func(ctx context.Context, cfg Config) (http.Handler, func(), error)

// New returns the service's handler. A graph with a checkpointer needs its
// thread store: Open or NewThreaded; a graph published as an A2A agent
// needs its callers' tokens: Open.
func New(cfg Config) http.Handler { return newServer(cfg) }

func newServer(cfg Config) *server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &server{cfg: cfg, authorized: cfg.CredentialCheck(),
		debugRuntime: os.Getenv("SVC_DEBUG_RUNTIME") == "1"}
	if newMCPHandler != nil {
		s.mcp = s.mcpHandler(newMCPHandler())
	}
	if cfg.a2a != nil {
		s.a2a = s.a2aHandler(cfg.a2a(cfg))
	}
	return s
}

// openA2A reads the tokens of the A2A agent's callers before the service
// listens, and returns what makes the agent's handler (HandleA2A); nil
// unless the graph is published as an A2A agent (settings.a2a.enabled).
var openA2A func() (func(cfg Config) http.Handler, error)

// HandleA2A makes /a2a and the agent card's paths,
// /.well-known/agent-card.json and /.well-known/agent.json, answer with a
// handler of the graph's A2A agent: package a2a's Publish calls it, for a
// graph published as an A2A agent (settings.a2a); without it those paths
// are not found. Open calls open first, before the graph starts: its error
// (a caller's token variable that is not set) stops the service; what it
// returns makes the handler of each service Open makes, given the
// service's Config (its Logger set). A service made with New has no A2A
// agent: the paths are not found. What the contract says of every endpoint
// comes first, with its envelope: 405 (Allow: POST at /a2a; GET, HEAD at
// the card's paths); the handler answers the rest (its callers' 401, ...),
// and what it leaves of a body at /a2a is drained after.
func HandleA2A(open func() (newHandler func(cfg Config) http.Handler, err error)) {
	openA2A = open
}

// a2aHandler is h behind what the contract says of every endpoint
// (HandleA2A).
func (s *server) a2aHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/a2a" {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				methodNotAllowed(w, "GET, HEAD")
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		defer drain(r)
		if r.Method != http.MethodPost {
			methodNotAllowed(w, "POST")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// newMCPHandler makes the handler of /mcp (HandleMCP); nil unless the
// graph is published as an MCP tool (settings.mcp.expose).
var newMCPHandler func() http.Handler

// HandleMCP makes /mcp answer with a handler newHandler makes for each
// service (New, Open): package mcp's Expose calls it, for a graph
// published as an MCP tool (settings.mcp.expose); without it /mcp is not
// found. What the contract says of every endpoint comes first, with its
// envelope: 405 (Allow: POST), 401 without the credential of /invoke, 413
// for a Content-Length over MaxRequestBytes; the handler answers the rest,
// and what it leaves of the body is drained after.
func HandleMCP(newHandler func() http.Handler) { newMCPHandler = newHandler }

// mcpHandler is h behind what the contract says of every endpoint
// (HandleMCP).
func (s *server) mcpHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer drain(r)
		switch {
		case r.Method != http.MethodPost:
			methodNotAllowed(w, "POST")
		case !s.authorized(r):
			s.unauthorized(w)
		case r.ContentLength > MaxRequestBytes:
			tooLarge(w)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Request lines are logged at debug level only; when that is off the
	// hot path pays nothing for them.
	if s.cfg.Logger.Enabled(r.Context(), slog.LevelDebug) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		s.route(rec, r)
		s.cfg.Logger.Debug("request", "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "duration_ms", time.Since(start).Milliseconds())
		return
	}
	s.route(w, r)
}

func (s *server) route(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/health":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET, HEAD")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	case "/openapi.json":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET, HEAD")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(s.cfg.OpenAPI)
	case "/invoke":
		if r.Method != http.MethodPost {
			methodNotAllowed(w, "POST")
			return
		}
		s.invoke(w, r)
	case "/mcp":
		if s.mcp == nil {
			notFound(w, r)
			return
		}
		s.mcp.ServeHTTP(w, r)
	case "/debug/runtime":
		s.runtimeCounts(w, r)
	case "/a2a", "/.well-known/agent-card.json", "/.well-known/agent.json":
		if s.a2a == nil {
			notFound(w, r)
			return
		}
		s.a2a.ServeHTTP(w, r)
	default:
		notFound(w, r)
	}
}

// runtimeCounts answers GET /debug/runtime when SVC_DEBUG_RUNTIME=1 (off:
// the path is unknown): what the process holds, so that an operator or a
// test can see that abandoned requests leave nothing running.
func (s *server) runtimeCounts(w http.ResponseWriter, r *http.Request) {
	switch {
	case !s.debugRuntime:
		notFound(w, r)
	case r.Method != http.MethodGet:
		methodNotAllowed(w, "GET")
	case !s.authorized(r):
		s.unauthorized(w)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"goroutines": runtime.NumGoroutine()})
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, &graph.Error{Status: http.StatusNotFound, Code: "not_found",
		Message: "no such path: " + r.URL.Path})
}

// CredentialCheck is what tells whether a request carries the service's
// own credential, that of /invoke (any request does with Auth "none"),
// compared in constant time over digests (so the key's length does not
// leak either). The key is hashed once, here: package a2a makes one for
// /a2a of a graph without a token table.
func (c Config) CredentialCheck() func(r *http.Request) bool {
	keyHash := sha256.Sum256([]byte(c.Key))
	return func(r *http.Request) bool { return hasCredential(c.Auth, &keyHash, r) }
}

// hasCredential compares r's credential for the scheme auth with the
// digest of the key, in constant time.
func hasCredential(auth string, keyHash *[sha256.Size]byte, r *http.Request) bool {
	var got string
	switch auth {
	case "none":
		return true
	case "api_key":
		got = r.Header.Get("X-API-Key")
	case "bearer":
		got = bearerToken(r)
	default:
		return false
	}
	if got == "" {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], keyHash[:]) == 1
}

// bearerToken is the token of an Authorization: Bearer header (the word in
// any case), or "".
func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "Bearer ") {
		return ""
	}
	return strings.TrimSpace(h[7:])
}

// unauthorized refuses a request without the right credential.
func (s *server) unauthorized(w http.ResponseWriter) {
	if s.cfg.Auth == "bearer" {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	writeError(w, &graph.Error{Status: http.StatusUnauthorized, Code: "unauthorized",
		Message: "missing or wrong credential"})
}

func (s *server) invoke(w http.ResponseWriter, r *http.Request) {
	// Whatever the answer, the rest of the body (up to a bound) is read
	// first: closing on unread data makes the kernel reset the connection,
	// and a client still sending would never see the answer. Past the body
	// check the whole body has been read.
	if !s.authorized(r) {
		defer drain(r)
		s.unauthorized(w)
		return
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		defer drain(r)
		writeError(w, &graph.Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
			Message: "send the request with Content-Type: application/json"})
		return
	}
	if r.ContentLength > MaxRequestBytes {
		defer drain(r)
		tooLarge(w)
		return
	}
	body, err := readBody(r)
	if err != nil {
		defer drain(r)
		writeError(w, badRequest("cannot read the request body"))
		return
	}
	if len(body) > MaxRequestBytes {
		defer drain(r)
		tooLarge(w)
		return
	}
	if s.threaded != nil {
		s.threaded(w, r, body)
		return
	}
	input, legacy, e := parseRequest(body)
	if e != nil {
		writeError(w, e)
		return
	}
	if streamRun != nil && !legacy && streamRun(w, r, input) {
		return
	}
	st, usage, err := graph.Invoke(r.Context(), input)
	if err != nil {
		writeFailure(w, err, usage)
		return
	}
	writeState(w, st, legacy, "", usage)
}

// InvokeState runs the graph on state, a JSON object, as /invoke runs
// {"state": state} (package mcp's tool calls): the object is read as a
// request's body is (a duplicate key, a value that is not an object: a
// bad_request); empty or null is the empty state. A failure is the
// contract's error. The run's usage is left out: an MCP tool's result is
// the final state alone.
func InvokeState(ctx context.Context, state []byte) (graph.State, *graph.Error) {
	input := map[string]any{}
	if len(state) > 0 && string(state) != "null" {
		var e *graph.Error
		if input, e = parseObject(state, true); e != nil {
			return nil, e
		}
	}
	st, _, err := graph.Invoke(ctx, input)
	if err != nil {
		return nil, asError(err)
	}
	return st, nil
}

// asError is the contract error of a failed run.
func asError(err error) *graph.Error {
	var ge *graph.Error
	if !errors.As(err, &ge) {
		ge = &graph.Error{Status: http.StatusInternalServerError, Code: "execution_error", Message: err.Error()}
	}
	return ge
}

// writeState answers {"result": state}, or the raw state for the legacy
// form; with {"threadId"} for a run on a thread (threadID not "") and
// {"usage"} for a run that asked a model (usage not nil), which the legacy
// form has no room for.
func writeState(w http.ResponseWriter, st graph.State, legacy bool, threadID string, usage *graph.Usage) {
	pooled := responseBuffers.Get().(*[]byte)
	buf, err := appendResult((*pooled)[:0], st, legacy, threadID, usage)
	switch {
	case err != nil:
		writeFailure(w, &graph.Error{Status: http.StatusInternalServerError, Code: "execution_error",
			Message: "the result cannot be encoded as JSON"}, usage)
	case len(buf) > MaxResponseBytes:
		writeFailure(w, &graph.Error{Status: http.StatusInternalServerError, Code: "execution_error",
			Message: "the response is larger than 4 MiB", Details: map[string]any{"reason": "response_too_large"}}, usage)
	default:
		w.Header()["Content-Type"] = jsonContentType
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(buf)
	}
	// A rare huge answer does not stay in the pool.
	if cap(buf) <= 64<<10 {
		*pooled = buf[:0]
		responseBuffers.Put(pooled)
	}
}

// appendResult appends writeState's answer to buf.
func appendResult(buf []byte, st graph.State, legacy bool, threadID string, usage *graph.Usage) ([]byte, error) {
	if legacy {
		return graph.AppendJSON(buf, st)
	}
	buf, err := graph.AppendJSON(append(buf, `{"result":`...), st)
	if err != nil {
		return buf, err
	}
	if threadID != "" {
		id, _ := json.Marshal(threadID)
		buf = append(append(buf, `,"threadId":`...), id...)
	}
	if usage != nil {
		buf = usage.AppendJSON(append(buf, `,"usage":`...))
	}
	return append(buf, '}'), nil
}

// requestKeys are the keys most request bodies have, each its own value:
// the request decoder (request.go) reads these without copying them.
var requestKeys = func() map[string]string {
	keys := map[string]string{"state": "state"}
	for _, f := range graph.Fields() {
		keys[f.Name] = f.Name
	}
	return keys
}()

// responseBuffers hold the bytes of answers being written: Write copies
// them into the connection's buffer, so they are free again on return.
var responseBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// isJSON accepts application/json with or without parameters.
func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// parseRequest accepts {"state": {...}} or, as the legacy Go form, the raw
// state object itself.
func parseRequest(body []byte) (map[string]any, bool, *graph.Error) {
	obj, e := parseObject(body, true)
	if e != nil {
		return nil, false, e
	}
	st, has := obj["state"]
	if !has {
		return obj, true, nil
	}
	if len(obj) != 1 {
		return nil, false, badRequest("a request with `state` may not have other fields")
	}
	stObj, ok := st.(map[string]any)
	if !ok {
		return nil, false, badRequest("`state` must be a JSON object")
	}
	return stObj, false, nil
}

// parseObject decodes a body that must be a JSON object; rawState says
// whether the body itself may be the state (the legacy form), whose
// duplicate keys are state fields.
func parseObject(body []byte, rawState bool) (map[string]any, *graph.Error) {
	v, err := decodeStrict(body, rawState)
	if err != nil {
		e := badRequest(err.Error())
		var je *jsonError
		if errors.As(err, &je) && je.field != "" {
			e.Details = map[string]any{"field": je.field}
		}
		return nil, e
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, badRequest("the body must be a JSON object")
	}
	return obj, nil
}

// streamRun answers a request that asks for text/event-stream and reports
// whether it did; nil unless the graph has settings.streaming (stream.go
// sets it).
var streamRun func(w http.ResponseWriter, r *http.Request, input map[string]any) bool

// streamEvents answers with a run's events a request that asks for
// text/event-stream, and reports whether it did: first, then what exec
// observes, then exec's last event, or run_failed with its error. nil
// unless the graph has settings.streaming (stream.go sets it).
var streamEvents func(w http.ResponseWriter, r *http.Request, first graph.Event, exec runFunc) bool

// A runFunc runs a run that passed its checks, its node and token events
// sent to observe; it returns its last event (run_finished, interrupted)
// and, however it ended, its usage (nil when it asked no model).
type runFunc func(ctx context.Context, observe graph.Observer) (graph.Event, *graph.Usage, error)

func badRequest(msg string) *graph.Error {
	return &graph.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: msg}
}

// readBody reads up to MaxRequestBytes+1 bytes of the body: into a buffer
// of its exact size when the request gives its length.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength < 0 {
		return io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	}
	body := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(r.Body, body); err != nil {
		return nil, err
	}
	return body, nil
}

// drain reads and discards what is left of a request body, up to
// DrainBytes; the server closes the connection on a longer one.
func drain(r *http.Request) {
	if r.ContentLength <= DrainBytes {
		_, _ = io.CopyN(io.Discard, r.Body, DrainBytes)
	}
}

func tooLarge(w http.ResponseWriter) {
	writeError(w, &graph.Error{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large",
		Message: "the request body is larger than 1 MiB"})
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, &graph.Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
		Message: "use " + allow})
}

// WriteError answers with e as the contract's error: its status and the
// envelope {"error": {"code", "message", "details"?}} (package a2a's
// answers at /a2a and the card's paths).
func WriteError(w http.ResponseWriter, e *graph.Error) { writeError(w, e) }

func writeError(w http.ResponseWriter, e *graph.Error) {
	writeJSON(w, e.Status, map[string]any{"error": errorBody(e)})
}

// writeFailure answers a run that failed: its error, with the run's usage
// beside it when it asked a model (usage not nil).
func writeFailure(w http.ResponseWriter, err error, usage *graph.Usage) {
	e := asError(err)
	envelope := map[string]any{"error": errorBody(e)}
	if usage != nil {
		envelope["usage"] = usage
	}
	writeJSON(w, e.Status, envelope)
}

// errorBody is the envelope's {"code", "message", "details"?}.
func errorBody(e *graph.Error) map[string]any {
	body := map[string]any{"code": e.Code, "message": e.Message}
	if len(e.Details) > 0 {
		body["details"] = e.Details
	}
	return body
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err == nil && len(data) > MaxResponseBytes {
		status = http.StatusInternalServerError
		data, err = json.Marshal(map[string]any{"error": map[string]any{
			"code": "execution_error", "message": "the response is larger than 4 MiB",
			"details": map[string]any{"reason": "response_too_large"}}})
	}
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":{"code":"execution_error","message":"the result cannot be encoded as JSON"}}`)
	}
	h := w.Header()
	h["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

var jsonContentType = []string{"application/json"}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}
