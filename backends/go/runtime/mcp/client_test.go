package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	svc "svc.dev/runtime/graph"
)

// The MCP client against servers made with the official Go SDK: over stdio
// (this test binary, run again as TestMCPHelperServer), SSE and streamable
// HTTP (in this process, on 127.0.0.1). The expectations are python-svc's
// (sdk/python/tests/test_mcp_client.py).

// mcpOpenMS bounds opening a session in these tests.
const mcpOpenMS = 10000

// TestMCPHelperServer is not a test: it is the stdio server the tests start
// as a child (SVC_MCP_HELPER=stdio, which the child gets through its Env).
func TestMCPHelperServer(t *testing.T) {
	if os.Getenv("SVC_MCP_HELPER") != "stdio" {
		return
	}
	_ = newTestMCPServer(nil).Run(context.Background(), &mcpsdk.StdioTransport{})
	os.Exit(0)
}

// newTestMCPServer serves the tools the tests call; calls, when not nil,
// counts every call.
func newTestMCPServer(calls *atomic.Int64) *mcpsdk.Server {
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "svc-test", Version: "1"}, nil)
	tool := func(name, description string, properties map[string]any, required []string,
		answer func(ctx context.Context, args map[string]any, req *mcpsdk.CallToolRequest) *mcpsdk.CallToolResult) {
		schema := map[string]any{"type": "object", "properties": properties}
		if required != nil {
			schema["required"] = required
		}
		srv.AddTool(&mcpsdk.Tool{Name: name, Description: description, InputSchema: schema},
			func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				if calls != nil {
					calls.Add(1)
				}
				var args map[string]any
				_ = json.Unmarshal(req.Params.Arguments, &args)
				return answer(ctx, args, req), nil
			})
	}
	text := func(s string) *mcpsdk.CallToolResult {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: s}}}
	}
	str := func(args map[string]any, key string) string { s, _ := args[key].(string); return s }
	integer := map[string]any{"type": "integer"}
	textArg := map[string]any{"type": "string"}
	tool("add", "Adds two integers.", map[string]any{"a": integer, "b": integer}, []string{"a", "b"},
		func(_ context.Context, args map[string]any, _ *mcpsdk.CallToolRequest) *mcpsdk.CallToolResult {
			sum := args["a"].(float64) + args["b"].(float64)
			res := text(strconv.FormatFloat(sum, 'f', -1, 64))
			res.StructuredContent = map[string]any{"result": sum}
			return res
		})
	tool("echo", "Answers with the text it was given.", map[string]any{"text": textArg}, []string{"text"},
		func(_ context.Context, args map[string]any, _ *mcpsdk.CallToolRequest) *mcpsdk.CallToolResult {
			return text(str(args, "text"))
		})
	tool("fail", "Always fails.", map[string]any{}, nil,
		func(context.Context, map[string]any, *mcpsdk.CallToolRequest) *mcpsdk.CallToolResult {
			res := text("the tool broke on purpose")
			res.IsError = true
			return res
		})
	tool("slow", "Sleeps, then answers.", map[string]any{"seconds": map[string]any{"type": "number"}}, []string{"seconds"},
		func(ctx context.Context, args map[string]any, _ *mcpsdk.CallToolRequest) *mcpsdk.CallToolResult {
			seconds, _ := args["seconds"].(float64)
			select {
			case <-time.After(time.Duration(seconds * float64(time.Second))):
			case <-ctx.Done():
			}
			return text(fmt.Sprintf("slept %v", seconds))
		})
	tool("env_value", "The server's environment variable name.", map[string]any{"name": textArg}, []string{"name"},
		func(_ context.Context, args map[string]any, _ *mcpsdk.CallToolRequest) *mcpsdk.CallToolResult {
			return text(os.Getenv(str(args, "name")))
		})
	tool("meta", "The entry key of the request's _meta.", map[string]any{"key": textArg}, []string{"key"},
		func(_ context.Context, args map[string]any, req *mcpsdk.CallToolRequest) *mcpsdk.CallToolResult {
			v, _ := req.Params.Meta[str(args, "key")].(string)
			return text(v)
		})
	tool("pid", "The server's process id.", map[string]any{}, nil,
		func(context.Context, map[string]any, *mcpsdk.CallToolRequest) *mcpsdk.CallToolResult {
			return text(strconv.Itoa(os.Getpid()))
		})
	tool("spawn", "Starts a process of its own that sleeps a minute; its id.", map[string]any{}, nil,
		func(context.Context, map[string]any, *mcpsdk.CallToolRequest) *mcpsdk.CallToolResult {
			cmd := exec.Command("sleep", "60")
			if err := cmd.Start(); err != nil {
				return &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: err.Error()}}}
			}
			return text(strconv.Itoa(cmd.Process.Pid))
		})
	return srv
}

