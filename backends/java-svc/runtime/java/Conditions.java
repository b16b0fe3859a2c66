package dev.svc.runtime;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The router operators of IR v2, as python-svc evaluates them (svc/values.py
 * cond_*): numbers compare as doubles whatever their Java type (1 equals 1.0),
 * strings by code point, and a missing field never satisfies eq, the
 * ordering operators or in (ne holds for it).
 */
public final class Conditions {
    private Conditions() {
    }

    public static boolean eq(Object value, Object want) {
        if (value == null) {
            return false;
        }
        Double a = number(value);
        if (a != null) {
            Double b = number(want);
            return b != null && a.doubleValue() == b.doubleValue();
        }
        return want != null && value.getClass() == want.getClass() && Objects.equals(value, want);
    }

    public static boolean ne(Object value, Object want) {
        return !eq(value, want);
    }

    public static boolean gt(Object value, Object want) {
        Integer c = compare(value, want);
        return c != null && c > 0;
    }

    public static boolean ge(Object value, Object want) {
        Integer c = compare(value, want);
        return c != null && c >= 0;
    }

    public static boolean lt(Object value, Object want) {
        Integer c = compare(value, want);
        return c != null && c < 0;
    }

    public static boolean le(Object value, Object want) {
        Integer c = compare(value, want);
        return c != null && c <= 0;
    }

    public static boolean in(Object value, List<?> options) {
        for (Object o : options) {
            if (eq(value, o)) {
                return true;
            }
        }
        return false;
    }

    public static boolean exists(Object value) {
        return value != null;
    }

    /** false, 0, "", empty lists and objects and a missing value are falsy. */
    public static boolean truthy(Object value) {
        if (value == null) {
            return false;
        }
        if (value instanceof Boolean b) {
            return b;
        }
        if (value instanceof String s) {
            return !s.isEmpty();
        }
        if (value instanceof List<?> l) {
            return !l.isEmpty();
        }
        if (value instanceof Map<?, ?> m) {
            return !m.isEmpty();
        }
        Double n = number(value);
        return n == null || n != 0;
    }

    /** -1, 0 or 1: numbers by value, strings by code point; null when they do not compare. */
    private static Integer compare(Object value, Object want) {
        Double a = number(value);
        if (a != null) {
            Double b = number(want);
            if (b == null) {
                return null;
            }
            return a < b ? -1 : a > b ? 1 : 0;
        }
        if (value instanceof String s && want instanceof String t) {
            // Python orders str by code point; String.compareTo by UTF-16 unit.
            return Integer.signum(Arrays.compare(s.codePoints().toArray(), t.codePoints().toArray()));
        }
        return null;
    }

    /** A JSON number as a double, as python-svc reads one (svc/values.py number); null otherwise. */
    private static Double number(Object v) {
        if (v instanceof Number n) {
            double d = n.doubleValue();
            // A number too large for a double: Python's float() refuses it too.
            return Double.isFinite(d) ? d : null;
        }
        return null;
    }
}
