package dev.svc.runtime;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The parallel and map nodes (docs/ir-reference.md, "Parallel branches and map"):
 * structured concurrency on virtual threads, so whatever the timing a run answers
 * the same. The tasks of a node start in their declared order, at most
 * maxConcurrency at once; a failing one cancels (interrupts, which cuts its
 * model, HTTP tool and MCP calls, or never starts) every later one, the earlier
 * ones run on, and the node ends when every started one has: with the error of
 * the lowest failing one. The tasks run with the run's deadline, usage meter,
 * caller and trace context; a cancelled run (its deadline, its client gone)
 * cancels them all and waits for them. With node spans (tracing.trace_nodes),
 * each started branch runs in a span {@code branch <name>} and each item in a
 * span {@code item <index>}, children of the node's span (docs/telemetry.md).
 */
public final class Parallel {
    private Parallel() {
    }

    /** A branch's code: it walks the branch's nodes on {@code branch} until it reaches the join. */
    @FunctionalInterface
    public interface Body {
        void run(GraphRun branch) throws SvcError, InterruptedException;
    }

    /** A branch of a parallel node: {@code name} is the registered name of its first node. */
    public record Branch(String name, Body body) {
    }

    /** A map node's child run for the item at {@code index}: the child's output value. */
    @FunctionalInterface
    public interface Item {
        Object run(int index, Object item) throws Exception;
    }

    /** Task {@code k} of {@link #all}. */
    @FunctionalInterface
    private interface Task {
        void run(int k) throws Exception;
    }

    /**
     * Runs the branches of the parallel node {@code node} of {@code run} (maxConcurrency 0: all
     * at once), each on its own run over a deep copy of the state, sharing the run's step count;
     * then writes their merged patch to the run's state as the node's patch. Streamed, the node's
     * node_started comes before its branches' events and its node_finished, the merged patch,
     * after; a failing node has none.
     */
    @SuppressWarnings("unchecked")
    public static void run(GraphRun run, String node, int maxConcurrency, List<Branch> branches)
            throws SvcError, InterruptedException {
        Map<String, Object> base = run.state();
        GraphRun[] runs = new GraphRun[branches.size()];
        run.parallelStarted(node);
        try (Tracing.Span span = Tracing.start(Tracing.Op.NODE, node)) {
            try {
                Throwable[] failures = all(node, branches.size(), maxConcurrency, k -> {
                    Branch branch = branches.get(k);
                    // The branch's span (under the node's), in which its nodes make theirs.
                    try (Tracing.Span branchSpan = Tracing.branch(node, branch.name())) {
                        try {
                            runs[k] = run.branch(branch.name(), (Map<String, Object>) Values.copy(base));
                            branch.body().run(runs[k]);
                        } catch (Exception | Error e) {
                            branchSpan.fail(e);
                            throw e;
                        }
                    }
                });
                for (Throwable failed : failures) {
                    if (failed instanceof SvcError e) {
                        throw e;
                    } else if (failed instanceof InterruptedException e) {
                        throw e;
                    } else if (failed instanceof RuntimeException e) {
                        throw e;
                    } else if (failed != null) {
                        throw (Error) failed;
                    }
                }
                Map<String, Object> patch = merge(node, run.schema(), base, branches, runs);
                run.writePatch(node, patch);
                Map<String, Object> shown = new LinkedHashMap<>();
                patch.forEach((k, v) -> shown.put(k, v instanceof StateSchema.Replace r ? r.value() : v));
                run.parallelFinished(node, shown);
            } catch (SvcError | InterruptedException | RuntimeException e) {
                span.fail(e);
                throw e;
            }
        }
    }

    /**
     * The branches' patch: each branch's written fields in declared order, within a branch in
     * key order. An append field a branch did not replace gives the items it added to the base
     * list, several branches' items joined in branch order; any other field gives its final
     * value (a replaced append field: a Replace of it), and only one branch may write it.
     */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> merge(String node, StateSchema schema, Map<String, Object> base,
            List<Branch> branches, GraphRun[] runs) throws SvcError {
        Map<String, Object> patch = new LinkedHashMap<>();
        Map<String, String> firstWriter = new HashMap<>();
        Set<String> added = new HashSet<>();
        for (int i = 0; i < runs.length; i++) {
            GraphRun branch = runs[i];
            String name = branches.get(i).name();
            for (String field : new TreeSet<>(branch.written())) {
                boolean append = schema.field(field).append();
                boolean adds = append && !branch.replaced().contains(field);
                Object value = branch.get(field);
                String earlier = firstWriter.putIfAbsent(field, name);
                if (earlier != null && !(adds && added.contains(field))) {
                    Map<String, Object> details = new LinkedHashMap<>();
                    details.put("node", node);
                    details.put("reason", "conflicting_update");
                    details.put("field", field);
                    throw new SvcError(500, "execution_error", "parallel \"" + node + "\": branches \"" + earlier
                            + "\" and \"" + name + "\" both wrote \"" + field + "\"", details);
                }
                if (adds) {
                    List<?> items = (List<?>) value;
                    int kept = base.get(field) instanceof List<?> before ? before.size() : 0;
                    List<Object> mine = new ArrayList<>(items.subList(kept, items.size()));
                    if (earlier == null) {
                        patch.put(field, mine);
                        added.add(field);
                    } else {
                        ((List<Object>) patch.get(field)).addAll(mine);
                    }
                } else {
                    patch.put(field, append ? new StateSchema.Replace(value) : value);
                }
            }
        }
        return patch;
    }

