package dev.svc.runtime;

import jakarta.servlet.http.HttpServletRequest;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * Who may call /a2a (docs/http-contract.md, "A2A", "Credentials"), decided as python-svc's
 * Credentials decides it: the callers of settings.a2a.tokens, each token read from its
 * variable at start-up and kept as a digest only (the service's own key is then not
 * accepted here); with no table, the service's own credential (the subject "service", not
 * limited by skill roles) or, with security.auth none, anyone (the subject "anonymous").
 * One bean, made before the service listens: an unreadable token stops the start
 * (A2aStartFailureAnalyzer says which).
 */
@Component
public final class A2aCredentials {
    /** A caller found; {@code unrestricted} is the holder of the service's own credential. */
    record Identity(Caller caller, boolean unrestricted) {
        /** A skill with roles is for a caller holding any one of them. */
        boolean mayCall(A2aSpec.Skill skill) {
            return unrestricted || skill.roles().isEmpty()
                    || caller.roles().stream().anyMatch(skill.roles()::contains);
        }

        /** The 403 of a caller without any of the skill's roles. */
        SvcError forbidden(A2aSpec.Skill skill) {
            String held = caller.roles().isEmpty() ? "none" : String.join(", ", caller.roles());
            return new SvcError(403, "forbidden", "the skill \"" + skill.id() + "\" is for the roles "
                    + String.join(", ", skill.roles()) + "; \"" + caller.subject() + "\" holds " + held,
                    Map.of("skill", skill.id()));
        }
    }

    private record Entry(Caller caller, String scheme, byte[] digest) {
    }

    /** A token that cannot be read: an unset or empty variable, or one token for two callers. */
    public static final class TokenRefused extends IllegalStateException {
        TokenRefused(String message) {
            super(message);
        }
    }

    /** The schemes a caller may use, in the order the card lists them. */
    private static final List<String> SCHEMES = List.of("bearer", "api_key");

    private final boolean hasTable;
    private final List<Entry> table;
    private final List<String> schemes = new ArrayList<>();
    private final AuthSettings auth;

    /**
     * The graph's callers (A2aSpec.tokens), each token read from its variable. The build's
     * training run (TrainingRun) calls no A2A agent and has none of the variables: its
     * table is left empty, so that /a2a accepts no caller.
     */
    @Autowired
    public A2aCredentials(A2aSpec agent, AuthSettings auth) {
        this(agent.tokens(), Boolean.getBoolean("svc.training-run") ? List.of()
                : load(agent.tokens(), EnvFile::get), auth);
    }

    /** The table of {@code tokens}, each read with {@code env}; without one, {@code auth}. */
    A2aCredentials(List<A2aSpec.Token> tokens, Function<String, String> env, AuthSettings auth) {
        this(tokens, load(tokens, env), auth);
    }

    private A2aCredentials(List<A2aSpec.Token> tokens, List<Entry> table, AuthSettings auth) {
        this.auth = auth;
        this.hasTable = !tokens.isEmpty();
        this.table = table;
        for (String scheme : SCHEMES) {
            boolean used = hasTable ? tokens.stream().anyMatch(t -> t.scheme().equals(scheme))
                    : auth.required() && auth.scheme().equals(scheme);
            if (used) {
                schemes.add(scheme);
            }
        }
    }

    /**
     * Each caller's token from its variable: an unset or empty variable, or two callers with
     * one token, are a TokenRefused naming the entry and the variable (the service does not
     * start).
     */
    static List<Entry> load(List<A2aSpec.Token> tokens, Function<String, String> env) {
        List<Entry> table = new ArrayList<>();
        Map<String, Integer> first = new HashMap<>();
        for (int i = 0; i < tokens.size(); i++) {
            A2aSpec.Token t = tokens.get(i);
            String value = env.apply(t.env());
            if (value == null || value.isEmpty()) {
                String how = "bearer".equals(t.scheme()) ? "as Authorization: Bearer <token>" : "in the X-API-Key header";
                throw new TokenRefused("settings.a2a.tokens[" + i + "] (" + t.subject()
                        + ") reads its token from " + t.env() + ", which is not set: set it to the token this caller sends ("
                        + how + ")");
            }
            byte[] digest = AuthSettings.digest(value);
            Integer j = first.putIfAbsent(HexFormat.of().formatHex(digest), i);
            if (j != null) {
                A2aSpec.Token other = tokens.get(j);
                throw new TokenRefused("settings.a2a.tokens[" + i + "] (" + t.subject() + ", from " + t.env()
                        + ") has the same token as settings.a2a.tokens[" + j + "] (" + other.subject() + ", from "
                        + other.env() + "): give each caller a token of its own");
            }
            table.add(new Entry(new Caller(t.subject(), t.roles()), t.scheme(), digest));
        }
        return table;
    }

    /** What /a2a accepts, as the card declares it: "bearer", "api_key", or nothing. */
    List<String> schemes() {
        return schemes;
    }

    /** WWW-Authenticate of a 401: "Bearer" when bearer tokens are accepted, else null. */
    String challenge() {
        return schemes.contains("bearer") ? "Bearer" : null;
    }

    /**
     * The caller of {@code request}, or null for a missing or wrong credential. Every entry
     * of the table is compared, in constant time over digests, whatever matched before.
     */
    Identity identify(HttpServletRequest request) {
        if (!hasTable) {
            if (!auth.required()) {
                return new Identity(new Caller("anonymous", List.of()), false);
            }
            return auth.accepts(request) ? new Identity(new Caller("service", List.of()), true) : null;
        }
        String bearer = AuthSettings.bearerToken(request);
        String key = AuthSettings.apiKey(request);
        byte[] bearerDigest = bearer == null ? null : AuthSettings.digest(bearer);
        byte[] keyDigest = key == null ? null : AuthSettings.digest(key);
        Identity found = null;
        for (Entry e : table) {
            byte[] presented = "bearer".equals(e.scheme()) ? bearerDigest : keyDigest;
            if (presented != null && MessageDigest.isEqual(presented, e.digest()) && found == null) {
                found = new Identity(e.caller(), false);
            }
        }
        return found;
    }
}
