// Package otel traces a graph (settings.tracing.enabled): OpenTelemetry
// traces and metrics over OTLP, configured by the standard OTEL_ variables
// only, with the span tree and the metrics every svc target emits
// (docs/telemetry.md in the svc repository). A traced project imports it
// for effect,
//
//	import _ "svc.dev/runtime/otel"
//
// and its init registers it with package graph (graph.RegisterTelemetry):
// a program that does not import it links no OpenTelemetry. Spans leave
// from the batch processor's bounded queue, so a slow or missing collector
// never holds a request; at shutdown what is queued is exported within
// shutdownBound.
package otel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	svc "svc.dev/runtime/graph"
)

func init() {
	svc.RegisterTelemetry(svc.Telemetry{Start: openTelemetry, Handler: tracedHandler})
}

const shutdownBound = 3 * time.Second

// The GenAI conventions' names (their Go package dropped them while they
// move to semantic-conventions-genai; the strings stay).
const (
	attrOperation = "gen_ai.operation.name"
	attrProvider  = "gen_ai.provider.name"
	attrModel     = "gen_ai.request.model"
	attrInputTok  = "gen_ai.usage.input_tokens"
	attrOutputTok = "gen_ai.usage.output_tokens"
	attrWorkflow  = "gen_ai.workflow.name"
	attrTool      = "gen_ai.tool.name"
	attrAgentID   = "gen_ai.agent.id"
	attrAgentName = "gen_ai.agent.name"
	attrErrorType = "error.type"
	attrNodeID    = "svc.node.id"
	attrNodeKind  = "svc.node.kind"
	attrBranch    = "svc.branch"
	attrItem      = "svc.item"
	attrOutcome   = "svc.run.outcome"
	attrTokenType = "gen_ai.token.type"
)

type otelTracer struct {
	// content: prompts and replies on chat spans, only when
	// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true (they may
	// hold what a tracing backend must not).
	content         bool
	tracer          trace.Tracer
	runs            metric.Int64Counter
	nodeDuration    metric.Float64Histogram
	tokens          metric.Int64Histogram
	modelDuration   metric.Float64Histogram
	requestDuration metric.Float64Histogram
	// shapes are the spanShapes made so far, by shapeKey; routeShapes the
	// routeShapes, by method and path.
	shapes, routeShapes    sync.Map
	shapeCount, routeCount atomic.Int64
}

// protocol is OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (the Go exporters do not
// read it themselves).
func protocol(signal string) (string, error) {
	p := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if p == "" {
		p = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p = strings.TrimSpace(p); p {
	case "":
		return "http/protobuf", nil
	case "http/protobuf", "grpc":
		return p, nil
	}
	return "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q is not served: use one of http/protobuf, grpc", p)
}

// wanted is whether OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER (variable)
// asks for OTLP (the default) rather than none.
func wanted(variable string) (bool, error) {
	switch v := strings.TrimSpace(os.Getenv(variable)); v {
	case "", "otlp":
		return true, nil
	case "none":
		return false, nil
	default:
		return false, fmt.Errorf("%s %q is not served: use otlp or none", variable, v)
	}
}

// Batching defaults of every svc target (docs/telemetry.md), larger than
// the SDK's 2048-span queue and 512-span batches: at tens of thousands of
// spans a second the SDK's queue holds well under a tenth of a second,
// less than a collector on a busy machine may take to answer one export.
const (
	defaultQueueSize = 8192
	defaultBatchSize = 2048
)

// batching is the batch processor's queue and batch sizes, each unless
// OTEL_BSP_MAX_QUEUE_SIZE / OTEL_BSP_MAX_EXPORT_BATCH_SIZE sets it (the SDK
// reads those itself, and options would override them); a batch is never
// larger than the queue.
func batching() []sdktrace.BatchSpanProcessorOption {
	var options []sdktrace.BatchSpanProcessorOption
	queue := defaultQueueSize
	if set := os.Getenv("OTEL_BSP_MAX_QUEUE_SIZE"); set == "" {
		options = append(options, sdktrace.WithMaxQueueSize(queue))
	} else if n, err := strconv.Atoi(strings.TrimSpace(set)); err == nil && n > 0 {
		queue = n
	} else {
		queue = sdktrace.DefaultMaxQueueSize // what the SDK makes of a bad value
	}
	if os.Getenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") == "" {
		options = append(options, sdktrace.WithMaxExportBatchSize(min(defaultBatchSize, queue)))
	}
	return options
}

