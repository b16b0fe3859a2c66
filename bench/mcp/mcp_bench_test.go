package mcp

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	mcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bench/mcp.py copies this file into a copy of the runtime module
// (backends/go/runtime/mcp, built with the tag svcstub: it uses the
// package's unexported names and the helper server of client_test.go). The
// SDK's package is imported as mcp here, as the runtime's is mcpsdk.
//
// One MCP tool call through the runtime (CallTool: the session from the
// pool, the arguments encoded and checked against the input schema, the
// result turned into a Result) against the same call made directly on
// a session of the same Go SDK client, to the same server (the test's Go
// server), over stdio and over streamable HTTP on 127.0.0.1.

var benchArgs = map[string]any{"a": 2, "b": json.Number("3")}

func BenchmarkMCPCall(b *testing.B) {
	os.Setenv("SVC_MCP_HELPER_ROLE", "stdio")
	stdio := Server{ID: "bench", Transport: "stdio", Command: os.Args[0],
		Args: []string{"-test.run=^TestMCPHelperServer$"}, Env: map[string]string{"SVC_MCP_HELPER": "env:SVC_MCP_HELPER_ROLE"}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := newTestMCPServer(nil)
	httpSrv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go func() { _ = httpSrv.Serve(l) }()
	defer httpSrv.Close()
	web := Server{ID: "bench", Transport: "streamable_http", URL: "http://" + l.Addr().String() + "/mcp"}

	for _, server := range []Server{stdio, web} {
		b.Run(server.Transport+"/runtime", func(b *testing.B) {
			oldServers, oldPool := registeredServers, mcpPool
			registeredServers, mcpPool = []Server{server}, &mcpClientPool{}
			defer func() { mcpPool.stop(); registeredServers, mcpPool = oldServers, oldPool }()
			tool := Tool{Server: "bench", Tool: "add"}
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			if _, err := CallTool(ctx, "n", tool, benchArgs); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := CallTool(ctx, "n", tool, benchArgs); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(server.Transport+"/direct", func(b *testing.B) {
			var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: server.URL, DisableStandaloneSSE: true}
			if server.Transport == "stdio" {
				cmd := exec.Command(server.Command, server.Args...)
				cmd.Env = append(os.Environ(), "SVC_MCP_HELPER=stdio")
				transport = &mcp.CommandTransport{Command: cmd}
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), transport, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			params := &mcp.CallToolParams{Name: "add", Arguments: benchArgs}
			b.ResetTimer()
			for range b.N {
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMCPRuntimeWork is what CallTool does besides the round trip
// (the same steps, on a canned answer): looking up the client and its open
// session, the deadline, encoding and checking the arguments, reading the
// result. It is the runtime's own per-call cost, without the noise of the
// round trip.
func BenchmarkMCPRuntimeWork(b *testing.B) {
	os.Setenv("SVC_MCP_HELPER_ROLE", "stdio")
	server := Server{ID: "bench", Transport: "stdio", Command: os.Args[0],
		Args: []string{"-test.run=^TestMCPHelperServer$"}, Env: map[string]string{"SVC_MCP_HELPER": "env:SVC_MCP_HELPER_ROLE"}}
	oldServers, oldPool := registeredServers, mcpPool
	registeredServers, mcpPool = []Server{server}, &mcpClientPool{}
	defer func() { mcpPool.stop(); registeredServers, mcpPool = oldServers, oldPool }()
	run, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if _, err := CallTool(run, "n", Tool{"bench", "add"}, benchArgs); err != nil {
		b.Fatal(err)
	}
	answer := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "5"}}}
	b.ResetTimer()
	for range b.N {
		c, _ := mcpPool.client("bench")
		ctx, cancel := context.WithTimeout(run, c.server.timeout())
		s, err := c.session(ctx)
		if err != nil {
			b.Fatal(err)
		}
		payload, _ := json.Marshal(benchArgs)
		if problem := s.check("add", payload); problem != "" {
			b.Fatal(problem)
		}
		answer.StructuredContent = map[string]any{"result": 5.0}
		_ = mcpResultOf(answer)
		cancel()
	}
}
