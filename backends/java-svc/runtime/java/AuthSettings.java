package com.svc.__SVC_PACKAGE__.config;

import com.svc.__SVC_PACKAGE__.GraphState;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * The credential /invoke requires. It comes from the environment variable the
 * graph names (application.yml maps it to svc.security.key); when
 * authentication is on and it is empty the service does not start.
 */
@Component
public class AuthSettings {
    private final byte[] keyDigest;

    public AuthSettings(@Value("${svc.security.key:}") String key) {
        if (!"none".equals(GraphState.AUTH) && key.isEmpty()) {
            throw new IllegalStateException(missingKeyMessage());
        }
        this.keyDigest = "none".equals(GraphState.AUTH) ? null : digest(key);
    }

    public static String missingKeyMessage() {
        return GraphState.KEY_ENV + " is not set: set it to the API key clients must send in X-API-Key, "
                + "or compile the graph with security.auth \"none\"";
    }

    /** Whether requests need the key (security.auth is not "none"). */
    public boolean required() {
        return keyDigest != null;
    }

    /** Compares in constant time, over digests so the key's length does not leak either. */
    public boolean accepts(String presented) {
        if (keyDigest == null) {
            return true;
        }
        if (presented == null || presented.isEmpty()) {
            return false;
        }
        return MessageDigest.isEqual(digest(presented), keyDigest);
    }

    private static byte[] digest(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is unavailable", e);
        }
    }
}
