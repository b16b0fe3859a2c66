package otel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	svc "svc.dev/runtime/graph"
)

// traceInMemory makes runs record with a tracer exporting to memory for
// one test.
func traceInMemory(t *testing.T) (*tracetest.InMemoryExporter, *otelTracer) {
	t.Helper()
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	tr, err := newTracer(tp, noop.NewMeterProvider())
	if err != nil {
		t.Fatal(err)
	}
	otel.SetTextMapPropagator(propagation.TraceContext{})
	useTracer(t, tr)
	return exporter, tr
}

// useTracer makes tr the tracer of runs for one test.
func useTracer(t *testing.T, tr svc.Tracer) {
	saved := svc.ActiveTracer()
	svc.SetTracer(tr)
	t.Cleanup(func() { svc.SetTracer(saved) })
}

// useGraph registers a traced graph that run walks, for one test: its
// nodes are llm nodes, but a-router, a router.
func useGraph(t *testing.T, run func(ctx context.Context, st svc.State, from string) (svc.State, error)) {
	saved := *svc.Registered()
	svc.Register(svc.Compiled{ID: "traced-graph", Entry: "a-node", Run: run, MaxSteps: 25,
		RequestTimeout: time.Minute, TraceNodes: true, NodeKind: func(node string) string {
			if node == "a-router" {
				return "router"
			}
			return "llm"
		}})
	t.Cleanup(func() { svc.Register(saved) })
}

