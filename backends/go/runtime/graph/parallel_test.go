package graph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Parallel branches and map nodes (/work/notes/parallel-spec.md): real
// goroutines, real timing. Branches are walked as the generated code walks
// them (walk).

// parallelFields is the state of the tests' graph.
var parallelFields = []Field{
	{Name: "question", Type: TypeString},
	{Name: "reply", Type: TypeString},
	{Name: "a", Type: TypeString},
	{Name: "b", Type: TypeString},
	{Name: "c", Type: TypeString},
	{Name: "x", Type: TypeString},
	{Name: "obj", Type: TypeObject},
	{Name: "log", Type: TypeArray, Append: true},
	{Name: "msgs", Type: TypeMessages, Append: true},
}

// useParallelGraph registers, for one test, a graph of parallelFields
// whose run is run (nil: none), with budget.
func useParallelGraph(t *testing.T, budget Budget, run func(ctx context.Context, st State, from string) (State, error)) {
	saved := compiled
	t.Cleanup(func() { Register(saved) })
	Register(Compiled{ID: "parallel", Fields: parallelFields, Entry: "fan", Run: run, MaxSteps: 25,
		RequestTimeout: time.Minute, Budget: budget})
}

// tnode is a node of a test branch: its registered name and body.
type tnode struct {
	name string
	fn   NodeFunc
}

// walk is a branch that steps through nodes, one step each, as a generated
// branch function does.
func walk(nodes ...tnode) func(ctx context.Context, st State, steps *Steps) error {
	return func(ctx context.Context, st State, steps *Steps) error {
		for _, n := range nodes {
			if err := steps.Take(); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := StepObserved(ctx, st, n.name, "function", n.fn, false); err != nil {
				return err
			}
		}
		return nil
	}
}

// writing is a node body that returns patch.
func writing(patch State) NodeFunc {
	return func(context.Context, State) (State, error) { return patch, nil }
}

