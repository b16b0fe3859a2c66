package com.svc.connectors.json_path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The svc/json-path connector's helper. */
class JsonPathTest {
    private static Map<String, Object> state() throws Exception {
        Object payload = new ObjectMapper().readValue(
                "{\"items\": [{\"name\": \"Ada\", \"tags\": [\"a\", \"b\"]}], \"a b\": {\"c\": null}}",
                Object.class);
        Map<String, Object> state = new HashMap<>();
        state.put("payload", payload);
        return state;
    }

    private static Object get(Object... steps) throws Exception {
        return JsonPath.extract(state(), "extract", "payload", List.of(steps), "out", null).get("out");
    }

    @Test
    void extractsKeysAndIndexes() throws Exception {
        assertEquals("Ada", get("items", 0, "name"));
        assertEquals("b", get("items", -1, "tags", -1));
        assertEquals(null, get("a b", "c"));
        assertEquals(state().get("payload"), get());
    }

    @Test
    void unresolvedUsesTheDefaultOrFails() throws Exception {
        Map<String, Object> patch = JsonPath.extract(state(), "extract", "payload",
                List.of("items", 3, "name"), "out", "{\"n\": 1}");
        assertEquals(Map.of("n", 1), patch.get("out"));
        IllegalStateException stopped = assertThrows(IllegalStateException.class,
                () -> get("items", 0, "name", "first"));
        assertTrue(stopped.getMessage().contains(
                "$.items[0].name of \"payload\" has no value at $.items[0].name.first"),
                stopped.getMessage());
        IllegalStateException unset = assertThrows(IllegalStateException.class,
                () -> JsonPath.extract(state(), "extract", "missing", List.of("a"), "out", null));
        assertTrue(unset.getMessage().contains("\"missing\" is not set"), unset.getMessage());
        for (List<Object> steps : List.of(
                Arrays.<Object>asList("items", "0"),
                Arrays.<Object>asList("items", 0, 0),
                Arrays.<Object>asList("a b", "c", "d"))) {
            assertThrows(IllegalStateException.class, () -> get(steps.toArray()));
        }
    }

    @Test
    void pathsReadAsWritten() {
        assertEquals("$.items[0][\"a b\"]._x-1", JsonPath.describe(List.of("items", 0, "a b", "_x-1")));
    }
}
