package graph

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// kvCacheTestClock pins the cache's clock for one test.
func kvCacheTestClock(t *testing.T) *time.Time {
	t.Helper()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	kvCacheNow = func() time.Time { return now }
	t.Cleanup(func() { kvCacheNow = time.Now })
	return &now
}

// kvCacheDo runs one operation, which must not fail.
func kvCacheDo(t *testing.T, op func(kvCacheConfig, State) (State, error), cfg kvCacheConfig, state State) State {
	t.Helper()
	patch, err := op(cfg, state)
	if err != nil {
		t.Fatal(err)
	}
	return patch
}

func TestKvCacheGetSetDelete(t *testing.T) {
	kvCacheTestClock(t)
	cfg := kvCacheConfig{Namespace: "test-basic", MaxEntries: 10, Key: "answer:{{question}}",
		Field: "answer", HitField: "cached", TTLSeconds: 60}
	state := State{"question": "why", "answer": nil}

	if got := kvCacheDo(t, kvCacheGet, cfg, state); !reflect.DeepEqual(got, State{"cached": false}) {
		t.Fatalf("miss: %v", got)
	}
	state["answer"] = "because"
	if got := kvCacheDo(t, kvCacheSet, cfg, state); len(got) != 0 {
		t.Fatalf("set patch: %v", got)
	}
	state["answer"] = nil
	want := State{"answer": "because", "cached": true}
	if got := kvCacheDo(t, kvCacheGet, cfg, state); !reflect.DeepEqual(got, want) {
		t.Fatalf("hit: %v", got)
	}
	// Another question is another key.
	if got := kvCacheDo(t, kvCacheGet, cfg, State{"question": "how"}); !reflect.DeepEqual(got, State{"cached": false}) {
		t.Fatalf("other key: %v", got)
	}
	kvCacheDo(t, kvCacheDelete, cfg, state)
	if got := kvCacheDo(t, kvCacheGet, cfg, state); !reflect.DeepEqual(got, State{"cached": false}) {
		t.Fatalf("after delete: %v", got)
	}
}

func TestKvCacheWithoutHitFieldWritesNothingOnAMiss(t *testing.T) {
	cfg := kvCacheConfig{Namespace: "test-nohit", MaxEntries: 10, Key: "k", Field: "answer", TTLSeconds: 60}
	if got := kvCacheDo(t, kvCacheGet, cfg, State{}); len(got) != 0 {
		t.Fatalf("miss: %v", got)
	}
}

func TestKvCacheEntriesExpire(t *testing.T) {
	now := kvCacheTestClock(t)
	cfg := kvCacheConfig{Namespace: "test-ttl", MaxEntries: 10, Key: "k", Field: "v", HitField: "hit", TTLSeconds: 30}
	kvCacheDo(t, kvCacheSet, cfg, State{"v": 1})
	*now = now.Add(29 * time.Second)
	if got := kvCacheDo(t, kvCacheGet, cfg, State{}); got["hit"] != true {
		t.Fatalf("before the TTL: %v", got)
	}
	*now = now.Add(time.Second)
	if got := kvCacheDo(t, kvCacheGet, cfg, State{}); got["hit"] != false {
		t.Fatalf("at the TTL: %v", got)
	}
}

func TestKvCacheSettingNullRemoves(t *testing.T) {
	cfg := kvCacheConfig{Namespace: "test-null", MaxEntries: 10, Key: "k", Field: "v", HitField: "hit", TTLSeconds: 30}
	kvCacheDo(t, kvCacheSet, cfg, State{"v": "x"})
	kvCacheDo(t, kvCacheSet, cfg, State{"v": nil})
	if got := kvCacheDo(t, kvCacheGet, cfg, State{}); got["hit"] != false {
		t.Fatalf("after setting null: %v", got)
	}
}

func TestKvCacheNamespacesAreSeparate(t *testing.T) {
	a := kvCacheConfig{Namespace: "test-ns-a", MaxEntries: 10, Key: "k", Field: "v", HitField: "hit", TTLSeconds: 30}
	b := a
	b.Namespace = "test-ns-b"
	kvCacheDo(t, kvCacheSet, a, State{"v": "in a"})
	if got := kvCacheDo(t, kvCacheGet, b, State{}); got["hit"] != false {
		t.Fatalf("namespace b: %v", got)
	}
	if got := kvCacheDo(t, kvCacheGet, a, State{}); got["v"] != "in a" {
		t.Fatalf("namespace a: %v", got)
	}
}

func TestKvCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	cfg := kvCacheConfig{Namespace: "test-lru", MaxEntries: 2, Field: "v", HitField: "hit", TTLSeconds: 30}
	at := func(key string) kvCacheConfig { c := cfg; c.Key = key; return c }
	kvCacheDo(t, kvCacheSet, at("a"), State{"v": "a"})
	kvCacheDo(t, kvCacheSet, at("b"), State{"v": "b"})
	kvCacheDo(t, kvCacheGet, at("a"), State{}) // a is now the most recent
	kvCacheDo(t, kvCacheSet, at("c"), State{"v": "c"})
	for key, want := range map[string]bool{"a": true, "b": false, "c": true} {
		if got := kvCacheDo(t, kvCacheGet, at(key), State{}); got["hit"] != want {
			t.Errorf("%s: %v", key, got)
		}
	}
}

func TestKvCacheValuesAreCopied(t *testing.T) {
	cfg := kvCacheConfig{Namespace: "test-copy", MaxEntries: 10, Key: "k", Field: "v", TTLSeconds: 30}
	stored := map[string]any{"list": []any{"x"}}
	kvCacheDo(t, kvCacheSet, cfg, State{"v": stored})
	stored["list"].([]any)[0] = "changed after set"
	got := kvCacheDo(t, kvCacheGet, cfg, State{})["v"].(map[string]any)
	got["list"].([]any)[0] = "changed after get"
	again := kvCacheDo(t, kvCacheGet, cfg, State{})["v"]
	if !reflect.DeepEqual(again, map[string]any{"list": []any{"x"}}) {
		t.Fatalf("the cached value changed: %v", again)
	}
}

func TestKvCacheIsSafeForConcurrentRequests(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				cfg := kvCacheConfig{Namespace: "test-concurrent", MaxEntries: 50,
					Key: fmt.Sprintf("k%d", j%70), Field: "v", TTLSeconds: 30}
				_, _ = kvCacheSet(cfg, State{"v": i})
				_, _ = kvCacheGet(cfg, State{})
				if j%10 == 0 {
					_, _ = kvCacheDelete(cfg, State{})
				}
			}
		}(i)
	}
	wg.Wait()
	space := kvCacheNamespace("test-concurrent", 50)
	if n := space.order.Len(); n > 50 || n != len(space.entries) {
		t.Fatalf("%d entries, %d in the index", n, len(space.entries))
	}
}
