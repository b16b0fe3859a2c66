package dev.svc.runtime;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Python's text forms of values, where the agents of python-svc put them in
 * prompts and messages, so that every target writes the same bytes:
 * {@link #dumps} is {@code json.dumps(x, ensure_ascii=False)} (tool results and
 * remote outputs fed back as text), {@link #dumpsAscii} is {@code json.dumps(x)},
 * {@link #repr} is {@code repr(x)} and {@link #str} is {@code str(x)} (inside
 * bad_route and bad_tool_call messages), {@link #strip} and {@link #lower} are
 * {@code str.strip()} and {@code str.lower()}, and {@link #loads} is
 * {@code json.loads} (tool-call arguments).
 *
 * <p>Values are the JSON-like Java values of the runtime: null, Boolean, String,
 * integers (Integer, Long, BigInteger, ...), floats (Double, Float, BigDecimal),
 * Map (keys in iteration order: LinkedHashMap and Jackson keep insertion order),
 * Collection and arrays. Any other object is first converted by Jackson (a record
 * becomes an object); one Jackson cannot convert is a {@link TypeError}, as
 * Python's json.dumps raises for an object it cannot encode.
 */
public final class PyJson {
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private static final ObjectMapper JACKSON = new ObjectMapper();
    /** Python json.loads: NaN and Infinity accepted, nothing after the value. */
    private static final ObjectMapper LOADS = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private PyJson() {
    }

    /** Python's TypeError: the name is what a failure message shows ("TypeError: ..."). */
    public static final class TypeError extends RuntimeException {
        public TypeError(String message) {
            super(message);
        }
    }

    /** Python's ValueError ("Circular reference detected"). */
    public static final class ValueError extends RuntimeException {
        public ValueError(String message) {
            super(message);
        }
    }

    // --- json.dumps ---------------------------------------------------------------------

    /** {@code json.dumps(value, ensure_ascii=False)}: ", " and ": " separators, non-ASCII raw. */
    public static String dumps(Object value) {
        StringBuilder out = new StringBuilder();
        new Encoder(false).encode(out, value);
        return out.toString();
    }

    /** {@code json.dumps(value)}: as {@link #dumps}, but everything past U+007E as a \\uXXXX escape. */
    public static String dumpsAscii(Object value) {
        StringBuilder out = new StringBuilder();
        new Encoder(true).encode(out, value);
        return out.toString();
    }

    private static final class Encoder {
        private final boolean ascii;
        /** The containers being written, to refuse a cycle as Python does. */
        private final Set<Object> open = Collections.newSetFromMap(new IdentityHashMap<>());

        Encoder(boolean ascii) {
            this.ascii = ascii;
        }

        void encode(StringBuilder out, Object value) {
            if (value == null) {
                out.append("null");
            } else if (value instanceof String s) {
                string(out, s, ascii);
            } else if (value instanceof Boolean b) {
                out.append(b ? "true" : "false");
            } else if (isInteger(value)) {
                out.append(value);
            } else if (isFloat(value)) {
                out.append(floatJson(value));
            } else if (value instanceof Character c) {
                string(out, c.toString(), ascii);
            } else if (value instanceof Map<?, ?> map) {
                enter(map);
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    if (!first) {
                        out.append(", ");
                    }
                    first = false;
                    string(out, key(e.getKey()), ascii);
                    out.append(": ");
                    encode(out, e.getValue());
                }
                out.append('}');
                open.remove(map);
            } else if (value instanceof Collection<?> items) {
                enter(items);
                out.append('[');
                boolean first = true;
                for (Object item : items) {
                    if (!first) {
                        out.append(", ");
                    }
                    first = false;
                    encode(out, item);
                }
                out.append(']');
                open.remove(items);
            } else if (value instanceof Object[] array) {
                encode(out, java.util.Arrays.asList(array));
            } else {
                encode(out, plain(value));
            }
        }

        private void enter(Object container) {
            if (!open.add(container)) {
                throw new ValueError("Circular reference detected");
            }
        }

        /** A key as json.dumps writes it: str as is, numbers, booleans and None as their JSON. */
        private static String key(Object k) {
            if (k instanceof String s) {
                return s;
            }
            if (k == null) {
                return "null";
            }
            if (k instanceof Boolean b) {
                return b ? "true" : "false";
            }
            if (isInteger(k)) {
                return k.toString();
            }
            if (isFloat(k)) {
                return floatJson(k);
            }
            throw new TypeError("keys must be str, int, float, bool or None, not " + typeName(k));
        }
    }

    /** Any other object as Jackson sees it (a record becomes an object), or a TypeError. */
    private static Object plain(Object value) {
        try {
            return JACKSON.readValue(JACKSON.writeValueAsBytes(value), Object.class);
        } catch (IOException | RuntimeException e) {
            throw new TypeError("Object of type " + value.getClass().getSimpleName() + " is not JSON serializable");
        }
    }

    private static boolean isInteger(Object v) {
        return v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte
                || v instanceof BigInteger || v instanceof AtomicInteger || v instanceof AtomicLong;
    }

    private static boolean isFloat(Object v) {
        return v instanceof Double || v instanceof Float || v instanceof BigDecimal;
    }

    /** A float in json.dumps: its repr, NaN and Infinity as Python writes them (allow_nan). */
    private static String floatJson(Object v) {
        double d = ((Number) v).doubleValue();
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        return floatRepr(v);
    }

    /**
     * A string in JSON as Python writes it: \" \\ \n \r \t \b \f, other controls as
     * lower-case \\u00xx; with {@code ascii} every character past U+007E too (a
     * supplementary character as its two surrogates), else everything else raw.
     */
    private static void string(StringBuilder out, String s, boolean ascii) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || (ascii && c > 0x7e)) {
                        out.append("\\u").append(HEX[(c >> 12) & 0xF]).append(HEX[(c >> 8) & 0xF])
                                .append(HEX[(c >> 4) & 0xF]).append(HEX[c & 0xF]);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    // --- float repr -----------------------------------------------------------------------

    /**
     * Python's {@code repr(float)}: the shortest digits that read back as the same
     * double, fixed notation with a fraction ({@code 1.0}, {@code 0.0001}) when the
     * decimal exponent is from -4 to 15, else {@code d[.ddd]e±XX} ({@code 1e+16},
     * {@code 1e-05}); {@code nan}, {@code inf}, {@code -inf}. A Float keeps its own
     * shortest digits (0.1f is 0.1); a BigDecimal is read as the double nearest it,
     * as json.loads reads a number with a fraction.
     */
    public static String floatRepr(Object number) {
        double d = ((Number) number).doubleValue();
        if (Double.isNaN(d)) {
            return "nan";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        BigDecimal shortest = shortest(Math.abs(d), number instanceof Float);
        String digits = shortest.unscaledValue().toString();
        int k = digits.length();
        int decpt = k - shortest.scale(); // the value is 0.<digits> * 10^decpt
        StringBuilder out = new StringBuilder();
        if (d < 0) {
            out.append('-');
        }
        if (decpt > -4 && decpt <= 16) {
            if (decpt <= 0) {
                out.append("0.").append("0".repeat(-decpt)).append(digits);
            } else if (decpt < k) {
                out.append(digits, 0, decpt).append('.').append(digits, decpt, k);
            } else {
                out.append(digits).append("0".repeat(decpt - k)).append(".0");
            }
        } else {
            out.append(digits.charAt(0));
            if (k > 1) {
                out.append('.').append(digits, 1, k);
            }
            int exp = decpt - 1;
            out.append('e').append(exp < 0 ? '-' : '+');
            if (Math.abs(exp) < 10) {
                out.append('0');
            }
            out.append(Math.abs(exp));
        }
        return out.toString();
    }

    /**
     * The decimal with the fewest digits that reads back as x (positive), the
     * closest to x of those. Java's toString gives it (JDK 19 and later) except
     * that it writes at least two digits: 5e-324 comes out as 4.9E-324, so a
     * two-digit result is checked against the one-digit decimals on either side.
     */
    private static BigDecimal shortest(double x, boolean single) {
        BigDecimal s = new BigDecimal(single ? Float.toString((float) x) : Double.toString(x))
                .stripTrailingZeros();
        if (s.precision() != 2) {
            return s;
        }
        BigDecimal exact = new BigDecimal(single ? (double) (float) x : x);
        BigDecimal best = null;
        for (RoundingMode mode : new RoundingMode[] {RoundingMode.FLOOR, RoundingMode.CEILING}) {
            BigDecimal c = exact.round(new MathContext(1, mode));
            String text = c.toString();
            boolean same = single ? Float.parseFloat(text) == (float) x : Double.parseDouble(text) == x;
            if (same && (best == null || c.subtract(exact).abs().compareTo(best.subtract(exact).abs()) < 0)) {
                best = c;
            }
        }
        return best == null ? s : best.stripTrailingZeros();
    }

    // --- repr and str -----------------------------------------------------------------------

    /**
     * Python's {@code repr(value)} of a JSON-like value: None, True, False, ints,
     * float reprs, strings in quotes ({@link #reprString}), {@code [a, b]} and
     * {@code {'k': v}}.
     */
    public static String repr(Object value) {
        StringBuilder out = new StringBuilder();
        repr(out, value, Collections.newSetFromMap(new IdentityHashMap<>()));
        return out.toString();
    }

    private static void repr(StringBuilder out, Object value, Set<Object> open) {
        if (value == null) {
            out.append("None");
        } else if (value instanceof String s) {
            out.append(reprString(s));
        } else if (value instanceof Character c) {
            out.append(reprString(c.toString()));
        } else if (value instanceof Boolean b) {
            out.append(b ? "True" : "False");
        } else if (isInteger(value)) {
            out.append(value);
        } else if (isFloat(value)) {
            out.append(floatRepr(value));
        } else if (value instanceof Map<?, ?> map) {
            if (!open.add(map)) {
                out.append("{...}");
                return;
            }
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) {
                    out.append(", ");
                }
                first = false;
                repr(out, e.getKey(), open);
                out.append(": ");
                repr(out, e.getValue(), open);
            }
            out.append('}');
            open.remove(map);
        } else if (value instanceof Collection<?> items) {
            if (!open.add(items)) {
                out.append("[...]");
                return;
            }
            out.append('[');
            boolean first = true;
            for (Object item : items) {
                if (!first) {
                    out.append(", ");
                }
                first = false;
                repr(out, item, open);
            }
            out.append(']');
            open.remove(items);
        } else if (value instanceof Object[] array) {
            repr(out, java.util.Arrays.asList(array), open);
        } else {
            out.append(value);
        }
    }

    /** Python's {@code str(value)}: a string as it is, anything else as its repr. */
    public static String str(Object value) {
        return value instanceof String s ? s : repr(value);
    }

    /**
     * Python's {@code repr(str)}: single quotes, or double quotes when the text holds
     * a ' and no "; the backslash and the chosen quote escaped; \t \n \r; other
     * non-printable characters as \xNN, \\uNNNN or \UNNNNNNNN (lower-case hex);
     * printable non-ASCII as it is.
     */
    public static String reprString(String s) {
        char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        StringBuilder out = new StringBuilder(s.length() + 2).append(quote);
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == quote || cp == '\\') {
                out.append('\\').appendCodePoint(cp);
            } else if (cp == '\t') {
                out.append("\\t");
            } else if (cp == '\n') {
                out.append("\\n");
            } else if (cp == '\r') {
                out.append("\\r");
            } else if (cp < 0x20 || cp == 0x7f) {
                hex(out, "\\x", cp, 2);
            } else if (cp < 0x7f) {
                out.append((char) cp);
            } else if (printable(cp)) {
                out.appendCodePoint(cp);
            } else if (cp <= 0xff) {
                hex(out, "\\x", cp, 2);
            } else if (cp <= 0xffff) {
                hex(out, "\\u", cp, 4);
            } else {
                hex(out, "\\U", cp, 8);
            }
        }
        return out.append(quote).toString();
    }

    private static void hex(StringBuilder out, String prefix, int cp, int width) {
        out.append(prefix);
        for (int shift = (width - 1) * 4; shift >= 0; shift -= 4) {
            out.append(HEX[(cp >> shift) & 0xF]);
        }
    }

    /** Python's str.isprintable for one character: not Other (C*) nor Separator (Z*), except the space. */
    private static boolean printable(int cp) {
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                    Character.UNASSIGNED, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                    Character.SPACE_SEPARATOR -> cp == ' ';
            default -> true;
        };
    }

    /** Python's type name of a JSON-like value ("int", "str", "dict", ...). */
    public static String typeName(Object v) {
        if (v == null) {
            return "NoneType";
        }
        if (v instanceof String || v instanceof Character) {
            return "str";
        }
        if (v instanceof Boolean) {
            return "bool";
        }
        if (isInteger(v)) {
            return "int";
        }
        if (isFloat(v)) {
            return "float";
        }
        if (v instanceof Map<?, ?>) {
            return "dict";
        }
        if (v instanceof Collection<?> || v instanceof Object[]) {
            return "list";
        }
        return v.getClass().getSimpleName();
    }

    // --- strings ----------------------------------------------------------------------------

    /** Python's str.isspace() for one character. */
    public static boolean isSpace(int c) {
        return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680
                || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f
                || c == 0x3000;
    }

    /** Python's str.strip(): every str.isspace() character off both ends. */
    public static String strip(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && isSpace(s.charAt(start))) {
            start++;
        }
        while (end > start && isSpace(s.charAt(end - 1))) {
            end--;
        }
        return s.substring(start, end);
    }

    /** Python's str.lower(): full Unicode lower-casing, independent of the default locale. */
    public static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    /** Python's truth value of a JSON-like value: None, False, 0, 0.0, "", [] and {} are false. */
    public static boolean truthy(Object v) {
        if (v == null) {
            return false;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        if (v instanceof String s) {
            return !s.isEmpty();
        }
        if (v instanceof BigInteger bi) {
            return bi.signum() != 0;
        }
        if (v instanceof BigDecimal bd) {
            return bd.signum() != 0;
        }
        if (v instanceof Number n) {
            return n.doubleValue() != 0;
        }
        if (v instanceof Map<?, ?> m) {
            return !m.isEmpty();
        }
        if (v instanceof Collection<?> c) {
            return !c.isEmpty();
        }
        if (v instanceof Object[] a) {
            return a.length > 0;
        }
        return true;
    }

    // --- json.loads -------------------------------------------------------------------------

    /**
     * Python's {@code json.loads(text)}: one JSON value (NaN and Infinity accepted,
     * a repeated key keeps its first place and its last value); objects are
     * LinkedHashMaps. Anything else is an IOException (Python's ValueError).
     */
    public static Object loads(String text) throws IOException {
        return LOADS.readValue(text, Object.class);
    }

    /** Python's {@code sorted()} of strings: by code point (String.compareTo compares UTF-16 units). */
    public static List<String> sorted(Collection<String> items) {
        List<String> out = new ArrayList<>(items);
        out.sort(PyJson::compareCodePoints);
        return out;
    }

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
}
