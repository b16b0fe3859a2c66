package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Runs on threads (ThreadRun, GraphRun.hitl): a run pauses at a hitl node and
 * is resumed there with the person's answer, type-checked into its outputKey;
 * however a run ends, its thread is kept accordingly. On a graph written as
 * the generated MainGraph is: draft -> review (hitl) -> reply -> end.
 */
class ThreadRunTest {
    static final StateSchema SCHEMA = new StateSchema(List.of(
            new StateSchema.Field("question", StateSchema.Type.STRING, null, false, true, null),
            new StateSchema.Field("draft", StateSchema.Type.STRING, null, false, false, () -> ""),
            new StateSchema.Field("approved", StateSchema.Type.BOOLEAN, null, false, false, () -> false),
            new StateSchema.Field("reply", StateSchema.Type.STRING, null, false, false, () -> "")));

    /** The graph, its steps as MainGraph writes them; maxSteps 2 (a resumed run has its own). */
    static final ThreadRun.Graph GRAPH = (state, observer, from, resume) -> {
        GraphRun run = new GraphRun(SCHEMA, state, 2);
        run.resume(resume);
        String current = from;
        while (true) {
            switch (current) {
                case "draft" -> {
                    run.count();
                    run.step("draft", "draft", s -> "Draft for " + Text.of(s.get("question")));
                    current = "review";
                }
                case "review" -> {
                    run.count();
                    run.hitl("review", "approved", s -> Values.map("draft", Text.of(s.get("draft")), "ask", "Approve?"));
                    current = "reply";
                }
                case "reply" -> {
                    run.count();
                    run.step("reply", "reply", s -> Text.of(s.get("draft"))
                            + (Boolean.TRUE.equals(s.get("approved")) ? " (approved)" : " (rejected)"));
                    current = "end";
                }
                case "end" -> {
                    return run;
                }
                default -> throw new IllegalStateException("unknown node " + current);
            }
        }
    };

    /** The runs here ask no model. */
    static final GraphRun.Budget NO_BUDGET = GraphRun.Budget.NONE;

    private final MemoryThreads threads = new MemoryThreads(ThreadsContract.opts());

    private ThreadRun.Outcome pausedRun(String id) throws Exception {
        ThreadRun run = ThreadRun.start(threads, SCHEMA, id, Map.of("question", "Ada"), "draft", NO_BUDGET);
        return run.run(GRAPH, null);
    }

    @Test
    void aRunPausesAtItsHitlNodeAndGoesOnWithTheAnswer() throws Exception {
        ThreadRun.Outcome paused = pausedRun("t1");
        assertNull(paused.result());
        assertEquals(Values.map("interrupt", Values.map("node", "review",
                "value", Values.map("draft", "Draft for Ada", "ask", "Approve?")), "threadId", "t1"), paused.body());
        Threads.Paused kept = threads.paused("t1");
        assertEquals("approved", kept.field());
        assertEquals(Values.map("question", "Ada", "draft", "Draft for Ada", "approved", false, "reply", ""), kept.state());

        ThreadRun resumed = ThreadRun.resume(threads, SCHEMA, "t1", true, NO_BUDGET);
        assertEquals(new GraphRun.Event("resumed", "review", Values.map("threadId", "t1", "resume", true)), resumed.first());
        ThreadRun.Outcome done = resumed.run(GRAPH, null);
        assertEquals(Values.map("result", Values.map("question", "Ada", "draft", "Draft for Ada", "approved", true,
                "reply", "Draft for Ada (approved)"), "threadId", "t1"), done.body());
        assertEquals("run_finished", done.event().type());
        SvcError again = assertThrows(SvcError.class, () -> ThreadRun.resume(threads, SCHEMA, "t1", true, NO_BUDGET));
        assertEquals(409, again.status());
        assertEquals("not_interrupted", again.code());
    }

