package dev.svc.runtime;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports McpServers' failed start-up as Spring Boot reports a failed start: each problem
 * on its own line, without a stack trace (registered in META-INF/spring.factories).
 */
public final class McpStartFailureAnalyzer extends AbstractFailureAnalyzer<McpServers.StartFailed> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, McpServers.StartFailed cause) {
        return new FailureAnalysis("The graph's MCP servers are not ready:\n\n    - " + String.join("\n    - ", cause.problems()),
                "Fix each problem above as it says, then start the service again.", cause);
    }
}