// modelServer answers every chat-completions call with reply, as the
// returned Model; it keeps each call's traceparent.
func modelServer(t *testing.T, reply string) (svc.Model, *[]string) {
	var traceparents []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		traceparents = append(traceparents, r.Header.Get("traceparent"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(server.Close)
	t.Setenv("TRACED_MODEL_URL", server.URL)
	return svc.Model{Name: "some-model", BaseURLEnv: "TRACED_MODEL_URL", APIKeyEnv: "TRACED_MODEL_KEY"}, &traceparents
}

const modelReply = `{"usage":{"prompt_tokens":3},"choices":[{"message":{"role":"assistant","content":"yo"}}]}`

func TestSpansNestAndCarryTheErrorCode(t *testing.T) {
	exporter, _ := traceInMemory(t)
	model, traceparents := modelServer(t, modelReply)
	useGraph(t, func(ctx context.Context, st svc.State, _ string) (svc.State, error) {
		err := svc.Step(ctx, st, "a-node", func(ctx context.Context, _ svc.State) (svc.State, error) {
			if _, err := svc.Chat(ctx, "a-node", model, "", "hi"); err != nil {
				t.Errorf("the model call: %v", err)
			}
			return nil, errors.New("boom")
		}, false)
		if err == nil {
			t.Error("the node did not fail")
		}
		svc.TraceRouter(ctx, "a-router")
		return nil, errors.New("a bug")
	})
	if _, _, err := svc.Invoke(context.Background(), map[string]any{}); err == nil || err.Error() != "a bug" {
		t.Fatalf("the run: %v", err)
	}

	spans := exporter.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	run, ok := byName["invoke_workflow traced-graph"]
	if !ok || len(spans) != 4 {
		t.Fatalf("spans: %v", names(spans))
	}
	node := byName["llm a-node"]
	chat := byName["chat some-model"]
	router := byName["router a-router"]
	if node.Parent.SpanID() != run.SpanContext.SpanID() || router.Parent.SpanID() != run.SpanContext.SpanID() {
		t.Errorf("nodes are not the run's children: %v", names(spans))
	}
	if chat.Parent.SpanID() != node.SpanContext.SpanID() {
		t.Errorf("the model call is not the node's child")
	}
	if len(*traceparents) != 1 || !strings.Contains((*traceparents)[0], chat.SpanContext.SpanID().String()) {
		t.Errorf("the model call's traceparent: %q", *traceparents)
	}
	if node.Status.Code != codes.Error || attr(node, attrErrorType) != "execution_error" {
		t.Errorf("the failed node: %v %v", node.Status, node.Attributes)
	}
	if run.Status.Code != codes.Error || attr(run, attrErrorType) != "execution_error" {
		t.Errorf("the failed run: %v %v", run.Status, run.Attributes)
	}
	if attr(chat, attrOperation) != "chat" || attr(chat, attrModel) != "some-model" {
		t.Errorf("the chat span: %v", chat.Attributes)
	}
}

func TestTheServerSpanContinuesTheCallersTrace(t *testing.T) {
	exporter, tr := traceInMemory(t)
	var sent http.Header
	h := svc.Traced(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/invoke" {
			sent = http.Header{}
			tr.Inject(r.Context(), sent)
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	req := httptest.NewRequest(http.MethodPost, "/invoke", strings.NewReader("{}"))
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/health", nil))

	spans := exporter.GetSpans()
	if len(spans) != 1 || spans[0].Name != "POST /invoke" {
		t.Fatalf("spans (GET /health is not traced): %v", names(spans))
	}
	s := spans[0]
	if s.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("the caller's trace is not continued: %v parent %v", s.SpanContext, s.Parent)
	}
	if attr(s, "http.route") != "/invoke" || !strings.Contains(sent.Get("traceparent"), s.SpanContext.SpanID().String()) {
		t.Errorf("route %q, traceparent sent %q", attr(s, "http.route"), sent.Get("traceparent"))
	}
}

func TestProtocolAndExporterVariables(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, err := protocol("TRACES"); err == nil || !strings.Contains(err.Error(), `"http/json"`) {
		t.Errorf("http/json: %v", err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
	if p, err := protocol("TRACES"); p != "grpc" || err != nil {
		t.Errorf("the per-signal variable first: %q %v", p, err)
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	if _, err := wanted("OTEL_TRACES_EXPORTER"); err == nil {
		t.Error("zipkin is not served")
	}
}

func TestOTELSDKDisabledTurnsTelemetryOff(t *testing.T) {
	useTracer(t, nil)
	// An exporter the service would refuse: with the SDK off it is not read.
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	t.Setenv("OTEL_SDK_DISABLED", "TRUE")
	stop, err := svc.Start(context.Background(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if svc.ActiveTracer() != nil {
		t.Fatal("OTEL_SDK_DISABLED=true, yet a tracer runs")
	}
	if _, plain := svc.Traced(untracedHandler{}).(untracedHandler); !plain {
		t.Error("OTEL_SDK_DISABLED=true, yet the handler is wrapped for server spans")
	}
}

// Importing the package is what traces a graph: its init registers it,
// and the graph's Start starts it.
func TestStartTracesUntilStopped(t *testing.T) {
	useTracer(t, nil)
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	stop, err := svc.Start(context.Background(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := svc.ActiveTracer().(*otelTracer); !ok {
		t.Errorf("started, yet the tracer is %v", svc.ActiveTracer())
	}
	if _, plain := svc.Traced(untracedHandler{}).(untracedHandler); plain {
		t.Error("started, yet the handler has no server spans")
	}
	stop()
	if svc.ActiveTracer() != nil {
		t.Error("stopped, yet a tracer runs")
	}
}

type untracedHandler struct{}

func (untracedHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}

func TestPromptsAndRepliesOnlyWithTheContentFlag(t *testing.T) {
	model, _ := modelServer(t, modelReply)
	for _, content := range []bool{false, true} {
		if content {
			t.Setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
		}
		exporter, _ := traceInMemory(t)
		if text, err := svc.Chat(context.Background(), "a-node", model, "", "hi"); text != "yo" || err != nil {
			t.Fatalf("the model call: %q %v", text, err)
		}
		span := exporter.GetSpans()[0]
		if attr(span, attrInputTok) != "3" {
			t.Errorf("input tokens: %v", span.Attributes)
		}
		in, out := attr(span, "gen_ai.input.messages"), attr(span, "gen_ai.output.messages")
		if content && (in != `[{"content":"hi","role":"user"}]` || out != `[{"content":"yo","role":"assistant"}]`) {
			t.Errorf("content on: %q %q", in, out)
		}
		if !content && (in != "" || out != "") {
			t.Errorf("content off, yet %q %q", in, out)
		}
	}
}

// A streamed call's tokens come in its last chunk, asked for with
// stream_options: its chat span has them too.
func TestAStreamedCallsSpanCarriesItsTokens(t *testing.T) {
	exporter, _ := traceInMemory(t)
	model, _ := modelServer(t, "data: {\"choices\":[{\"delta\":{\"content\":\"yo\"}}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n")
	useGraph(t, func(ctx context.Context, st svc.State, _ string) (svc.State, error) {
		_, err := svc.Chat(ctx, "a-node", model, "", "hi")
		return st, err
	})
	streamed := false
	if _, _, err := svc.RunObserved(context.Background(), svc.State{}, func(e svc.Event) { streamed = streamed || e.Type == "token" }); err != nil || !streamed {
		t.Fatalf("the streamed run (a token sent: %v): %v", streamed, err)
	}
	spans := exporter.GetSpans()
	for _, span := range spans {
		if span.Name == "chat some-model" {
			if attr(span, attrInputTok) != "3" || attr(span, attrOutputTok) != "5" {
				t.Errorf("the chat span's tokens: %v", span.Attributes)
			}
			return
		}
	}
	t.Fatalf("no chat span: %v", names(spans))
}

// An anthropic model's chat span and token measurements name its
// provider; its usage is read from the Messages API's reply.
func TestAnAnthropicCallNamesItsProvider(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tr, err := newTracer(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		t.Fatal(err)
	}
	useTracer(t, tr)
	model, _ := modelServer(t, `{"type":"message","role":"assistant","content":[{"type":"text","text":"yo"}],`+
		`"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":5}}`)
	model.Provider = "anthropic"
	if text, err := svc.Chat(context.Background(), "a-node", model, "", "hi"); text != "yo" || err != nil {
		t.Fatalf("the model call: %q %v", text, err)
	}
	span := exporter.GetSpans()[0]
	if attr(span, attrProvider) != "anthropic" || attr(span, attrInputTok) != "3" || attr(span, attrOutputTok) != "5" {
		t.Errorf("the chat span: %v", span.Attributes)
	}
	var data metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &data); err != nil {
		t.Fatal(err)
	}
	providers := map[string]bool{}
	for _, sm := range data.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value(attrProvider)
					providers[m.Name+" "+v.Emit()] = true
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value(attrProvider)
					providers[m.Name+" "+v.Emit()] = true
				}
			}
		}
	}
	want := map[string]bool{"gen_ai.client.token.usage anthropic": true, "gen_ai.client.operation.duration anthropic": true}
	if fmt.Sprint(providers) != fmt.Sprint(want) {
		t.Errorf("the measurements' providers: %v", providers)
	}
}

// The measurements' attribute sets are made once per span shape and
// route: each still says what its own measurement was. Branches and items
// are measured by none.
func TestMetricsCarryTheirAttributes(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	tr, err := newTracer(sdktrace.NewTracerProvider(), sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		t.Fatal(err)
	}
	useTracer(t, tr)
	var failed error
	useGraph(t, func(ctx context.Context, st svc.State, _ string) (svc.State, error) {
		err := svc.Step(ctx, st, "n", func(ctx context.Context, _ svc.State) (svc.State, error) {
			_, endChat := tr.Start(ctx, svc.SpanChat, "m")
			endChat(failed)
			// Branches and items are not measured.
			_, endBranch := tr.Start(ctx, svc.SpanBranch, "b")
			endBranch(failed)
			_, endItem := tr.Start(ctx, svc.SpanItem, "0")
			endItem(failed)
			return nil, failed
		}, false)
		return st, err
	})
	for _, failed = range []error{nil, nil, errors.New("boom")} {
		if _, _, err := svc.Invoke(context.Background(), map[string]any{}); (err != nil) != (failed != nil) {
			t.Fatalf("the run: %v", err)
		}
	}
	h := svc.Traced(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/invoke" {
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	for _, path := range []string{"/invoke", "/info", "/invoke"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, path, nil))
	}
	var data metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &data); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]uint64{}
	for _, sm := range data.ScopeMetrics {
		for _, m := range sm.Metrics {
			counts := map[string]uint64{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					counts[p.Attributes.Encoded(attribute.DefaultEncoder())] += uint64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					counts[p.Attributes.Encoded(attribute.DefaultEncoder())] += p.Count
				}
			}
			got[m.Name] = counts
		}
	}
	want := map[string]map[string]uint64{
		"svc.runs": {
			"gen_ai.workflow.name=traced-graph,svc.run.outcome=ok":              2,
			"gen_ai.workflow.name=traced-graph,svc.run.outcome=execution_error": 1,
		},
		"gen_ai.client.operation.duration": {
			"gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=m":                            2,
			"error.type=execution_error,gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=m": 1,
		},
		"http.server.request.duration": {
			"http.request.method=POST,http.response.status_code=502,http.route=/invoke,url.scheme=http": 2,
			"http.request.method=POST,http.response.status_code=200,http.route=/info,url.scheme=http":   1,
		},
		"svc.node.duration": {
			"svc.node.kind=llm,svc.run.outcome=ok":              2,
			"svc.node.kind=llm,svc.run.outcome=execution_error": 1,
		},
	}
	for name, counts := range want {
		if fmt.Sprint(got[name]) != fmt.Sprint(counts) {
			t.Errorf("%s: %v, want %v", name, got[name], counts)
		}
	}
}

