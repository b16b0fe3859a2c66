package graph

// The svc/kv-cache connector (marketplace/kv-cache): an in-process
// key-value cache shared by every request of the service. Each namespace
// is its own cache of at most MaxEntries values (the node that first uses
// a namespace sets its size); set keeps a value for TTLSeconds, and the
// least recently used value makes room for a new one. Values are copied in
// and out, so one request never sees another's changes.

import (
	"container/list"
	"sync"
	"time"
)

// kvCacheConfig is one kv-cache node's configuration.
type kvCacheConfig struct {
	// Namespace names the cache the node uses.
	Namespace string
	// MaxEntries is the namespace's size when this node creates it.
	MaxEntries int
	// Key may hold {{field}} placeholders, filled when the node runs.
	Key string
	// Field is where get writes a hit, and the value set stores.
	Field string
	// HitField (get, optional) receives true on a hit, false on a miss.
	HitField string
	// TTLSeconds is how long set keeps the value.
	TTLSeconds int
}

// kvCacheNow is the cache's clock (tests move it).
var kvCacheNow = time.Now

type kvCacheEntry struct {
	key     string
	value   any
	expires time.Time
}

// kvCacheSpace is one namespace: entries in least-recently-used order.
type kvCacheSpace struct {
	mu      sync.Mutex
	size    int
	entries map[string]*list.Element
	order   *list.List // front: most recently used
}

var (
	kvCacheMu     sync.Mutex
	kvCacheSpaces = map[string]*kvCacheSpace{}
)

// kvCacheNamespace returns the namespace, creating it with room for size
// entries on first use.
func kvCacheNamespace(name string, size int) *kvCacheSpace {
	kvCacheMu.Lock()
	defer kvCacheMu.Unlock()
	s, ok := kvCacheSpaces[name]
	if !ok {
		if size < 1 {
			size = 1
		}
		s = &kvCacheSpace{size: size, entries: map[string]*list.Element{}, order: list.New()}
		kvCacheSpaces[name] = s
	}
	return s
}

func (s *kvCacheSpace) get(key string, now time.Time) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*kvCacheEntry)
	if !now.Before(e.expires) {
		s.remove(el)
		return nil, false
	}
	s.order.MoveToFront(el)
	return e.value, true
}

func (s *kvCacheSpace) set(key string, value any, expires time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.entries[key]; ok {
		e := el.Value.(*kvCacheEntry)
		e.value, e.expires = value, expires
		s.order.MoveToFront(el)
		return
	}
	for s.order.Len() >= s.size {
		s.remove(s.order.Back())
	}
	s.entries[key] = s.order.PushFront(&kvCacheEntry{key: key, value: value, expires: expires})
}

func (s *kvCacheSpace) delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.entries[key]; ok {
		s.remove(el)
	}
}

func (s *kvCacheSpace) remove(el *list.Element) {
	delete(s.entries, el.Value.(*kvCacheEntry).key)
	s.order.Remove(el)
}

// kvCacheGet looks the key up: a hit writes the value to Field, a miss
// writes nothing there; HitField (when set) tells which it was.
func kvCacheGet(cfg kvCacheConfig, state State) (State, error) {
	space := kvCacheNamespace(cfg.Namespace, cfg.MaxEntries)
	value, hit := space.get(fillFields(cfg.Key, state), kvCacheNow())
	patch := State{}
	if hit {
		patch[cfg.Field] = kvCacheCopy(value)
	}
	if cfg.HitField != "" {
		patch[cfg.HitField] = hit
	}
	return patch, nil
}

// kvCacheSet stores the value of Field under the key for TTLSeconds; an
// absent (null) value removes the key instead.
func kvCacheSet(cfg kvCacheConfig, state State) (State, error) {
	space := kvCacheNamespace(cfg.Namespace, cfg.MaxEntries)
	key := fillFields(cfg.Key, state)
	value := state[cfg.Field]
	if value == nil {
		space.delete(key)
	} else {
		space.set(key, kvCacheCopy(value), kvCacheNow().Add(time.Duration(cfg.TTLSeconds)*time.Second))
	}
	return State{}, nil
}

// kvCacheDelete removes the key.
func kvCacheDelete(cfg kvCacheConfig, state State) (State, error) {
	kvCacheNamespace(cfg.Namespace, cfg.MaxEntries).delete(fillFields(cfg.Key, state))
	return State{}, nil
}

// kvCacheCopy copies the objects and lists of a state value.
func kvCacheCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = kvCacheCopy(item)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = kvCacheCopy(item)
		}
		return out
	}
	return v
}
