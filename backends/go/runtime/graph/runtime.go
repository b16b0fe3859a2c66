package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Invoke runs the graph on a request's state. The state is validated and
// completed with defaults first; the run is bounded by the step limit and by
// the request deadline, which the runtime checks between nodes and which
// every node receives in ctx (model and HTTP tool calls honour it; a native
// body should select on ctx.Done() or pass ctx on when it waits). The run
// stays on the request's goroutine: no per-request goroutine, channel or
// leaked work after the deadline. A panicking node becomes an execution error.
//
// A run that reaches a hitl node cannot pause here (only POST /invoke keeps
// threads): it fails with an execution error naming the node.
//
// The run's usage is returned whether it failed or not: nil when it asked
// no model.
func Invoke(ctx context.Context, input map[string]any) (State, *Usage, error) {
	st, err := NewState(input)
	if err != nil {
		return nil, nil, err
	}
	return runWhole(ctx, st, nil)
}

// runWhole runs a validated state from the graph's first node to its end
// (Invoke, and a published A2A agent's run with its observer): a run that
// reaches a hitl node fails, since it cannot pause where nothing keeps
// threads.
func runWhole(ctx context.Context, st State, observe Observer) (State, *Usage, error) {
	out, used, err := runFrom(ctx, st, compiled.Entry, observe, Usage{})
	var in *Interrupt
	if errors.As(err, &in) {
		err = nodeError(in.Node, fmt.Sprintf("node %q pauses the run for a person, "+
			"which only POST /invoke can resume", in.Node))
	}
	return out, used.reported(), err
}

// runFrom runs a validated state from the node `from`: the graph's first
// (entry, graph.go) for a new run, the paused node for a resumed one
// (threads.go). A run that pauses returns an *Interrupt; st then holds the
// state at the pause. spent is what the run had used before (a resumed
// run's usage at its pause); it returns what the run has used in all.
func runFrom(ctx context.Context, st State, from string, observe Observer, spent Usage) (out State, used Usage, err error) {
	ctx, end := startSpan(ctx, SpanWorkflow, "")
	defer func() { end(spanError(ctx, err)) }()
	rc := newRunContext(ctx, time.Now().Add(compiled.RequestTimeout))
	rc.observe = observe
	rc.metered.budget, rc.metered.used = compiled.Budget, spent
	rc.meter = &rc.metered
	defer rc.release()
	out, err = compiled.Run(rc, st, from)
	used = rc.meter.usage()
	if errors.Is(err, context.DeadlineExceeded) || (err == nil && errors.Is(rc.Err(), context.DeadlineExceeded)) {
		return nil, used, deadlineError()
	}
	return out, used, err
}

// An Interrupt is a run paused at a hitl node: the error the node returns
// (hitl, threads.go), passed up by step and the run loop unchanged. The
// thread keeps it, with the state at the pause, until a person answers.
type Interrupt struct {
	// Node is the paused node's id.
	Node string
	// Field is the state field the person's answer is written to.
	Field string
	// Value is the payload shown to the person.
	Value any
}

func (in *Interrupt) Error() string { return fmt.Sprintf("the run paused at node %q", in.Node) }

// prepare readies what the graph needs before it serves (the rag nodes'
// documents and embedding indexes: retrievers.go registers it); nil when
// nothing does.
var prepare func(ctx context.Context) error

// RegisterPrepare names what Prepare runs (retrievers.go's init).
func RegisterPrepare(fn func(ctx context.Context) error) { prepare = fn }

// Prepare runs at start-up, before the service listens; an error stops it.
func Prepare(ctx context.Context) error {
	if prepare == nil {
		return nil
	}
	return prepare(ctx)
}

// startups are what Start opens after telemetry, in the order registered
// (RegisterStartup).
var startups []func(ctx context.Context, logger *slog.Logger) (stop func(), err error)

// RegisterStartup adds open to what Start runs before the service listens,
// after Prepare and telemetry, in the order registered: package mcp
// registers the sessions to the graph's MCP servers from its init. open
// returns what releases what it opened; Start's release calls those in
// reverse order, before telemetry stops.
func RegisterStartup(open func(ctx context.Context, logger *slog.Logger) (stop func(), err error)) {
	startups = append(startups, open)
}

// Start readies the graph before the service listens: Prepare, telemetry,
// then what packages registered (RegisterStartup: the sessions to its MCP
// servers). It returns what releases them, to be called at shutdown; an
// error stops the service, and then nothing is left open.
func Start(ctx context.Context, logger *slog.Logger) (func(), error) {
	if err := Prepare(ctx); err != nil {
		return nil, err
	}
	stopTelemetry := func() {}
	if telemetry.Start != nil {
		stop, err := telemetry.Start(ctx)
		if err != nil {
			return nil, err
		}
		stopTelemetry = stop
	}
	var stops []func()
	release := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
		// Last out: the spans of closing the sessions are exported too.
		stopTelemetry()
	}
	for _, open := range startups {
		stop, err := open(ctx, logger)
		if err != nil {
			release()
			return nil, err
		}
		stops = append(stops, stop)
	}
	return release, nil
}