// sdkDisabled is OTEL_SDK_DISABLED=true, the standard switch that turns
// the SDK off at run time (the Go SDK does not read it itself): nothing is
// traced, measured, exported or propagated, and a span costs what it costs
// without settings.tracing, one comparison.
func sdkDisabled() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true")
}

func openTelemetry(ctx context.Context) (func(), error) {
	if sdkDisabled() {
		return func() {}, nil
	}
	res, err := resource.New(ctx,
		// The graph's id unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names the service.
		resource.WithAttributes(attribute.String("service.name", svc.Registered().ID)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	traceOptions := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)} // the sampler is OTEL_TRACES_SAMPLER's
	if on, err := wanted("OTEL_TRACES_EXPORTER"); err != nil {
		return nil, err
	} else if on {
		p, err := protocol("TRACES")
		if err != nil {
			return nil, err
		}
		var exporter sdktrace.SpanExporter
		if p == "grpc" {
			exporter, err = otlptracegrpc.New(ctx)
		} else {
			exporter, err = otlptracehttp.New(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		traceOptions = append(traceOptions, sdktrace.WithBatcher(exporter, batching()...))
	}
	metricOptions := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if on, err := wanted("OTEL_METRICS_EXPORTER"); err != nil {
		return nil, err
	} else if on {
		p, err := protocol("METRICS")
		if err != nil {
			return nil, err
		}
		var exporter sdkmetric.Exporter
		if p == "grpc" {
			exporter, err = otlpmetricgrpc.New(ctx)
		} else {
			exporter, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		metricOptions = append(metricOptions, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exporter)))
	}
	tp := sdktrace.NewTracerProvider(traceOptions...)
	mp := sdkmetric.NewMeterProvider(metricOptions...)
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	// W3C trace context in and out (Go's default propagator propagates nothing).
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	t, err := newTracer(tp, mp)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	svc.SetTracer(t)
	return func() {
		svc.SetTracer(nil)
		bound, cancel := context.WithTimeout(context.Background(), shutdownBound)
		defer cancel()
		_ = tp.Shutdown(bound)
		_ = mp.Shutdown(bound)
	}, nil
}

func newTracer(tp trace.TracerProvider, mp metric.MeterProvider) (*otelTracer, error) {
	meter := mp.Meter("svc")
	t := &otelTracer{tracer: tp.Tracer("svc"),
		content: strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")), "true")}
	var errs [5]error
	t.runs, errs[0] = meter.Int64Counter("svc.runs", metric.WithUnit("{run}"),
		metric.WithDescription("Runs by outcome"))
	t.nodeDuration, errs[1] = meter.Float64Histogram("svc.node.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of node runs by kind"))
	t.tokens, errs[2] = meter.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens used by model calls"),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144,
			1048576, 4194304, 16777216, 67108864))
	t.modelDuration, errs[3] = meter.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of model calls"),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12,
			10.24, 20.48, 40.96, 81.92))
	t.requestDuration, errs[4] = meter.Float64Histogram("http.server.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests"),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	return t, errors.Join(errs[:]...)
}

// outcome is an error's code for metrics and error.type: the envelope's
// code, "interrupted" for a pause, "client_closed_request" for a run its
// client left, "" for none.
func outcome(err error) string {
	if err == nil {
		return ""
	}
	var in *svc.Interrupt
	if errors.As(err, &in) {
		return "interrupted"
	}
	var e *svc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "deadline_exceeded"
	}
	if errors.Is(err, context.Canceled) {
		// The request's context ended first: its client went away.
		return "client_closed_request"
	}
	return "execution_error"
}

