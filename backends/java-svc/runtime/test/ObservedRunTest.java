package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Which steps stream their model calls: only an llm or an agent node's, as
 * python-svc's streaming.replies(); a subgraph node's child graph is not
 * streamed. And how a node's tokens are withdrawn (tokens_discarded).
 */
class ObservedRunTest {
    private static final StateSchema SCHEMA = new StateSchema(List.of(
            new StateSchema.Field("answer", StateSchema.Type.STRING, null, false, false, null),
            new StateSchema.Field("summary", StateSchema.Type.STRING, null, false, false, null)));

    @Test
    void onlyAnLlmOrAgentStepIsTheCurrentStreamedRun() throws Exception {
        RunEvents events = new RunEvents("r1", new GraphRun.Usage(GraphRun.Budget.NONE));
        ObservedRun run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 5, events);
        AtomicReference<ObservedRun> seen = new AtomicReference<>(run);

        run.patch("sub", "subgraph", state -> {
            seen.set(ObservedRun.current());
            return Values.map("summary", "s");
        });
        assertNull(seen.get());

        run.step("ask", "llm", "answer", state -> {
            seen.set(ObservedRun.current());
            return "a";
        });
        assertSame(run, seen.get());
        assertNull(ObservedRun.current());
        seen.set(null);
        run.step("ask", "agent", "answer", state -> {
            seen.set(ObservedRun.current());
            return "a";
        });
        assertSame(run, seen.get());
        assertNull(ObservedRun.current());