// Telemetry is what package svc.dev/runtime/otel registers from its init
// (RegisterTelemetry) when a traced graph's project imports it
// (settings.tracing.enabled): a program that does not import it links no
// OpenTelemetry, and then nothing is traced and a span costs one
// comparison.
type Telemetry struct {
	// Start starts exporting traces and metrics (from Start, before the
	// service listens) and returns what flushes and stops them. It sets the
	// Tracer runs record with (SetTracer), unless the standard variables
	// turn telemetry off (OTEL_SDK_DISABLED=true); stop unsets it.
	Start func(ctx context.Context) (stop func(), err error)
	// Handler is h with the server span of each request and its duration
	// (Traced).
	Handler func(h http.Handler) http.Handler
}

// telemetry is the registered Telemetry; zero when none is.
var telemetry Telemetry

// RegisterTelemetry makes t the program's telemetry: package otel calls it
// once, from init.
func RegisterTelemetry(t Telemetry) { telemetry = t }

// tracing records the spans and metrics of docs/telemetry.md (the svc
// repository's) while telemetry runs; nil when the graph is not traced, and
// then a span costs one comparison.
var tracing Tracer

// SetTracer makes t the Tracer of runs (Telemetry.Start; tests); an untyped
// nil stops tracing. It is set before the service serves, not while runs
// read it.
func SetTracer(t Tracer) { tracing = t }

// ActiveTracer is the Tracer of runs, nil when nothing is traced.
func ActiveTracer() Tracer { return tracing }

// A Tracer records the spans and metrics of runs (package otel's).
type Tracer interface {
	// Start begins the span op named after name, as the child of ctx's;
	// end receives the error it ended with.
	Start(ctx context.Context, op SpanOp, name string) (ctx2 context.Context, end func(err error))
	// Reply records a model reply's token counts on ctx's chat span and,
	// with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, the
	// prompt (messages) and the reply's message. A streamed call's reply is
	// its last chunk, which carries the usage and no message.
	Reply(ctx context.Context, model string, messages, reply any)
	// Inject adds ctx's traceparent to an outbound call's headers.
	Inject(ctx context.Context, h http.Header)
}

// A SpanOp is what a span stands for; its name is the graph's id (a run),
// a node's, a model's, a tool's or an agent's, a parallel branch's (its
// first node's registered name) or a map item's index (decimal).
type SpanOp int

const (
	SpanWorkflow    SpanOp = iota // a run of the graph
	SpanNode                      // a node's step (settings.tracing.trace_nodes)
	SpanChat                      // a model call
	SpanTool                      // a tool call (HTTP, MCP, an agent's)
	SpanAgent                     // an agent's run, in this process
	SpanRemoteAgent               // a remote (A2A) agent's call
	// SpanBranch is a parallel node's branch run, SpanItem a map node's
	// item (settings.tracing.trace_nodes, as nodes): children of the
	// parallel or map node's span, which ScopeNode names.
	SpanBranch
	SpanItem
)

type scopeKey struct{}

// ScopeNode is the parallel or map node of a SpanBranch or SpanItem span
// about to start in ctx (the span's svc.node.id); "" outside a branch or
// item.
func ScopeNode(ctx context.Context) string {
	node, _ := ctx.Value(scopeKey{}).(string)
	return node
}

// Traced is h with the server span of each request and its duration when
// the graph is traced (package otel) and telemetry runs (Start turned it
// on: not with OTEL_SDK_DISABLED=true); h itself otherwise.
func Traced(h http.Handler) http.Handler {
	if telemetry.Handler == nil || tracing == nil {
		return h
	}
	return telemetry.Handler(h)
}

// startSpan is tracing.Start, or nothing when the graph is not traced.
func startSpan(ctx context.Context, op SpanOp, name string) (context.Context, func(error)) {
	if tracing == nil {
		return ctx, endNothing
	}
	return tracing.Start(ctx, op, name)
}

func endNothing(error) {}

type providerKey struct{}

// ModelProvider is the provider of the model call ctx belongs to ("openai"
// or "anthropic": a chat span's gen_ai.provider.name); "openai" outside
// one. It is here, not in llm.go, as telemetry reads it in every project.
func ModelProvider(ctx context.Context) string {
	if p, ok := ctx.Value(providerKey{}).(string); ok {
		return p
	}
	return "openai"
}

