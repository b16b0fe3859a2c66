package dev.svc.runtime;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;

/**
 * The container's health check (the Dockerfile's HEALTHCHECK; the JRE image
 * has no curl): exits 0 when GET /health on this machine answers 200 within
 * two seconds. The port is SVC_PORT, else the first argument.
 */
public final class HealthCheck {
    private HealthCheck() {
    }

    public static void main(String[] args) {
        String port = System.getenv().getOrDefault("SVC_PORT", "");
        if (port.isEmpty()) {
            port = args.length > 0 ? args[0] : "8000";
        }
        int status;
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + "/health")
                    .toURL().openConnection();
            c.setConnectTimeout(2000);
            c.setReadTimeout(2000);
            status = c.getResponseCode();
        } catch (IOException | IllegalArgumentException e) {
            status = -1;
        }
        System.exit(status == 200 ? 0 : 1);
    }
}
