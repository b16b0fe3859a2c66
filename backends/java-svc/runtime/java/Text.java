package dev.svc.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How state values appear inside templates and prompts, as on every target
 * ("Templates" in the IR reference): strings as they are, absent values as
 * nothing, anything else as JSON with no spaces, object keys sorted by code
 * point, only what JSON requires escaped, integers with all their digits and
 * other numbers as JavaScript writes them. A value that JSON cannot hold
 * (NaN, infinity) renders as nothing.
 */
public final class Text {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    /** How deeply a value may nest (a cycle that node code built); a request nests at most 128 levels. */
    private static final int MAX_DEPTH = 1000;

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
        StringBuilder out = new StringBuilder();
        return append(out, value, 0) ? out.toString() : "";
    }

    /**
     * Fills each {@code {{field}}} of a template written in a connector's config with the
     * state value as {@link #of} renders it; an opening pair of braces never closed is text.
     * Connectors call it through com.svc.connectors.runtime.Fields.
     */
    public static String fillFields(String template, Map<String, Object> state) {
        StringBuilder out = new StringBuilder();
        String rest = template;
        while (true) {
            int start = rest.indexOf("{{");
            int end = start < 0 ? -1 : rest.indexOf("}}", start + 2);
            if (end < 0) {
                break;
            }
            out.append(rest, 0, start).append(of(state.get(rest.substring(start + 2, end).strip())));
            rest = rest.substring(end + 2);
        }
        return out.append(rest).toString();
    }

    /** Text written to a messages field: one assistant message. */
    public static List<Object> assistantMessage(String text) {
        return List.of(Map.of("role", "assistant", "content", text));
    }

    private static boolean append(StringBuilder out, Object value, int depth) {
        if (depth > MAX_DEPTH) {
            return false;
        }
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            appendString(out, s);
        } else if (value instanceof Boolean b) {
            out.append(b.booleanValue());
        } else if (value instanceof Integer || value instanceof Long || value instanceof Short
                || value instanceof Byte || value instanceof BigInteger
                || value instanceof AtomicInteger || value instanceof AtomicLong) {
            out.append(value);
        } else if (value instanceof Float f) {
            return appendFloat(out, f.doubleValue(), true);
        } else if (value instanceof Double || value instanceof BigDecimal) {
            return appendFloat(out, ((Number) value).doubleValue(), false);
        } else if (value instanceof Map<?, ?> map) {
            List<Map.Entry<?, ?>> entries = new ArrayList<>(map.entrySet());
            entries.sort((a, b) -> compareCodePoints(String.valueOf(a.getKey()), String.valueOf(b.getKey())));
            out.append('{');
            for (int i = 0; i < entries.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                appendString(out, String.valueOf(entries.get(i).getKey()));
                out.append(':');
                if (!append(out, entries.get(i).getValue(), depth + 1)) {
                    return false;
                }
            }
            out.append('}');
        } else if (value instanceof Collection<?> list) {
            out.append('[');
            int i = 0;
            for (Object item : list) {
                if (i++ > 0) {
                    out.append(',');
                }
                if (!append(out, item, depth + 1)) {
                    return false;
                }
            }
            out.append(']');
        } else {
            // Any other value (a record, an array, ...) as Jackson sees it,
            // then in the form above.
            Object plain;
            try {
                plain = JSON.readValue(JSON.writeValueAsBytes(value), Object.class);
            } catch (IOException | RuntimeException e) {
                return false;
            }
            return append(out, plain, depth + 1);
        }
        return true;
    }

    /** Keys by code point, as UTF-8 bytes compare (String.compareTo compares UTF-16 units). */
    private static int compareCodePoints(String a, String b) {
        int i = 0;
        while (i < a.length() && i < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(i);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
        }
        return Integer.compare(a.length() - i, b.length() - i);
    }

    /**
     * A float as JavaScript's Number::toString writes it: the shortest digits
     * that read back as the same value, without an exponent from 1e-6 up to
     * 1e21 (so 2.0 is 2), else with one (1e-7, 1e+21); -0 is 0.
     */
    private static boolean appendFloat(StringBuilder out, double d, boolean single) {
        if (!Double.isFinite(d)) {
            return false;
        }
        if (d == 0) {
            out.append('0');
            return true;
        }
        BigDecimal shortest = shortest(Math.abs(d), single);
        String digits = shortest.unscaledValue().toString();
        int k = digits.length();
        int n = k - shortest.scale();
        if (d < 0) {
            out.append('-');
        }
        if (k <= n && n <= 21) {
            out.append(digits).append("0".repeat(n - k));
        } else if (0 < n && n <= 21) {
            out.append(digits, 0, n).append('.').append(digits, n, k);
        } else if (-6 < n && n <= 0) {
            out.append("0.").append("0".repeat(-n)).append(digits);
        } else {
            out.append(digits.charAt(0));
            if (k > 1) {
                out.append('.').append(digits, 1, k);
            }
            out.append('e').append(n - 1 < 0 ? '-' : '+').append(Math.abs(n - 1));
        }
        return true;
    }

    /**
     * The decimal with the fewest digits that reads back as x (positive),
     * the closest to x of those. Java's toString gives it (JDK 19 and later)
     * except that it writes at least two digits: 5e-324 comes out as
     * 4.9E-324, so a two-digit result is checked against the one-digit
     * decimals on either side of x.
     */
    private static BigDecimal shortest(double x, boolean single) {
        BigDecimal s = new BigDecimal(single ? Float.toString((float) x) : Double.toString(x))
                .stripTrailingZeros();
        if (s.precision() != 2) {
            return s;
        }
        BigDecimal exact = new BigDecimal(x);
        BigDecimal best = null;
        for (RoundingMode mode : new RoundingMode[] {RoundingMode.FLOOR, RoundingMode.CEILING}) {
            BigDecimal c = exact.round(new MathContext(1, mode));
            String text = c.toString();
            boolean same = single ? Float.parseFloat(text) == (float) x : Double.parseDouble(text) == x;
            if (same && (best == null
                    || c.subtract(exact).abs().compareTo(best.subtract(exact).abs()) < 0)) {
                best = c;
            }
        }
        return best == null ? s : best.stripTrailingZeros();
    }

    /**
     * s between quotes, escaping only what JSON requires: the quote, the
     * backslash and U+0000 to U+001F (\b, \f, \n, \r, \t, else a six-character escape in
     * lower case).
     */
    private static void appendString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
