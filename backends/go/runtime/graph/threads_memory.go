package graph

import (
	"container/list"
	"context"
	"strconv"
	"sync"
	"time"
)

// memoryThreads keeps the threads in the process (settings.checkpointer
// "memory"): at most MaxThreads, the least recently used dropped first, and
// none longer than TTL after its last use. A restart forgets them all.
type memoryThreads struct {
	mu   sync.Mutex
	opts ThreadOptions
	// lru orders the threads by last use, least recent first: use order is
	// age order, so the expired ones are at the front.
	lru  *list.List
	byID map[string]*list.Element
	// runs numbers the runs: a generation is unique in the process.
	runs uint64
}

type memoryThread struct {
	id         string
	status     string
	generation string
	touched    time.Time
	// interrupt is the pending (or, during a resumed run, the claimed)
	// interrupt.
	interrupt *keptInterrupt
}

// NewMemoryThreads is the store of a "memory" checkpointer.
func NewMemoryThreads(opts ThreadOptions) Threads {
	return &memoryThreads{opts: opts.withDefaults(), lru: list.New(), byID: map[string]*list.Element{}}
}

func (m *memoryThreads) Start(_ context.Context, id string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.expire()
	if t := m.get(id); t != nil && t.status == statusRunning {
		return "", threadBusy(id)
	}
	t := &memoryThread{id: id, status: statusRunning}
	if e, ok := m.byID[id]; ok {
		e.Value = t
	} else {
		m.byID[id] = m.lru.PushBack(t)
	}
	for m.lru.Len() > m.opts.MaxThreads {
		m.drop(m.lru.Front())
	}
	return m.own(t, now), nil
}

func (m *memoryThreads) Paused(_ context.Context, id string) (*Paused, error) {
	m.mu.Lock()
	m.expire()
	t, err := m.paused(id)
	var k keptInterrupt
	if err == nil {
		k = *t.interrupt
	}
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// Decoded outside the lock: kept text is never changed, only replaced.
	return k.paused()
}

func (m *memoryThreads) Claim(_ context.Context, id, interruptID string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.expire()
	t, err := m.paused(id)
	if err != nil {
		return "", err
	}
	if t.interrupt.id != interruptID {
		return "", notInterrupted(id, statusInterrupted)
	}
	t.status = statusRunning
	return m.own(t, now), nil
}

func (m *memoryThreads) Pause(_ context.Context, id, generation string, k keptInterrupt) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.owned(id, generation); t != nil {
		t.status, t.interrupt = statusInterrupted, &k
	}
	return nil
}

func (m *memoryThreads) Finish(_ context.Context, id, generation string) error {
	m.end(id, generation, statusDone)
	return nil
}

func (m *memoryThreads) Fail(_ context.Context, id, generation string) error {
	m.end(id, generation, statusFailed)
	return nil
}

func (m *memoryThreads) Close() error { return nil }

// count is how many threads the store holds (for the tests).
func (m *memoryThreads) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire()
	return m.lru.Len()
}

// The helpers below run under the lock.

func (m *memoryThreads) end(id, generation, status string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.owned(id, generation); t != nil {
		t.status, t.interrupt = status, nil
	}
}

// expire drops the threads unused for TTL; it returns the time it used.
func (m *memoryThreads) expire() time.Time {
	now := m.opts.Now()
	limit := now.Add(-m.opts.TTL)
	for e := m.lru.Front(); e != nil && !e.Value.(*memoryThread).touched.After(limit); e = m.lru.Front() {
		m.drop(e)
	}
	return now
}

func (m *memoryThreads) drop(e *list.Element) {
	delete(m.byID, e.Value.(*memoryThread).id)
	m.lru.Remove(e)
}

func (m *memoryThreads) get(id string) *memoryThread {
	if e, ok := m.byID[id]; ok {
		return e.Value.(*memoryThread)
	}
	return nil
}

// own gives the thread to a new run: a new generation, and a use.
func (m *memoryThreads) own(t *memoryThread, now time.Time) string {
	m.runs++
	t.generation = strconv.FormatUint(m.runs, 10)
	t.touched = now
	m.lru.MoveToBack(m.byID[t.id])
	return t.generation
}

// owned is the thread of the run generation, used now; nil when it was
// dropped or taken over by a newer run.
func (m *memoryThreads) owned(id, generation string) *memoryThread {
	t := m.get(id)
	if t == nil || t.generation != generation || t.status != statusRunning {
		return nil
	}
	t.touched = m.opts.Now()
	m.lru.MoveToBack(m.byID[id])
	return t
}

// paused is the paused thread id (once expire has run).
func (m *memoryThreads) paused(id string) (*memoryThread, error) {
	t := m.get(id)
	if t == nil {
		return nil, threadNotFound(id)
	}
	if t.status != statusInterrupted {
		return nil, notInterrupted(id, t.status)
	}
	return t, nil
}