        // Both steps are still reported, each with its kind and patch.
        List<String> frames = new ArrayList<>();
        for (RunEvents.Frame f; (f = events.next(0)) != null;) {
            String text = new String(f.bytes(), StandardCharsets.UTF_8);
            frames.add(text.substring(text.indexOf("data: ") + 6).strip());
        }
        assertEquals(List.of(
                "{\"run_id\":\"r1\",\"seq\":1,\"type\":\"node_started\",\"node\":\"sub\",\"data\":{\"kind\":\"subgraph\"}}",
                "{\"run_id\":\"r1\",\"seq\":2,\"type\":\"node_finished\",\"node\":\"sub\","
                        + "\"data\":{\"kind\":\"subgraph\",\"patch\":{\"summary\":\"s\"}}}",
                "{\"run_id\":\"r1\",\"seq\":3,\"type\":\"node_started\",\"node\":\"ask\",\"data\":{\"kind\":\"llm\"}}",
                "{\"run_id\":\"r1\",\"seq\":4,\"type\":\"node_finished\",\"node\":\"ask\","
                        + "\"data\":{\"kind\":\"llm\",\"patch\":{\"answer\":\"a\"}}}",
                "{\"run_id\":\"r1\",\"seq\":5,\"type\":\"node_started\",\"node\":\"ask\",\"data\":{\"kind\":\"agent\"}}",
                "{\"run_id\":\"r1\",\"seq\":6,\"type\":\"node_finished\",\"node\":\"ask\","
                        + "\"data\":{\"kind\":\"agent\",\"patch\":{\"answer\":\"a\"}}}"), frames);
    }

    @Test
    void aDiscardWithdrawsTheTokensStanding() throws Exception {
        RunEvents events = new RunEvents("r1", new GraphRun.Usage(GraphRun.Budget.NONE));
        ObservedRun run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 5, events);
        run.step("ask", "agent", "answer", state -> {
            ObservedRun current = ObservedRun.current();
            current.discard("tool_calls"); // nothing stands: nothing to withdraw
            current.token(""); // never an empty token
            current.token("Let me");
            current.discard("tool_calls");
            current.discard("next_member"); // never twice in a row
            current.token("Done");
            return "Done";
        });
        // A node starts with nothing standing.
        run.step("look_up", "llm", "summary", state -> {
            ObservedRun.current().discard("tool_calls");
            return "s";
        });
        List<String> outline = new ArrayList<>();
        for (RunEvents.Frame f; (f = events.next(0)) != null;) {
            String text = new String(f.bytes(), StandardCharsets.UTF_8);
            outline.add(text.substring(text.indexOf("event: ") + 7, text.indexOf('\n', text.indexOf("event: ")))
                    + " " + text.substring(text.indexOf("\"node\":"), text.lastIndexOf('}')));
        }
        assertEquals(List.of(
                "node_started \"node\":\"ask\",\"data\":{\"kind\":\"agent\"}",
                "token \"node\":\"ask\",\"data\":{\"delta\":\"Let me\"}",
                "tokens_discarded \"node\":\"ask\",\"data\":{\"reason\":\"tool_calls\"}",
                "token \"node\":\"ask\",\"data\":{\"delta\":\"Done\"}",
                "node_finished \"node\":\"ask\",\"data\":{\"kind\":\"agent\",\"patch\":{\"answer\":\"Done\"}}",
                "node_started \"node\":\"look_up\",\"data\":{\"kind\":\"llm\"}",
                "node_finished \"node\":\"look_up\",\"data\":{\"kind\":\"llm\",\"patch\":{\"summary\":\"s\"}}"),
                outline);
    }

    /**
     * A hitl step (a graph with a checkpointer): node_started, then either the
     * pause (no node_finished: the run's terminal event is interrupted) or, on
     * the run resumed there, node_finished with the answer as its patch. The
     * terminal interrupted event ends the stream.
     */
    @Test
    void aHitlStepReportsItsPauseAndItsAnswer() throws Exception {
        RunEvents events = new RunEvents("r1", new GraphRun.Usage(GraphRun.Budget.NONE));
        ObservedRun run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 5, events);
        Interrupt in = org.junit.jupiter.api.Assertions.assertThrows(Interrupt.class,
                () -> run.hitl("review", "answer", state -> Values.map("ask", "Approve?")));
        assertEquals(Values.map("ask", "Approve?"), in.value());
        events.emit("interrupted", "review", Values.map("value", in.value(), "threadId", "t1"));
        events.emit("run_finished", null, Map.of()); // after the terminal event: nothing

        ObservedRun resumed = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 5, events);
        resumed.resume(new GraphRun.Resume("review", "yes"));
        resumed.hitl("review", "answer", state -> Values.map("ask", "Approve?"));
        assertEquals("yes", resumed.get("answer"));

        List<String> frames = new ArrayList<>();
        for (RunEvents.Frame f; (f = events.next(0)) != null;) {
            String text = new String(f.bytes(), StandardCharsets.UTF_8);
            frames.add(text.substring(text.indexOf("data: ") + 6).strip() + (f.last() ? " (last)" : ""));
        }
        assertEquals(List.of(
                "{\"run_id\":\"r1\",\"seq\":1,\"type\":\"node_started\",\"node\":\"review\",\"data\":{\"kind\":\"hitl\"}}",
                "{\"run_id\":\"r1\",\"seq\":2,\"type\":\"interrupted\",\"node\":\"review\","
                        + "\"data\":{\"value\":{\"ask\":\"Approve?\"},\"threadId\":\"t1\"}} (last)"), frames);

        RunEvents second = new RunEvents("r2", new GraphRun.Usage(GraphRun.Budget.NONE));
        ObservedRun observed = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 5, second);
        observed.resume(new GraphRun.Resume("review", "yes"));
        observed.hitl("review", "answer", state -> Values.map("ask", "Approve?"));
        frames.clear();
        for (RunEvents.Frame f; (f = second.next(0)) != null;) {
            String text = new String(f.bytes(), StandardCharsets.UTF_8);
            frames.add(text.substring(text.indexOf("data: ") + 6).strip());
        }
        assertEquals(List.of(
                "{\"run_id\":\"r2\",\"seq\":1,\"type\":\"node_started\",\"node\":\"review\",\"data\":{\"kind\":\"hitl\"}}",
                "{\"run_id\":\"r2\",\"seq\":2,\"type\":\"node_finished\",\"node\":\"review\","
                        + "\"data\":{\"kind\":\"hitl\",\"patch\":{\"answer\":\"yes\"}}}"), frames);
    }
}
