module svc.dev/runtime/modules/mcp

go 1.26.0

require (
	github.com/google/jsonschema-go v0.4.3
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/segmentio/asm v1.1.3
	github.com/segmentio/encoding v0.5.4
	github.com/yosida95/uritemplate/v3 v3.0.2
	golang.org/x/oauth2 v0.36.0
	golang.org/x/sync v0.24.0
	golang.org/x/sys v0.49.0
	golang.org/x/time v0.15.0
)
