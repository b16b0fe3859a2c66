package com.svc.__SVC_PACKAGE__.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.List;
import java.util.Map;

/** How state values appear inside templates and prompts. */
public final class Text {
    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

    private Text() {
    }

    /** Strings as they are, absent values as nothing, everything else as JSON. */
    public static String of(Object value) {
        if (value == null) {
            return "";
        }
        if (value instanceof String s) {
            return s;
        }
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            return String.valueOf(value);
        }
    }

    /** Text written to a messages field: one assistant message. */
    public static List<Object> assistantMessage(String text) {
        return List.of(Map.of("role", "assistant", "content", text));
    }
}
