package dev.svc.runtime;

import jakarta.servlet.http.HttpServletRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * The credential /invoke (and /mcp, and /a2a without a token table) requires, in the
 * scheme of security.auth (ServiceSpec.auth): an API key in X-API-Key, or a token in Authorization: Bearer.
 * It comes from the environment variable the graph names (application.yml maps it to
 * svc.security.key); when authentication is on and it is empty the service does not start.
 */
@Component
public class AuthSettings {
    private final String scheme;
    private final byte[] keyDigest;

    public AuthSettings(ServiceSpec spec, @Value("${svc.security.key:}") String key) {
        if (!"none".equals(spec.auth()) && key.isEmpty()) {
            throw new IllegalStateException(missingKeyMessage(spec));
        }
        this.scheme = spec.auth();
        this.keyDigest = "none".equals(scheme) ? null : digest(key);
    }

    /** Why the service does not start without its key (Application.main prints it too). */
    public static String missingKeyMessage(ServiceSpec spec) {
        String how = "bearer".equals(spec.auth()) ? "as Authorization: Bearer <token>" : "in the X-API-Key header";
        return spec.keyEnv() + " is not set: set it to the key clients must send (" + how + "), "
                + "or compile the graph with security.auth \"none\"";
    }

    private boolean bearer() {
        return "bearer".equals(scheme);
    }

    /** Whether requests need the key (security.auth is not "none"). */
    public boolean required() {
        return keyDigest != null;
    }

    /** The scheme clients send the key in: "api_key" or "bearer"; "none" when none is asked. */
    public String scheme() {
        return scheme;
    }

    /** The header of a refusal: WWW-Authenticate: Bearer when bearer tokens are asked, else null. */
    public String challenge() {
        return bearer() ? "Bearer" : null;
    }

    /**
     * Whether the request carries the key in the graph's scheme (an X-API-Key does not
     * satisfy a bearer service). Compared in constant time, over digests so the key's
     * length does not leak either.
     */
    public boolean accepts(HttpServletRequest request) {
        if (keyDigest == null) {
            return true;
        }
        String presented = bearer() ? bearerToken(request) : apiKey(request);
        if (presented == null) {
            return false;
        }
        return MessageDigest.isEqual(digest(presented), keyDigest);
    }

    /** The token of an Authorization: Bearer header (the word in any case), or null. */
    public static String bearerToken(HttpServletRequest request) {
        String header = request.getHeader("Authorization");
        if (header == null || header.length() < 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        String token = header.substring(7).strip();
        return token.isEmpty() ? null : token;
    }

    /** The X-API-Key header, or null when it is absent or empty. */
    public static String apiKey(HttpServletRequest request) {
        String key = request.getHeader("X-API-Key");
        return key == null || key.isEmpty() ? null : key;
    }

    public static byte[] digest(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is unavailable", e);
        }
    }
}
