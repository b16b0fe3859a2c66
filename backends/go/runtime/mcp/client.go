package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	svc "svc.dev/runtime/graph"
)

// Calls from a run to tools of MCP servers (logical.mcpServers, tools of
// kind mcp), on the official Go SDK, with python-svc's semantics
// (sdk/python/svc/mcp/client.py): one session per server (sessions.go),
// shared by every run, opened at start-up (openMCPClients: every tool the
// graph calls must be listed by its server) or on first use, and reopened
// by the next call after it broke, which respawns a dead stdio child.
//
// Every failure of a call is a 502 upstream_error whose details name the
// node, the server, the tool and the reason: timeout, tool_error (the tool
// answered with an error), connect (the server cannot be reached, or the
// session broke) or invalid_arguments (refused before the call by the
// tool's input schema, or by the server).

// The reasons of an MCP call's failure that HTTP calls do not have.
const (
	ReasonToolError        = "tool_error"
	ReasonInvalidArguments = "invalid_arguments"
)

// DefaultTimeout bounds opening a session and each call when the server
// declares no timeoutMs.
const DefaultTimeout = 30 * time.Second

// A Server is a server of logical.mcpServers and how to reach it.
type Server struct {
	ID string
	// Transport is "stdio", "sse" or "streamable_http".
	Transport string
	// Command and Args start a stdio server as a child of the service. The
	// child gets a minimal environment (PATH, HOME, USER, ...: the MCP
	// Python SDK's list) plus Env, whose values are ${NAME} or env:NAME,
	// read from the service's environment: the child never sees the
	// service's other variables (its API key, the model's key).
	Command string
	Args    []string
	Env     map[string]string
	// URL reaches an sse or streamable_http server: an http(s) URL or
	// env:NAME. ${NAME} in it, and in the values of Headers, is replaced
	// by the variable.
	URL     string
	Headers map[string]string
	// Timeout bounds opening a session and every call (0: DefaultTimeout).
	Timeout time.Duration
}

func (s Server) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// A Tool is a tool of kind mcp: the tool Tool of the server Server.
type Tool struct {
	Server, Tool string
}

// A Result is what a tool answered: its structured content when that
// is a JSON object (nil otherwise), and its text contents joined by
// newlines.
type Result struct {
	Structured map[string]any
	Text       string
}

// Output is the value a tool node writes: to an object field the
// structured content, else the text parsed as a JSON object, else
// {"text": text}; to any other field the text.
func (r Result) Output(asObject bool) any {
	if !asObject {
		return r.Text
	}
	if r.Structured != nil {
		return r.Structured
	}
	if obj, ok := parseJSONObject(r.Text); ok {
		return obj
	}
	return map[string]any{"text": r.Text}
}

// ForModel is the result an agent or a tool-calling llm node shows the
// model: the structured content (which the agent writes as JSON), else
// the text.
func (r Result) ForModel() any {
	if r.Structured != nil {
		return r.Structured
	}
	return r.Text
}

