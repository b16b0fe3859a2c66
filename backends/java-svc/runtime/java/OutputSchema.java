package dev.svc.runtime;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The shape a state field's {@code properties} give its value (IR v2, "Structured output"), as the
 * JSON Schema the compiler writes for it: an object lists every property in {@code required} and
 * allows no other key ({@code "additionalProperties": false}), an array has its {@code items}, and
 * the scalars are string, integer, number and boolean. A structured llm node's reply
 * (StructuredOutput) and a request's value for such a field (StateSchema) are checked by
 * {@link #check}, which finds the first problem in a fixed order, so every target names the same one.
 */
public final class OutputSchema {
    /** Code point order, which is UTF-8's byte order: the other targets sort keys by their bytes. */
    private static final Comparator<String> BYTE_ORDER =
            (a, b) -> Arrays.compare(a.codePoints().toArray(), b.codePoints().toArray());

    private OutputSchema() {
    }

    /**
     * Where a value does not match its schema: the JSON pointer into the value ("" for the value
     * itself) and what is wrong there ({@code expected <type>}, {@code missing}, {@code not allowed}).
     */
    public record Problem(String path, String problem) {
    }

    /**
     * The first problem of {@code value} under {@code schema}, null when it matches. Each value's
     * type is checked first. In an object, the {@code required} names in their order: one absent is
     * missing, one present is checked in turn; then, with {@code "additionalProperties": false},
     * the first key (in byte order) that is not a property is not allowed. An array's items are
     * checked by index.
     */
    public static Problem check(Map<String, Object> schema, Object value) {
        return check(schema, value, "");
    }

    private static Problem check(Map<?, ?> schema, Object value, String pointer) {
        String type = String.valueOf(schema.get("type"));
        if (!fits(type, value)) {
            return new Problem(pointer, "expected " + type);
        }
        if (type.equals("object")) {
            Map<?, ?> object = (Map<?, ?>) value;
            Map<?, ?> properties = schema.get("properties") instanceof Map<?, ?> p ? p : Map.of();
            for (Object name : schema.get("required") instanceof List<?> required ? required : List.of()) {
                String at = pointer + "/" + escape(String.valueOf(name));
                if (!object.containsKey(name)) {
                    return new Problem(at, "missing");
                }
                Problem found = check(properties.get(name) instanceof Map<?, ?> s ? s : Map.of(), object.get(name), at);
                if (found != null) {
                    return found;
                }
            }
            if (Boolean.FALSE.equals(schema.get("additionalProperties"))) {
                Optional<String> unknown = object.keySet().stream().map(String::valueOf)
                        .filter(key -> !properties.containsKey(key)).min(BYTE_ORDER);
                if (unknown.isPresent()) {
                    return new Problem(pointer + "/" + escape(unknown.get()), "not allowed");
                }
            }
        } else if (type.equals("array")) {
            Map<?, ?> items = schema.get("items") instanceof Map<?, ?> i ? i : Map.of();
            List<?> list = (List<?>) value;
            for (int index = 0; index < list.size(); index++) {
                Problem found = check(items, list.get(index), pointer + "/" + index);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    /**
     * Whether {@code value} has the JSON type {@code type}: null fits none, a boolean is no number,
     * an integer is a number without a fraction (3.0 is one). A type outside the subset (a schema
     * without one) describes nothing to check.
     */
    private static boolean fits(String type, Object value) {
        return switch (type) {
            case "string" -> value instanceof String;
            case "integer" -> isWhole(value);
            case "number" -> StateSchema.isNumber(value);
            case "boolean" -> value instanceof Boolean;
            case "object" -> value instanceof Map;
            case "array" -> value instanceof List;
            default -> true;
        };
    }

    private static boolean isWhole(Object value) {
        return switch (value) {
            case BigInteger b -> true;
            case BigDecimal d -> d.stripTrailingZeros().scale() <= 0;
            case Double d -> Double.isFinite(d) && d == Math.rint(d);
            case Float f -> Float.isFinite(f) && f == Math.rint(f);
            case null, default -> StateSchema.isInteger(value);
        };
    }

    /** A key as a JSON pointer's reference token. */
    private static String escape(String key) {
        return key.replace("~", "~0").replace("/", "~1");
    }
}
