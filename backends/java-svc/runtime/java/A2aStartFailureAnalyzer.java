package dev.svc.runtime;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a token of settings.a2a.tokens that A2aCredentials cannot read (an unset or empty
 * variable, one token for two callers) as Spring Boot reports a failed start: the entry and
 * the variable, without a stack trace (registered in META-INF/spring.factories).
 */
public final class A2aStartFailureAnalyzer extends AbstractFailureAnalyzer<A2aCredentials.TokenRefused> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, A2aCredentials.TokenRefused cause) {
        return new FailureAnalysis("The A2A agent's callers are not ready: " + cause.getMessage(),
                "Set each variable of settings.a2a.tokens to its caller's token, then start the service again.",
                cause);
    }
}