// Listed is the tool's description and input schema as its server listed
// them when a session last opened ("" and nil before that): what the model
// is shown of the tool.
func (t Tool) Listed() (string, map[string]any) {
	c, err := mcpPool.client(t.Server)
	if err != nil {
		return "", nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	tool := c.listed[t.Tool]
	if tool == nil {
		return "", nil
	}
	schema, _ := tool.InputSchema.(map[string]any)
	return tool.Description, schema
}

func mcpError(node string, tool Tool, reason, message string) *svc.Error {
	return &svc.Error{Status: http.StatusBadGateway, Code: "upstream_error", Message: message,
		Details: map[string]any{"node": node, "server": tool.Server, "tool": tool.Tool, "reason": reason}}
}

// RunTool is a tool node's call of the MCP tool whose id is id, in an
// execute_tool span of its own, which the request's _meta names as the
// parent (an agent's calls get theirs from package graph's agent loop).
func RunTool(ctx context.Context, node, id string, tool Tool, args map[string]any) (out Result, err error) {
	if tracer := svc.ActiveTracer(); tracer != nil {
		var end func(error)
		ctx, end = tracer.Start(ctx, svc.SpanTool, id)
		defer func() { end(err) }()
	}
	return CallTool(ctx, node, tool, args)
}

// nodeError is the node's execution_error.
func nodeError(node, message string) *svc.Error {
	return &svc.Error{Status: http.StatusInternalServerError, Code: "execution_error", Message: message,
		Details: map[string]any{"node": node}}
}

// CallTool calls the tool with args for the node (an agent's tools pass
// their own name) and returns its answer. The arguments are checked first
// against the tool's input schema as the server listed it; a refusal is
// invalid_arguments and nothing is sent. The call takes at most the
// server's timeout, or what is left of the run when that is less.
func CallTool(ctx context.Context, node string, tool Tool, args map[string]any) (Result, error) {
	name := fmt.Sprintf("node %q: MCP tool %q on server %q", node, tool.Tool, tool.Server)
	c, err := mcpPool.client(tool.Server)
	if err != nil {
		return Result{}, mcpError(node, tool, svc.ReasonConnect, fmt.Sprintf("%s: %v", name, err))
	}
	timeout := c.server.timeout()
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(deadline))
	}
	if timeout <= 0 {
		return Result{}, mcpError(node, tool, svc.ReasonTimeout, name+": no time left in the run")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := c.session(ctx)
	if err != nil {
		var oe *mcpOpenError
		errors.As(err, &oe)
		switch {
		case errors.Is(ctx.Err(), context.Canceled):
			return Result{}, ctx.Err()
		case ctx.Err() != nil || (oe != nil && oe.timedOut):
			return Result{}, mcpError(node, tool, svc.ReasonTimeout,
				fmt.Sprintf("%s: no session within %dms", name, timeout.Milliseconds()))
		case oe != nil && oe.declared:
			return Result{}, mcpError(node, tool, svc.ReasonConnect, fmt.Sprintf("%s: %v", name, err))
		}
		return Result{}, mcpError(node, tool, svc.ReasonConnect, fmt.Sprintf("%s: cannot reach the server: %s", name, c.server.describe(err)))
	}
	payload, err := json.Marshal(args)
	if err != nil {
		return Result{}, nodeError(node, fmt.Sprintf("%s: the arguments cannot be encoded as JSON: %v", name, err))
	}
	if problem := s.check(tool.Tool, payload); problem != "" {
		return Result{}, mcpError(node, tool, ReasonInvalidArguments, fmt.Sprintf("%s: invalid arguments: %s", name, problem))
	}

	res, err := s.cs.CallTool(ctx, &mcpsdk.CallToolParams{Meta: traceMeta(ctx), Name: tool.Tool, Arguments: json.RawMessage(payload)})
	var wire *jsonrpc.Error
	switch {
	case err == nil:
	case errors.Is(ctx.Err(), context.Canceled):
		return Result{}, ctx.Err()
	case ctx.Err() != nil:
		return Result{}, mcpError(node, tool, svc.ReasonTimeout, fmt.Sprintf("%s: timed out after %dms", name, timeout.Milliseconds()))
	case errors.As(err, &wire) && wire.Code != mcpCodeRejected && s.usable():
		if wire.Code == jsonrpc.CodeInvalidParams {
			return Result{}, mcpError(node, tool, ReasonInvalidArguments,
				fmt.Sprintf("%s: the server refused the arguments: %s", name, wire.Message))
		}
		return Result{}, mcpError(node, tool, ReasonToolError,
			fmt.Sprintf("%s: the server answered an error: %s", name, wire.Message))
	default:
		// Anything else is the connection's failure (the child died, the
		// stream broke, the server went away): the next call opens anew.
		c.drop(s)
		return Result{}, mcpError(node, tool, svc.ReasonConnect, fmt.Sprintf("%s: the session broke: %s", name, c.server.describe(err)))
	}
	result := mcpResultOf(res)
	if res.IsError {
		text := result.Text
		if text == "" {
			text = "(no message)"
		}
		return Result{}, mcpError(node, tool, ReasonToolError, fmt.Sprintf("%s failed: %s", name, text))
	}
	return result, nil
}

// mcpCodeRejected is the code of the SDK's error for a request its transport
// could not send (the server went away): a failure of the connection, not
// an answer of the server.
const mcpCodeRejected = -32005

func mcpResultOf(res *mcpsdk.CallToolResult) Result {
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcpsdk.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	structured, _ := withJSONNumbers(res.StructuredContent).(map[string]any)
	return Result{Structured: structured, Text: strings.Join(texts, "\n")}
}

