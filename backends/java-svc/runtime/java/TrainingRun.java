package dev.svc.runtime;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The training run of the build's AOT cache (or CDS archive), with
 * -Dsvc.training-run=true: the service starts, answers one request of each
 * kind it serves first (GET /health, GET /openapi.json, and a POST /invoke
 * whose state has an unknown field, so it is refused with 422 before any node
 * runs or anything upstream is called), then stops. The classes and method
 * profiles of serving a request are then in the cache as well as those of
 * starting, and a service started from it answers its first request sooner
 * (bench/startup.py). A first answer other than the contract's fails the
 * build. The build runs it with OTEL_SDK_DISABLED=true: its requests are no
 * one's, and their spans must not reach a collector.
 */
public final class TrainingRun {
    private TrainingRun() {
    }

    /** {@code scheme} is security.auth ("api_key" or "bearer": how {@code key} is sent; "none"). */
    public static void exercise(ConfigurableApplicationContext context, String scheme, String key) {
        int status = 0;
        try {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            String base = "http://127.0.0.1:" + port;
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            expect(client, HttpRequest.newBuilder(URI.create(base + "/health")).GET(), 200);
            expect(client, HttpRequest.newBuilder(URI.create(base + "/openapi.json")).GET(), 200);
            HttpRequest.Builder invoke = HttpRequest.newBuilder(URI.create(base + "/invoke"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"state\": {\"svc-training-run\": true}}"));
            if ("bearer".equals(scheme)) {
                invoke.header("Authorization", "Bearer " + key);
            } else if ("api_key".equals(scheme)) {
                invoke.header("X-API-Key", key);
            }
            expect(client, invoke, 422);
        } catch (IOException | RuntimeException e) {
            // Whatever failed, the run ends (Tomcat's threads would keep the build waiting).
            System.err.println("error: the training run: " + e);
            status = 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            status = 1;
        }
        int exit = SpringApplication.exit(context);
        System.exit(status != 0 ? status : exit);
    }

    private static void expect(HttpClient client, HttpRequest.Builder request, int status)
            throws IOException, InterruptedException {
        HttpRequest r = request.timeout(Duration.ofSeconds(30)).build();
        HttpResponse<String> response = client.send(r, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != status) {
            throw new IllegalStateException(r.method() + " " + r.uri().getPath() + " answered "
                    + response.statusCode() + ", not " + status + ": " + response.body());
        }
    }
}
