package com.svc.connectors.runtime;

import dev.svc.runtime.EnvFile;
import dev.svc.runtime.SvcError;
import dev.svc.runtime.Text;
import java.util.Map;

/**
 * What the Java runtime offers the code of every connector (marketplace/README.md,
 * "Runtime helpers"). The backend writes this class, which only delegates to the runtime
 * (package dev.svc.runtime), whenever the graph has a connector node: connectors written
 * when the runtime's package was named after the graph call it, and may go on doing so.
 */
public final class Fields {
    private Fields() {
    }

    /** Fills each {@code {{field}}} with the state value as templates render it. */
    public static String fill(String template, Map<String, Object> state) {
        return Text.fillFields(template, state);
    }

    /** A state value as templates render it. */
    public static String text(Object value) {
        return Text.of(value);
    }

    /** A variable of the environment, or else the system property of that name; "" when neither. */
    public static String env(String name) {
        return EnvFile.get(name);
    }

    /** The error code of a failure the runtime raised (upstream_error, ...), else null. */
    public static String code(Throwable failure) {
        return failure instanceof SvcError e ? e.code() : null;
    }

    /** A detail of a failure the runtime raised ({@code reason}, {@code status}, {@code node}), else null. */
    public static Object detail(Throwable failure, String key) {
        return failure instanceof SvcError e && e.details() != null ? e.details().get(key) : null;
    }
}
