package bench;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * A hand-written Spring Boot controller doing the work of the service
 * generated from support_triage: API-key check, state validation with the
 * default, the classify function, the router and the templates.
 */
@SpringBootApplication
@RestController
public class Baseline {
    private static final byte[] KEY = digest(System.getenv().getOrDefault("SVC_API_KEY", ""));

    public static void main(String[] args) {
        System.setProperty("server.port", System.getenv().getOrDefault("SVC_PORT", "8080"));
        SpringApplication.run(Baseline.class, args);
    }

    private static byte[] digest(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @PostMapping(value = "/invoke", produces = MediaType.APPLICATION_JSON_VALUE)
    public ResponseEntity<Object> invoke(@RequestHeader(value = "X-API-Key", required = false) String key,
            @RequestBody Map<String, Object> body) {
        if (key == null || !MessageDigest.isEqual(digest(key), KEY)) {
            return ResponseEntity.status(401).body(Map.of("error", Map.of("code", "unauthorized")));
        }
        if (!(body.get("state") instanceof Map<?, ?> state) || !(state.get("question") instanceof String q)) {
            return ResponseEntity.status(422).body(Map.of("error", Map.of("code", "invalid_state")));
        }
        Map<String, Object> st = new LinkedHashMap<>();
        st.put("question", q);
        st.put("category", state.get("category") instanceof String c ? c : "general");
        st.put("category", q.toLowerCase().contains("invoice") ? "billing" : "general");
        st.put("answer", "billing".equals(st.get("category"))
                ? "Billing team will answer: " + q
                : "General answer to: " + q);
        return ResponseEntity.ok(Map.of("result", st));
    }
}
