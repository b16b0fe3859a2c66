package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * PyJson against Python's own output (the vectors were printed by CPython 3):
 * json.dumps with and without ensure_ascii, repr, str.strip and str.lower.
 */
class PyJsonTest {
    @Test
    void dumpsTheDigestVector() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("a", Values.list(1.0, 1e16, 1e-5, 0.1, "é<\u001b"));
        value.put("b", null);
        assertEquals("{\"a\": [1.0, 1e+16, 1e-05, 0.1, \"é<\\u001b\"], \"b\": null}", PyJson.dumps(value));
    }

    @Test
    void floatsAsPythonRepr() {
        Object[][] vectors = {
            {1.0, "1.0"}, {100.0, "100.0"}, {0.0001, "0.0001"}, {-0.0, "-0.0"}, {0.0, "0.0"}, {1e-05, "1e-05"},
            {1e16, "1e+16"}, {1.5e16, "1.5e+16"}, {1234567890123456.0, "1234567890123456.0"},
            {0.1 + 0.2, "0.30000000000000004"}, {5e-324, "5e-324"},
            {1.7976931348623157e308, "1.7976931348623157e+308"}, {123456789.125, "123456789.125"},
            {1e22, "1e+22"}, {2.5e-7, "2.5e-07"}, {9007199254740993.0, "9007199254740992.0"},
            {1e15, "1000000000000000.0"}, {0.001, "0.001"}, {-1.5, "-1.5"}, {0.1f, "0.1"},
            {new BigDecimal("1.50"), "1.5"},
        };
        for (Object[] v : vectors) {
            assertEquals(v[1], PyJson.floatRepr(v[0]), "repr of " + v[0]);
            assertEquals(v[1], PyJson.dumps(v[0]), "json of " + v[0]);
        }
        assertEquals("nan", PyJson.floatRepr(Double.NaN));
        assertEquals("inf", PyJson.floatRepr(Double.POSITIVE_INFINITY));
        assertEquals("-inf", PyJson.repr(Double.NEGATIVE_INFINITY));
        assertEquals("[NaN, Infinity, -Infinity]",
                PyJson.dumps(List.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY)));
    }

    @Test
    void numbersAsJacksonReadsAnUpstreamReply() throws Exception {
        Object reply = new ObjectMapper().readValue(
                "{\"a\":1.50,\"b\":1E2,\"c\":10,\"d\":123456789012345678901234567890,\"e\":-0,\"f\":-0.0}",
                Object.class);
        assertEquals("{\"a\": 1.5, \"b\": 100.0, \"c\": 10, \"d\": 123456789012345678901234567890, \"e\": 0, "
                + "\"f\": -0.0}", PyJson.dumps(reply));
        assertEquals("[true, false, null, 9223372036854775807, 12345678901234567890]",
                PyJson.dumps(Values.list(true, false, null, Long.MAX_VALUE, new BigInteger("12345678901234567890"))));
    }

    @Test
    void stringsAsPythonEscapesThem() {
        String s = "q\"\\\n\r\t\b\f\u0001\u001f\u007f\u2028é😀<>&";
        assertEquals("\"q\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\u007f\u2028é😀<>&\"", PyJson.dumps(s));
        assertEquals("\"q\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\\u007f\\u2028\\u00e9\\ud83d\\ude00<>&\"",
                PyJson.dumpsAscii(s));
        assertEquals("\"other\"", PyJson.dumpsAscii("other"));
    }

    @Test
    void keysInInsertionOrderAndAsPythonWritesThem() throws Exception {
        Map<Object, Object> m = new LinkedHashMap<>();
        m.put("z", 1);
        m.put("a", Map.of());
        m.put(1, List.of());
        m.put(1.5, "x");
        m.put(null, true);
        m.put(false, 0);
        assertEquals("{\"z\": 1, \"a\": {}, \"1\": [], \"1.5\": \"x\", \"null\": true, \"false\": 0}", PyJson.dumps(m));
        // json.loads: a repeated key keeps its first place and takes the last value.
        assertEquals("{\"a\": 3, \"b\": 2}", PyJson.dumps(PyJson.loads("{\"a\":1,\"b\":2,\"a\":3}")));
        assertEquals("[NaN, -Infinity]", PyJson.dumps(PyJson.loads(" [NaN, -Infinity] ")));
        assertThrows(java.io.IOException.class, () -> PyJson.loads("{} x"));
        assertThrows(java.io.IOException.class, () -> PyJson.loads("{oops"));
        assertThrows(java.io.IOException.class, () -> PyJson.loads(""));
    }

    @Test
    void javaValuesAndFailures() {
        record Pair(String z, int a) {
        }
        assertEquals("{\"z\": \"x\", \"a\": 1}", PyJson.dumps(new Pair("x", 1)));
        assertEquals("[1, \"b\"]", PyJson.dumps(new Object[] {1, "b"}));
        Map<String, Object> cycle = new LinkedHashMap<>();
        cycle.put("self", cycle);
        PyJson.ValueError circular = assertThrows(PyJson.ValueError.class, () -> PyJson.dumps(cycle));
        assertEquals("Circular reference detected", circular.getMessage());
        PyJson.TypeError type = assertThrows(PyJson.TypeError.class, () -> PyJson.dumps(new Object()));
        assertEquals("Object of type Object is not JSON serializable", type.getMessage());
        List<Object> shared = Values.list(1);
        assertEquals("[[1], [1]]", PyJson.dumps(List.of(shared, shared)));
    }

    @Test
    void reprOfStrings() {
        assertEquals("'abc'", PyJson.reprString("abc"));
        assertEquals("\"it's\"", PyJson.reprString("it's"));
        assertEquals("'a\"b'", PyJson.reprString("a\"b"));
        assertEquals("'it\\'s \"x\"'", PyJson.reprString("it's \"x\""));
        assertEquals("' Writer\\n'", PyJson.reprString(" Writer\n"));
        assertEquals("''", PyJson.reprString(""));
        assertEquals("'\\x00\\x7f\\x85\\xa0é\\u2028\\ufeff\\ue000😀\\U0010ffff\\ud800\\\\ \\t\\r'",
                PyJson.reprString("\u0000\u007f\u0085\u00a0é\u2028\ufeff\ue000😀\udbff\udfff\ud800\\ \t\r"));
        assertEquals("'\\u0378'", PyJson.reprString("\u0378"));
        assertEquals("'\\u3000x'", PyJson.reprString("\u3000x"));
    }

    @Test
    void reprAndStrOfValues() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", "c");
        m.put("n", 1);
        m.put("f", 1.0);
        m.put("t", true);
        m.put("x", null);
        m.put("l", Values.list(1, "a", 1e16));
        assertEquals("{'id': 'c', 'n': 1, 'f': 1.0, 't': True, 'x': None, 'l': [1, 'a', 1e+16]}", PyJson.repr(m));
        assertEquals("None", PyJson.repr(null));
        assertEquals("None", PyJson.str(null));
        assertEquals("a'b", PyJson.str("a'b"));
        assertEquals("[1]", PyJson.str(List.of(1)));
        assertEquals("False", PyJson.str(false));
    }

    @Test
    void stripLowerAndTruth() {
        assertEquals("x", PyJson.strip("\u00a0 x \u3000"));
        assertEquals("x", PyJson.strip("\u001c x\u001f\u0085\u202f"));
        assertEquals("\u200b x", PyJson.strip("\u200b x"));
        assertEquals("", PyJson.strip(" \t\n\u000b\f\r "));
        assertEquals("i\u0307", PyJson.lower("İ"));
        assertEquals("οδος", PyJson.lower("ΟΔΟΣ"));
        assertEquals("writer", PyJson.lower(PyJson.strip(" Writer\n")));
        for (Object falsy : new Object[] {null, false, 0, 0L, 0.0, "", List.of(), Map.of(), BigInteger.ZERO}) {
            assertFalse(PyJson.truthy(falsy), "truthy " + falsy);
        }
        for (Object truthy : new Object[] {true, 1, -1.5, "x", List.of(1), Map.of("a", 1), Double.NaN}) {
            assertTrue(PyJson.truthy(truthy), "truthy " + truthy);
        }
        assertEquals(List.of("A", "a", "support", "é", "😀"),
                PyJson.sorted(new ArrayList<>(List.of("😀", "support", "é", "a", "A"))));
    }
}
