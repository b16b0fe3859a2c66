package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** The stand-in model of the cases' runner (SvcCases): usage as scripted or counted, a reply cut halfway. */
class SvcCasesModelTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Map<String, Object> call(boolean stream) {
        return Map.of("model", "m", "stream", stream,
                "messages", List.of(Map.of("role", "user", "content", "three words here")));
    }

    @Test
    @SuppressWarnings("unchecked")
    void usageIsTheScriptedOneElseTheWordsCounted() throws IOException {
        Map<String, Object> reply = Map.of("content", "two words", "usage", Map.of("inputTokens", 30, "outputTokens", 4));
        SvcCasesModel.Body whole = SvcCasesModel.completion(call(false), reply, 1);
        Map<String, Object> usage = (Map<String, Object>) JSON.readValue(whole.text(), Map.class).get("usage");
        assertEquals(Map.of("prompt_tokens", 30, "completion_tokens", 4, "total_tokens", 34), usage);
        SvcCasesModel.Body streamed = SvcCasesModel.completion(call(true), Map.of("content", "two words"), 1);
        assertEquals("text/event-stream", streamed.type());
        assertTrue(streamed.text().contains("\"usage\":{") && streamed.text().contains("\"prompt_tokens\":3"),
                streamed.text());
        assertTrue(streamed.text().contains("\"completion_tokens\":2"), streamed.text());
        assertEquals(3, SvcCasesModel.words(" a\tb\u00a0c\n"));
        assertEquals(0, SvcCasesModel.words("  "));
    }

    @Test
    void aCutReplyPromisesMoreThanItSendsAndCloses() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", exchange -> {
            boolean stream = exchange.getRequestURI().getPath().endsWith("stream");
            exchange.getRequestBody().readAllBytes();
            SvcCasesModel.cut(exchange, SvcCasesModel.completion(call(stream), Map.of(), 0));
        });
        server.start();
        try {
            for (String path : List.of("/json", "/stream")) {
                String got = exchange(server.getAddress().getPort(), path);
                String head = got.substring(0, got.indexOf("\r\n\r\n"));
                String body = got.substring(head.length() + 4);
                int promised = Integer.parseInt(head.replaceAll("(?s).*[Cc]ontent-[Ll]ength: (\\d+).*", "$1"));
                assertTrue(!body.isEmpty() && body.length() < promised, path + ": " + got);
                if (path.equals("/json")) {
                    assertEquals(promised / 2, body.length(), got);
                } else {
                    // The first event alone, the role: no token reaches the service.
                    assertTrue(body.endsWith("\n\n") && body.indexOf("\n\n") == body.length() - 2, got);
                    assertTrue(body.contains("\"role\":\"assistant\""), got);
                }
            }
        } finally {
            server.stop(0);
        }
    }

    /** A request's whole answer, read until the server closes the connection. */
    private static String exchange(int port, String path) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