// spanError is what a span of the work of ctx ends with: err, or
// context.Canceled (client_closed_request) once the request's context was
// cancelled, its client gone, whatever the work made of the cancel (an
// upstream call reports it as a connection that failed).
func spanError(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return context.Canceled
	}
	return err
}

// TraceRouter records a router's span: a router only picks the next node.
func TraceRouter(ctx context.Context, node string) {
	if tracing != nil {
		_, end := tracing.Start(ctx, SpanNode, node)
		end(nil)
	}
}

func deadlineError() *Error {
	return &Error{Status: http.StatusGatewayTimeout, Code: "deadline_exceeded",
		Message: fmt.Sprintf("the run passed the request deadline of %s", compiled.RequestTimeout)}
}

func StepLimitError() *Error { return StepLimit(compiled.MaxSteps) }

// StepLimit is the error of a graph that ran more than limit steps: the
// document's own graph (MaxSteps) or a subgraph node's child, which has its
// own limit.
func StepLimit(limit int) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: "step_limit_exceeded",
		Message: fmt.Sprintf("the run took more than %d steps", limit),
		Details: map[string]any{"maxSteps": limit}}
}

// Steps counts the node steps of one run over all its branches: a branch
// runs on its own goroutine, so the count is atomic.
type Steps struct {
	limit int
	taken atomic.Int64
}

// NewSteps is the count of a run (or of a child graph's run) allowed
// limit steps.
func NewSteps(limit int) *Steps { return &Steps{limit: limit} }

// Take counts one step: the step past the limit is the step-limit error.
func (s *Steps) Take() error {
	if s.taken.Add(1) > int64(s.limit) {
		return StepLimit(s.limit)
	}
	return nil
}

// An Event is one event of a streamed run (docs/http-contract.md,
// "Streaming"): its type, the node it concerns ("" for the run's own), the
// innermost parallel branch the node is in ("" outside branches) and its
// data.
type Event struct {
	Type   string
	Node   string
	Branch string
	Data   map[string]any
}

// A Result marks a whole state in an event's data (run_started's state,
// run_finished's result), written as /invoke writes its result: every
// declared field.
type Result State

// An Observer receives the events of a streamed run as they happen, one at
// a time: on the run's goroutine, or on a parallel branch's (Parallel
// serializes them).
type Observer func(Event)

type observerKey struct{}

// observerOf is the Observer of the streamed run ctx belongs to, or nil.
func observerOf(ctx context.Context) Observer {
	o, _ := ctx.Value(observerKey{}).(Observer)
	return o
}

// NodeFunc is a node: it reads the state and returns a patch.
type NodeFunc func(ctx context.Context, state State) (State, error)

// Step is a step of the document's own graph.
func Step(ctx context.Context, st State, node string, fn NodeFunc, native bool) error {
	return schema.Step(ctx, st, node, fn, native)
}

// Step runs one node with panic recovery and merges its patch with the
// graph's reducers. Nodes with a native body get their own copy of the
// state, so a body that writes to the map it was handed cannot bypass the
// reducers; generated nodes only read it.
func (sc *Schema) Step(ctx context.Context, st State, node string, fn NodeFunc, native bool) (err error) {
	if tracing != nil {
		var end func(error)
		ctx, end = tracing.Start(ctx, SpanNode, node)
		defer func() { end(spanError(ctx, err)) }() // after the recovery below: it sees a panic's error
	}
	defer func() {
		if r := recover(); r != nil {
			err = nodeError(node, fmt.Sprintf("node %q panicked: %v", node, r))
		}
	}()
	view := st
	if native {
		view = st.clone()
	}
	patch, err := fn(ctx, view)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		var in *Interrupt
		if errors.As(err, &in) {
			return in
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return err
		}
		return nodeError(node, fmt.Sprintf("node %q failed: %v", node, err))
	}
	return sc.applyTracked(ctx, st, patch, node)
}

// clone gives a node its own top-level copy (maps.Clone copies the table
// whole instead of inserting key by key).
func (s State) clone() State { return maps.Clone(s) }

// Timeouts are given in milliseconds in the graph document.
func Millis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// runContext is the context of one run: the request's context with the run's
// deadline. Most runs never wait on ctx.Done(), so the timer behind it is
// only created when a node (or a model or HTTP call) first asks for it.
type runContext struct {
	context.Context
	deadline time.Time
	once     sync.Once
	timed    context.Context
	cancel   context.CancelFunc
	// released is set when the run is over and its timer stopped.
	released atomic.Bool
	// observe receives the events of a streamed run; nil otherwise.
	observe Observer
	// meter counts the run's model calls (nil: none are counted); it
	// points at metered, which a run allocates with its context.
	meter   *meter
	metered meter
}

func newRunContext(parent context.Context, deadline time.Time) *runContext {
	return &runContext{Context: parent, deadline: deadline}
}

