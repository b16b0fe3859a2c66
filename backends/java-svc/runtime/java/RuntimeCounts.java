package dev.svc.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.management.HotSpotDiagnosticMXBean;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * GET /debug/runtime when SVC_DEBUG_RUNTIME=1 (off: the path is unknown): the
 * live threads of the process and how many of them are virtual (runs and
 * requests run on virtual threads, which Thread.getAllStackTraces leaves
 * out), so that an operator or a test can see that abandoned requests leave
 * nothing running. Platform threads vary on their own (the virtual-thread
 * scheduler keeps idle carriers for a while); virtual ones end with their work.
 */
@RestController
public class RuntimeCounts {
    private final boolean enabled;
    private final AuthSettings auth;

    public RuntimeCounts(@Value("${SVC_DEBUG_RUNTIME:}") String enabled, AuthSettings auth) {
        this.enabled = "1".equals(enabled);
        this.auth = auth;
    }

    @GetMapping("/debug/runtime")
    public ResponseEntity<byte[]> counts(HttpServletRequest request) throws IOException {
        if (!enabled) {
            return GraphController.json(404,
                    new SvcError(404, "not_found", "no such path: " + request.getRequestURI(), null).body());
        }
        if (!auth.accepts(request)) {
            return GraphController.refuse(auth.challenge());
        }
        int[] counts = liveThreads();
        return GraphController.json(200, Map.of("threads", counts[0], "virtualThreads", counts[1]));
    }

    /**
     * All threads and the virtual ones, from a JSON thread dump (JDK 21+), the one
     * API that lists virtual threads (the JDK marks them "virtual": true).
     */
    private static int[] liveThreads() throws IOException {
        Path dir = Files.createTempDirectory("svc-threads");
        Path dump = dir.resolve("threads.json");
        try {
            ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                    .dumpThreads(dump.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
            int all = 0;
            int virtual = 0;
            for (JsonNode container : GraphController.JSON.readTree(dump.toFile())
                    .path("threadDump").path("threadContainers")) {
                for (JsonNode thread : container.path("threads")) {
                    all++;
                    if (thread.path("virtual").asBoolean(false)) {
                        virtual++;
                    }
                }
            }
            return new int[] {all, virtual};
        } finally {
            Files.deleteIfExists(dump);
            Files.deleteIfExists(dir);
        }
    }
}
