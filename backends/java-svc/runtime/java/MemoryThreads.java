package dev.svc.runtime;

import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * The threads kept in the process (settings.checkpointer "memory"): at most
 * maxThreads, the least recently used dropped first, and none longer than
 * ttl after its last use. A restart forgets them all. Each thread keeps its
 * interrupt as JSON text, so two threads never share a value.
 */
public final class MemoryThreads implements Threads {
    /** A thread; its interrupt is the pending (or, during a resumed run, the claimed) one. */
    private static final class Entry {
        final String id;
        String status;
        String generation;
        long touched;
        Kept interrupt;

        Entry(String id) {
            this.id = id;
        }
    }

    private final Options opts;
    /** The threads by last use, least recent first: use order is age order, so the expired ones lead. */
    private final LinkedHashMap<String, Entry> byUse = new LinkedHashMap<>();
    /** Numbers the runs: a generation is unique in the process. */
    private long runs;

    public MemoryThreads(Options opts) {
        this.opts = opts;
    }

    @Override
    public synchronized String start(String id) throws SvcError {
        long now = expire();
        Entry t = byUse.get(id);
        if (t != null && RUNNING.equals(t.status)) {
            throw Threads.threadBusy(id);
        }
        t = new Entry(id);
        t.status = RUNNING;
        byUse.put(id, t);
        String generation = own(t, now);
        for (Iterator<Entry> it = byUse.values().iterator(); byUse.size() > opts.maxThreads() && it.hasNext();) {
            it.next();
            it.remove();
        }
        return generation;
    }

    @Override
    public Paused paused(String id) throws SvcError {
        Kept k;
        synchronized (this) {
            expire();
            k = pausedEntry(id).interrupt;
        }
        // Decoded outside the lock: kept text is never changed, only replaced.
        return k.paused();
    }

    @Override
    public synchronized String claim(String id, String interruptId) throws SvcError {
        long now = expire();
        Entry t = pausedEntry(id);
        if (!t.interrupt.id().equals(interruptId)) {
            throw Threads.notInterrupted(id, INTERRUPTED);
        }
        t.status = RUNNING;
        return own(t, now);
    }

    @Override
    public synchronized void pause(String id, String generation, Kept kept) {
        Entry t = owned(id, generation);
        if (t != null) {
            t.status = INTERRUPTED;
            t.interrupt = kept;
        }
    }

    @Override
    public void finish(String id, String generation) {
        end(id, generation, DONE);
    }

    @Override
    public void fail(String id, String generation) {
        end(id, generation, FAILED);
    }

    @Override
    public void close() {
    }

    /** How many threads the store holds (for the tests). */
    synchronized int count() {
        expire();
        return byUse.size();
    }

    // The helpers below run under the lock.

    private synchronized void end(String id, String generation, String status) {
        Entry t = owned(id, generation);
        if (t != null) {
            t.status = status;
            t.interrupt = null;
        }
    }

    /** Drops the threads unused for ttl; returns the time it used. */
    private long expire() {
        long now = opts.clock().getAsLong();
        long limit = now - opts.ttl().toMillis();
        for (Iterator<Entry> it = byUse.values().iterator(); it.hasNext();) {
            if (it.next().touched > limit) {
                break;
            }
            it.remove();
        }
        return now;
    }

    /** Gives the thread to a new run: a new generation, and a use. */
    private String own(Entry t, long now) {
        t.generation = Long.toString(++runs);
        use(t, now);
        return t.generation;
    }

    private void use(Entry t, long now) {
        t.touched = now;
        byUse.remove(t.id);
        byUse.put(t.id, t);
    }

    /** The thread of the run generation, used now; null when dropped or taken over by a newer run. */
    private Entry owned(String id, String generation) {
        Entry t = byUse.get(id);
        if (t == null || !t.generation.equals(generation) || !RUNNING.equals(t.status)) {
            return null;
        }
        use(t, opts.clock().getAsLong());
        return t;
    }

    /** The paused thread id (once expire has run). */
    private Entry pausedEntry(String id) throws SvcError {
        Entry t = byUse.get(id);
        if (t == null) {
            throw Threads.threadNotFound(id);
        }
        if (!INTERRUPTED.equals(t.status)) {
            throw Threads.notInterrupted(id, t.status);
        }
        return t;
    }
}