// withJSONNumbers gives the SDK's decoded JSON (numbers as float64) the state's
// form, numbers as json.Number, so an integer stays one when it is written
// into a field or shown to a model ("5", not "5.0").
func withJSONNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e21 {
			return json.Number(strconv.FormatFloat(x, 'f', -1, 64))
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	case map[string]any:
		for k, item := range x {
			x[k] = withJSONNumbers(item)
		}
	case []any:
		for i, item := range x {
			x[i] = withJSONNumbers(item)
		}
	}
	return v
}

// parseJSONObject reads text that is exactly one JSON object.
func parseJSONObject(text string) (map[string]any, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil || obj == nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return obj, true
}

// --- arguments ---------------------------------------------------------------

// A listedTool is a tool a session's server listed, with the check of its
// arguments, made on first use.
type listedTool struct {
	tool  *mcpsdk.Tool
	once  sync.Once
	check func(args any) string
}

// check says what is wrong with the arguments (JSON) of a call of tool, or
// "". A tool the server did not list is not checked: the server decides.
func (s *mcpSession) check(tool string, payload []byte) string {
	t := s.tools[tool]
	if t == nil {
		return ""
	}
	t.once.Do(func() { t.check = argumentCheck(t.tool.InputSchema) })
	var args any
	if err := json.Unmarshal(payload, &args); err != nil {
		return err.Error()
	}
	return t.check(args)
}

// validatedDrafts are the "$schema" values of the drafts jsonschema-go validates
// ("" is its default, 2020-12).
var validatedDrafts = map[string]bool{
	"": true,
	"https://json-schema.org/draft/2020-12/schema": true,
	"http://json-schema.org/draft-07/schema#":      true,
	"https://json-schema.org/draft-07/schema#":     true,
}

// argumentCheck validates arguments against a tool's input schema (JSON
// Schema draft 2020-12 or draft-07); a schema the validator cannot use
// (another draft, a remote $ref) gets minimalCheck.
func argumentCheck(inputSchema any) func(args any) string {
	raw, err := json.Marshal(inputSchema)
	var schema jsonschema.Schema
	if err == nil {
		err = json.Unmarshal(raw, &schema)
	}
	var resolved *jsonschema.Resolved
	if err == nil && validatedDrafts[schema.Schema] {
		resolved, err = schema.Resolve(nil)
	}
	if resolved == nil || err != nil {
		fields, _ := inputSchema.(map[string]any)
		return func(args any) string { return minimalCheck(fields, args) }
	}
	return func(args any) string {
		if _, ok := args.(map[string]any); !ok {
			return "the arguments are not an object"
		}
		if err := resolved.Validate(args); err != nil {
			return err.Error()
		}
		return ""
	}
}

// minimalCheck is python-svc's check without a validator: the arguments
// are an object, the required properties are there, and the top-level ones
// have their basic JSON type.
func minimalCheck(schema map[string]any, args any) string {
	obj, ok := args.(map[string]any)
	if !ok {
		return "the arguments are not an object"
	}
	required, _ := schema["required"].([]any)
	for _, name := range required {
		if n, _ := name.(string); n != "" {
			if _, present := obj[n]; !present {
				return fmt.Sprintf("the required property %q is missing", n)
			}
		}
	}
	properties, _ := schema["properties"].(map[string]any)
	for _, name := range sortedKeys(obj) {
		spec, _ := properties[name].(map[string]any)
		if want, ok := spec["type"]; ok && !jsonTypeOK(obj[name], want) {
			text, _ := json.Marshal(obj[name])
			return fmt.Sprintf("%q must be of type %v, not %s", name, want, text)
		}
	}
	return ""
}

// jsonTypeOK reports whether v (decoded JSON) has the type named by want,
// a name or a list of names; names it does not know pass.
func jsonTypeOK(v any, want any) bool {
	names, isList := want.([]any)
	if !isList {
		names = []any{want}
	}
	known := false
	for _, n := range names {
		var ok bool
		switch n {
		case "string":
			_, ok = v.(string)
		case "integer":
			f, isNumber := v.(float64)
			ok = isNumber && f == math.Trunc(f)
		case "number":
			_, ok = v.(float64)
		case "boolean":
			_, ok = v.(bool)
		case "object":
			_, ok = v.(map[string]any)
		case "array":
			_, ok = v.([]any)
		case "null":
			ok = v == nil
		default:
			continue
		}
		known = true
		if ok {
			return true
		}
	}
	return !known
}

