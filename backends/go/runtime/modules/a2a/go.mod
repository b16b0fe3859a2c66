module svc.dev/runtime/modules/a2a

go 1.26.0

require (
	github.com/a2aproject/a2a-go v0.3.15
	github.com/a2aproject/a2a-go/v2 v2.3.1
	github.com/google/uuid v1.6.0
	golang.org/x/mod v0.42.0
	golang.org/x/net v0.59.0
	golang.org/x/sync v0.24.0
	golang.org/x/sys v0.49.0
	golang.org/x/text v0.42.0
	google.golang.org/genproto/googleapis/api v0.0.0-20260928230214-8a89bd6388cc
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc
	google.golang.org/grpc v1.83.2
	google.golang.org/protobuf v1.36.12
)
