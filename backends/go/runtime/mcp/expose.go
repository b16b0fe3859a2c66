package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	svc "svc.dev/runtime/graph"
	"svc.dev/runtime/server"
)

// The graph published as one MCP tool at /mcp (settings.mcp.expose;
// docs/http-contract.md, "MCP (/mcp)"), as python-svc publishes it
// (sdk/python/svc/mcp/server.py): streamable HTTP, stateless, with JSON
// answers, behind the credential of /invoke.

// ExposeOptions is settings.mcp.expose as compiled.
type ExposeOptions struct {
	// ToolName is settings.mcp.toolName, else the document's id.
	ToolName string
	// The MCP server is named after the service.
	ServerName, ServerVersion string
}

// mcpExpose is what the project published (Expose).
var mcpExpose ExposeOptions

// Expose publishes the graph as one MCP tool at /mcp: a project whose
// graph sets settings.mcp.expose calls it from init (mcp_expose.go).
func Expose(e ExposeOptions) {
	mcpExpose = e
	server.HandleMCP(mcpHandler)
}

// mcpHandler answers /mcp for a service, past what package server answers
// first with the contract's envelope (server.HandleMCP): 405 (Allow: POST;
// stateless, there is no stream to open with GET and no session to end
// with DELETE), 401, 413 for a Content-Length over 1 MiB (the SDK cuts a
// longer chunked body off with a plain 413). There is no Host or Origin
// allow-list: the credential guards /mcp as it guards /invoke.
func mcpHandler() http.Handler {
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: mcpExpose.ServerName, Version: mcpExpose.ServerVersion}, nil)
	fields := svc.Fields()
	srv.AddTool(&mcpsdk.Tool{
		Name: mcpExpose.ToolName,
		Description: fmt.Sprintf("Runs the graph %q: the arguments are its input state, "+
			"the result is its final state.", mcpExpose.ServerName),
		InputSchema:  stateSchema(fields, false),
		OutputSchema: stateSchema(fields, true),
	}, runGraphTool)
	return mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, &mcpsdk.StreamableHTTPOptions{
		Stateless:                    true,
		JSONResponse:                 true,
		MaxRequestBodyBytes:          server.MaxRequestBytes,
		DisableLocalhostProtection:   true,
		PropagateRequestCancellation: true,
	})
}

// runGraphTool runs the graph on the call's arguments as /invoke runs
// {"state": arguments}. A failed run is an error result (isError), never a
// JSON-RPC error: its structured content is the contract's envelope
// {"error": {"code", "message", "details"?}}, and its text the same JSON.
func runGraphTool(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
	st, e := server.InvokeState(ctx, req.Params.Arguments)
	if e != nil {
		return mcpFailed(e), nil
	}
	return mcpFinalState(st), nil
}

// mcpFinalState is a run's result: the final state (every declared field) as
// structured content and as its JSON text.
func mcpFinalState(st svc.State) *mcpsdk.CallToolResult {
	buf, err := svc.AppendJSON(nil, st)
	if err != nil {
		return mcpFailed(&svc.Error{Status: http.StatusInternalServerError, Code: "execution_error",
			Message: "the result cannot be encoded as JSON"})
	}
	if len(buf) > server.MaxResponseBytes {
		return mcpFailed(&svc.Error{Status: http.StatusInternalServerError, Code: "execution_error",
			Message: "the response is larger than 4 MiB", Details: map[string]any{"reason": "response_too_large"}})
	}
	return &mcpsdk.CallToolResult{
		Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: string(buf)}},
		StructuredContent: json.RawMessage(buf),
	}
}

func mcpFailed(e *svc.Error) *mcpsdk.CallToolResult {
	body := map[string]any{"code": e.Code, "message": e.Message}
	if len(e.Details) > 0 {
		body["details"] = e.Details
	}
	envelope, _ := json.Marshal(map[string]any{"error": body})
	return &mcpsdk.CallToolResult{
		Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: string(envelope)}},
		StructuredContent: json.RawMessage(envelope),
		IsError:           true,
	}
}

// stateSchema is the JSON Schema of the graph's state as python-svc
// publishes it (svc.mcp.server.state_json_schema). As input: each field with
// its type and its default, the required ones listed, no other allowed. As
// output (the final state, as in /invoke's result): every field present,
// each may be null.
func stateSchema(fields []svc.Field, output bool) map[string]any {
	properties := make(map[string]any, len(fields))
	required := []string{}
	for _, f := range fields {
		prop := typeSchema(f.Type, f.Items)
		if output {
			prop["type"] = []any{prop["type"], "null"}
		} else if f.Default != nil {
			prop["default"] = f.Default()
		}
		properties[f.Name] = prop
		if output || f.Required {
			required = append(required, f.Name)
		}
	}
	schema := map[string]any{"type": "object", "properties": properties}
	if len(required) > 0 {
		schema["required"] = required
	}
	if !output {
		schema["additionalProperties"] = false
	}
	return schema
}

func typeSchema(t svc.Type, items *svc.Item) map[string]any {
	switch {
	case t == svc.TypeMessages:
		return map[string]any{"type": "array", "items": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"role":    map[string]any{"type": "string"},
				"content": map[string]any{"type": "string"},
			},
			"required":             []any{"role", "content"},
			"additionalProperties": false,
		}}
	case t == svc.TypeArray && items != nil:
		return map[string]any{"type": "array", "items": typeSchema(items.Type, items.Items)}
	}
	return map[string]any{"type": t.String()}
}
