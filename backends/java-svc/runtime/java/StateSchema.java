package dev.svc.runtime;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;

/** The declared state fields of a graph, with validation and reducers. */
public final class StateSchema {
    /** The state field types of IR v2. */
    public enum Type {
        STRING, INTEGER, NUMBER, BOOLEAN, OBJECT, ARRAY, MESSAGES;

        String label() {
            return name().toLowerCase();
        }
    }

    /** The element type of an array field. */
    public record Item(Type type, Item items) {
    }

    /**
     * One state field; {@code defaultValue} returns a fresh copy, or is null. {@code schema} is
     * the JSON Schema of a field with properties (OutputSchema), which a value of the field's
     * type given by a request must match too; null for none.
     */
    public record Field(String name, Type type, Item items, boolean append, boolean required,
            Supplier<Object> defaultValue, Map<String, Object> schema) {
        /** A field without properties: its type is all of its shape. */
        public Field(String name, Type type, Item items, boolean append, boolean required,
                Supplier<Object> defaultValue) {
            this(name, type, items, append, required, defaultValue, null);
        }
    }

    /** A patch value that replaces an append field's list instead of extending it. */
    public record Replace(Object value) {
    }

    private final List<Field> fields;
    private final Map<String, Field> byName = new LinkedHashMap<>();

    public StateSchema(List<Field> fields) {
        this.fields = List.copyOf(fields);
        for (Field f : fields) {
            byName.put(f.name(), f);
        }
    }

    public List<Field> fields() {
        return fields;
    }

    public Field field(String name) {
        return byName.get(name);
    }

    /**
     * Validates a request's state and applies the defaults. Unknown fields are
     * reported first, then wrong types (in field order, a field with a schema
     * checked against it too), then missing required fields.
     */
    public Map<String, Object> newState(Map<String, Object> input) throws SvcError {
        for (String key : new TreeSet<>(input.keySet())) {
            if (!byName.containsKey(key)) {
                throw SvcError.invalidState(key, "unknown state field \"" + key + "\"");
            }
        }
        Map<String, Object> state = new LinkedHashMap<>();
        for (Field f : fields) {
            Object v = input.get(f.name());
            if (v != null && !matches(f.type(), f.items(), v)) {
                throw SvcError.invalidState(f.name(),
                        "state field \"" + f.name() + "\" must be " + describe(f.type(), f.items()));
            }
            if (v != null) {
                checkSchema(f, v, "state field");
            }
            if (v == null && f.defaultValue() != null) {
                v = f.defaultValue().get();
            }
            state.put(f.name(), v);
        }
        for (Field f : fields) {
            if (f.required() && state.get(f.name()) == null) {
                throw SvcError.invalidState(f.name(), "required state field \"" + f.name() + "\" is missing");
            }
        }
        return state;
    }

    /**
     * Refuses {@code value}, of the field's type, when it does not match the field's schema:
     * 422 invalid_state naming where in the value ({@code details.path}); {@code what} names
     * the value in the message.
     */
    static void checkSchema(Field f, Object value, String what) throws SvcError {
        OutputSchema.Problem found = f.schema() == null ? null : OutputSchema.check(f.schema(), value);
        if (found != null) {
            throw SvcError.invalidState(f.name(), found.path(), what + " \"" + f.name()
                    + "\" does not match its schema at \"" + found.path() + "\": " + found.problem());
        }
    }

    /** Writes a node's result to a field, honouring the field's reducer. */
    public void apply(Map<String, Object> state, String key, Object value, String node) throws SvcError {
        Field f = byName.get(key);
        if (f == null) {
            throw SvcError.execution(node, "node \"" + node + "\" wrote unknown state field \"" + key + "\"");
        }
        if (value instanceof Replace r) {
            value = r.value();
        } else if (f.append()) {
            List<Object> merged = new ArrayList<>();
            if (state.get(key) instanceof List<?> current) {
                merged.addAll(current);
            }
            if (value instanceof List<?> list) {
                merged.addAll(list);
            } else {
                merged.add(value);
            }
            value = merged;
        }
        if (value != null && !matches(f.type(), f.items(), value)) {
            throw SvcError.execution(node, "node \"" + node + "\" wrote a value that is not "
                    + describe(f.type(), f.items()) + " to \"" + key + "\"");
        }
        state.put(key, value);
    }

    public static Map<String, Object> readOnly(Map<String, Object> state) {
        return Collections.unmodifiableMap(state);
    }

    /** An integer a long holds: integer fields are 64-bit on every target. */
    static boolean isInteger(Object v) {
        return v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte
                || (v instanceof BigInteger b && b.bitLength() < 64);
    }

    static boolean isNumber(Object v) {
        return isInteger(v) || v instanceof BigInteger || v instanceof Double || v instanceof Float
                || v instanceof BigDecimal;
    }

    static boolean matches(Type type, Item items, Object v) {
        switch (type) {
            case STRING:
                return v instanceof String;
            case INTEGER:
                return isInteger(v);
            case NUMBER:
                return isNumber(v);
            case BOOLEAN:
                return v instanceof Boolean;
            case OBJECT:
                return v instanceof Map;
            case ARRAY:
                if (!(v instanceof List<?> list)) {
                    return false;
                }
                if (items != null) {
                    for (Object x : list) {
                        if (x == null || !matches(items.type(), items.items(), x)) {
                            return false;
                        }
                    }
                }
                return true;
            case MESSAGES:
                if (!(v instanceof List<?> messages)) {
                    return false;
                }
                for (Object x : messages) {
                    if (!(x instanceof Map<?, ?> m) || m.size() != 2 || !(m.get("role") instanceof String)
                            || !(m.get("content") instanceof String)) {
                        return false;
                    }
                }
                return true;
            default:
                return false;
        }
    }

    static String describe(Type type, Item items) {
        if (type == Type.ARRAY && items != null) {
            return "array of " + describe(items.type(), items.items());
        }
        if (type == Type.MESSAGES) {
            return "messages (a list of {role, content})";
        }
        return type.label();
    }
}
