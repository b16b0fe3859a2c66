package graph

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// The thread stores' contract, the same on every kind (threads.go): the
// memory store, SQLite and PostgreSQL.

var bg = context.Background()

// clock is a settable clock for the stores' expiry and deadlines.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Unix(1_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// An opener opens a store of one kind; for a database kind every store it
// opens shares one database, as the processes sharing it would.
type opener func(opts ThreadOptions) Threads

// storeKinds readies a place for a test's stores of each kind the project
// holds: the memory store here, the databases in their own test files
// (registerDatabase).
var storeKinds = map[string]func(t *testing.T) opener{
	"memory": func(*testing.T) opener {
		return func(opts ThreadOptions) Threads { return NewMemoryThreads(opts) }
	},
}

// eachKind runs test on every kind of store.
func eachKind(t *testing.T, test func(t *testing.T, open opener)) {
	for _, kind := range sortedKeys(storeKinds) {
		t.Run(kind, func(t *testing.T) { test(t, storeKinds[kind](t)) })
	}
}

// code is the contract code of a store's error ("" for none).
func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// must(f())(t) is f's value; an error fails t.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

var question = map[string]any{"question": "Approve the answer to Ada?"}

// pauseNew runs a new run on id to a pause at "review"; it returns the
// interrupt's id.
func pauseNew(t *testing.T, s Threads, id string) string {
	t.Helper()
	g := must(s.Start(bg, id))(t)
	k := must(keep(&Interrupt{Node: "review", Field: "answer", Value: question}, State{"question": "Ada"}, Usage{}))(t)
	if err := s.Pause(bg, id, g, k); err != nil {
		t.Fatal(err)
	}
	return must(s.Paused(bg, id))(t).ID
}

func TestAThreadGoesFromRunToPauseToResumeToEnd(t *testing.T) {
	eachKind(t, func(t *testing.T, open opener) {
		s := open(ThreadOptions{})
		if _, err := s.Paused(bg, "t1"); code(err) != "thread_not_found" {
			t.Fatalf("unknown thread: %v", err)
		}
		g := must(s.Start(bg, "t1"))(t)
		if _, err := s.Start(bg, "t1"); code(err) != "thread_busy" {
			t.Fatalf("a second run on a running thread: %v", err)
		}
		if _, err := s.Paused(bg, "t1"); code(err) != "not_interrupted" || !strings.Contains(err.Error(), "under way") {
			t.Fatalf("a running thread: %v", err)
		}
		used := Usage{InputTokens: 10, OutputTokens: 16, ModelCalls: 2, Attempts: 3}
		k := must(keep(&Interrupt{Node: "review", Field: "answer", Value: question}, State{"question": "Ada"}, used))(t)
		if err := s.Pause(bg, "t1", g, k); err != nil {
			t.Fatal(err)
		}
		p := must(s.Paused(bg, "t1"))(t)
		if p.Node != "review" || p.Field != "answer" || !reflect.DeepEqual(p.Value, question) ||
			!reflect.DeepEqual(p.State, State{"question": "Ada"}) || len(p.ID) != 32 || p.Usage != used {
			t.Fatalf("paused: %+v", p)
		}
		won := must(s.Claim(bg, "t1", p.ID))(t)
		if _, err := s.Claim(bg, "t1", p.ID); code(err) != "not_interrupted" {
			t.Fatalf("a second claim: %v", err)
		}
		if err := s.Finish(bg, "t1", g); err != nil { // the first run's generation: no longer its thread
			t.Fatal(err)
		}
		if _, err := s.Start(bg, "t1"); code(err) != "thread_busy" {
			t.Fatalf("the resumed run is not under way any more: %v", err)
		}
		if err := s.Finish(bg, "t1", won); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(bg, "t1", p.ID); code(err) != "not_interrupted" || !strings.Contains(err.Error(), "finished") {
			t.Fatalf("a finished thread: %v", err)
		}
		g = must(s.Start(bg, "t1"))(t) // a finished thread runs again
		if err := s.Fail(bg, "t1", g); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Paused(bg, "t1"); code(err) != "not_interrupted" || !strings.Contains(err.Error(), "failed") {
			t.Fatalf("a failed thread: %v", err)
		}
	})
}

func TestANewStateDropsThePendingInterrupt(t *testing.T) {
	eachKind(t, func(t *testing.T, open opener) {
		s := open(ThreadOptions{})
		first := pauseNew(t, s, "t1")
		g := must(s.Start(bg, "t1"))(t)
		if _, err := s.Claim(bg, "t1", first); code(err) != "not_interrupted" {
			t.Fatalf("the dropped interrupt was claimed: %v", err)
		}
		if err := s.Finish(bg, "t1", g); err != nil {
			t.Fatal(err)
		}
		// The same id may pause again: its new interrupt is another.
		if second := pauseNew(t, s, "t1"); second == first {
			t.Fatal("a new interrupt has the id of the dropped one")
		}
	})
}

