package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
)

// Parallel branches and map nodes (docs/ir-reference.md, "Parallel branches
// and map"): where the runtime runs a run's work on goroutines of its own.
// Every goroutine started here has ended when Parallel or Map returns, so a
// run still leaves no work behind.

// A Branch is one branch of a parallel node, as the generated code walks it.
type Branch struct {
	// Name is the registered name of the branch's first node: its tag on
	// events, and its name in a conflicting_update.
	Name string
	// Run walks the branch on st, its own copy of the state, until the
	// join; steps is the run's count.
	Run func(ctx context.Context, st State, steps *Steps) error
}

// Parallel runs the branches of the parallel node `node` of the document's
// own graph (Schema.Parallel).
func Parallel(ctx context.Context, st State, node string, steps *Steps, maxConcurrency int, branches []Branch) error {
	return schema.Parallel(ctx, st, node, steps, maxConcurrency, branches)
}

// Parallel runs the branches of the parallel node `node`, each on a deep
// copy of st, at most maxConcurrency at once (0: all), and applies their
// merged patch to st as the patch of node. A failing branch cancels those
// declared after it; the answer is the error of the first failing branch
// in declared order. A streamed run gets node's node_started and, when it
// succeeds, node_finished with the merged patch; the branches' events
// carry their branch's name. A traced run has node's span and, under it,
// a SpanBranch span per branch run, its nodes' spans' parent.
func (sc *Schema) Parallel(ctx context.Context, st State, node string, steps *Steps, maxConcurrency int, branches []Branch) (err error) {
	if tracing != nil {
		var end func(error)
		ctx, end = tracing.Start(ctx, SpanNode, node)
		defer func() { end(spanError(ctx, err)) }()
	}
	observe := observerOf(ctx)
	if observe != nil {
		observe(Event{Type: "node_started", Node: node, Data: map[string]any{"kind": "parallel"}})
		observe = serialized(observe)
	}
	states := make([]State, len(branches))
	written := make([]writes, len(branches))
	branchName := func(i int) string { return branches[i].Name }
	_, err = fanOut(ctx, node, len(branches), maxConcurrency, SpanBranch, branchName, func(ctx context.Context, i int) error {
		states[i] = deepCopy(map[string]any(st)).(map[string]any)
		written[i] = writes{}
		ctx = context.WithValue(ctx, writesKey{}, written[i])
		if observe != nil {
			ctx = context.WithValue(ctx, observerKey{}, tagged(observe, branches[i].Name))
		}
		return branches[i].Run(ctx, states[i], steps)
	})
	if err != nil {
		return err
	}
	patch, err := sc.merge(st, node, branches, states, written)
	if err != nil {
		return err
	}
	if err := sc.applyTracked(ctx, st, patch, node); err != nil {
		return err
	}
	if observe != nil {
		observe(Event{Type: "node_finished", Node: node, Data: map[string]any{"kind": "parallel", "patch": patch}})
	}
	return nil
}

// merge is the patch of the parallel node: each branch's patch, in declared
// order, a branch's fields in sorted order. Items added to an append field
// by several branches are concatenated; any other field written by two
// branches is a conflicting_update.
func (sc *Schema) merge(base State, node string, branches []Branch, states []State, written []writes) (State, error) {
	patch := State{}
	// first is the branch that wrote a field first; added, whether every
	// branch so far only added items to it.
	first := map[string]int{}
	added := map[string]bool{}
	for i, w := range written {
		for _, f := range sortedKeys(w) {
			// A field the schema lacks failed its branch's step already.
			field, _ := sc.field(f)
			final := states[i][f]
			adds := field.Append && !w[f]
			var value any
			switch {
			case adds:
				// A patch only extends an unreplaced list: the base's
				// items are its start.
				baseList, _ := base[f].([]any)
				value = slices.Clone(final.([]any)[len(baseList):])
			case field.Append:
				value = Replace{Value: final}
			default:
				value = final
			}
			j, seen := first[f]
			if !seen {
				first[f], added[f], patch[f] = i, adds, value
				continue
			}
			if !adds || !added[f] {
				e := nodeError(node, fmt.Sprintf("parallel %q: branches %q and %q both wrote %q",
					node, branches[j].Name, branches[i].Name, f))
				e.Details["reason"], e.Details["field"] = "conflicting_update", f
				return nil, e
			}
			patch[f] = append(patch[f].([]any), value.([]any)...)
		}
	}
	return patch, nil
}

// serialized is observe called by one goroutine at a time: the branches
// send from theirs, and an Observer gets one event at a time, in the order
// it numbers them.
func serialized(observe Observer) Observer {
	var mu sync.Mutex
	return func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		observe(ev)
	}
}

// tagged is the observer of a branch's nodes: their events carry the
// branch's name, unless a nested branch (the innermost, which tagged the
// event first) named its own.
func tagged(observe Observer, branch string) Observer {
	return func(ev Event) {
		if ev.Branch == "" {
			ev.Branch = branch
		}
		observe(ev)
	}
}

