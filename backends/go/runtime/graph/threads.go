package graph

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// The graph has a checkpointer (settings.checkpointer): a run can pause at
// a hitl node and go on when a person answers, on a thread
// (docs/http-contract.md, "Interrupt and resume"). A thread moves through
//
//	running -> interrupted (paused at a hitl node) | done | failed
//
// and a resume is accepted from interrupted only. The stores:
// threads_memory.go (in the process) and threads_sql.go (SQLite or
// PostgreSQL, shared by every process on the database).

// registeredThreads opens the store of the graph's threads, as the
// project's graph.go registers it (RegisterThreads).
var registeredThreads func(ctx context.Context, log *slog.Logger) (Threads, error)

// RegisterThreads names how the graph's thread store opens
// (settings.checkpointer): a checkpointed project's graph.go calls it from
// init.
func RegisterThreads(open func(ctx context.Context, log *slog.Logger) (Threads, error)) {
	registeredThreads = open
}

// OpenThreads opens the store of the registered graph's threads.
func OpenThreads(ctx context.Context, log *slog.Logger) (Threads, error) {
	if registeredThreads == nil {
		return nil, errors.New("the graph registered no thread store (RegisterThreads)")
	}
	return registeredThreads(ctx, log)
}

// Limits of the contract.
const (
	// MaxThreadID is the longest threadId, in characters.
	MaxThreadID = 256
	// ThreadTTL is how long after its last use a thread is kept.
	ThreadTTL = 24 * time.Hour
	// MaxMemoryThreads is how many threads the memory store keeps.
	MaxMemoryThreads = 10_000
)

// The statuses of a thread.
const (
	statusRunning     = "running"
	statusInterrupted = "interrupted"
	statusDone        = "done"
	statusFailed      = "failed"
)

// Threads keeps the threads of a graph with a checkpointer: the stores of
// NewMemoryThreads, sqlite.Open and postgres.Open (OpenSQL). Its methods are safe for
// concurrent use, and a database store's across processes. A store that
// cannot reach its database answers 503 checkpointer_unavailable.
type Threads interface {
	// Start takes the thread id (known or not) for a run from a new state:
	// 409 thread_busy while a run is under way on it; a pending interrupt
	// is dropped. It returns the run's generation, which ends it.
	Start(ctx context.Context, id string) (string, error)
	// Paused is the thread's pending interrupt: 404 thread_not_found for an
	// unknown or expired thread, 409 not_interrupted when it is not paused.
	// Reading is no use: the thread ages on.
	Paused(ctx context.Context, id string) (*Paused, error)
	// Claim takes the paused thread for the resume of its interrupt
	// interruptID: of any number of claims, in any processes, one wins; the
	// others are 409 not_interrupted. It returns the run's generation.
	Claim(ctx context.Context, id, interruptID string) (string, error)
	// Pause, Finish and Fail end the run of generation: paused at an
	// interrupt (kept by keep), done, or failed. A run whose thread was
	// taken over (a new state on it, expiry, a deadline passed) changes
	// nothing.
	Pause(ctx context.Context, id, generation string, k keptInterrupt) error
	Finish(ctx context.Context, id, generation string) error
	Fail(ctx context.Context, id, generation string) error
	// Close releases the store (its database, its cleanup).
	Close() error
}

// Paused is a thread's pending interrupt, a copy of what the store keeps.
type Paused struct {
	// Node, Field and Value are the Interrupt's.
	Node, Field string
	Value       any
	// ID names this interrupt: a resume claims the interrupt it checked.
	ID string
	// State is the state at the pause.
	State State
	// Usage is what the run had used at the pause: its resume goes on
	// from there.
	Usage Usage
}

// ThreadOptions tunes a store; the zero value is the contract's.
type ThreadOptions struct {
	// TTL is how long after its last use a thread is kept (ThreadTTL).
	TTL time.Duration
	// MaxThreads bounds the memory store (MaxMemoryThreads).
	MaxThreads int
	// RunFor is how long a database store waits for a run to report back
	// before it settles the thread (RequestTimeout plus 30 s).
	RunFor time.Duration
	// CleanupEvery is how often a database store deletes expired threads
	// (hourly); negative for never.
	CleanupEvery time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
	// Log receives a database store's cleanup reports (none when nil).
	Log *slog.Logger
}