// A claim checks the interrupt the resume value was checked against: a
// resume that read an interrupt since answered is refused.
func TestAClaimIsForTheInterruptItRead(t *testing.T) {
	eachKind(t, func(t *testing.T, open opener) {
		s := open(ThreadOptions{})
		first := pauseNew(t, s, "t1")
		g := must(s.Claim(bg, "t1", first))(t)
		k := must(keep(&Interrupt{Node: "review", Field: "answer", Value: "again"}, State{}, Usage{}))(t)
		if err := s.Pause(bg, "t1", g, k); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(bg, "t1", first); code(err) != "not_interrupted" || !strings.Contains(err.Error(), "resumed already") {
			t.Fatalf("a claim of the answered interrupt: %v", err)
		}
	})
}

func TestConcurrentClaimsOfOneInterruptHaveOneWinner(t *testing.T) {
	eachKind(t, func(t *testing.T, open opener) {
		// Four stores on one database, as four processes; the memory store
		// is one process's.
		stores := []Threads{open(ThreadOptions{})}
		if _, memory := stores[0].(*memoryThreads); !memory {
			stores = append(stores, open(ThreadOptions{}), open(ThreadOptions{}), open(ThreadOptions{}))
		}
		id := pauseNew(t, stores[0], "t1")
		const claims = 8
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make(chan string, claims)
		for i := 0; i < claims; i++ {
			wg.Add(1)
			go func(s Threads) {
				defer wg.Done()
				<-start
				_, err := s.Claim(bg, "t1", id)
				results <- code(err)
			}(stores[i%len(stores)])
		}
		close(start)
		wg.Wait()
		close(results)
		counts := map[string]int{}
		for c := range results {
			counts[c]++
		}
		if counts[""] != 1 || counts["not_interrupted"] != claims-1 {
			t.Fatalf("claims: %v", counts)
		}
	})
}

func TestThreadsExpireADayAfterTheirLastUse(t *testing.T) {
	eachKind(t, func(t *testing.T, open opener) {
		c := newClock()
		s := open(ThreadOptions{Now: c.Now})
		pauseNew(t, s, "old")
		c.add(ThreadTTL - time.Second)
		pauseNew(t, s, "young")
		if _, err := s.Paused(bg, "old"); err != nil { // reading is no use: it ages on
			t.Fatal(err)
		}
		c.add(2 * time.Second)
		if _, err := s.Paused(bg, "old"); code(err) != "thread_not_found" {
			t.Fatalf("an expired thread: %v", err)
		}
		young := must(s.Paused(bg, "young"))(t)
		if _, err := s.Claim(bg, "old", young.ID); code(err) != "thread_not_found" {
			t.Fatalf("a claim of an expired thread: %v", err)
		}
		must(s.Start(bg, "old"))(t) // an expired thread's id starts anew
	})
}

func TestTheMemoryStoreDropsTheLeastRecentlyUsed(t *testing.T) {
	c := newClock()
	s := NewMemoryThreads(ThreadOptions{MaxThreads: 2, Now: c.Now}).(*memoryThreads)
	t1 := pauseNew(t, s, "t1")
	pauseNew(t, s, "t2")
	c.add(time.Second)
	must(s.Claim(bg, "t1", t1))(t) // t2 is now the least recently used
	pauseNew(t, s, "t3")
	if s.count() != 2 {
		t.Fatalf("%d threads kept", s.count())
	}
	if _, err := s.Paused(bg, "t2"); code(err) != "thread_not_found" {
		t.Fatalf("t2 was not dropped: %v", err)
	}
	if _, err := s.Paused(bg, "t3"); err != nil {
		t.Fatal(err)
	}
	c.add(ThreadTTL + time.Second)
	if s.count() != 0 {
		t.Fatalf("%d threads outlived the expiry", s.count())
	}
}

// What a store hands out is its own copy, of JSON values: a change to the
// state a run paused with, or to what was handed out, changes nothing kept.
func TestKeptValuesAreCopiesOfJSONValues(t *testing.T) {
	eachKind(t, func(t *testing.T, open opener) {
		s := open(ThreadOptions{})
		g := must(s.Start(bg, "t1"))(t)
		st := State{"question": "Ada", "log": []any{"draft"}, "n": 1.5, "i": 7, "deep": map[string]any{"a": []any{nil, true}}}
		k := must(keep(&Interrupt{Node: "review", Field: "answer", Value: []any{1, "two"}}, st, Usage{}))(t)
		st["log"] = append(st["log"].([]any), "changed")
		if err := s.Pause(bg, "t1", g, k); err != nil {
			t.Fatal(err)
		}
		p := must(s.Paused(bg, "t1"))(t)
		want := State{"question": "Ada", "log": []any{"draft"}, "n": json.Number("1.5"), "i": json.Number("7"),
			"deep": map[string]any{"a": []any{nil, true}}}
		if !reflect.DeepEqual(p.State, want) || !reflect.DeepEqual(p.Value, []any{json.Number("1"), "two"}) {
			t.Fatalf("kept: %#v %#v", p.State, p.Value)
		}
		p.State["log"] = nil
		if again := must(s.Paused(bg, "t1"))(t); again.State["log"] == nil {
			t.Fatal("a handed-out state is the kept one")
		}
	})
}