    @Test
    void aNewThreadGetsAnIdAndItsStateIsChecked() throws Exception {
        ThreadRun run = ThreadRun.start(threads, SCHEMA, null, Map.of("question", "Ada"), "draft", NO_BUDGET);
        assertTrue(run.threadId().matches("[0-9a-f]{32}"), run.threadId());
        assertEquals("run_started", run.first().type());
        SvcError e = assertThrows(SvcError.class, () -> ThreadRun.start(threads, SCHEMA, "t2", Map.of(), "draft", NO_BUDGET));
        assertEquals(422, e.status());
        assertEquals(Map.of("field", "question"), e.details());
        assertEquals("thread_not_found", ThreadsContract.code(() -> threads.paused("t2")));
    }

    @Test
    void aWrongTypedAnswerLeavesTheThreadPaused() throws Exception {
        pausedRun("t1");
        for (Object wrong : new Object[] {"yes", null, 1, List.of(true)}) {
            SvcError e = assertThrows(SvcError.class, () -> ThreadRun.resume(threads, SCHEMA, "t1", wrong, NO_BUDGET));
            assertEquals(422, e.status());
            assertEquals("invalid_state", e.code());
            assertEquals(Map.of("field", "approved"), e.details());
            assertEquals("the resume value for state field \"approved\" must be boolean", e.getMessage());
        }
        ThreadRun.Outcome done = ThreadRun.resume(threads, SCHEMA, "t1", false, NO_BUDGET).run(GRAPH, null);
        assertEquals("Draft for Ada (rejected)", done.result().get("reply"));
    }

    @Test
    void unknownThreadsAreNotFound() {
        SvcError e = assertThrows(SvcError.class, () -> ThreadRun.resume(threads, SCHEMA, "nobody", true, NO_BUDGET));
        assertEquals(404, e.status());
        assertEquals("thread_not_found", e.code());
    }

    @Test
    void aFailedRunFailsItsThread() throws Exception {
        pausedRun("t1");
        ThreadRun run = ThreadRun.resume(threads, SCHEMA, "t1", true, NO_BUDGET);
        SvcError e = assertThrows(SvcError.class, () -> run.run((state, observer, from, resume) -> {
            throw SvcError.execution("reply", "node \"reply\" failed");
        }, null));
        assertEquals("execution_error", e.code());
        SvcError after = assertThrows(SvcError.class, () -> threads.paused("t1"));
        assertTrue(after.getMessage().contains("failed"), after.getMessage());
    }

    /** The deadline abandons a run: its thread fails, and the run's late end writes nothing. */
    @Test
    void anAbandonedRunFailsItsThread() throws Exception {
        ThreadRun run = ThreadRun.start(threads, SCHEMA, "t1", Map.of("question", "Ada"), "draft", NO_BUDGET);
        assertTrue(run.abandon());
        assertFalse(run.abandon());
        SvcError late = assertThrows(SvcError.class, () -> run.run(GRAPH, null));
        assertEquals("deadline_exceeded", late.code());
        SvcError e = assertThrows(SvcError.class, () -> threads.paused("t1"));
        assertTrue(e.getMessage().contains("failed"), e.getMessage());
    }

    /** A run that ended is kept: the deadline then comes too late to abandon it. */
    @Test
    void aRunThatEndedCannotBeAbandoned() throws Exception {
        ThreadRun run = ThreadRun.start(threads, SCHEMA, "t1", Map.of("question", "Ada"), "draft", NO_BUDGET);
        run.run(GRAPH, null);
        assertFalse(run.abandon());
        assertEquals("review", threads.paused("t1").node());
    }