func TestBatchingDefaultsGiveWayToTheVariables(t *testing.T) {
	sizes := func() sdktrace.BatchSpanProcessorOptions {
		var o sdktrace.BatchSpanProcessorOptions
		for _, option := range batching() {
			option(&o)
		}
		return o
	}
	if o := sizes(); o.MaxQueueSize != defaultQueueSize || o.MaxExportBatchSize != defaultBatchSize {
		t.Errorf("defaults: %+v", o)
	}
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "1000")
	if o := sizes(); o.MaxQueueSize != 0 || o.MaxExportBatchSize != 1000 {
		t.Errorf("the queue set (the SDK reads it), the batch no larger: %+v", o)
	}
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "100")
	if o := sizes(); o.MaxQueueSize != 0 || o.MaxExportBatchSize != 0 {
		t.Errorf("both set: the SDK's to read, %+v", o)
	}
}

func names(spans tracetest.SpanStubs) []string {
	out := []string{}
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// useParallelGraph registers, for one test, a graph that run walks, its
// nodes "fan" a parallel node, "each" a map node and the others function
// nodes, with trace_nodes as given.
func useParallelGraph(t *testing.T, traceNodes bool, run func(ctx context.Context, st svc.State, from string) (svc.State, error)) {
	saved := *svc.Registered()
	svc.Register(svc.Compiled{ID: "traced-graph", Entry: "fan", Run: run, MaxSteps: 25,
		Fields:         []svc.Field{{Name: "out", Type: svc.TypeArray}},
		RequestTimeout: time.Minute, TraceNodes: traceNodes, NodeKind: func(node string) string {
			switch node {
			case "fan":
				return "parallel"
			case "each":
				return "map"
			}
			return "function"
		}})
	t.Cleanup(func() { svc.Register(saved) })
}

// parallelRun is a run with the parallel node "fan" (branch "a" runs its
// node, "b" fails, "c" is cut by b's failure) and, when fan does not fail,
// the map node "each" over three items, each a child graph of one node
// ("each__do"), item failing fails.
func parallelRun(failBranch bool, failing int) func(ctx context.Context, st svc.State, _ string) (svc.State, error) {
	child := svc.NewSchema([]svc.Field{{Name: "item", Type: svc.TypeString}})
	step := func(node string, fn svc.NodeFunc) func(ctx context.Context, st svc.State, steps *svc.Steps) error {
		return func(ctx context.Context, st svc.State, _ *svc.Steps) error { return svc.Step(ctx, st, node, fn, false) }
	}
	ok := func(context.Context, svc.State) (svc.State, error) { return nil, nil }
	return func(ctx context.Context, st svc.State, _ string) (svc.State, error) {
		branches := []svc.Branch{{Name: "a", Run: step("a", ok)}}
		if failBranch {
			branches = append(branches,
				svc.Branch{Name: "b", Run: step("b", func(context.Context, svc.State) (svc.State, error) {
					time.Sleep(10 * time.Millisecond)
					return nil, errors.New("b broke")
				})},
				svc.Branch{Name: "c", Run: step("c", func(ctx context.Context, _ svc.State) (svc.State, error) {
					<-ctx.Done()
					return nil, ctx.Err()
				})})
		}
		if err := svc.Parallel(ctx, st, "fan", svc.NewSteps(25), 0, branches); err != nil {
			return nil, err
		}
		err := svc.Step(ctx, st, "each", func(ctx context.Context, _ svc.State) (svc.State, error) {
			out, err := svc.Map(ctx, "each", []any{"x", "y", "z"}, 10, 1, func(ctx context.Context, k int, item any) (any, error) {
				out, err := svc.RunChild(ctx, "each", child, func(ctx context.Context, cs svc.State) (svc.State, error) {
					return cs, child.Step(ctx, cs, "each__do", func(context.Context, svc.State) (svc.State, error) {
						if k == failing {
							return nil, errors.New("item broke")
						}
						return nil, nil
					}, false)
				}, map[string]any{"item": item})
				return out["item"], err
			})
			return svc.State{"out": out}, err
		}, false)
		return st, err
	}
}

// Under a parallel node's span, a span per branch run, the parent of its
// nodes' spans; under a map node's, a span per item, the parent of its
// child's spans; failures mark them as they mark nodes.
func TestBranchAndItemSpans(t *testing.T) {
	exporter, tr := traceInMemory(t)
	useParallelGraph(t, true, parallelRun(false, -1))
	if _, _, err := svc.Invoke(context.Background(), map[string]any{}); err != nil {
		t.Fatal(err)
	}
	spans := exporter.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	if len(spans) != 11 {
		t.Fatalf("spans: %v", names(spans))
	}
	parentOf := func(child, parent string) {
		t.Helper()
		c, ok := byName[child]
		if !ok || c.Parent.SpanID() != byName[parent].SpanContext.SpanID() {
			t.Errorf("%q is not %q's child: %v", child, parent, names(spans))
		}
	}
	parentOf("parallel fan", "invoke_workflow traced-graph")
	parentOf("branch a", "parallel fan")
	parentOf("function a", "branch a")
	parentOf("map each", "invoke_workflow traced-graph")
	for k := range 3 {
		parentOf(fmt.Sprintf("item %d", k), "map each")
	}
	// Each item's child node is the item's child.
	items := map[trace.SpanID]int{}
	for k := range 3 {
		items[byName[fmt.Sprintf("item %d", k)].SpanContext.SpanID()] = 0
	}
	for _, s := range spans {
		if _, ok := items[s.Parent.SpanID()]; ok && s.Name == "function each__do" {
			items[s.Parent.SpanID()]++
		}
	}
	for id, n := range items {
		if n != 1 {
			t.Errorf("item span %v has %d child node spans, want 1", id, n)
		}
	}
	branch := byName["branch a"]
	if branch.SpanKind != trace.SpanKindInternal || attr(branch, attrNodeID) != "fan" || attr(branch, attrBranch) != "a" ||
		len(branch.Attributes) != 2 || branch.Status.Code != codes.Unset {
		t.Errorf("the branch's span: %v %v %v", branch.SpanKind, branch.Attributes, branch.Status)
	}
	for k := range 3 {
		item := byName[fmt.Sprintf("item %d", k)]
		if item.SpanKind != trace.SpanKindInternal || attr(item, attrNodeID) != "each" || len(item.Attributes) != 2 {
			t.Errorf("item %d's span: %v %v", k, item.SpanKind, item.Attributes)
		}
		for _, kv := range item.Attributes {
			if kv.Key == attrItem && (kv.Value.Type() != attribute.INT64 || kv.Value.AsInt64() != int64(k)) {
				t.Errorf("item %d's span's svc.item: %v", k, kv.Value)
			}
		}
	}
	// The items' shapes are not kept one by one.
	kept := tr.shapeCount.Load()
	useParallelGraph(t, true, parallelRun(false, -1))
	if _, _, err := svc.Invoke(context.Background(), map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if tr.shapeCount.Load() != kept {
		t.Errorf("another run kept %d more shapes", tr.shapeCount.Load()-kept)
	}
	tr.shapes.Range(func(key, _ any) bool {
		if k := key.(shapeKey); k.op == svc.SpanItem && k.name != "" {
			t.Errorf("an item's shape is kept: %+v", k)
		}
		return true
	})

	// A failing branch marks its span, the branch it cut ends with the
	// cancellation; a failing item marks its span.
	exporter.Reset()
	useParallelGraph(t, true, parallelRun(true, -1))
	if _, _, err := svc.Invoke(context.Background(), map[string]any{}); err == nil {
		t.Fatal("the run did not fail")
	}
	byName = map[string]tracetest.SpanStub{}
	for _, s := range exporter.GetSpans() {
		byName[s.Name] = s
	}
	for name, want := range map[string]string{"branch a": "", "branch b": "execution_error",
		"branch c": "client_closed_request", "parallel fan": "execution_error"} {
		s, ok := byName[name]
		if !ok {
			t.Errorf("no span %q: %v", name, names(exporter.GetSpans()))
			continue
		}
		if got := attr(s, attrErrorType); got != want || (want != "") != (s.Status.Code == codes.Error) {
			t.Errorf("%q: error.type %q, status %v; want %q", name, got, s.Status, want)
		}
	}
	exporter.Reset()
	useParallelGraph(t, true, parallelRun(false, 1))
	if _, _, err := svc.Invoke(context.Background(), map[string]any{}); err == nil {
		t.Fatal("the run did not fail")
	}
	byName = map[string]tracetest.SpanStub{}
	for _, s := range exporter.GetSpans() {
		byName[s.Name] = s
	}
	if s := byName["item 1"]; s.Status.Code != codes.Error || attr(s, attrErrorType) != "execution_error" {
		t.Errorf("the failed item's span: %v %v", s.Status, s.Attributes)
	}
	if s, ok := byName["item 0"]; !ok || s.Status.Code == codes.Error {
		t.Errorf("item 0's span: %v", s.Status)
	}
	if _, ok := byName["item 2"]; ok {
		t.Errorf("item 2 ran after item 1 failed, one at a time")
	}
}

// With trace_nodes false, branches and items have no span, as nodes.
func TestBranchAndItemSpansFollowTraceNodes(t *testing.T) {
	exporter, _ := traceInMemory(t)
	useParallelGraph(t, false, parallelRun(false, -1))
	if _, _, err := svc.Invoke(context.Background(), map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if got := names(exporter.GetSpans()); len(got) != 1 || got[0] != "invoke_workflow traced-graph" {
		t.Fatalf("spans %v, want the run's only", got)
	}
}
