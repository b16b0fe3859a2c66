//! `src/test/java/.../GraphHttpTests.java`: the generated service's own
//! tests. They start it on a random port and drive the graph over HTTP;
//! model and HTTP tool calls go to a stub server the test starts itself.

use serde_json::{json, Value};
use svc_backend_sdk::ir::{Auth, Document};
use svc_backend_sdk::samples::{bad_requests, sample_state, tool_reply};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::quote;
use crate::project::legacy_field;

pub fn http_tests(doc: &Document, pkg: &str) -> String {
    let auth = doc.security.auth != Auth::None;
    let llm = doc.has_llm_nodes();
    let http: Vec<&str> = doc.http_tools().map(|(id, _)| id).collect();
    let connector_env = svc_backend_sdk::connectors::env_refs(doc);
    let stub = llm || !http.is_empty() || !connector_env.is_empty();
    let sample = Value::Object(sample_state(doc));
    let envelope = json!({ "state": sample }).to_string();

    let mut w = CodeWriter::spaces();
    w.line(format!("package com.svc.{pkg};")).blank();
    let mut imports = vec![
        "import static org.junit.jupiter.api.Assertions.assertEquals;",
        "import static org.junit.jupiter.api.Assertions.assertFalse;",
        "import static org.junit.jupiter.api.Assertions.assertTrue;",
        "",
        "import com.fasterxml.jackson.databind.ObjectMapper;",
        "import java.net.URI;",
        "import java.net.http.HttpClient;",
        "import java.net.http.HttpRequest;",
        "import java.net.http.HttpResponse;",
        "import java.util.List;",
        "import java.util.Map;",
        "import org.junit.jupiter.api.Test;",
        "import org.springframework.boot.test.context.SpringBootTest;",
        "import org.springframework.boot.test.web.server.LocalServerPort;",
    ];
    if stub {
        imports.extend([
            "import com.sun.net.httpserver.HttpServer;",
            "import java.io.IOException;",
            "import java.net.InetSocketAddress;",
            "import java.nio.charset.StandardCharsets;",
            "import org.junit.jupiter.api.AfterAll;",
            "import org.springframework.test.context.DynamicPropertyRegistry;",
            "import org.springframework.test.context.DynamicPropertySource;",
        ]);
    }
    let (statics, mut rest): (Vec<&str>, Vec<&str>) = imports
        .into_iter()
        .partition(|i| i.starts_with("import static"));
    rest.retain(|i| !i.is_empty());
    rest.sort();
    for i in &statics {
        w.line(*i);
    }
    w.blank();
    for i in &rest {
        w.line(*i);
    }
    w.blank();

    w.line("/** Drives the generated service over HTTP through the svc contract. */");
    w.line("@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,");
    w.line("        properties = {\"svc.security.key=\" + GraphHttpTests.KEY})");
    w.block("class GraphHttpTests {", "}", |w| {
        w.line("static final String KEY = \"test-credential-0123\";");
        w.line("private static final ObjectMapper JSON = new ObjectMapper();");
        w.line("private final HttpClient client = HttpClient.newHttpClient();").blank();
        w.line("@LocalServerPort");
        w.line("private int port;").blank();
        if stub {
            w.line("private static HttpServer stub;").blank();
            w.line("/** Model and HTTP tool calls go to a stub on loopback, never to the network. */");
            w.line("@DynamicPropertySource");
            w.block("static void upstream(DynamicPropertyRegistry registry) throws IOException {", "}", |w| {
                w.line("stub = HttpServer.create(new InetSocketAddress(\"127.0.0.1\", 0), 0);");
                w.line("stub.createContext(\"/v1/chat/completions\", exchange -> reply(exchange,");
                w.indent().indent()
                    .line("\"{\\\"choices\\\":[{\\\"message\\\":{\\\"role\\\":\\\"assistant\\\",\\\"content\\\":\\\"first idea\\\\nsecond idea\\\"}}]}\"));")
                    .dedent().dedent();
                for id in &http {
                    w.line(format!(
                        "stub.createContext({}, exchange -> reply(exchange, {}));",
                        quote(&format!("/tools/{id}")),
                        quote(&tool_reply(doc, id).to_string())
                    ));
                }
                let mut connector_nodes: Vec<&str> = connector_env.iter().map(|(n, _)| n.as_str()).collect();
                connector_nodes.dedup();
                for node in connector_nodes {
                    w.line(format!(
                        "stub.createContext({}, exchange -> reply(exchange, \"{{}}\"));",
                        quote(&format!("/connectors/{node}"))
                    ));
                }
                w.line("stub.start();");
                w.line("String base = \"http://127.0.0.1:\" + stub.getAddress().getPort();");
                // Connector code resolves `env:NAME` from the system property first.
                for (node, var) in &connector_env {
                    w.line(format!(
                        "System.setProperty({}, base + {});",
                        quote(var),
                        quote(&format!("/connectors/{node}"))
                    ));
                }
                if llm {
                    w.line("registry.add(\"svc.llm.base-url\", () -> base + \"/v1\");");
                }
                for id in &http {
                    w.line(format!(
                        "registry.add({}, () -> base + {});",
                        quote(&format!("svc.tools.{id}.endpoint")),
                        quote(&format!("/tools/{id}"))
                    ));
                }
            });
            w.blank();
            w.block("private static void reply(com.sun.net.httpserver.HttpExchange exchange, String body) throws IOException {", "}", |w| {
                w.line("exchange.getRequestBody().readAllBytes();");
                w.line("byte[] bytes = body.getBytes(StandardCharsets.UTF_8);");
                w.line("exchange.getResponseHeaders().set(\"Content-Type\", \"application/json\");");
                w.line("exchange.sendResponseHeaders(200, bytes.length);");
                w.line("exchange.getResponseBody().write(bytes);");
                w.line("exchange.close();");
            });
            w.blank();
            w.line("@AfterAll");
            w.block("static void stopStub() {", "}", |w| {
                w.line("stub.stop(0);");
            });
            w.blank();
        }
        w.line("private record Reply(int status, Map<String, Object> body, HttpResponse<String> raw) {");
        w.line("}").blank();
        w.block(
            "private Reply send(String method, String path, String contentType, String body, String key) throws Exception {",
            "}",
            |w| {
                w.line("HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(\"http://127.0.0.1:\" + port + path))");
                w.indent().indent().line(".method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));").dedent().dedent();
                w.block("if (contentType != null) {", "}", |w| {
                    w.line("request.header(\"Content-Type\", contentType);");
                });
                w.block("if (key != null) {", "}", |w| {
                    w.line("request.header(\"X-API-Key\", key);");
                });
                w.line("HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());");
                w.line("assertEquals(\"application/json\", response.headers().firstValue(\"Content-Type\").orElse(\"\"), path);");
                w.line("@SuppressWarnings(\"unchecked\")");
                w.line("Map<String, Object> parsed = JSON.readValue(response.body(), Map.class);");
                w.line("return new Reply(response.statusCode(), parsed, response);");
            },
        );
        w.blank();
        w.line("@SuppressWarnings(\"unchecked\")");
        w.block("private static Map<String, Object> error(Reply r) {", "}", |w| {
            w.line("return (Map<String, Object>) r.body().get(\"error\");");
        });
        w.blank();
        w.line("@Test");
        w.block("void healthNeedsNoCredential() throws Exception {", "}", |w| {
            w.line("Reply r = send(\"GET\", \"/health\", null, null, null);");
            w.line("assertEquals(200, r.status());");
            w.line("assertEquals(Map.of(\"status\", \"ok\"), r.body());");
        });
        w.blank();
        w.line("@Test");
        w.block("void unknownPathAndWrongMethod() throws Exception {", "}", |w| {
            w.line("Reply missing = send(\"GET\", \"/nowhere\", null, null, KEY);");
            w.line("assertEquals(404, missing.status());");
            w.line("assertEquals(\"not_found\", error(missing).get(\"code\"));");
            w.line("Reply wrongMethod = send(\"GET\", \"/invoke\", null, null, KEY);");
            w.line("assertEquals(405, wrongMethod.status());");
            w.line("assertEquals(\"method_not_allowed\", error(wrongMethod).get(\"code\"));");
        });
        w.blank();
        if auth {
            w.line("@Test");
            w.block("void credentialIsRequired() throws Exception {", "}", |w| {
                w.line(format!("String body = {};", quote(&envelope)));
                w.block("for (String key : new String[] {null, \"wrong-credential\"}) {", "}", |w| {
                    w.line("Reply r = send(\"POST\", \"/invoke\", \"application/json\", body, key);");
                    w.line("assertEquals(401, r.status());");
                    w.line("assertEquals(\"unauthorized\", error(r).get(\"code\"));");
                    w.line("assertFalse(r.raw().body().contains(\"wrong-credential\"));");
                });
            });
            w.blank();
        }
        let cases = bad_requests(doc);
        w.line("@Test");
        w.block("void badRequests() throws Exception {", "}", |w| {
            w.line("List<String[]> cases = List.of(");
            w.indent().indent();
            let n = cases.len();
            for (i, c) in cases.iter().enumerate() {
                w.line(format!(
                    "new String[] {{{}, {}, {}, \"{}\", {}, {}}}{}",
                    quote(&c.name),
                    quote(&c.content_type),
                    quote(&c.body),
                    c.status,
                    quote(&c.code),
                    quote(c.field.as_deref().unwrap_or_default()),
                    if i + 1 < n { "," } else { "" }
                ));
            }
            w.dedent().dedent();
            w.line(");");
            w.block("for (String[] c : cases) {", "}", |w| {
                w.line("Reply r = send(\"POST\", \"/invoke\", c[1], c[2], KEY);");
                w.line("assertEquals(Integer.parseInt(c[3]), r.status(), c[0]);");
                w.line("assertEquals(c[4], error(r).get(\"code\"), c[0]);");
                w.block("if (!c[5].isEmpty()) {", "}", |w| {
                    w.line("@SuppressWarnings(\"unchecked\")");
                    w.line("Map<String, Object> details = (Map<String, Object>) error(r).get(\"details\");");
                    w.line("assertEquals(c[5], details.get(\"field\"), c[0]);");
                });
            });
        });
        w.blank();
        w.line("@Test");
        w.block("void bodyOverOneMiBIsRefused() throws Exception {", "}", |w| {
            w.line("String body = \"{\\\"state\\\": {\\\"x\\\": \\\"\" + \"a\".repeat(1 << 20) + \"\\\"}}\";");
            w.line("Reply r = send(\"POST\", \"/invoke\", \"application/json\", body, KEY);");
            w.line("assertEquals(413, r.status());");
            w.line("assertEquals(\"payload_too_large\", error(r).get(\"code\"));");
        });
        w.blank();
        let fields: Vec<String> = doc.logical.state.iter().map(|f| quote(&f.name)).collect();
        w.line("/** Runs the graph on a state with every required field. */");
        w.line("@Test");
        w.block("void invokeRunsTheGraph() throws Exception {", "}", |w| {
            w.line(format!("Reply r = send(\"POST\", \"/invoke\", \"application/json\", {}, KEY);", quote(&envelope)));
            w.line("assertEquals(200, r.status(), r.raw().body());");
            w.line("@SuppressWarnings(\"unchecked\")");
            w.line("Map<String, Object> result = (Map<String, Object>) r.body().get(\"result\");");
            w.block(format!("for (String field : List.of({})) {{", fields.join(", ")), "}", |w| {
                w.line("assertTrue(result.containsKey(field), field);");
            });
        });
        if let Some(field) = legacy_field(doc) {
            let only_required = doc.logical.state.iter().filter(|f| f.required).count() == 1;
            if only_required {
                w.blank();
                w.line("/** The legacy form fills the first required string field. */");
                w.line("@Test");
                w.block("void legacyInputForm() throws Exception {", "}", |w| {
                    w.line("Reply r = send(\"POST\", \"/invoke\", \"application/json\", \"{\\\"input\\\": \\\"example\\\"}\", KEY);");
                    w.line("assertEquals(200, r.status(), r.raw().body());");
                    w.line("@SuppressWarnings(\"unchecked\")");
                    w.line("Map<String, Object> state = (Map<String, Object>) r.body().get(\"state\");");
                    w.line(format!("assertEquals(\"example\", state.get({}));", quote(field)));
                    w.line("assertTrue(r.body().containsKey(\"output\"));");
                });
            }
        }
    });
    w.finish()
}