// after is a node body that waits d (or for its context) and returns patch.
func after(d time.Duration, patch State) NodeFunc {
	return func(ctx context.Context, _ State) (State, error) {
		select {
		case <-time.After(d):
			return patch, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// eventLog is an Observer that fails the test when two events are
// delivered at once: the Observer of a run need not be thread-safe.
type eventLog struct {
	t      *testing.T
	busy   atomic.Bool
	events []Event
}

func (r *eventLog) observe(ev Event) {
	if r.busy.Swap(true) {
		r.t.Errorf("two events delivered at once (%s of %q)", ev.Type, ev.Node)
	}
	r.events = append(r.events, ev)
	time.Sleep(100 * time.Microsecond)
	r.busy.Store(false)
}

// streamed is a run's context with r as its observer.
func streamed(r *eventLog) context.Context {
	rc := newRunContext(context.Background(), deadlineFar())
	rc.observe = r.observe
	return rc
}

// of is the events of one node.
func (r *eventLog) of(node string) []Event {
	var out []Event
	for _, ev := range r.events {
		if ev.Node == node {
			out = append(out, ev)
		}
	}
	return out
}

// index is the position of the first event of type typ of node.
func (r *eventLog) index(typ, node string) int {
	for i, ev := range r.events {
		if ev.Type == typ && ev.Node == node {
			return i
		}
	}
	r.t.Fatalf("no %s of %q in %+v", typ, node, r.events)
	return -1
}

func TestStepsCountsEveryStepOnce(t *testing.T) {
	steps := NewSteps(100)
	var ok, over atomic.Int64
	var refusal atomic.Value
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for range 20 {
				if err := steps.Take(); err != nil {
					over.Add(1)
					refusal.Store(err)
				} else {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if ok.Load() != 100 || over.Load() != 100 {
		t.Fatalf("%d steps allowed, %d refused; want 100 and 100", ok.Load(), over.Load())
	}
	wantError(t, refusal.Load().(error), 500, "step_limit_exceeded", map[string]any{"maxSteps": 100}, "the run took more than 100 steps")
}

func TestParallelBranchesOverlap(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	st := State{}
	start := time.Now()
	err := Parallel(context.Background(), st, "fan", NewSteps(25), 0, []Branch{
		{Name: "a", Run: walk(tnode{"a", after(100*time.Millisecond, State{"a": "A"})})},
		{Name: "b", Run: walk(tnode{"b", after(100*time.Millisecond, State{"b": "B"})})},
		{Name: "c", Run: walk(tnode{"c", after(100*time.Millisecond, State{"c": "C"})})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 250*time.Millisecond {
		t.Fatalf("three branches of 100ms took %s: they did not overlap", took)
	}
	equalJSON(t, "state", st, State{"a": "A", "b": "B", "c": "C"})
}

// Branches finish in the reverse of their declared order; the merge
// follows the declared order all the same.
func TestParallelMergesInDeclaredOrder(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	var mu sync.Mutex
	var finished []string
	done := func(name string, d time.Duration, patch State) NodeFunc {
		return func(ctx context.Context, st State) (State, error) {
			p, err := after(d, patch)(ctx, st)
			mu.Lock()
			finished = append(finished, name)
			mu.Unlock()
			return p, err
		}
	}
	var seen State
	msg := map[string]any{"role": "user", "content": "hi"}
	st := State{"log": []any{"base"}, "question": "q"}
	rec := &eventLog{t: t}
	err := Parallel(streamed(rec), st, "fan", NewSteps(25), 0, []Branch{
		{Name: "first", Run: walk(
			tnode{"first", writing(State{"log": "a1", "a": "A"})},
			tnode{"first_2", func(_ context.Context, s State) (State, error) {
				// A branch sees its own writes, never another's.
				seen = State{"log": deepCopy(s["log"]), "b": s["b"], "c": s["c"], "msgs": s["msgs"]}
				return nil, nil
			}},
			tnode{"first_3", done("first", 80*time.Millisecond, State{"log": []any{"a2"}})})},
		{Name: "second", Run: walk(tnode{"second", done("second", 40*time.Millisecond, State{"log": "b1", "msgs": []any{msg}})})},
		{Name: "third", Run: walk(tnode{"third", done("third", 0, State{"log": []any{"c1", "c2"}, "c": "C"})})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(finished, []string{"third", "second", "first"}) {
		t.Fatalf("finished in %v, want the reverse of the declared order", finished)
	}
	equalJSON(t, "first's view", seen, State{"log": []any{"base", "a1"}, "b": nil, "c": nil, "msgs": nil})
	equalJSON(t, "state", st, State{"question": "q", "a": "A", "c": "C",
		"log": []any{"base", "a1", "a2", "b1", "c1", "c2"}, "msgs": []any{msg}})
	last := rec.events[len(rec.events)-1]
	if last.Type != "node_finished" || last.Node != "fan" || last.Branch != "" {
		t.Fatalf("last event %+v, want fan's node_finished", last)
	}
	equalJSON(t, "fan's patch", last.Data, map[string]any{"kind": "parallel", "patch": State{
		"a": "A", "c": "C", "log": []any{"a1", "a2", "b1", "c1", "c2"}, "msgs": []any{msg}}})
}

// Each branch has a deep copy of the base; a native body writing into the
// map it was handed writes nothing.
func TestParallelBranchesWorkOnCopies(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	st := State{"obj": map[string]any{"k": []any{1}}}
	err := Parallel(context.Background(), st, "fan", NewSteps(25), 0, []Branch{
		{Name: "mut", Run: func(ctx context.Context, s State, steps *Steps) error {
			return Step(ctx, s, "mut", func(_ context.Context, view State) (State, error) {
				view.Map("obj")["k"] = append(view.Map("obj")["k"].([]any), 2)
				view["b"] = "sneaky"
				return State{"a": "A"}, nil
			}, true)
		}},
		{Name: "other", Run: walk(tnode{"other", after(20*time.Millisecond, State{"b": "B"})})},
	})
	if err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "state", st, State{"obj": map[string]any{"k": []any{1}}, "a": "A", "b": "B"})
}

// A branch that replaced an append field contributes a Replace of its
// final list; another branch writing the field too is a conflict.
func TestParallelReplacedAppendField(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	replacing := Branch{Name: "rep", Run: walk(
		tnode{"rep", writing(State{"log": Replace{Value: []any{"new"}}})},
		tnode{"rep_2", writing(State{"log": "more"})})}
	st := State{"log": []any{"old"}}
	rec := &eventLog{t: t}
	err := Parallel(streamed(rec), st, "fan", NewSteps(25), 0, []Branch{
		replacing, {Name: "other", Run: walk(tnode{"other", writing(State{"a": "A"})})}})
	if err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "state", st, State{"log": []any{"new", "more"}, "a": "A"})
	equalJSON(t, "fan's patch", rec.of("fan")[1].Data["patch"], State{"a": "A", "log": Replace{Value: []any{"new", "more"}}})

	st = State{"log": []any{"old"}}
	err = Parallel(context.Background(), st, "fan", NewSteps(25), 0, []Branch{
		{Name: "app", Run: walk(tnode{"app", writing(State{"log": "x"})})}, replacing})
	wantError(t, err, 500, "execution_error", map[string]any{"node": "fan", "reason": "conflicting_update", "field": "log"}, `parallel "fan": branches "app" and "rep" both wrote "log"`)
	equalJSON(t, "state", st, State{"log": []any{"old"}})
}

// The branch declared first is named first, whichever finished first, and
// no patch is applied.
func TestParallelConflictingUpdate(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	st := State{"x": "base"}
	rec := &eventLog{t: t}
	err := Parallel(streamed(rec), st, "fan", NewSteps(25), 0, []Branch{
		{Name: "left", Run: walk(tnode{"left", after(30*time.Millisecond, State{"a": "A", "x": "L"})})},
		{Name: "right", Run: walk(tnode{"right", writing(State{"x": "R", "log": "r"})})},
	})
	wantError(t, err, 500, "execution_error", map[string]any{"node": "fan", "reason": "conflicting_update", "field": "x"}, `parallel "fan": branches "left" and "right" both wrote "x"`)
	equalJSON(t, "state", st, State{"x": "base"})
	if n := len(rec.of("fan")); n != 1 {
		t.Fatalf("fan sent %d events, want its node_started only", n)
	}
}

// A later-declared branch fails first: it cancels the branches after it,
// the earlier one runs on, and the earlier one's failure answers.
func TestParallelFirstDeclaredFailureAnswers(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	slowErr := nodeError("slow", "slow failed")
	var slowCtxErr, blockedErr atomic.Value
	start := time.Now()
	err := Parallel(context.Background(), State{}, "fan", NewSteps(25), 0, []Branch{
		{Name: "slow", Run: walk(tnode{"slow", func(ctx context.Context, _ State) (State, error) {
			time.Sleep(80 * time.Millisecond)
			slowCtxErr.Store(fmt.Sprint(ctx.Err()))
			return nil, slowErr
		}})},
		{Name: "fast", Run: walk(tnode{"fast", func(context.Context, State) (State, error) {
			// Once the branch after it has started (else it never would).
			time.Sleep(20 * time.Millisecond)
			return nil, nodeError("fast", "fast failed")
		}})},
		{Name: "blocked", Run: walk(tnode{"blocked", func(ctx context.Context, _ State) (State, error) {
			select {
			case <-ctx.Done():
				blockedErr.Store(ctx.Err())
				return nil, ctx.Err()
			case <-time.After(5 * time.Second):
				return nil, nil
			}
		}})},
	})
	if err != slowErr {
		t.Fatalf("error %v, want the first declared branch's, unchanged", err)
	}
	if got := slowCtxErr.Load(); got != "<nil>" {
		t.Fatalf("the branch declared before the failing one saw its context %v", got)
	}
	if got, _ := blockedErr.Load().(error); !errors.Is(got, context.Canceled) {
		t.Fatalf("the branch after the failing one saw %v, want it cancelled", got)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("took %s: the blocked branch was not cut", took)
	}
}

// A branch that has not started when an earlier one fails never starts,
// even when the failure frees a slot.
func TestParallelFailureKeepsLaterBranchesFromStarting(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	failing := tnode{"bad", writing(State{"nope": 1})}
	var ran atomic.Int64
	never := func(ctx context.Context, st State, steps *Steps) error {
		ran.Add(1)
		return nil
	}
	err := Parallel(context.Background(), State{}, "fan", NewSteps(25), 1, []Branch{
		{Name: "bad", Run: walk(failing)}, {Name: "later", Run: never}})
	wantError(t, err, 500, "execution_error", map[string]any{"node": "bad"}, `node "bad" returned unknown state field "nope"`)
	err = Parallel(context.Background(), State{}, "fan", NewSteps(25), 2, []Branch{
		{Name: "slow", Run: walk(tnode{"slow", after(50*time.Millisecond, State{"a": "A"})})},
		{Name: "bad", Run: walk(failing)}, {Name: "later", Run: never}})
	wantError(t, err, 500, "execution_error", map[string]any{"node": "bad"}, `node "bad" returned unknown state field "nope"`)
	if ran.Load() != 0 {
		t.Fatalf("%d branches started after a failure", ran.Load())
	}
}

// A panic in a branch's own code (not a node's, which Step recovers) fails
// the parallel node instead of the program.
func TestParallelBranchPanic(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	err := Parallel(context.Background(), State{}, "fan", NewSteps(25), 0, []Branch{
		{Name: "a", Run: func(context.Context, State, *Steps) error { panic("boom") }},
		{Name: "b", Run: walk()}})
	wantError(t, err, 500, "execution_error", map[string]any{"node": "fan"}, `node "fan" panicked: boom`)
}

// concurrency counts the tasks running at once.
type concurrency struct {
	mu            sync.Mutex
	running, most int
	order         []int
}

func (c *concurrency) enter(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running++
	c.most = max(c.most, c.running)
	c.order = append(c.order, i)
}

func (c *concurrency) leave() {
	c.mu.Lock()
	c.running--
	c.mu.Unlock()
}

func TestParallelMaxConcurrency(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	for _, tc := range []struct{ limit, want int }{{1, 1}, {2, 2}, {0, 6}, {10, 6}} {
		var c concurrency
		branches := make([]Branch, 6)
		for i := range branches {
			branches[i] = Branch{Name: fmt.Sprint("b", i), Run: func(ctx context.Context, st State, steps *Steps) error {
				c.enter(i)
				defer c.leave()
				time.Sleep(30 * time.Millisecond)
				return nil
			}}
		}
		if err := Parallel(context.Background(), State{}, "fan", NewSteps(25), tc.limit, branches); err != nil {
			t.Fatal(err)
		}
		if c.most != tc.want {
			t.Errorf("maxConcurrency %d: %d branches at once, want %d", tc.limit, c.most, tc.want)
		}
		if tc.limit == 1 && !reflect.DeepEqual(c.order, []int{0, 1, 2, 3, 4, 5}) {
			t.Errorf("one at a time, the branches started in the order %v", c.order)
		}
	}
}

// Every branch's steps count against the run's one limit.
func TestParallelSharesTheStepLimit(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	branches := func() []Branch {
		var out []Branch
		for _, f := range []string{"a", "b", "c"} {
			out = append(out, Branch{Name: f, Run: walk(tnode{f, writing(State{f: f})}, tnode{f + "_2", writing(nil)})})
		}
		return out
	}
	steps := NewSteps(6)
	if err := Parallel(context.Background(), State{}, "fan", steps, 0, branches()); err != nil {
		t.Fatal(err)
	}
	if steps.taken.Load() != 6 {
		t.Fatalf("%d steps counted, want 6", steps.taken.Load())
	}
	err := Parallel(context.Background(), State{}, "fan", NewSteps(5), 0, branches())
	wantError(t, err, 500, "step_limit_exceeded", map[string]any{"maxSteps": 5}, "the run took more than 5 steps")
}

// A parallel node inside a branch: its merged patch is one write of the
// enclosing branch, its branches' events carry the innermost name, and
// their tokens too.
func TestNestedParallelTagsTheInnermostBranch(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	token := func(ctx context.Context, _ State) (State, error) {
		observerOf(ctx)(Event{Type: "token", Node: "x", Data: map[string]any{"delta": "hi"}})
		return State{"log": "x"}, nil
	}
	inner := func(ctx context.Context, st State, steps *Steps) error {
		if err := walk(tnode{"a", writing(State{"log": "a"})})(ctx, st, steps); err != nil {
			return err
		}
		if err := steps.Take(); err != nil {
			return err
		}
		if err := Parallel(ctx, st, "inner", steps, 0, []Branch{
			{Name: "x", Run: walk(tnode{"x", token})},
			{Name: "y", Run: walk(tnode{"y", after(20*time.Millisecond, State{"c": "C"})})},
		}); err != nil {
			return err
		}
		Joined(ctx, "inner_join")
		return nil
	}
	rec := &eventLog{t: t}
	ctx := streamed(rec)
	st := State{"log": []any{"base"}}
	err := Parallel(ctx, st, "outer", NewSteps(25), 0, []Branch{
		{Name: "a", Run: inner},
		{Name: "b", Run: walk(tnode{"b", writing(State{"b": "B"})})},
	})
	if err != nil {
		t.Fatal(err)
	}
	Joined(ctx, "outer_join")
	equalJSON(t, "state", st, State{"log": []any{"base", "a", "x"}, "b": "B", "c": "C"})
	for node, branch := range map[string]string{"outer": "", "outer_join": "", "a": "a", "inner": "a",
		"inner_join": "a", "x": "x", "y": "y", "b": "b"} {
		evs := rec.of(node)
		want := 2
		if node == "x" {
			want = 3
		}
		if len(evs) != want {
			t.Fatalf("%q sent %+v", node, evs)
		}
		for _, ev := range evs {
			if ev.Branch != branch {
				t.Errorf("%s of %q is tagged %q, want %q", ev.Type, node, ev.Branch, branch)
			}
		}
	}
	if tok := rec.index("token", "x"); !(rec.index("node_started", "x") < tok && tok < rec.index("node_finished", "x")) {
		t.Errorf("x's token is not between its node events: %+v", rec.events)
	}
	outer0, outer1 := rec.index("node_started", "outer"), rec.index("node_finished", "outer")
	inner0, inner1 := rec.index("node_started", "inner"), rec.index("node_finished", "inner")
	if outer0 != 0 || outer1 != len(rec.events)-3 || rec.events[len(rec.events)-2].Data["kind"] != "join" {
		t.Errorf("outer's events are not first and last but its join's: %+v", rec.events)
	}
	if !(rec.index("node_finished", "a") < inner0 && inner0 < rec.index("node_started", "x") &&
		rec.index("node_finished", "y") < inner1 && inner1 < rec.index("node_started", "inner_join")) {
		t.Errorf("branch a's events are out of order: %+v", rec.events)
	}
	equalJSON(t, "inner's patch", rec.of("inner")[1].Data, map[string]any{"kind": "parallel", "patch": State{"log": []any{"x"}, "c": "C"}})
	equalJSON(t, "outer's patch", rec.of("outer")[1].Data, map[string]any{"kind": "parallel", "patch": State{"log": []any{"a", "x"}, "b": "B", "c": "C"}})
	equalJSON(t, "the join", rec.of("outer_join")[1].Data, map[string]any{"kind": "join", "patch": State{}})
}

// A failing branch: the parallel node sends no node_finished. Many events
// from several branches at once still reach the observer one at a time.
func TestStreamedParallelFailureAndDelivery(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	chatty := func(name string) Branch {
		var nodes []tnode
		for i := range 20 {
			nodes = append(nodes, tnode{fmt.Sprint(name, i), writing(nil)})
		}
		return Branch{Name: name, Run: walk(nodes...)}
	}
	rec := &eventLog{t: t}
	err := Parallel(streamed(rec), State{}, "fan", NewSteps(100), 0, []Branch{chatty("p"), chatty("q"), chatty("r"),
		{Name: "bad", Run: walk(tnode{"bad", after(5*time.Millisecond, State{"nope": 1})})}})
	if err == nil {
		t.Fatal("the failing branch did not fail the node")
	}
	if evs := rec.of("fan"); len(evs) != 1 || evs[0].Type != "node_started" || evs[0].Data["kind"] != "parallel" {
		t.Fatalf("fan sent %+v, want its node_started only", evs)
	}
	if evs := rec.of("bad"); len(evs) != 1 || evs[0].Branch != "bad" {
		t.Fatalf("bad sent %+v, want a tagged node_started only", evs)
	}
	if n := len(rec.events); n != 1+3*40+1 {
		t.Fatalf("%d events, want %d", n, 1+3*40+1)
	}
}

func TestAppendEventWritesTheBranch(t *testing.T) {
	ev := Event{Type: "token", Node: "w", Branch: "weather", Data: map[string]any{"delta": "hi"}}
	got, err := AppendEvent(nil, "r1", 4, ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"branch":"weather","data":{"delta":"hi"},"node":"w","run_id":"r1","seq":4,"type":"token"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// A subgraph node in a branch: the child's patches go to the child's
// state, not into the branch's writes.
func TestRunChildInABranchWritesOnlyItsOutput(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	sub := func(ctx context.Context, st State) (State, error) {
		out, err := RunChild(ctx, "sub", childSchema(), func(ctx context.Context, child State) (State, error) {
			err := childSchema().Step(ctx, child, "sub__reply", writing(State{"reply": "r", "meta": map[string]any{}}), false)
			return child, err
		}, map[string]any{"q": "hi"})
		if err != nil {
			return nil, err
		}
		return ChildOutput(map[string]any{"a": out["reply"]}), nil
	}
	st := State{}
	rec := &eventLog{t: t}
	err := Parallel(streamed(rec), st, "fan", NewSteps(25), 0, []Branch{
		{Name: "sub", Run: walk(tnode{"sub", sub})}, {Name: "b", Run: walk(tnode{"b", writing(State{"b": "B"})})}})
	if err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "state", st, State{"a": "r", "b": "B"})
	if evs := rec.of("sub__reply"); len(evs) != 0 {
		t.Fatalf("the child's node sent %+v", evs)
	}
}

// tracer records the spans started: each span's label and its parent's
// (a branch's "branch <name>@<parallel node>", an item's
// "item <index>@<map node>", another span's its name), and what each
// ended with.
type tracer struct {
	mu    sync.Mutex
	spans []string
	ended map[string]error
}

type spanKey struct{}

func (tr *tracer) Start(ctx context.Context, op SpanOp, name string) (context.Context, func(error)) {
	parent, _ := ctx.Value(spanKey{}).(string)
	label := name
	switch op {
	case SpanBranch:
		label = "branch " + name + "@" + ScopeNode(ctx)
	case SpanItem:
		label = "item " + name + "@" + ScopeNode(ctx)
	}
	tr.mu.Lock()
	tr.spans = append(tr.spans, parent+">"+label)
	tr.mu.Unlock()
	return context.WithValue(ctx, spanKey{}, label), func(err error) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if tr.ended == nil {
			tr.ended = map[string]error{}
		}
		tr.ended[label] = err
	}
}

func (tr *tracer) Reply(context.Context, string, any, any) {}
func (tr *tracer) Inject(context.Context, http.Header)     {}

// useTracer makes a tracer record the spans of one test.
func useTracer(t *testing.T) *tracer {
	tr := &tracer{}
	saved := tracing
	SetTracer(tr)
	t.Cleanup(func() { tracing = saved })
	return tr
}

// The parallel node has a span, each branch run a span under it, the
// parent of the branch's node spans, and the join has one.
func TestParallelSpans(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	tr := useTracer(t)
	ctx := context.Background()
	err := Parallel(ctx, State{}, "fan", NewSteps(25), 1, []Branch{
		{Name: "a", Run: walk(tnode{"a", writing(State{"a": "A"})}, tnode{"a2", writing(State{"x": "X"})})},
		{Name: "b", Run: walk(tnode{"b", writing(State{"b": "B"})})}})
	if err != nil {
		t.Fatal(err)
	}
	Joined(ctx, "merge")
	want := []string{">fan", "fan>branch a@fan", "branch a@fan>a", "branch a@fan>a2", "fan>branch b@fan",
		"branch b@fan>b", ">merge"}
	if !reflect.DeepEqual(tr.spans, want) {
		t.Fatalf("spans %q, want %q", tr.spans, want)
	}
	for label, err := range tr.ended {
		if err != nil {
			t.Errorf("span %q ended with %v", label, err)
		}
	}
}

// A failing branch ends its span with its error, a branch it cancelled
// with the cancellation, one before it with none; a panicking branch's
// span sees the panic's error. A branch that never started has no span.
func TestParallelBranchSpansEndWithTheirErrors(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	tr := useTracer(t)
	failure := nodeError("b", "b failed")
	err := Parallel(context.Background(), State{}, "fan", NewSteps(25), 3, []Branch{
		{Name: "a", Run: walk(tnode{"a", after(50*time.Millisecond, State{"a": "A"})})},
		{Name: "b", Run: walk(tnode{"b", func(context.Context, State) (State, error) {
			time.Sleep(10 * time.Millisecond)
			return nil, failure
		}})},
		{Name: "c", Run: walk(tnode{"c", after(5*time.Second, State{"c": "C"})})},
		{Name: "d", Run: walk(tnode{"d", writing(State{"x": "X"})})}})
	if err != failure {
		t.Fatalf("error %v, want b's", err)
	}
	if got := tr.ended["branch a@fan"]; got != nil {
		t.Errorf("branch a's span ended with %v", got)
	}
	if got := tr.ended["branch b@fan"]; got != failure {
		t.Errorf("branch b's span ended with %v, want its error", got)
	}
	if got := tr.ended["branch c@fan"]; got != context.Canceled {
		t.Errorf("branch c's span ended with %v, want context.Canceled", got)
	}
	if _, ok := tr.ended["branch d@fan"]; ok {
		t.Errorf("branch d never started but has a span: %q", tr.spans)
	}

	tr = useTracer(t)
	err = Parallel(context.Background(), State{}, "fan", NewSteps(25), 0, []Branch{
		{Name: "p", Run: func(context.Context, State, *Steps) error { panic("oops") }}})
	if err == nil || tr.ended["branch p@fan"] == nil || tr.ended["branch p@fan"].Error() != err.Error() {
		t.Fatalf("error %v, the span ended with %v", err, tr.ended["branch p@fan"])
	}
}

// Each item of a map node has a span under the node's, the parent of the
// child's node spans; a failing item ends its span with its error, the
// items it cancelled with the cancellation.
func TestMapItemSpans(t *testing.T) {
	useParallelGraph(t, Budget{}, nil)
	tr := useTracer(t)
	sc := childSchema()
	failure := nodeError("each__do", "item 1 failed")
	mapNode := func(limit int, fail bool) NodeFunc {
		return func(ctx context.Context, _ State) (State, error) {
			out, err := Map(ctx, "each", []any{"x", "y", "z"}, 10, limit, func(ctx context.Context, k int, item any) (any, error) {
				child, err := RunChild(ctx, "each", sc, func(ctx context.Context, child State) (State, error) {
					if fail && k == 2 {
						<-ctx.Done()
						return nil, ctx.Err()
					}
					err := sc.Step(ctx, child, "each__do", func(context.Context, State) (State, error) {
						if fail && k == 1 {
							time.Sleep(10 * time.Millisecond)
							return nil, failure
						}
						return State{"reply": item}, nil
					}, false)
					return child, err
				}, map[string]any{"q": "hi"})
				return child["reply"], err
			})
			return State{"log": out}, err
		}
	}
	if err := Step(context.Background(), State{}, "each", mapNode(1, false), false); err != nil {
		t.Fatal(err)
	}
	want := []string{">each", "each>item 0@each", "item 0@each>each__do", "each>item 1@each", "item 1@each>each__do",
		"each>item 2@each", "item 2@each>each__do"}
	if !reflect.DeepEqual(tr.spans, want) {
		t.Fatalf("spans %q, want %q", tr.spans, want)
	}

	tr = useTracer(t)
	err := Step(context.Background(), State{}, "each", mapNode(0, true), false)
	wantError(t, err, 500, "execution_error", map[string]any{"node": "each__do", "item": 1}, "item 1 failed")
	if got := tr.ended["item 0@each"]; got != nil {
		t.Errorf("item 0's span ended with %v", got)
	}
	if got := tr.ended["item 1@each"]; got != failure {
		t.Errorf("item 1's span ended with %v, want its error", got)
	}
	if got := tr.ended["item 2@each"]; got != context.Canceled {
		t.Errorf("item 2's span ended with %v, want context.Canceled", got)
	}
}

// Model calls in branches: streamed with their branch's tag, counted in
// the run's one usage, under the run's one budget.
func TestParallelModelCallsShareTheRun(t *testing.T) {
	newChatStub(t, func(_ int, body map[string]any) any {
		if body["stream"] == true {
			return sse(true, deltaChunk(map[string]any{"content": "ok"}),
				map[string]any{"choices": []any{}, "usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 5}})
		}
		return costs(3, 5)
	})
	ask := func(field string) Branch {
		return Branch{Name: field, Run: func(ctx context.Context, st State, steps *Steps) error {
			return StepObserved(ctx, st, field, "llm", func(ctx context.Context, _ State) (State, error) {
				reply, err := Chat(ctx, field, stubModel(), "", "hi")
				return State{field: reply}, err
			}, false)
		}}
	}
	run := func(ctx context.Context, st State, _ string) (State, error) {
		err := Parallel(ctx, st, "fan", NewSteps(25), 0, []Branch{ask("a"), ask("b"), ask("c")})
		return st, err
	}
	useParallelGraph(t, Budget{}, run)
	rec := &eventLog{t: t}
	out, usage, err := RunObserved(bg, State{}, rec.observe)
	if err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "state", out, State{"a": "ok", "b": "ok", "c": "ok"})
	wantUsage(t, usage, Usage{InputTokens: 9, OutputTokens: 15, ModelCalls: 3, Attempts: 3})
	for _, f := range []string{"a", "b", "c"} {
		if evs := rec.of(f); len(evs) != 3 || evs[1].Type != "token" || evs[1].Branch != f {
			t.Fatalf("%q sent %+v", f, evs)
		}
	}

	// The call over the budget fails its branch, which may cut a call in
	// flight of a branch after it: only the calls are certain.
	useParallelGraph(t, Budget{MaxModelCalls: 2}, run)
	_, usage, err = Invoke(bg, map[string]any{})
	var e *Error
	if !errors.As(err, &e) || e.Details["reason"] != "budget_exceeded" {
		t.Fatalf("error %v, want the budget's", err)
	}
	if usage == nil || usage.ModelCalls != 2 {
		t.Fatalf("usage %+v, want 2 calls", usage)
	}
}

func TestMapKeepsItemOrder(t *testing.T) {
	items := []any{0, 1, 2, 3, 4, 5}
	var c concurrency
	out, err := Map(context.Background(), "each", items, 10, 0, func(ctx context.Context, k int, item any) (any, error) {
		c.enter(k)
		defer c.leave()
		time.Sleep(time.Duration(6-k) * 15 * time.Millisecond)
		return item.(int) * 10, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "outputs", out, []any{0, 10, 20, 30, 40, 50})
	if c.most != 6 {
		t.Fatalf("%d items at once, want all 6", c.most)
	}
	for _, none := range []any{nil, []any{}} {
		out, err := Map(context.Background(), "each", none, 10, 4, func(context.Context, int, any) (any, error) {
			t.Fatal("an item ran")
			return nil, nil
		})
		if err != nil || out == nil || len(out) != 0 {
			t.Fatalf("no items: %#v, %v; want an empty list", out, err)
		}
	}
}

func TestMapTooManyItems(t *testing.T) {
	_, err := Map(context.Background(), "each", []any{1, 2, 3}, 2, 4, func(context.Context, int, any) (any, error) {
		t.Fatal("an item ran")
		return nil, nil
	})
	wantError(t, err, 500, "execution_error", map[string]any{"node": "each", "reason": "too_many_items", "items": 3, "maxItems": 2}, `map "each": 3 items, more than maxItems 2`)
}

// Item 3 fails first, item 1 later: item 1 answers; each failure cancels
// the items after it, those before run on; the shared error is not
// changed.
func TestMapLowestFailingIndexAnswers(t *testing.T) {
	shared := UpstreamError("each__ask", ReasonStatus, "the model failed")
	var ctxErrs [5]atomic.Value
	out, err := Map(context.Background(), "each", []any{"a", "b", "c", "d", "e"}, 10, 0, func(ctx context.Context, k int, _ any) (any, error) {
		switch k {
		case 1:
			time.Sleep(60 * time.Millisecond)
			ctxErrs[k].Store(fmt.Sprint(ctx.Err()))
			return nil, shared
		case 3:
			return nil, nodeError("each__x", "item 3 failed")
		case 4:
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			ctxErrs[k].Store(fmt.Sprint(ctx.Err()))
			return nil, ctx.Err()
		}
		time.Sleep(80 * time.Millisecond)
		ctxErrs[k].Store(fmt.Sprint(ctx.Err()))
		return k, nil
	})
	if out != nil {
		t.Fatalf("outputs %v of a failed map", out)
	}
	wantError(t, err, 502, "upstream_error", map[string]any{"node": "each__ask", "reason": "status", "item": 1}, "the model failed")
	equalJSON(t, "the shared error's details", shared.Details, map[string]any{"node": "each__ask", "reason": "status"})
	for k, want := range map[int]string{0: "<nil>", 1: "<nil>", 2: "context canceled", 4: "context canceled"} {
		if got := ctxErrs[k].Load(); got != want {
			t.Errorf("item %d saw its context %v, want %s", k, got, want)
		}
	}
}

// The run's deadline is its 504 with the item; a cancelled run's error
// passes as it is; an item that has not started when one before it failed
// never starts.
func TestMapItemErrors(t *testing.T) {
	fail := func(err error) func(context.Context, int, any) (any, error) {
		return func(_ context.Context, k int, _ any) (any, error) {
			if k == 0 {
				return nil, err
			}
			t.Errorf("item %d started after item 0 failed", k)
			return nil, nil
		}
	}
	_, err := Map(context.Background(), "each", []any{1, 2}, 10, 1, fail(context.DeadlineExceeded))
	wantError(t, err, 504, "deadline_exceeded", map[string]any{"item": 0}, deadlineError().Message)
	_, err = Map(context.Background(), "each", []any{1, 2}, 10, 1, fail(context.Canceled))
	if err != context.Canceled {
		t.Fatalf("error %v, want context.Canceled as it is", err)
	}
	_, err = Map(context.Background(), "each", []any{1, 2}, 10, 1, fail(&Error{Status: 500, Code: "execution_error", Message: "m"}))
	wantError(t, err, 500, "execution_error", map[string]any{"item": 0}, "m")
}

func TestMapMaxConcurrency(t *testing.T) {
	for _, limit := range []int{1, 3} {
		var c concurrency
		items := make([]any, 10)
		_, err := Map(context.Background(), "each", items, 10, limit, func(ctx context.Context, k int, _ any) (any, error) {
			c.enter(k)
			defer c.leave()
			time.Sleep(10 * time.Millisecond)
			return nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.most != limit {
			t.Errorf("maxConcurrency %d: %d items at once", limit, c.most)
		}
		if limit == 1 && !reflect.DeepEqual(c.order, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
			t.Errorf("one at a time, items started in the order %v", c.order)
		}
	}
}

// Items are not streamed and, in a branch, write nothing of the branch's.
func TestMapItemsAreNotStreamed(t *testing.T) {
	rec := &eventLog{t: t}
	ctx := context.WithValue(streamed(rec), writesKey{}, writes{})
	_, err := Map(ctx, "each", []any{1, 2}, 10, 0, func(ctx context.Context, _ int, _ any) (any, error) {
		if observerOf(ctx) != nil || writesOf(ctx) != nil {
			return nil, errors.New("the item sees the run's observer or the branch's writes")
		}
		return nil, nil
	})
	if err != nil || len(rec.events) != 0 {
		t.Fatalf("%v; events %+v", err, rec.events)
	}
}

// Schema.Parallel merges with the child graph's own reducers.
func TestSchemaParallelInAChildGraph(t *testing.T) {
	sc := NewSchema([]Field{{Name: "items", Type: TypeArray, Append: true}, {Name: "n", Type: TypeInteger}})
	branch := func(name string, patch State) Branch {
		return Branch{Name: name, Run: func(ctx context.Context, st State, steps *Steps) error {
			return sc.Step(ctx, st, name, writing(patch), false)
		}}
	}
	st := State{"items": []any{"z"}}
	err := sc.Parallel(context.Background(), st, "fan", NewSteps(5), 0, []Branch{branch("one", State{"items": "a"}),
		branch("two", State{"items": []any{"b"}, "n": 2})})
	if err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "state", st, State{"items": []any{"z", "a", "b"}, "n": 2})
	err = sc.Parallel(context.Background(), st, "fan", NewSteps(5), 0, []Branch{branch("one", State{"n": "two"}), branch("two", State{})})
	if err == nil || !strings.Contains(err.Error(), `node "one" wrote a value that is not integer to "n"`) {
		t.Fatalf("error %v, want the child schema's type check", err)
	}
}