// useMCP makes servers and tools the graph's for one test; every session
// is stopped when it ends.
func useMCP(t *testing.T, servers []Server, tools []Tool) {
	t.Helper()
	oldServers, oldTools, oldPool := registeredServers, registeredTools, mcpPool
	registeredServers, registeredTools, mcpPool = servers, tools, &mcpClientPool{}
	t.Cleanup(func() {
		mcpPool.stop()
		registeredServers, registeredTools, mcpPool = oldServers, oldTools, oldPool
	})
}

// mcpStdioServer is the helper server, run as a child of the service.
func mcpStdioServer(t *testing.T, id string) Server {
	t.Setenv("SVC_MCP_HELPER_ROLE", "stdio")
	return Server{ID: id, Transport: "stdio", Command: os.Args[0],
		Args: []string{"-test.run=^TestMCPHelperServer$"}, Env: map[string]string{"SVC_MCP_HELPER": "env:SVC_MCP_HELPER_ROLE"},
		Timeout: mcpOpenMS * time.Millisecond}
}

// An mcpHTTPServer is the test server on a loopback port, over sse or
// streamable_http, which a test can stop and start again.
type mcpHTTPServer struct {
	transport, addr, url string
	mu                   sync.Mutex
	srv                  *http.Server
	calls                atomic.Int64
	// auth is the Authorization header of the last request.
	auth atomic.Value
}

func startMCPHTTPServer(t *testing.T, transport string) *mcpHTTPServer {
	t.Helper()
	h := &mcpHTTPServer{transport: transport}
	h.start(t)
	t.Cleanup(h.stop)
	return h
}

func (h *mcpHTTPServer) start(t *testing.T) {
	t.Helper()
	addr := h.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	h.addr = l.Addr().String()
	mcpServer := newTestMCPServer(&h.calls)
	get := func(*http.Request) *mcpsdk.Server { return mcpServer }
	var handler http.Handler = mcpsdk.NewStreamableHTTPHandler(get, nil)
	h.url = "http://" + h.addr + "/mcp"
	if h.transport == "sse" {
		handler = mcpsdk.NewSSEHandler(get, nil)
		h.url = "http://" + h.addr + "/sse"
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.auth.Store(r.Header.Get("Authorization"))
		handler.ServeHTTP(w, r)
	})}
	h.mu.Lock()
	h.srv = srv
	h.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

// stop closes the listener and every connection at once.
func (h *mcpHTTPServer) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = h.srv.Close()
}

// mcpFailure is the *svc.Error of a call that must fail with 502 upstream_error.
func mcpFailure(t *testing.T, err error) *svc.Error {
	t.Helper()
	var e *svc.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadGateway || e.Code != "upstream_error" {
		t.Fatalf("want a 502 upstream_error, got %v", err)
	}
	return e
}

func mcpCall(t *testing.T, server, tool string, args map[string]any) Result {
	t.Helper()
	r, err := CallTool(context.Background(), "n", Tool{server, tool}, args)
	if err != nil {
		t.Fatalf("%s on %s: %v", tool, server, err)
	}
	return r
}

func mcpCallFails(t *testing.T, server, tool string, args map[string]any) *svc.Error {
	t.Helper()
	_, err := CallTool(context.Background(), "n", Tool{server, tool}, args)
	return mcpFailure(t, err)
}

// --- results -------------------------------------------------------------------