// Start begins the span op named after name, as the child of ctx's, and
// returns what ends it and records its measurement (svc.Tracer); a node,
// a parallel branch and a map item have no span without
// settings.tracing.trace_nodes.
func (t *otelTracer) Start(ctx context.Context, op svc.SpanOp, name string) (context.Context, func(error)) {
	var sh *spanShape
	switch op {
	case svc.SpanNode, svc.SpanBranch, svc.SpanItem:
		if !svc.Registered().TraceNodes {
			return ctx, endNothing
		}
	}
	switch op {
	case svc.SpanChat:
		sh = t.shapeOf(op, name, svc.ModelProvider(ctx))
	case svc.SpanBranch:
		sh = t.shapeOf(op, name, svc.ScopeNode(ctx))
	case svc.SpanItem:
		sh = t.itemShape(svc.ScopeNode(ctx), name)
	default:
		sh = t.shapeOf(op, name, "")
	}
	ctx, span := t.tracer.Start(ctx, sh.name, sh.start...)
	started := time.Now()
	return ctx, func(err error) {
		code := outcome(err)
		if code != "" && code != "interrupted" {
			span.SetAttributes(attribute.String(attrErrorType, code))
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		if sh.counted == nil {
			return
		}
		measured := sh.ok
		if code != "" {
			measured = sh.failed(code)
		}
		switch op {
		case svc.SpanWorkflow:
			t.runs.Add(ctx, 1, measured)
		case svc.SpanNode:
			t.nodeDuration.Record(ctx, time.Since(started).Seconds(), measured)
		case svc.SpanChat:
			t.modelDuration.Record(ctx, time.Since(started).Seconds(), measured)
		}
	}
}

// endNothing ends the span a node does not have.
func endNothing(error) {}

// A spanShape is what every span of one op and name starts with, and the
// attributes of its measurement, made once (a span per node is the hot
// path: building them per span cost a third of a traced request).
type spanShape struct {
	name  string
	start []trace.SpanStartOption
	// counted is the measurement's attributes but the outcome (nil: the op
	// is not measured); ok is them with the outcome "ok".
	counted []attribute.KeyValue
	ok      metric.MeasurementOption
	// byOutcome says whether the outcome is svc.run.outcome (runs, nodes)
	// rather than error.type on failure only (model calls).
	byOutcome bool
}

// failed is the measurement's attributes for a failure with code.
func (sh *spanShape) failed(code string) metric.MeasurementOption {
	if sh.byOutcome {
		return metric.WithAttributeSet(attribute.NewSet(append(sh.counted[:len(sh.counted):len(sh.counted)],
			attribute.String(attrOutcome, code))...))
	}
	return metric.WithAttributeSet(attribute.NewSet(append(sh.counted[:len(sh.counted):len(sh.counted)],
		attribute.String(attrErrorType, code))...))
}

// A shapeKey is a spanShape's op, name and detail: a chat's provider, a
// branch's parallel node, an item's map node ("" for other spans).
type shapeKey struct {
	op           svc.SpanOp
	name, detail string
}

// maxShapes bounds the shapes kept: the graph's nodes, branches, tools,
// models and agents are far fewer. Map items are not kept one by one
// (itemShape).
const maxShapes = 4096

// shapeOf is the shape of op's spans named name; detail is a chat's
// provider (gen_ai.provider.name), a branch's parallel node, an item's map
// node, "" for other spans.
func (t *otelTracer) shapeOf(op svc.SpanOp, name, detail string) *spanShape {
	key := shapeKey{op, name, detail}
	if found, ok := t.shapes.Load(key); ok {
		return found.(*spanShape)
	}
	sh := newShape(op, name, detail)
	if t.shapeCount.Load() < maxShapes {
		if found, loaded := t.shapes.LoadOrStore(key, sh); loaded {
			return found.(*spanShape)
		}
		t.shapeCount.Add(1)
	}
	return sh
}

// itemShape is the shape of the span of item index (decimal) of the map
// node `node`: the node's shape, kept once (shapeOf with no name), with
// the item's name and svc.item, made per span: a map's items would fill
// the kept shapes.
func (t *otelTracer) itemShape(node, index string) *spanShape {
	base := t.shapeOf(svc.SpanItem, "", node)
	sh := *base
	sh.name = "item " + index
	if k, err := strconv.Atoi(index); err == nil {
		sh.start = append(base.start[:len(base.start):len(base.start)],
			trace.WithAttributes(attribute.Int(attrItem, k)))
	}
	return &sh
}

func newShape(op svc.SpanOp, name, detail string) *spanShape {
	var (
		sh    = &spanShape{byOutcome: true}
		kind  = trace.SpanKindInternal
		attrs []attribute.KeyValue
	)
	switch op {
	case svc.SpanWorkflow:
		id := svc.Registered().ID
		sh.name = "invoke_workflow " + id
		attrs = []attribute.KeyValue{attribute.String(attrOperation, "invoke_workflow"), attribute.String(attrWorkflow, id)}
		sh.counted = []attribute.KeyValue{attribute.String(attrWorkflow, id)}
	case svc.SpanNode:
		nk := svc.Registered().KindOf(name)
		sh.name = nk + " " + name
		attrs = []attribute.KeyValue{attribute.String(attrNodeID, name), attribute.String(attrNodeKind, nk)}
		sh.counted = []attribute.KeyValue{attribute.String(attrNodeKind, nk)}
	case svc.SpanChat:
		sh.name, kind = "chat "+name, trace.SpanKindClient
		attrs = []attribute.KeyValue{attribute.String(attrOperation, "chat"),
			attribute.String(attrProvider, detail), attribute.String(attrModel, name)}
		sh.counted, sh.byOutcome = attrs, false
	case svc.SpanTool:
		sh.name = "execute_tool " + name
		attrs = []attribute.KeyValue{attribute.String(attrOperation, "execute_tool"), attribute.String(attrTool, name)}
	case svc.SpanAgent, svc.SpanRemoteAgent:
		sh.name = "invoke_agent " + name
		if op == svc.SpanRemoteAgent {
			kind = trace.SpanKindClient
		}
		attrs = []attribute.KeyValue{attribute.String(attrOperation, "invoke_agent"),
			attribute.String(attrAgentID, name), attribute.String(attrAgentName, name)}
	case svc.SpanBranch:
		sh.name = "branch " + name
		attrs = []attribute.KeyValue{attribute.String(attrNodeID, detail), attribute.String(attrBranch, name)}
	case svc.SpanItem:
		// The map node's part of every item's shape (itemShape).
		attrs = []attribute.KeyValue{attribute.String(attrNodeID, detail)}
	}
	sh.start = []trace.SpanStartOption{trace.WithSpanKind(kind), trace.WithAttributes(attrs...)}
	if sh.counted != nil {
		if sh.byOutcome {
			sh.ok = metric.WithAttributeSet(attribute.NewSet(append(sh.counted[:len(sh.counted):len(sh.counted)],
				attribute.String(attrOutcome, "ok"))...))
		} else {
			sh.ok = metric.WithAttributeSet(attribute.NewSet(sh.counted...))
		}
	}
	return sh
}

// Reply records usage.prompt_tokens and completion_tokens of an
// OpenAI-style reply (the runtime reads every provider's so) on ctx's chat
// span and in gen_ai.client.token.usage, and with content on, the prompt
// and the reply's message.
func (t *otelTracer) Reply(ctx context.Context, model string, messages, reply any) {
	span := trace.SpanFromContext(ctx)
	obj, _ := reply.(map[string]any)
	if t.content {
		if text, err := json.Marshal(messages); err == nil {
			span.SetAttributes(attribute.String("gen_ai.input.messages", string(text)))
		}
		if choices, _ := obj["choices"].([]any); len(choices) > 0 {
			if first, ok := choices[0].(map[string]any); ok {
				if text, err := json.Marshal([]any{first["message"]}); err == nil {
					span.SetAttributes(attribute.String("gen_ai.output.messages", string(text)))
				}
			}
		}
	}
	usage, _ := obj["usage"].(map[string]any)
	for _, u := range []struct{ key, attr, tokenType string }{
		{"prompt_tokens", attrInputTok, "input"}, {"completion_tokens", attrOutputTok, "output"},
	} {
		n, ok := tokenCount(usage[u.key])
		if !ok {
			continue
		}
		span.SetAttributes(attribute.Int64(u.attr, n))
		t.tokens.Record(ctx, n, metric.WithAttributes(attribute.String(attrOperation, "chat"),
			attribute.String(attrProvider, svc.ModelProvider(ctx)), attribute.String(attrModel, model),
			attribute.String(attrTokenType, u.tokenType)))
	}
}

// tokenCount is a non-negative integer count, however the JSON decoder
// gave it.
func tokenCount(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n >= 0 && n == float64(int64(n)) {
			return int64(n), true
		}
	case interface{ Int64() (int64, error) }:
		if i, err := n.Int64(); err == nil && i >= 0 {
			return i, true
		}
	}
	return 0, false
}

