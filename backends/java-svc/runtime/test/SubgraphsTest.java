package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Subgraphs against python-svc's run_child: a fresh, isolated child state; only the output comes back. */
class SubgraphsTest {
    private static final StateSchema.Item STRINGS = new StateSchema.Item(StateSchema.Type.STRING, null);
    /** A child graph's schema: a required q, a list with a default, an object and an answer. */
    private static final StateSchema CHILD = new StateSchema(List.of(
            new StateSchema.Field("q", StateSchema.Type.STRING, null, false, true, null),
            new StateSchema.Field("items", StateSchema.Type.ARRAY, null, false, false, () -> Values.list("seed")),
            new StateSchema.Field("doc", StateSchema.Type.OBJECT, null, false, false, null),
            new StateSchema.Field("answer", StateSchema.Type.STRING, null, false, false, null)));

    private static final Subgraphs.Child UNREACHED = state -> {
        throw new AssertionError("the child ran");
    };

    @Test
    @SuppressWarnings("unchecked")
    void theChildSharesNoListOrMapWithItsParent() throws Exception {
        Map<String, Object> doc = Values.map("tags", Values.list("a"), "inner", Values.map("n", 1));
        List<Object> items = Values.list("x", Values.map("k", "v"));
        Map<String, Object> values = Values.map("q", "hi", "items", items, "doc", doc);
        Map<String, Object> result = Subgraphs.run("sub", CHILD, values, state -> {
            ((List<Object>) state.get("items")).add("child");
            ((Map<String, Object>) ((List<Object>) state.get("items")).get(1)).put("k", "changed");
            ((List<Object>) ((Map<String, Object>) state.get("doc")).get("tags")).add("b");
            ((Map<String, Object>) ((Map<String, Object>) state.get("doc")).get("inner")).put("n", 2);
            return state;
        });
        assertEquals(Values.list("x", Values.map("k", "v")), values.get("items"));
        assertEquals(Values.map("tags", Values.list("a"), "inner", Values.map("n", 1)), values.get("doc"));
        assertEquals(Values.list("x", Values.map("k", "changed"), "child"), result.get("items"));

        Object copied = Values.copy(doc);
        assertEquals(doc, copied);
        assertNotSame(doc, copied);
        assertNotSame(doc.get("tags"), ((Map<String, Object>) copied).get("tags"));
        assertSame("hi", Values.copy("hi"));
    }

    @Test
    void aStateTheChildRefusesIsAFailureOfTheSubgraphNode() {
        SvcError e = assertThrows(SvcError.class, () -> Subgraphs.run("sub", CHILD, Values.map("q", null), UNREACHED));
        assertEquals(500, e.status());
        assertEquals("execution_error", e.code());
        assertEquals(Map.of("node", "sub"), e.details());
        assertEquals("subgraph \"sub\": required state field \"q\" is missing", e.getMessage());

        // Any refusal of the child's schema, not only a missing field; nested names stay whole.
        e = assertThrows(SvcError.class, () -> Subgraphs.run("outer__inner", CHILD, Values.map("q", 5), UNREACHED));
        assertEquals(500, e.status());
        assertEquals("execution_error", e.code());
        assertEquals(Map.of("node", "outer__inner"), e.details());
        assertEquals("subgraph \"outer__inner\": state field \"q\" must be string", e.getMessage());
    }

    @Test
    @SuppressWarnings("unchecked")
    void defaultsAreFilledFreshForEveryRun() throws Exception {
        List<Object> seen = new ArrayList<>();
        Subgraphs.Child child = state -> {
            seen.add(new ArrayList<>((List<Object>) state.get("items")));
            ((List<Object>) state.get("items")).add("mutated");
            return state;
        };
        // A null value takes the child's default, as an absent one does.
        Subgraphs.run("sub", CHILD, Values.map("q", "a", "items", null), child);
        Subgraphs.run("sub", CHILD, Values.map("q", "b"), child);
        assertEquals(List.of(List.of("seed"), List.of("seed")), seen);
    }

    @Test
    void theChildsErrorsPassUnchanged() {
        SvcError limit = SvcError.stepLimit(1);
        SvcError e = assertThrows(SvcError.class, () -> Subgraphs.run("sub", CHILD, Values.map("q", "a"), state -> {
            throw limit;
        }));
        assertSame(limit, e);
        InterruptedException stop = new InterruptedException("the run passed its deadline");
        InterruptedException i = assertThrows(InterruptedException.class,
                () -> Subgraphs.run("sub", CHILD, Values.map("q", "a"), state -> {
                    throw stop;
                }));
        assertSame(stop, i);
    }

    @Test
    void aChildGraphRunsToItsOwnStepLimit() {
        Subgraphs.Child loop = state -> {
            GraphRun run = new GraphRun(CHILD, state, 1);
            run.count();
            run.step("sub__pad", "answer", s -> "padded");
            run.count();
            return fail("the second step ran");
        };
        SvcError e = assertThrows(SvcError.class, () -> Subgraphs.run("sub", CHILD, Values.map("q", "a"), loop));
        assertEquals("step_limit_exceeded", e.code());
        assertEquals(Map.of("maxSteps", 1), e.details());
    }

    @Test
    void outputDropsNullsInKeyOrder() {
        Map<String, Object> out = Subgraphs.output(Values.map("b", 1, "c", null, "a", "x"));
        assertEquals(List.of("a", "b"), new ArrayList<>(out.keySet()));
        assertEquals(Map.of("a", "x", "b", 1), out);
        assertEquals(Map.of(), Subgraphs.output(Values.map("a", null)));
    }

    @Test
    void theParentAppliesTheOutputThroughItsOwnReducers() throws Exception {
        StateSchema parent = new StateSchema(List.of(
                new StateSchema.Field("question", StateSchema.Type.STRING, null, false, true, null),
                new StateSchema.Field("log", StateSchema.Type.ARRAY, STRINGS, true, false, () -> Values.list()),
                new StateSchema.Field("reply", StateSchema.Type.STRING, null, false, false, null)));
        GraphRun run = new GraphRun(parent, parent.newState(Values.map("question", "hi", "log", Values.list("start"))),
                5);
        AtomicReference<Map<String, Object>> childState = new AtomicReference<>();
        run.patch("sub", state -> {
            Map<String, Object> result = Subgraphs.run("sub", CHILD, Values.map("q", state.get("question")), s -> {
                s.put("answer", "answered " + s.get("q"));
                childState.set(s);
                return s;
            });
            return Subgraphs.output(Values.map("log", result.get("answer"), "reply", result.get("doc")));
        });
        assertEquals(Values.list("start", "answered hi"), run.get("log"));
        assertNull(run.get("reply"));
        assertEquals("log", run.lastOutputKey());
        // The child's own fields never reach the parent.
        assertEquals(List.of("question", "log", "reply"), new ArrayList<>(run.state().keySet()));
        assertEquals(Values.list("seed"), childState.get().get("items"));
    }
}