func TestMCPOutput(t *testing.T) {
	structured := Result{Structured: map[string]any{"result": json.Number("3")}, Text: "3"}
	cases := []struct {
		result   Result
		asObject bool
		want     any
	}{
		{structured, true, map[string]any{"result": json.Number("3")}},
		{structured, false, "3"},
		{Result{Text: `{"a": 1}`}, true, map[string]any{"a": json.Number("1")}},
		{Result{Text: "[1]"}, true, map[string]any{"text": "[1]"}},
		{Result{Text: `{"a": 1} {}`}, true, map[string]any{"text": `{"a": 1} {}`}},
		{Result{Text: "plain"}, true, map[string]any{"text": "plain"}},
	}
	for _, c := range cases {
		if got := c.result.Output(c.asObject); !reflect.DeepEqual(got, c.want) {
			t.Errorf("output(%+v, %v) = %#v, want %#v", c.result, c.asObject, got, c.want)
		}
	}
	if got := structured.ForModel(); !reflect.DeepEqual(got, structured.Structured) {
		t.Errorf("ForModel of a structured result: %#v", got)
	}
	if got := (Result{Text: "plain"}).ForModel(); got != "plain" {
		t.Errorf("ForModel of a text result: %#v", got)
	}
	numbers := withJSONNumbers(map[string]any{"n": []any{5.0, 2.5, 1e21, map[string]any{"m": 1e-7}}})
	want := map[string]any{"n": []any{json.Number("5"), json.Number("2.5"), json.Number("1e+21"),
		map[string]any{"m": json.Number("1e-07")}}}
	if !reflect.DeepEqual(numbers, want) {
		t.Errorf("withJSONNumbers: %#v", numbers)
	}
}

func TestMCPMinimalCheck(t *testing.T) {
	schema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"a": map[string]any{"type": "integer"}, "n": map[string]any{"type": []any{"number", "null"}}},
		"required":   []any{"a"},
	}
	cases := map[string]struct {
		args any
		want string
	}{
		"fine":            {map[string]any{"a": 1.0, "n": nil}, ""},
		"a number":        {map[string]any{"a": 1.0, "n": 2.5}, ""},
		"missing":         {map[string]any{}, `the required property "a" is missing`},
		"wrong type":      {map[string]any{"a": "x"}, `"a" must be of type integer, not "x"`},
		"not an integer":  {map[string]any{"a": 1.5}, `"a" must be of type integer, not 1.5`},
		"a boolean":       {map[string]any{"a": true}, `"a" must be of type integer, not true`},
		"not an object":   {[]any{1.0}, "the arguments are not an object"},
		"unknown type ok": {map[string]any{"a": 1.0, "n": "x"}, `"n" must be of type [number null], not "x"`},
	}
	for name, c := range cases {
		if got := minimalCheck(schema, c.args); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
	// A draft the validator does not know gets the minimal check.
	old := map[string]any{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
		"properties": map[string]any{"a": map[string]any{"type": "integer"}}, "required": []any{"a"}}
	check := argumentCheck(old)
	if got := check(map[string]any{"a": 1.0}); got != "" {
		t.Errorf("draft-04, good arguments: %q", got)
	}
	if got := check(map[string]any{}); got != `the required property "a" is missing` {
		t.Errorf("draft-04, missing a: %q", got)
	}
}

// --- calls ---------------------------------------------------------------------

func TestMCPCallOverEachTransport(t *testing.T) {
	for _, transport := range []string{"stdio", "sse", "streamable_http"} {
		t.Run(transport, func(t *testing.T) {
			server := mcpStdioServer(t, "srv")
			var web *mcpHTTPServer
			if transport != "stdio" {
				web = startMCPHTTPServer(t, transport)
				t.Setenv("SVC_MCP_URL", web.url)
				t.Setenv("SVC_MCP_TOKEN", "t0k")
				server = Server{ID: "srv", Transport: transport, URL: "env:SVC_MCP_URL",
					Headers: map[string]string{"Authorization": "Bearer ${SVC_MCP_TOKEN}"}, Timeout: mcpOpenMS * time.Millisecond}
			}
			useMCP(t, []Server{server}, nil)
			added := mcpCall(t, "srv", "add", map[string]any{"a": 2, "b": json.Number("3")})
			want := Result{Structured: map[string]any{"result": json.Number("5")}, Text: "5"}
			if !reflect.DeepEqual(added, want) {
				t.Fatalf("add: %#v", added)
			}
			echoed := mcpCall(t, "srv", "echo", map[string]any{"text": "héllo"})
			if echoed.Structured != nil || echoed.Text != "héllo" {
				t.Fatalf("echo: %#v", echoed)
			}
			if transport != "stdio" {
				if got := web.auth.Load(); got != "Bearer t0k" {
					t.Fatalf("the Authorization header the server got: %v", got)
				}
			}
		})
	}
}

