package com.svc.connectors.json_path;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The svc/json-path connector: a node copies one value out of a JSON state field into another
 * field. The path was parsed when the graph compiled; steps are keys (String) and indexes
 * (Integer, negative from the end).
 */
public final class JsonPath {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$-]*");
    private static final Object MISSING = new Object();

    private JsonPath() {
    }

    /**
     * Runs one json-path node. {@code fallback} is the default as JSON text (null when the node
     * has none): it is written when the path does not resolve; without it the node fails, naming
     * the step where it stopped.
     */
    public static Map<String, Object> extract(Map<String, Object> state, String node, String from,
            List<Object> steps, String outputKey, String fallback) {
        Object value = state.containsKey(from) ? state.get(from) : MISSING;
        int stop = value == MISSING ? 0 : -1;
        for (int i = 0; stop < 0 && i < steps.size(); i++) {
            value = step(value, steps.get(i));
            if (value == MISSING) {
                stop = i + 1;
            }
        }
        Map<String, Object> patch = new HashMap<>();
        if (stop < 0) {
            patch.put(outputKey, value);
            return patch;
        }
        if (fallback != null) {
            try {
                patch.put(outputKey, JSON.readValue(fallback, Object.class));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("node \"" + node + "\": the default is not JSON", e);
            }
            return patch;
        }
        if (stop == 0) {
            throw new IllegalStateException(
                    "node \"" + node + "\": the state field \"" + from + "\" is not set");
        }
        throw new IllegalStateException("node \"" + node + "\": " + describe(steps.subList(0, stop - 1))
                + " of \"" + from + "\" has no value at " + describe(steps.subList(0, stop)));
    }

    /** value[step]: a key of an object or an index of a list. */
    static Object step(Object value, Object step) {
        if (step instanceof String key) {
            if (value instanceof Map<?, ?> map && map.containsKey(key)) {
                return map.get(key);
            }
            return MISSING;
        }
        if (step instanceof Integer index && value instanceof List<?> list) {
            int i = index < 0 ? index + list.size() : index;
            if (i >= 0 && i < list.size()) {
                return list.get(i);
            }
        }
        return MISSING;
    }

    /** Steps written as a path: $.items[0]["a b"]. */
    static String describe(List<Object> steps) {
        StringBuilder out = new StringBuilder("$");
        for (Object s : steps) {
            if (s instanceof Integer) {
                out.append('[').append(s).append(']');
            } else if (PLAIN.matcher((String) s).matches()) {
                out.append('.').append(s);
            } else {
                try {
                    out.append('[').append(JSON.writeValueAsString(s)).append(']');
                } catch (JsonProcessingException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return out.toString();
    }
}
