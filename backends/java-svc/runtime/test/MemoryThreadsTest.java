package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The store contract on the memory store, and its bound. */
class MemoryThreadsTest extends ThreadsContract {
    @Override
    Threads open(Threads.Options opts) {
        return new MemoryThreads(opts);
    }

    @Override
    boolean shared() {
        return false;
    }

    @Test
    void theMemoryStoreDropsTheLeastRecentlyUsed() throws Exception {
        Clock c = new Clock();
        MemoryThreads s = new MemoryThreads(opts().withMaxThreads(2).withClock(c::now));
        String t1 = pauseNew(s, "t1");
        pauseNew(s, "t2");
        c.add(Duration.ofSeconds(1));
        s.claim("t1", t1); // t2 is now the least recently used
        pauseNew(s, "t3");
        assertEquals(2, s.count());
        assertEquals("thread_not_found", code(() -> s.paused("t2")));
        assertNotNull(s.paused("t3"));
        c.add(Threads.THREAD_TTL.plusSeconds(1));
        assertEquals(0, s.count());
    }

    @Test
    void theDefaultBoundIsTenThousandThreads() throws Exception {
        MemoryThreads s = new MemoryThreads(Threads.Options.DEFAULTS);
        for (int i = 0; i <= Threads.MAX_MEMORY_THREADS; i++) {
            s.start("t" + i);
        }
        assertEquals(Threads.MAX_MEMORY_THREADS, s.count());
        assertEquals("thread_not_found", code(() -> s.paused("t0")));
    }
}