// Joined is the step of a join node, which writes nothing: its
// node_started and node_finished when the run is streamed, its span when
// it is traced.
func Joined(ctx context.Context, node string) {
	TraceRouter(ctx, node)
	if observe := observerOf(ctx); observe != nil {
		observe(Event{Type: "node_started", Node: node, Data: map[string]any{"kind": "join"}})
		observe(Event{Type: "node_finished", Node: node, Data: map[string]any{"kind": "join", "patch": State{}}})
	}
}

// Map runs item(ctx, k, items[k]) for every item of the map node `node`
// (items: the value of its `over` field, nil for none), at most
// maxConcurrency at once (0: all), and returns their outputs in item order.
// More than maxItems items fail before any runs. A failing item cancels
// those after it; the answer is the error of the lowest failing index, with
// details.item. Items are not streamed; a traced run has a SpanItem span
// per item run, under ctx's (the map node's), its child's spans' parent.
// item must not change its item (RunChild copies it).
func Map(ctx context.Context, node string, items any, maxItems, maxConcurrency int, item func(ctx context.Context, index int, item any) (any, error)) ([]any, error) {
	list, _ := items.([]any)
	if len(list) > maxItems {
		e := nodeError(node, fmt.Sprintf("map %q: %d items, more than maxItems %d", node, len(list), maxItems))
		e.Details["reason"], e.Details["items"], e.Details["maxItems"] = "too_many_items", len(list), maxItems
		return nil, e
	}
	out := make([]any, len(list))
	k, err := fanOut(childContext(ctx), node, len(list), maxConcurrency, SpanItem, strconv.Itoa, func(ctx context.Context, i int) error {
		v, err := item(ctx, i, list[i])
		out[i] = v
		return err
	})
	if err != nil {
		return nil, withItem(err, k)
	}
	return out, nil
}

// withItem is the error of map item k with details.item: a copy, as the
// error may be shared. The run's deadline is its 504 with the item too; a
// cancelled run's error passes as it is.
func withItem(err error, k int) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		c := *e
		e = &c
		e.Details = maps.Clone(e.Details)
		if e.Details == nil {
			e.Details = map[string]any{}
		}
	case errors.Is(err, context.DeadlineExceeded):
		e = deadlineError()
		e.Details = map[string]any{}
	default:
		return err
	}
	e.Details["item"] = k
	return e
}

// fanOut runs task(ctx, i) for i in 0..n-1, started in index order, at
// most limit at once (0: all), each under its own cancellable child of
// ctx. When task i fails, every task after i is cancelled (or never
// starts); those before it run on. It returns once every started task has
// ended, with the lowest failing index and its error (-1 and nil when none
// failed). A panicking task fails as a node's panic does in Step. A traced
// run gives each task a span op (SpanBranch, SpanItem) named name(i), the
// child of ctx's (the node's).
func fanOut(ctx context.Context, node string, n, limit int, op SpanOp, name func(int) string, task func(ctx context.Context, i int) error) (int, error) {
	if limit <= 0 || limit > n {
		limit = n
	}
	var (
		mu      sync.Mutex
		failed  = n // the lowest failing index so far
		errs    = make([]error, n)
		cancels = make([]context.CancelFunc, n)
		wg      sync.WaitGroup
	)
	slots := make(chan struct{}, limit)
	for i := range n {
		slots <- struct{}{}
		mu.Lock()
		if failed < n {
			mu.Unlock()
			break
		}
		tctx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		mu.Unlock()
		wg.Go(func() {
			err := runTask(tctx, node, i, op, name, task)
			cancel()
			if err != nil {
				mu.Lock()
				errs[i] = err
				if i < failed {
					failed = i
					for _, c := range cancels[i+1:] {
						if c != nil {
							c()
						}
					}
				}
				mu.Unlock()
			}
			// The slot is given back after the failure is recorded, so the
			// loop never starts a task a failure has ruled out.
			<-slots
		})
	}
	wg.Wait()
	if failed == n {
		return -1, nil
	}
	return failed, errs[failed]
}

// runTask is task(ctx, i) in its span op named name(i) when the run is
// traced, with a panic turned into the node's execution error: a panic on
// a goroutine of its own would end the program. A task cancelled because
// one before it failed ends its span with the cancellation (spanError).
func runTask(ctx context.Context, node string, i int, op SpanOp, name func(int) string, task func(ctx context.Context, i int) error) (err error) {
	if tracing != nil {
		var end func(error)
		ctx, end = tracing.Start(context.WithValue(ctx, scopeKey{}, node), op, name(i))
		defer func() { end(spanError(ctx, err)) }() // after the recovery below: it sees a panic's error
	}
	defer func() {
		if r := recover(); r != nil {
			err = nodeError(node, fmt.Sprintf("node %q panicked: %v", node, r))
		}
	}()
	return task(ctx, i)
}