func TestMCPArgumentsAreCheckedBeforeTheCall(t *testing.T) {
	web := startMCPHTTPServer(t, "streamable_http")
	useMCP(t, []Server{{ID: "web", Transport: "streamable_http", URL: web.url}}, nil)
	if got := mcpCall(t, "web", "add", map[string]any{"a": 1, "b": 1}).Text; got != "2" {
		t.Fatalf("add: %q", got)
	}
	e := mcpCallFails(t, "web", "add", map[string]any{"a": "one", "b": 1})
	want := map[string]any{"node": "n", "server": "web", "tool": "add", "reason": "invalid_arguments"}
	if !reflect.DeepEqual(e.Details, want) {
		t.Fatalf("details: %v", e.Details)
	}
	if !strings.Contains(e.Message, `node "n": MCP tool "add" on server "web": invalid arguments: `) ||
		!strings.Contains(e.Message, "/properties/a") {
		t.Fatalf("message: %s", e.Message)
	}
	e = mcpCallFails(t, "web", "add", map[string]any{"a": 1})
	if e.Details["reason"] != "invalid_arguments" || !strings.Contains(e.Message, `"b"`) {
		t.Fatalf("a missing argument: %v", e)
	}
	if n := web.calls.Load(); n != 1 {
		t.Fatalf("%d calls reached the server, want 1", n)
	}
}

func TestMCPToolErrorCarriesItsText(t *testing.T) {
	useMCP(t, []Server{mcpStdioServer(t, "local")}, nil)
	e := mcpCallFails(t, "local", "fail", map[string]any{})
	want := map[string]any{"node": "n", "server": "local", "tool": "fail", "reason": "tool_error"}
	if !reflect.DeepEqual(e.Details, want) {
		t.Fatalf("details: %v", e.Details)
	}
	if e.Message != `node "n": MCP tool "fail" on server "local" failed: the tool broke on purpose` {
		t.Fatalf("message: %s", e.Message)
	}
}

func TestMCPCallPastTheTimeoutTimesOutAndTheNextCallWorks(t *testing.T) {
	web := startMCPHTTPServer(t, "streamable_http")
	useMCP(t, []Server{{ID: "web", Transport: "streamable_http", URL: web.url, Timeout: 1500 * time.Millisecond}}, nil)
	mcpCall(t, "web", "echo", map[string]any{"text": "warm"})
	started := time.Now()
	e := mcpCallFails(t, "web", "slow", map[string]any{"seconds": 10})
	if e.Details["reason"] != "timeout" || !strings.Contains(e.Message, "1500ms") {
		t.Fatalf("slow: %v", e)
	}
	if elapsed := time.Since(started); elapsed > 3*time.Second {
		t.Fatalf("the timeout took %v", elapsed)
	}
	if got := mcpCall(t, "web", "echo", map[string]any{"text": "still here"}).Text; got != "still here" {
		t.Fatalf("after the timeout: %q", got)
	}
}

func TestMCPRunDeadlineBoundsACall(t *testing.T) {
	useMCP(t, []Server{mcpStdioServer(t, "local")}, nil)
	mcpCall(t, "local", "echo", map[string]any{"text": "warm"})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	started := time.Now()
	_, err := CallTool(ctx, "n", Tool{"local", "slow"}, map[string]any{"seconds": 10})
	if e := mcpFailure(t, err); e.Details["reason"] != "timeout" || time.Since(started) > 3*time.Second {
		t.Fatalf("slow past the run's deadline: %v after %v", e, time.Since(started))
	}
	_, err = CallTool(ctx, "n", Tool{"local", "echo"}, map[string]any{"text": "x"})
	if e := mcpFailure(t, err); e.Details["reason"] != "timeout" || !strings.Contains(e.Message, "no time left in the run") {
		t.Fatalf("a mcpCall after the deadline: %v", e)
	}
	if got := mcpCall(t, "local", "slow", map[string]any{"seconds": 0.1}).Text; got != "slept 0.1" {
		t.Fatalf("slow 0.1: %q", got)
	}
}

