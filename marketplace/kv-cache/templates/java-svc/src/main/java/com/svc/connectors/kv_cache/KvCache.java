package com.svc.connectors.kv_cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.svc.connectors.runtime.Fields;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The svc/kv-cache connector: an in-process key-value cache shared by every
 * request of the service. Each namespace is its own Caffeine cache of at most
 * {@code maxEntries} values (the node that first uses a namespace sets its
 * size); {@link #set} keeps a value for {@code ttlSeconds}. Values are copied
 * in and out, so one request never sees another's changes.
 */
public final class KvCache {
    private static final Map<String, Cache<String, Entry>> NAMESPACES = new ConcurrentHashMap<>();

    /** A cached value and how long it lives, in nanoseconds. */
    record Entry(Object value, long ttlNanos) {
    }

    /** Every entry lives for the time it was set with; reading does not extend it. */
    private static final Expiry<String, Entry> EXPIRY = new Expiry<>() {
        @Override
        public long expireAfterCreate(String key, Entry entry, long currentTime) {
            return entry.ttlNanos();
        }

        @Override
        public long expireAfterUpdate(String key, Entry entry, long currentTime, long currentDuration) {
            return entry.ttlNanos();
        }

        @Override
        public long expireAfterRead(String key, Entry entry, long currentTime, long currentDuration) {
            return currentDuration;
        }
    };

    private KvCache() {
    }

    /** The namespace's cache, made with room for {@code maxEntries} on first use. */
    static Cache<String, Entry> namespace(String name, long maxEntries) {
        return NAMESPACES.computeIfAbsent(name, n -> Caffeine.newBuilder()
                .maximumSize(Math.max(1, maxEntries))
                .expireAfter(EXPIRY)
                // Evictions happen on the calling thread, so the size holds at once.
                .executor(Runnable::run)
                .build());
    }

    /**
     * A hit writes the value to {@code field}, a miss writes nothing there;
     * {@code hitField} (when not null) receives true or false.
     */
    public static Map<String, Object> get(Map<String, Object> state, String namespace, long maxEntries, String key,
            String field, String hitField) {
        Entry entry = namespace(namespace, maxEntries).getIfPresent(Fields.fill(key, state));
        Map<String, Object> patch = new LinkedHashMap<>();
        if (entry != null) {
            patch.put(field, copy(entry.value()));
        }
        if (hitField != null) {
            patch.put(hitField, entry != null);
        }
        return patch;
    }

    /** Stores the value of {@code field} for {@code ttlSeconds}; an absent (null) value removes the key instead. */
    public static Map<String, Object> set(Map<String, Object> state, String namespace, long maxEntries, String key,
            String field, long ttlSeconds) {
        Cache<String, Entry> cache = namespace(namespace, maxEntries);
        String k = Fields.fill(key, state);
        Object value = state.get(field);
        if (value == null) {
            cache.invalidate(k);
        } else {
            cache.put(k, new Entry(copy(value), TimeUnit.SECONDS.toNanos(ttlSeconds)));
        }
        return new LinkedHashMap<>();
    }

    /** Removes the key. */
    public static Map<String, Object> delete(Map<String, Object> state, String namespace, long maxEntries,
            String key) {
        namespace(namespace, maxEntries).invalidate(Fields.fill(key, state));
        return new LinkedHashMap<>();
    }

    /** Copies the maps and lists of a state value. */
    static Object copy(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> out = new LinkedHashMap<>();
            map.forEach((k, v) -> out.put(String.valueOf(k), copy(v)));
            return out;
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            list.forEach(v -> out.add(copy(v)));
            return out;
        }
        return value;
    }
}