func (c *runContext) withTimer() context.Context {
	c.once.Do(func() { c.timed, c.cancel = context.WithDeadline(c.Context, c.deadline) })
	return c.timed
}

func (c *runContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *runContext) Done() <-chan struct{} { return c.withTimer().Done() }

// Err is not nil once Done is closed, whatever closed it: a context derived
// from this one (a call's timeout) reads it when Done closes, and the
// context package panics on a nil error ("missing cancel error").
func (c *runContext) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	// One read of the monotonic clock (time.Now reads the wall clock too):
	// this runs before every step.
	if time.Until(c.deadline) <= 0 {
		return context.DeadlineExceeded
	}
	if c.released.Load() {
		return context.Canceled
	}
	return nil
}

// Value finds the run's Observer and meter for code that holds a context
// derived from the run's (a node's, a model call's, a child graph's). A run
// starts outside parallel branches: a step finds no branch's writes here
// without looking through the request's context.
func (c *runContext) Value(key any) any {
	switch key {
	case observerKey{}:
		return c.observe
	case meterKey{}:
		return c.meter
	case writesKey{}:
		return writes(nil)
	}
	return c.Context.Value(key)
}

func (c *runContext) release() {
	c.released.Store(true)
	if c.cancel != nil {
		c.cancel()
	}
}

// Usage is what a run's model calls used (docs/http-contract.md): the
// tokens their replies reported, the calls (a call's retries and fallbacks
// are one call) and the attempts over all models. It is summed over the
// whole run, child graphs included, and a run paused on a thread goes on
// from what it had used. Answers carry it once the run asked a model.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	ModelCalls   int64 `json:"modelCalls"`
	Attempts     int64 `json:"attempts"`
}

// reported is u as answers carry it: nil when the run asked no model, so
// the answers of model-free graphs have no usage.
func (u Usage) reported() *Usage {
	if u.Attempts == 0 {
		return nil
	}
	return &u
}

// AppendJSON appends u as JSON, its fields in declared order, as
// encoding/json writes it (without its reflection: every answer of a run
// that asked a model carries it).
func (u *Usage) AppendJSON(buf []byte) []byte {
	buf = strconv.AppendInt(append(buf, `{"inputTokens":`...), u.InputTokens, 10)
	buf = strconv.AppendInt(append(buf, `,"outputTokens":`...), u.OutputTokens, 10)
	buf = strconv.AppendInt(append(buf, `,"modelCalls":`...), u.ModelCalls, 10)
	buf = strconv.AppendInt(append(buf, `,"attempts":`...), u.Attempts, 10)
	return append(buf, '}')
}

func (u Usage) allTokens() int64 { return u.InputTokens + u.OutputTokens }

// meter counts a run's usage against its budget. It is locked: a native
// body may call models from goroutines of its own.
type meter struct {
	mu     sync.Mutex
	budget Budget
	used   Usage
}

type meterKey struct{}

// meterOf is the meter of the run ctx belongs to (the runContext's, which
// child graphs share); nil outside a run, which counts nothing.
func meterOf(ctx context.Context) *meter {
	m, _ := ctx.Value(meterKey{}).(*meter)
	return m
}

func (m *meter) usage() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// start counts a model call of node about to start, unless the budget is
// spent: maxModelCalls calls made, or maxTokens tokens used.
func (m *meter) start(node string) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if limit := m.budget.MaxModelCalls; limit > 0 && m.used.ModelCalls >= limit {
		return budgetExceeded(node, "maxModelCalls", limit, m.used.ModelCalls)
	}
	if limit, used := m.budget.MaxTokens, m.used.allTokens(); limit > 0 && used >= limit {
		return budgetExceeded(node, "maxTokens", limit, used)
	}
	m.used.ModelCalls++
	return nil
}

func (m *meter) attempt() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.used.Attempts++
	m.mu.Unlock()
}

// replied counts the tokens of a call's reply: past maxTokens the run
// fails, and the reply is not used.
func (m *meter) replied(node string, t tokens) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used.InputTokens += t.input
	m.used.OutputTokens += t.output
	if limit, used := m.budget.MaxTokens, m.used.allTokens(); limit > 0 && used > limit {
		return budgetExceeded(node, "maxTokens", limit, used)
	}
	return nil
}

// tokens are what a model's reply says it used, 0 for what it leaves out.
type tokens struct{ input, output int64 }

func budgetExceeded(node, budget string, limit, used int64) *Error {
	e := nodeError(node, fmt.Sprintf("node %q: the run's budget is spent (%s %d, used %d)", node, budget, limit, used))
	e.Details["reason"], e.Details["budget"], e.Details["limit"], e.Details["used"] = "budget_exceeded", budget, limit, used
	return e
}
