package dev.svc.runtime;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Request bodies read with the contract's JSON rules, identically to the Go
 * and Python services: UTF-8 only, a leading byte-order mark ignored, no
 * escape that leaves a lone UTF-16 surrogate, at most 128 levels of nesting,
 * no duplicate key in an object, numbers within the range of a double.
 * Jackson's streaming parser does the parsing (and refuses invalid UTF-8);
 * the value is built here so that each rule names where it failed.
 */
public final class RequestJson {
    public static final int MAX_DEPTH = 128;
    private static final BigInteger MAX_DOUBLE = new BigDecimal(Double.MAX_VALUE).toBigInteger();
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);
    private static final JsonFactory FACTORY = new JsonFactory();

    private RequestJson() {
    }

    /** The JSON value of a request body. */
    public static Object read(byte[] body) throws SvcError {
        try (JsonParser p = FACTORY.createParser(body)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                throw SvcError.badRequest("the body is not JSON");
            }
            Object value = value(p, first, 1, false);
            if (p.nextToken() != null) {
                throw SvcError.badRequest("the body has data after the JSON value");
            }
            return value;
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().contains("UTF-8")) {
                throw SvcError.badRequest("the body is not valid UTF-8");
            }
            throw SvcError.badRequest("the body is not JSON");
        }
    }

    /** A value starting at token t; inState marks the body's "state" object. */
    private static Object value(JsonParser p, JsonToken t, int depth, boolean inState)
            throws IOException, SvcError {
        switch (t) {
            case START_OBJECT -> {
                if (depth > MAX_DEPTH) {
                    throw tooDeep();
                }
                Map<String, Object> map = new LinkedHashMap<>();
                for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                    String key = text(p.currentName());
                    if (map.containsKey(key)) {
                        // The state's own keys are state fields: the value of the
                        // body's "state", or the body itself in a legacy form.
                        boolean named = inState || (depth == 1 && !key.equals("state"));
                        throw new SvcError(400, "bad_request",
                                "the key \"" + key + "\" appears twice in one object",
                                named ? Map.of("field", key) : null);
                    }
                    map.put(key, value(p, p.nextToken(), depth + 1, depth == 1 && key.equals("state")));
                }
                return map;
            }
            case START_ARRAY -> {
                if (depth > MAX_DEPTH) {
                    throw tooDeep();
                }
                List<Object> list = new ArrayList<>();
                for (JsonToken i = p.nextToken(); i != JsonToken.END_ARRAY; i = p.nextToken()) {
                    list.add(value(p, i, depth + 1, false));
                }
                return list;
            }
            case VALUE_STRING -> {
                return text(p.getText());
            }
            case VALUE_NUMBER_INT -> {
                if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                        && p.getBigIntegerValue().abs().compareTo(MAX_DOUBLE) > 0) {
                    throw outOfRange(p);
                }
                return p.getNumberValue();
            }
            case VALUE_NUMBER_FLOAT -> {
                double d = p.getDoubleValue();
                if (Double.isInfinite(d)) {
                    throw outOfRange(p);
                }
                // A whole number written with a fraction or an exponent (2.0,
                // 1e3) is the integer it equals, as JSON Schema counts it, when
                // a long holds it; decided on the exact text.
                BigDecimal exact = p.getDecimalValue();
                if (exact.signum() == 0) {
                    return 0L;
                }
                if (exact.stripTrailingZeros().scale() <= 0
                        && exact.compareTo(LONG_MIN) >= 0 && exact.compareTo(LONG_MAX) <= 0) {
                    return exact.longValueExact();
                }
                return d;
            }
            case VALUE_TRUE -> {
                return Boolean.TRUE;
            }
            case VALUE_FALSE -> {
                return Boolean.FALSE;
            }
            case VALUE_NULL -> {
                return null;
            }
            default -> throw SvcError.badRequest("the body is not JSON");
        }
    }

    /** Refuses a string whose escapes left a surrogate unpaired. */
    private static String text(String s) throws SvcError {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw SvcError.badRequest("the body has a lone UTF-16 surrogate escape");
            }
        }
        return s;
    }

    private static SvcError tooDeep() {
        return SvcError.badRequest("the body nests deeper than " + MAX_DEPTH + " levels");
    }

    private static SvcError outOfRange(JsonParser p) throws IOException {
        String n = p.getText();
        if (n.length() > 40) {
            n = n.substring(0, 37) + "...";
        }
        return SvcError.badRequest("the number " + n + " is outside the range of a 64-bit float");
    }
}
