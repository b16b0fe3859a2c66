package dev.svc.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.json.schema.jackson2.DefaultJsonSchemaValidator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The check of an MCP tool's arguments against the input schema its server lists, run by
 * {@link McpServers} before anything is sent: a refusal names what is wrong.
 */
final class McpArguments {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonSchemaValidator VALIDATOR = new DefaultJsonSchemaValidator(JSON);

    private McpArguments() {
    }

    /**
     * A check of arguments against a tool's input schema: the SDK's JSON Schema 2020-12
     * validator when the schema is one, else {@link #minimalCheck} (a server may list a
     * schema of another dialect, or a broken one).
     */
    static Function<Map<String, Object>, String> checker(Map<String, Object> schema) {
        if (!VALIDATOR.validateSchema(schema).valid()) {
            return arguments -> minimalCheck(schema, arguments);
        }
        return arguments -> {
            JsonSchemaValidator.ValidationResponse r = VALIDATOR.validate(schema, arguments);
            return r.valid() ? null : problems(r.errorMessage());
        };
    }

    /**
     * The validator's list of problems ({@code /a: string found, integer expected}), without
     * the SDK's preamble and brackets; a problem of the arguments as a whole has no path.
     */
    private static String problems(String message) {
        String preamble = "Validation failed: JSON schema validation errors: [";
        if (message.startsWith(preamble) && message.endsWith("]")) {
            message = message.substring(preamble.length(), message.length() - 1);
        }
        return message.startsWith(": ") ? message.substring(2) : message;
    }

    /**
     * The check without a validator: the required properties are there and the top-level
     * ones have their basic JSON type. Returns what is wrong, or null.
     */
    static String minimalCheck(Map<String, Object> schema, Map<String, Object> arguments) {
        if (schema.get("required") instanceof List<?> names) {
            for (Object name : names) {
                if (!arguments.containsKey(String.valueOf(name))) {
                    return "the required property \"" + name + "\" is missing";
                }
            }
        }
        if (schema.get("properties") instanceof Map<?, ?> properties) {
            for (Map.Entry<String, Object> e : arguments.entrySet()) {
                if (properties.get(e.getKey()) instanceof Map<?, ?> spec && spec.containsKey("type")
                        && !typeOk(e.getValue(), spec.get("type"))) {
                    return "\"" + e.getKey() + "\" must be of type " + spec.get("type") + ", not "
                            + JSON.valueToTree(e.getValue());
                }
            }
        }
        return null;
    }

    private static boolean typeOk(Object value, Object expected) {
        List<?> names = expected instanceof List<?> list ? list : List.of(expected);
        boolean known = false;
        for (Object name : names) {
            Boolean ok = switch (String.valueOf(name)) {
                case "string" -> value instanceof String;
                case "integer" -> StateSchema.isInteger(value)
                        || (value instanceof Double d && d == Math.rint(d) && !d.isInfinite());
                case "number" -> StateSchema.isNumber(value);
                case "boolean" -> value instanceof Boolean;
                case "object" -> value instanceof Map;
                case "array" -> value instanceof List;
                case "null" -> value == null;
                default -> null;
            };
            if (ok == Boolean.TRUE) {
                return true;
            }
            known |= ok != null;
        }
        return !known;
    }
}
