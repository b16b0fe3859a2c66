package com.svc.__SVC_PACKAGE__.runtime;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Mutable JSON-like values that may hold nulls (List.of and Map.of may not). */
public final class Values {
    private Values() {
    }

    public static List<Object> list(Object... items) {
        return new ArrayList<>(Arrays.asList(items));
    }

    /** A map from alternating keys and values. */
    public static Map<String, Object> map(Object... keysAndValues) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i + 1 < keysAndValues.length; i += 2) {
            out.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return out;
    }
}