// Inject adds ctx's traceparent to an outbound call's headers.
func (t *otelTracer) Inject(ctx context.Context, h http.Header) {
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
}

// routes are the service's paths, each its own route (the server span's
// name and http.route); /health is left out: liveness probes would bury
// the runs.
var routes = map[string]bool{"/invoke": true, "/openapi.json": true, "/mcp": true, "/info": true}

// A routeShape is what every server span of one method and path starts
// with, and the attributes of its duration by status, made once.
type routeShape struct {
	name     string
	start    []trace.SpanStartOption
	attrs    []attribute.KeyValue
	byStatus sync.Map // status code -> metric.MeasurementOption
}

func (t *otelTracer) routeOf(method, path string) *routeShape {
	key := method + " " + path
	if found, ok := t.routeShapes.Load(key); ok {
		return found.(*routeShape)
	}
	rs := &routeShape{name: method,
		attrs: []attribute.KeyValue{attribute.String("http.request.method", method), attribute.String("url.scheme", "http")}}
	if routes[path] {
		rs.name += " " + path
		rs.attrs = append(rs.attrs, attribute.String("http.route", path))
	}
	rs.start = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(rs.attrs...)}
	// Only the service's routes are kept: other paths and methods are the
	// callers' to choose.
	if routes[path] && t.routeCount.Load() < maxShapes {
		if found, loaded := t.routeShapes.LoadOrStore(key, rs); loaded {
			return found.(*routeShape)
		}
		t.routeCount.Add(1)
	}
	return rs
}