func (o ThreadOptions) withDefaults() ThreadOptions {
	if o.TTL <= 0 {
		o.TTL = ThreadTTL
	}
	if o.MaxThreads <= 0 {
		o.MaxThreads = MaxMemoryThreads
	}
	if o.RunFor <= 0 {
		o.RunFor = compiled.RequestTimeout + 30*time.Second
	}
	if o.CleanupEvery == 0 {
		o.CleanupEvery = time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// NewThreadID is a new thread's id: 32 hex digits.
func NewThreadID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// A ThreadRun is a run that has taken its thread: a new state's, or a
// resume's. Run it once; it ends the thread however it ends.
type ThreadRun struct {
	// ThreadID names the thread.
	ThreadID string
	// First is the run's first event: run_started or resumed.
	First      Event
	threads    Threads
	generation string
	state      State
	from       string
	resume     *resumption
	// spent is what the run had used at its pause (zero for a new run).
	spent Usage
}

// StartThread checks a new state (422 invalid_state) and takes the thread
// id for it, or a new thread when id is "".
func StartThread(ctx context.Context, threads Threads, id string, input map[string]any) (*ThreadRun, error) {
	st, err := NewState(input)
	if err != nil {
		return nil, err
	}
	if id == "" {
		id = NewThreadID()
	}
	generation, err := threads.Start(ctx, id)
	if err != nil {
		return nil, err
	}
	return &ThreadRun{ThreadID: id, threads: threads, generation: generation, state: st, from: compiled.Entry,
		First: Event{Type: "run_started", Data: map[string]any{"state": Result(st), "threadId": id}}}, nil
}

// ResumeThread checks the person's answer against the field the thread's
// interrupt names (422 invalid_state, the thread stays paused) and claims
// the thread to run the paused node again with it.
func ResumeThread(ctx context.Context, threads Threads, id string, value any) (*ThreadRun, error) {
	p, err := threads.Paused(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := checkResume(p.Field, value); err != nil {
		return nil, err
	}
	generation, err := threads.Claim(ctx, id, p.ID)
	if err != nil {
		return nil, err
	}
	return &ThreadRun{ThreadID: id, threads: threads, generation: generation, state: p.State, from: p.Node,
		resume: &resumption{node: p.Node, value: value}, spent: p.Usage,
		First: Event{Type: "resumed", Node: p.Node, Data: map[string]any{"threadId": id, "resume": value}}}, nil
}

// checkResume refuses an answer that is null, not of the field's type, or
// not matching its schema.
// (A thread kept by an older build of the graph may name a field the graph
// no longer has: its node then fails as one writing an unknown field.)
func checkResume(field string, value any) error {
	f, ok := schema.field(field)
	if !ok {
		return nil
	}
	if value == nil || !matches(f.Type, f.Items, value) {
		return invalidState(f.Name, fmt.Sprintf("the resume value for state field %q must be %s", f.Name, describe(f)))
	}
	return f.checkSchema(value, "the resume value for state field")
}

// Run runs the graph on the thread; observe, when not nil, receives the
// run's events. It returns the final state, or the interrupt the run
// paused at; the thread is kept accordingly. The run's own error wins over
// the store's when both fail; a store that fails to keep a finished or
// paused run is the answer (503), the thread then settles as the store says.
// The usage is returned however the run ended (nil when it asked no model):
// a resumed run's counts from before its pause included, which a pause
// keeps.
func (t *ThreadRun) Run(ctx context.Context, observe Observer) (State, *Interrupt, *Usage, error) {
	ended := false
	defer func() {
		// A panic that escapes the run (an observer's: a node's are
		// recovered by step) still ends it, or the thread stays running.
		if !ended {
			_ = t.threads.Fail(ctx, t.ThreadID, t.generation)
		}
	}()
	if t.resume != nil {
		ctx = context.WithValue(ctx, resumeKey{}, t.resume)
	}
	out, used, err := runFrom(ctx, t.state, t.from, observe, t.spent)
	ended = true
	usage := used.reported()
	var in *Interrupt
	if errors.As(err, &in) {
		var k keptInterrupt
		if k, err = keep(in, t.state, used); err == nil {
			if err := t.threads.Pause(ctx, t.ThreadID, t.generation, k); err != nil {
				return nil, nil, usage, err
			}
			return nil, in, usage, nil
		}
	}
	if err != nil {
		_ = t.threads.Fail(ctx, t.ThreadID, t.generation)
		return nil, nil, usage, err
	}
	if err := t.threads.Finish(ctx, t.ThreadID, t.generation); err != nil {
		return nil, nil, usage, err
	}
	return out, nil, usage, nil
}

// resumption is a resumed run's answer for its paused node: the run starts
// there, and the node's hitl step takes it once.
type resumption struct {
	node  string
	value any
	taken bool
}

type resumeKey struct{}

// HITL is the body of a hitl node: it pauses the run with payload, or, as
// the first step of a run resumed at this node, writes the person's answer
// (checked by ResumeThread) to field.
func HITL(ctx context.Context, node, field string, payload map[string]any) (State, error) {
	if r, _ := ctx.Value(resumeKey{}).(*resumption); r != nil && r.node == node && !r.taken {
		r.taken = true
		return State{field: r.value}, nil
	}
	return nil, &Interrupt{Node: node, Field: field, Value: payload}
}

// A kept interrupt is stored as JSON text: every store keeps its own copy,
// and what comes back holds JSON values only (numbers as json.Number, as a
// request's).
type keptInterrupt struct {
	node, field, id     string
	value, state, usage []byte
}

func keep(in *Interrupt, st State, used Usage) (keptInterrupt, error) {
	value, err := json.Marshal(in.Value)
	if err != nil {
		return keptInterrupt{}, nodeError(in.Node, fmt.Sprintf("node %q paused with a payload that is not JSON: %v", in.Node, err))
	}
	state, err := json.Marshal(st)
	if err != nil {
		return keptInterrupt{}, nodeError(in.Node, fmt.Sprintf("the state at node %q is not JSON: %v", in.Node, err))
	}
	usage, _ := json.Marshal(used) // a struct of numbers
	return keptInterrupt{node: in.Node, field: in.Field, id: NewThreadID(), value: value, state: state, usage: usage}, nil
}

func (k keptInterrupt) paused() (*Paused, error) {
	var value any
	var st map[string]any
	if err := decodeKept(k.value, &value); err != nil {
		return nil, err
	}
	if err := decodeKept(k.state, &st); err != nil {
		return nil, err
	}
	p := &Paused{Node: k.node, Field: k.field, Value: value, ID: k.id, State: st}
	// A thread an older build paused kept no usage: it counts from 0.
	if len(k.usage) > 0 {
		if err := decodeKept(k.usage, &p.Usage); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func decodeKept(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("a kept thread is not JSON: %w", err)
	}
	return nil
}

func threadNotFound(id string) *Error {
	return &Error{Status: http.StatusNotFound, Code: "thread_not_found",
		Message: fmt.Sprintf("no thread %q (unknown, or expired)", id)}
}

// notInterrupted says why a thread cannot be resumed.
func notInterrupted(id, status string) *Error {
	why := map[string]string{statusRunning: "has a run under way", statusDone: "has finished",
		statusFailed: "failed", statusInterrupted: "was resumed already"}[status]
	return &Error{Status: http.StatusConflict, Code: "not_interrupted",
		Message: fmt.Sprintf("the thread %q %s", id, why)}
}

func threadBusy(id string) *Error {
	return &Error{Status: http.StatusConflict, Code: "thread_busy",
		Message: fmt.Sprintf("the thread %q has a run under way", id)}
}
