package dev.svc.runtime;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * Who called the graph's A2A agent (settings.a2a), for a native body:
 * {@code Caller.current()} is a caller of settings.a2a.tokens with its roles,
 * "service" (the service's own credential, no roles) or, with security.auth
 * none, "anonymous"; null outside an A2A call (an /invoke request, an MCP
 * call). The graph runs on a thread of its own, not the request's: the A2A
 * endpoint binds the caller to that thread around the run ({@link #bind}).
 */
public record Caller(String subject, List<String> roles) {
    private static final ThreadLocal<Caller> CURRENT = new ThreadLocal<>();

    public Caller {
        roles = List.copyOf(roles);
    }

    /** The A2A caller of the run on this thread; null outside an A2A call. */
    public static Caller current() {
        return CURRENT.get();
    }

    /** {@code task}, run with {@code caller} as the current caller of its thread (null: none). */
    public static <T> Callable<T> bind(Caller caller, Callable<T> task) {
        if (caller == null) {
            return task;
        }
        return () -> {
            Caller outer = CURRENT.get();
            CURRENT.set(caller);
            try {
                return task.call();
            } finally {
                if (outer == null) {
                    CURRENT.remove();
                } else {
                    CURRENT.set(outer);
                }
            }
        };
    }
}