func TestMCPCancelledRequestIsNoUpstreamError(t *testing.T) {
	useMCP(t, []Server{mcpStdioServer(t, "local")}, nil)
	mcpCall(t, "local", "echo", map[string]any{"text": "warm"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := CallTool(ctx, "n", Tool{"local", "slow"}, map[string]any{"seconds": 10})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a mcpCall whose request went away: %v", err)
	}
}

// --- environment ---------------------------------------------------------------

func TestMCPMissingVariableIsNamed(t *testing.T) {
	os.Unsetenv("SVC_MCP_UNSET")
	local := mcpStdioServer(t, "local")
	local.Env["KEY"] = "${SVC_MCP_UNSET}"
	web := Server{ID: "web", Transport: "sse", URL: "env:SVC_MCP_UNSET"}
	useMCP(t, []Server{local, web}, nil)
	e := mcpCallFails(t, "local", "echo", map[string]any{"text": "x"})
	if e.Details["reason"] != "connect" || !strings.HasSuffix(e.Message,
		`MCP server "local": env.KEY reads the environment variable SVC_MCP_UNSET, which is not set`) {
		t.Fatalf("mcpCall: %v", e)
	}
	_, err := openMCPClients(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), `MCP server "web": url reads the environment variable SVC_MCP_UNSET, which is not set`) ||
		!strings.Contains(err.Error(), `MCP server "local": env.KEY reads`) {
		t.Fatalf("start-up: %v", err)
	}
}

func TestMCPChildSeesOnlyAMinimalEnvironment(t *testing.T) {
	t.Setenv("SVC_SECRET_PROBE", "do-not-leak")
	t.Setenv("SVC_MCP_GIVEN", "given")
	local := mcpStdioServer(t, "local")
	local.Env["FROM_BRACES"] = "${SVC_MCP_GIVEN}"
	local.Env["FROM_ENV"] = "env:SVC_MCP_GIVEN"
	useMCP(t, []Server{local}, nil)
	child := func(name string) string { return mcpCall(t, "local", "env_value", map[string]any{"name": name}).Text }
	if got := child("SVC_SECRET_PROBE"); got != "" {
		t.Fatalf("the service's own variable reached the child: %q", got)
	}
	if a, b := child("FROM_BRACES"), child("FROM_ENV"); a != "given" || b != "given" {
		t.Fatalf("declared variables: %q %q", a, b)
	}
	if got := child("PATH"); got != os.Getenv("PATH") {
		t.Fatalf("PATH: %q", got)
	}
}

func TestMCPEnvWrittenInlineIsRefused(t *testing.T) {
	for _, value := range []string{"s3cr3t", "prefix-${SVC_MCP_GIVEN}", "env:"} {
		local := mcpStdioServer(t, "files")
		local.Env["TOKEN"] = value
		useMCP(t, []Server{local}, nil)
		e := mcpCallFails(t, "files", "echo", map[string]any{"text": "x"})
		if !strings.HasSuffix(e.Message, `MCP server "files": env.TOKEN is written inline, but secrets come from the `+
			"environment only: write ${NAME} or env:NAME there and set NAME in the environment") {
			t.Errorf("%q: %v", value, e)
		}
	}
}

// --- failures of the server ----------------------------------------------------