// Stub points every MCP server of the graph at the streamable HTTP
// server at url, for the generated tests, which start no real server
// (internal/server's stubUpstream serves the graph's MCP tools in
// process). It returns what puts the servers back.
func Stub(url string) (restore func()) {
	servers, p := registeredServers, mcpPool
	stubs := make([]Server, len(servers))
	for i, s := range servers {
		stubs[i] = Server{ID: s.ID, Transport: "streamable_http", URL: url, Timeout: s.Timeout}
	}
	registeredServers, mcpPool = stubs, &mcpClientPool{}
	return func() {
		mcpPool.stop()
		registeredServers, mcpPool = servers, p
	}
}

// --- start and stop ------------------------------------------------------------

// The MCP servers of logical.mcpServers and the tools the graph calls on
// them, as the project's mcp_servers.go registers them; their sessions
// open when the service starts.
var (
	registeredServers []Server
	registeredTools   []Tool
)

// Register makes these the servers and tools runs call: a project's
// mcp_servers.go calls it once, from init.
func Register(servers []Server, tools []Tool) {
	registeredServers, registeredTools = servers, tools
}

// The sessions open as the service starts (graph.Start) and close at its
// shutdown.
func init() { svc.RegisterStartup(openMCPClients) }

// openMCPClients opens a session to every MCP server at once, each within
// its timeout, and checks that each lists the tools the graph calls on it.
// It returns what stops every session and stdio child at shutdown. An error
// names every server that cannot be reached (and why) and every missing
// tool; nothing stays open then.
func openMCPClients(ctx context.Context, logger *slog.Logger) (func(), error) {
	mcpPool.mu.Lock()
	mcpPool.logger = logger
	mcpPool.mu.Unlock()
	needed := map[string][]string{}
	for _, t := range registeredTools {
		needed[t.Server] = append(needed[t.Server], t.Tool)
	}
	problems := make([]string, len(registeredServers))
	var wg sync.WaitGroup
	for i, server := range registeredServers {
		tools := needed[server.ID]
		delete(needed, server.ID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			problems[i] = checkServer(ctx, server, tools)
		}()
	}
	wg.Wait()
	for _, id := range sortedKeys(needed) {
		for _, tool := range needed[id] {
			problems = append(problems, fmt.Sprintf("tool %q is needed on MCP server %q, which is not declared", tool, id))
		}
	}
	var found []string
	for _, p := range problems {
		if p != "" {
			found = append(found, p)
		}
	}
	if len(found) > 0 {
		mcpPool.stop()
		return nil, errors.New(strings.Join(found, "; "))
	}
	return mcpPool.stop, nil
}

// checkServer opens the server's session and says what is wrong: the
// server cannot be reached, or it does not list tools; "" when all is well.
func checkServer(ctx context.Context, server Server, tools []string) string {
	c, err := mcpPool.client(server.ID)
	if err != nil {
		return err.Error()
	}
	s, err := c.session(ctx)
	if err != nil {
		if oe, ok := err.(*mcpOpenError); ok && oe.declared {
			return oe.Error()
		}
		return fmt.Sprintf("MCP server %q cannot be reached: %s", server.ID, server.describe(err))
	}
	var missing []string
	for _, t := range tools {
		if s.tools[t] == nil {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	lists := sortedKeys(s.tools)
	if len(lists) == 0 {
		lists = []string{"none"}
	}
	sort.Strings(missing)
	var out []string
	for _, t := range missing {
		out = append(out, fmt.Sprintf("MCP server %q has no tool %q (it lists: %s)", server.ID, t, strings.Join(lists, ", ")))
	}
	return strings.Join(out, "; ")
}

// traceMeta carries the run's trace on to the MCP server: traceparent (and
// tracestate) in the request's _meta, over every transport; nil when the
// graph is not traced.
func traceMeta(ctx context.Context) mcpsdk.Meta {
	tracer := svc.ActiveTracer()
	if tracer == nil {
		return nil
	}
	h := http.Header{}
	tracer.Inject(ctx, h)
	meta := mcpsdk.Meta{}
	for _, key := range []string{"traceparent", "tracestate"} {
		if v := h.Get(key); v != "" {
			meta[key] = v
		}
	}
	return meta
}