    /**
     * The map node {@code node}: {@code item.run(k, copy of items[k])} for each item (items:
     * the value of {@code over}, null for none), at most {@code maxConcurrency} at once (0: all);
     * the outputs in item order. More than {@code maxItems} items run none: too_many_items.
     * A failure is the lowest failing item's error with {@code details.item}, its index.
     */
    public static List<Object> map(String node, Object items, int maxItems, int maxConcurrency, Item item)
            throws SvcError, InterruptedException {
        List<?> list;
        if (items == null) {
            list = List.of();
        } else if (items instanceof List<?> l) {
            list = l;
        } else {
            throw SvcError.execution(node, "map \"" + node + "\": its items are "
                    + items.getClass().getSimpleName() + ", not a list");
        }
        if (list.size() > maxItems) {
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("node", node);
            details.put("reason", "too_many_items");
            details.put("items", list.size());
            details.put("maxItems", maxItems);
            throw new SvcError(500, "execution_error", "map \"" + node + "\": " + list.size()
                    + " items, more than maxItems " + maxItems, details);
        }
        Object[] outputs = new Object[list.size()];
        // Each child gets its own copy of its item: no two threads share a list or a map.
        // Each item's child run in a span of its own, under the node's.
        Throwable[] failures = all(node, list.size(), maxConcurrency, k -> {
            try (Tracing.Span itemSpan = Tracing.item(node, k)) {
                try {
                    outputs[k] = item.run(k, Values.copy(list.get(k)));
                } catch (Exception | Error e) {
                    itemSpan.fail(e);
                    throw e;
                }
            }
        });
        for (int k = 0; k < failures.length; k++) {
            Throwable failed = failures[k];
            if (failed == null) {
                continue;
            }
            if (failed instanceof InterruptedException e) {
                throw e;
            }
            if (failed instanceof Error e && !(e instanceof StackOverflowError)) {
                throw e;
            }
            SvcError error = failed instanceof SvcError e ? e : SvcError.execution(node, "node \"" + node
                    + "\" failed: " + failed.getClass().getSimpleName()
                    + (failed.getMessage() == null ? "" : ": " + failed.getMessage()));
            Map<String, Object> details = error.details() == null ? new LinkedHashMap<>()
                    : new LinkedHashMap<>(error.details());
            details.put("item", k);
            throw new SvcError(error.status(), error.code(), error.getMessage(), details);
        }
        return new ArrayList<>(Arrays.asList(outputs));
    }

    /**
     * Runs {@code task(0)} .. {@code task(n - 1)}, each on a virtual thread of its own with this
     * thread's run context, started in index order with at most {@code limit} running (0: all).
     * When task k fails, the tasks after k are interrupted, or never start. Returns once every
     * started task has ended: each one's failure (null: none, or it never started). When this
     * thread is interrupted (the run cancelled), so are the tasks, and it waits for them.
     */
    private static Throwable[] all(String node, int n, int limit, Task task) throws InterruptedException {
        Throwable[] failures = new Throwable[n];
        Semaphore slots = new Semaphore(limit > 0 ? limit : n);
        AtomicInteger lowest = new AtomicInteger(n); // the lowest failing index, n: none yet
        AtomicReferenceArray<Thread> threads = new AtomicReferenceArray<>(n);
        List<Thread> started = new ArrayList<>();
        try {
            for (int k = 0; k < n; k++) {
                slots.acquire();
                int index = k;
                Callable<Void> work = Caller.bind(Caller.current(), GraphRun.inherit(Tracing.inherit(() -> {
                    task.run(index);
                    return null;
                })));
                Thread thread = Thread.ofVirtual().name("svc-" + node + "-" + k).unstarted(() -> {
                    try {
                        // A failure of an earlier task may come between its start and here.
                        if (lowest.get() > index) {
                            work.call();
                        }
                    } catch (Throwable e) {
                        failures[index] = e;
                        lowest.accumulateAndGet(index, Math::min);
                        for (int j = index + 1; j < n; j++) {
                            Thread later = threads.get(j);
                            if (later != null) {
                                later.interrupt();
                            }
                        }
                    } finally {
                        slots.release();
                    }
                });
                // Published before the check: a task failing after it sees this thread to interrupt.
                threads.set(k, thread);
                if (lowest.get() < k) {
                    break;
                }
                thread.start();
                started.add(thread);
            }
            for (Thread thread : started) {
                thread.join();
            }
        } catch (InterruptedException e) {
            for (Thread thread : started) {
                thread.interrupt();
            }
            for (Thread thread : started) {
                joinUninterruptibly(thread);
            }
            throw e;
        }
        return failures;
    }

    /** Waits for an interrupted task: its interrupt ends its calls, so it ends soon. */
    private static void joinUninterruptibly(Thread thread) {
        while (true) {
            try {
                thread.join();
                return;
            } catch (InterruptedException again) {
                // The run is already cancelled: wait on.
            }
        }
    }
}
