package com.svc.connectors.kv_cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The svc/kv-cache connector's helpers, called directly. */
class KvCacheTest {
    private static Map<String, Object> state(Object... pairs) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((String) pairs[i], pairs[i + 1]);
        }
        return m;
    }

    @Test
    void getSetDelete() {
        String ns = "test-basic";
        String key = "answer:{{question}}";
        assertEquals(Map.of("cached", false),
                KvCache.get(state("question", "why"), ns, 10, key, "answer", "cached"));
        assertTrue(KvCache.set(state("question", "why", "answer", "because"), ns, 10, key, "answer", 60).isEmpty());
        assertEquals(Map.of("answer", "because", "cached", true),
                KvCache.get(state("question", "why"), ns, 10, key, "answer", "cached"));
        assertEquals(Map.of("cached", false),
                KvCache.get(state("question", "how"), ns, 10, key, "answer", "cached"));
        assertTrue(KvCache.delete(state("question", "why"), ns, 10, key).isEmpty());
        assertEquals(Map.of("cached", false),
                KvCache.get(state("question", "why"), ns, 10, key, "answer", "cached"));
    }

    @Test
    void aMissWithoutHitFieldWritesNothing() {
        assertTrue(KvCache.get(state(), "test-nohit", 10, "k", "answer", null).isEmpty());
    }

    @Test
    void entriesExpire() throws InterruptedException {
        KvCache.set(state("v", 1), "test-ttl", 10, "k", "v", 1);
        assertEquals(Map.of("v", 1, "hit", true), KvCache.get(state(), "test-ttl", 10, "k", "v", "hit"));
        Thread.sleep(1100);
        assertEquals(Map.of("hit", false), KvCache.get(state(), "test-ttl", 10, "k", "v", "hit"));
    }

    @Test
    void settingNullRemoves() {
        KvCache.set(state("v", "x"), "test-null", 10, "k", "v", 30);
        KvCache.set(state("v", null), "test-null", 10, "k", "v", 30);
        assertEquals(Map.of("hit", false), KvCache.get(state(), "test-null", 10, "k", "v", "hit"));
    }

    @Test
    void namespacesAreSeparate() {
        KvCache.set(state("v", "in a"), "test-ns-a", 10, "k", "v", 30);
        assertEquals(Map.of("hit", false), KvCache.get(state(), "test-ns-b", 10, "k", "v", "hit"));
        assertEquals(Map.of("v", "in a"), KvCache.get(state(), "test-ns-a", 10, "k", "v", null));
    }

    @Test
    void theSizeIsBounded() {
        for (int i = 0; i < 20; i++) {
            KvCache.set(state("v", i), "test-size", 5, "k" + i, "v", 30);
        }
        KvCache.namespace("test-size", 5).cleanUp();
        assertTrue(KvCache.namespace("test-size", 5).estimatedSize() <= 5);
    }

    @Test
    void valuesAreCopied() {
        Map<String, Object> stored = new HashMap<>();
        stored.put("list", new ArrayList<>(List.of("x")));
        KvCache.set(state("v", stored), "test-copy", 10, "k", "v", 30);
        @SuppressWarnings("unchecked")
        List<Object> before = (List<Object>) stored.get("list");
        before.set(0, "changed after set");
        @SuppressWarnings("unchecked")
        Map<String, Object> got = (Map<String, Object>) KvCache.get(state(), "test-copy", 10, "k", "v", null).get("v");
        @SuppressWarnings("unchecked")
        List<Object> after = (List<Object>) got.get("list");
        after.set(0, "changed after get");
        assertEquals(Map.of("v", Map.of("list", List.of("x"))), KvCache.get(state(), "test-copy", 10, "k", "v", null));
    }

    @Test
    void concurrentRequests() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int worker = t;
                done.add(pool.submit(() -> {
                    for (int j = 0; j < 200; j++) {
                        String key = "k" + (j % 70);
                        KvCache.set(state("v", worker), "test-concurrent", 50, key, "v", 30);
                        KvCache.get(state(), "test-concurrent", 50, key, "v", null);
                        if (j % 10 == 0) {
                            KvCache.delete(state(), "test-concurrent", 50, key);
                        }
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        KvCache.namespace("test-concurrent", 50).cleanUp();
        assertTrue(KvCache.namespace("test-concurrent", 50).estimatedSize() <= 50);
    }

    @Test
    void keysAreFilledFromTheStateAsTemplatesAre() {
        Map<String, Object> s = state("name", "Ada", "n", 3, "answer", "yes");
        KvCache.set(s, "test-keys", 10, "answer:{{ name }}-{{n}}-{{missing}}", "answer", 60);
        assertEquals(Map.of("answer", "yes", "hit", true),
                KvCache.get(state(), "test-keys", 10, "answer:Ada-3-", "answer", "hit"));
        KvCache.set(state("open", "x", "answer", "raw"), "test-keys", 10, "open {{ name", "answer", 60);
        assertEquals(Map.of("answer", "raw", "hit", true),
                KvCache.get(state(), "test-keys", 10, "open {{ name", "answer", "hit"));
    }
}