// measured is the duration's attributes for an answer with status.
func (rs *routeShape) measured(status int) metric.MeasurementOption {
	if found, ok := rs.byStatus.Load(status); ok {
		return found.(metric.MeasurementOption)
	}
	m := metric.WithAttributeSet(attribute.NewSet(append(rs.attrs[:len(rs.attrs):len(rs.attrs)],
		attribute.Int("http.response.status_code", status))...))
	rs.byStatus.Store(status, m)
	return m
}

// tracedHandler is h with the server span of each request (continuing the
// caller's traceparent) and http.server.request.duration.
func tracedHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, ok := svc.ActiveTracer().(*otelTracer)
		if !ok || r.URL.Path == "/health" {
			h.ServeHTTP(w, r)
			return
		}
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		rs := t.routeOf(r.Method, r.URL.Path)
		ctx, span := t.tracer.Start(ctx, rs.name, rs.start...)
		started := time.Now()
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			span.SetAttributes(attribute.Int("http.response.status_code", rec.status))
			if rec.status >= 500 {
				span.SetAttributes(attribute.String(attrErrorType, strconv.Itoa(rec.status)))
				span.SetStatus(codes.Error, "")
			}
			span.End()
			t.requestDuration.Record(ctx, time.Since(started).Seconds(), rs.measured(rec.status))
		}()
		h.ServeHTTP(rec, r.WithContext(ctx))
	})
}

// statusWriter keeps the status an answer was sent with; streamed answers
// still flush through it.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines of
// streamed answers).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