    /** A run cancelled mid-node (a client that left a stream) fails its thread. */
    @Test
    void aCancelledRunFailsItsThread() throws Exception {
        ThreadRun run = ThreadRun.start(threads, SCHEMA, "t1", Map.of("question", "Ada"), "draft", NO_BUDGET);
        CountDownLatch inside = new CountDownLatch(1);
        ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor();
        Future<?> f = runner.submit(() -> run.run((state, observer, from, resume) -> {
            inside.countDown();
            Thread.sleep(Duration.ofMinutes(1));
            return GRAPH.run(state, observer, from, resume);
        }, null));
        inside.await();
        f.cancel(true);
        runner.shutdown();
        runner.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
        SvcError e = assertThrows(SvcError.class, () -> threads.paused("t1"));
        assertTrue(e.getMessage().contains("failed"), e.getMessage());
    }

    /** A store that cannot keep the run's end answers 503; the run's own error wins over the store's. */
    @Test
    void aStoreThatCannotKeepTheEndIs503() throws Exception {
        SvcError away = new SvcError(503, "checkpointer_unavailable", "away", null);
        Threads broken = new Threads() {
            @Override
            public String start(String id) throws SvcError {
                return threads.start(id);
            }

            @Override
            public Paused paused(String id) throws SvcError {
                return threads.paused(id);
            }

            @Override
            public String claim(String id, String interruptId) throws SvcError {
                return threads.claim(id, interruptId);
            }

            @Override
            public void pause(String id, String generation, Kept kept) throws SvcError {
                throw away;
            }

            @Override
            public void finish(String id, String generation) throws SvcError {
                throw away;
            }

            @Override
            public void fail(String id, String generation) throws SvcError {
                throw away;
            }

            @Override
            public void close() {
            }
        };
        ThreadRun run = ThreadRun.start(broken, SCHEMA, "t1", Map.of("question", "Ada"), "draft", NO_BUDGET);
        assertEquals(503, assertThrows(SvcError.class, () -> run.run(GRAPH, null)).status());
        assertEquals("thread_busy", ThreadsContract.code(() -> threads.start("t1"))); // it settles later
        ThreadRun other = ThreadRun.start(broken, SCHEMA, "t2", Map.of("question", "Ada"), "draft", NO_BUDGET);
        SvcError own = assertThrows(SvcError.class, () -> other.run((state, observer, from, resume) -> {
            throw SvcError.stepLimit(2);
        }, null));
        assertEquals("step_limit_exceeded", own.code());
    }

    /** A resumed run has its own maxSteps: two steps to the pause, two after it. */
    @Test
    void aResumedRunHasItsOwnStepBudget() throws Exception {
        pausedRun("t1");
        ThreadRun.Outcome done = ThreadRun.resume(threads, SCHEMA, "t1", true, NO_BUDGET).run(GRAPH, null);
        assertEquals(true, done.result().get("approved"));
    }

    /** A run that cannot pause (not on a thread) fails at a hitl node with 500 execution_error naming it. */
    @Test
    void anInterruptOutsideAThreadIsAnExecutionError() throws Exception {
        SvcError e = assertThrows(SvcError.class,
                () -> GRAPH.run(SCHEMA.newState(Map.of("question", "Ada")), null, "draft", null));
        assertTrue(e instanceof Interrupt);
        assertEquals(500, e.status());
        assertEquals("execution_error", e.code());
        assertEquals(Map.of("node", "review"), e.details());
        assertTrue(e.getMessage().contains("only POST /invoke can resume"), e.getMessage());
    }

    /** The answer is taken once, at the node the run was resumed at. */
    @Test
    void aResumeIsTakenOnceAtItsNode() throws Exception {
        GraphRun run = new GraphRun(SCHEMA, SCHEMA.newState(Map.of("question", "Ada")), 5);
        run.resume(new GraphRun.Resume("review", true));
        assertThrows(Interrupt.class, () -> run.hitl("other", "approved", s -> Map.of()));
        run.hitl("review", "approved", s -> Map.of());
        assertEquals(true, run.get("approved"));
        assertThrows(Interrupt.class, () -> run.hitl("review", "approved", s -> Map.of()));
    }
}