func TestMCPKilledHTTPServerFailsTheCallThenReconnects(t *testing.T) {
	for _, transport := range []string{"sse", "streamable_http"} {
		t.Run(transport, func(t *testing.T) {
			web := startMCPHTTPServer(t, transport)
			useMCP(t, []Server{{ID: "web", Transport: transport, URL: web.url, Timeout: mcpOpenMS * time.Millisecond}}, nil)
			mcpCall(t, "web", "echo", map[string]any{"text": "up"})
			time.AfterFunc(500*time.Millisecond, web.stop)
			if e := mcpCallFails(t, "web", "slow", map[string]any{"seconds": 10}); e.Details["reason"] != "connect" {
				t.Fatalf("the mcpCall the server died under: %v", e)
			}
			down := mcpCallFails(t, "web", "echo", map[string]any{"text": "down"})
			if down.Details["reason"] != "connect" || !strings.Contains(down.Message, "cannot reach the server") {
				t.Fatalf("a mcpCall while it is down: %v", down)
			}
			web.start(t)
			if got := mcpCall(t, "web", "echo", map[string]any{"text": "back"}).Text; got != "back" {
				t.Fatalf("after it came back: %q", got)
			}
		})
	}
}

func TestMCPURLFromTheEnvironmentIsNotRepeated(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SVC_MCP_URL", "http://"+l.Addr().String()+"/mcp?token=s3cr3t")
	l.Close()
	useMCP(t, []Server{{ID: "web", Transport: "streamable_http", URL: "env:SVC_MCP_URL"}}, nil)
	e := mcpCallFails(t, "web", "echo", map[string]any{"text": "x"})
	if e.Details["reason"] != "connect" || strings.Contains(e.Message, "s3cr3t") ||
		!strings.Contains(e.Message, `(the url of MCP server "web")`) {
		t.Fatalf("unreachable: %v", e)
	}
	t.Setenv("SVC_MCP_URL", "ftp://s3cr3t@host")
	e = mcpCallFails(t, "web", "echo", map[string]any{"text": "x"})
	if strings.Contains(e.Message, "s3cr3t") || !strings.HasSuffix(e.Message,
		`MCP server "web": the url (the value of SVC_MCP_URL) is not an http(s) URL`) {
		t.Fatalf("not a URL: %v", e)
	}
}

// --- start-up and shutdown -----------------------------------------------------

func TestMCPStartUpNamesMissingToolsAndUnreachableServers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/sse"
	l.Close()
	useMCP(t,
		[]Server{mcpStdioServer(t, "local"), {ID: "closed", Transport: "sse", URL: closed}},
		[]Tool{{"local", "add"}, {"local", "read_file"}, {"nowhere", "anything"}})
	_, err = openMCPClients(context.Background(), nil)
	if err == nil {
		t.Fatal("start-up passed")
	}
	message := err.Error()
	for _, part := range []string{
		`MCP server "local" has no tool "read_file" (it lists: add, echo, env_value, fail, meta, pid, slow, spawn)`,
		`MCP server "closed" cannot be reached: `,
		`tool "anything" is needed on MCP server "nowhere", which is not declared`,
	} {
		if !strings.Contains(message, part) {
			t.Errorf("the start-up error lacks %q: %s", part, message)
		}
	}
	if strings.Contains(message, `"add"`) {
		t.Errorf("a listed tool is named: %s", message)
	}
}

// fixedTrace stands for the OpenTelemetry tracer (package otel, in traced
// projects only): it injects one traceparent.
type fixedTrace struct{}

const fixedTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func (fixedTrace) Start(ctx context.Context, _ svc.SpanOp, _ string) (context.Context, func(error)) {
	return ctx, func(error) {}
}
func (fixedTrace) Reply(context.Context, string, any, any) {}
func (fixedTrace) Inject(_ context.Context, h http.Header) { h.Set("traceparent", fixedTraceparent) }

func TestMCPCallsCarryTheTraceInMeta(t *testing.T) {
	useMCP(t, []Server{mcpStdioServer(t, "local")}, nil)
	if got := mcpCall(t, "local", "meta", map[string]any{"key": "traceparent"}).Text; got != "" {
		t.Errorf("an untraced call sent traceparent %q", got)
	}
	saved := svc.ActiveTracer()
	svc.SetTracer(fixedTrace{})
	t.Cleanup(func() { svc.SetTracer(saved) })
	if got := mcpCall(t, "local", "meta", map[string]any{"key": "traceparent"}).Text; got != fixedTraceparent {
		t.Errorf("traceparent in _meta: %q", got)
	}
}
