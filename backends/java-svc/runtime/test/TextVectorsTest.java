package dev.svc.runtime;

// Not one of the runtime files of a generated project: it runs with the
// runtime's own build (pom.xml, tests/tests/e2e/runtimes.rs), which has
// fixtures/json-text/vectors.json as the test resource json-text/vectors.json.

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Text.of against the shared vectors ("inserted as JSON" in the IR reference), and Text.fillFields. */
class TextVectorsTest {
    @Test
    void rendersEveryVector() throws Exception {
        byte[] file;
        try (InputStream in = TextVectorsTest.class.getResourceAsStream("/json-text/vectors.json")) {
            file = in.readAllBytes();
        }
        // The values as a request reads them, and as Jackson reads an
        // upstream reply (Integer, Long, BigInteger, Double).
        List<String> failures = new ArrayList<>();
        List<?> asRequest = (List<?>) RequestJson.read(file);
        assertTrue(asRequest.size() >= 40, "only " + asRequest.size() + " vectors");
        check("request", asRequest, failures);
        check("ObjectMapper", new ObjectMapper().readValue(file, List.class), failures);
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    private static void check(String how, List<?> vectors, List<String> failures) {
        for (Object v : vectors) {
            Map<?, ?> vector = (Map<?, ?>) v;
            String got = Text.of(vector.get("value"));
            if (!got.equals(vector.get("text"))) {
                failures.add(vector.get("name") + " (" + how + "): got <" + got + ">, want <" + vector.get("text") + ">");
            }
        }
    }

    /** Values that only Java node code can write. */
    @Test
    void rendersJavaValues() {
        record Pair(String z, int a) {
        }
        Map<String, Object> cycle = new LinkedHashMap<>();
        cycle.put("self", cycle);
        Map<String, Object> withNull = new LinkedHashMap<>();
        withNull.put("b", null);
        withNull.put("a", List.of(1.5f, 2.0f, 0.1f));
        assertEquals("{\"a\":[1.5,2,0.1],\"b\":null}", Text.of(withNull));
        assertEquals("[0.1,2,1e-7]", Text.of(List.of(new BigDecimal("0.10"), new BigDecimal("2.000"), new BigDecimal("1E-7"))));
        assertEquals("{\"a\":1,\"z\":\"<&>\"}", Text.of(new Pair("<&>", 1)));
        assertEquals("[1,2]", Text.of(new int[] {1, 2}));
        assertEquals("[\"x\"]", Text.of(Arrays.asList("x")));
        assertEquals("{\"1\":true}", Text.of(Map.of(1, true)));
        assertEquals("[1e-45,3.4028235e+38,5e-324]", Text.of(List.of(Float.MIN_VALUE, Float.MAX_VALUE, Double.MIN_VALUE)));
        assertEquals("0", Text.of(-0.0));
        assertEquals("", Text.of(Double.NaN));
        assertEquals("", Text.of(List.of(Double.POSITIVE_INFINITY)));
        assertEquals("", Text.of(cycle));
    }

    @Test
    void fillsConnectorFields() {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("name", "Ada");
        state.put("n", 3);
        state.put("tags", List.of("a"));
        assertEquals("", Text.fillFields("", state));
        assertEquals("Hi Ada!", Text.fillFields("Hi {{name}}!", state));
        assertEquals("Ada3", Text.fillFields("{{ name }}{{n}}", state));
        assertEquals("[\"a\"] .", Text.fillFields("{{tags}} {{missing}}.", state));
        assertEquals("open {{ name", Text.fillFields("open {{ name", state));
    }
}
