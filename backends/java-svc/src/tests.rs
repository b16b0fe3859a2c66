//! `src/test/java/.../GraphHttpTests.java`: the generated service's own
//! tests. They start it on a random port and drive the graph over HTTP;
//! model and HTTP tool calls go to a stub server the test starts itself.

use serde_json::{json, Value};
use svc_backend_sdk::environment::remote_service_env;
use svc_backend_sdk::ir::{
    AgentKind, Auth, CheckpointerKind, Document, NodeKind, RagNode, Retriever,
};
use svc_backend_sdk::samples::{
    bad_requests, calls_provider, hitl_answers, messages_reply, model_reply, model_stand_ins,
    sample_state, tool_reply,
};
use svc_backend_sdk::subgraphs::{all_graphs, any_graph};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{quote, runtime};
use crate::project::legacy_field;

const ASSERTIONS: &str = "org.junit.jupiter.api.Assertions";

/// The variables of each embedding retriever's API (base URL, key), once
/// each, over every graph.
fn embedding_envs(doc: &Document) -> Vec<(&str, &str)> {
    let mut envs: Vec<(&str, &str)> = all_graphs(doc)
        .into_iter()
        .flat_map(|(d, _)| &d.logical.nodes)
        .filter_map(|n| match &n.kind {
            NodeKind::Rag(RagNode {
                retriever:
                    Retriever::Embedding {
                        base_url_env,
                        api_key_env,
                        ..
                    },
                ..
            }) => Some((
                base_url_env.as_deref().unwrap_or("OPENAI_BASE_URL"),
                api_key_env.as_deref().unwrap_or("OPENAI_API_KEY"),
            )),
            _ => None,
        })
        .collect();
    envs.dedup();
    envs
}

/// Every graph's HTTP tools: the registered name (the stub's path
/// `/tools/<name>` and the key `svc.tools.<name>.endpoint`) and the reply.
fn http_tools(doc: &Document) -> Vec<(String, Value)> {
    all_graphs(doc)
        .into_iter()
        .flat_map(|(d, scope)| {
            d.http_tools()
                .map(|(id, _)| (scope.name(id), tool_reply(d, id)))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every graph's A2A agents: the registered name and the variable of its
/// credential, if any.
fn a2a_agents(doc: &Document) -> Vec<(String, Option<String>)> {
    all_graphs(doc)
        .into_iter()
        .flat_map(|(d, scope)| {
            d.logical
                .agents
                .iter()
                .filter_map(|a| match &a.kind {
                    AgentKind::A2a { service, .. } => Some((
                        scope.name(&a.id),
                        service.as_ref().map(|s| remote_service_env(s, None).1),
                    )),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

pub fn http_tests(doc: &Document, pkg: &str) -> String {
    let auth = doc.security.auth != Auth::None;
    let bearer = doc.security.auth == Auth::Bearer;
    let llm = any_graph(doc, Document::has_llm_nodes);
    let http = http_tools(doc);
    let connector_env = svc_backend_sdk::connectors::env_refs(doc);
    let embeddings = embedding_envs(doc);
    let a2a = a2a_agents(doc);
    let stub = llm
        || !http.is_empty()
        || !connector_env.is_empty()
        || !embeddings.is_empty()
        || !a2a.is_empty();
    let sample = Value::Object(sample_state(doc));
    let envelope = json!({ "state": sample }).to_string();
    let checkpointer = &doc.logical.settings.checkpointer;
    let threaded = checkpointer.kind != CheckpointerKind::None;

    let mut w = CodeWriter::java();
    let assert_equals = w.static_name(ASSERTIONS, "assertEquals");
    // Imported even when no test uses it (only the credential test does):
    // the output keeps today's imports.
    let assert_false = w.static_name(ASSERTIONS, "assertFalse");
    let assert_true = w.static_name(ASSERTIONS, "assertTrue");
    let object_mapper = w.name("com.fasterxml.jackson.databind", "ObjectMapper");
    let uri = w.name("java.net", "URI");
    let http_client = w.name("java.net.http", "HttpClient");
    let http_request = w.name("java.net.http", "HttpRequest");
    let http_response = w.name("java.net.http", "HttpResponse");
    let list = w.name("java.util", "List");
    let map = w.name("java.util", "Map");
    let test = w.name("org.junit.jupiter.api", "Test");
    let spring_boot_test = w.name("org.springframework.boot.test.context", "SpringBootTest");
    let local_server_port = w.name(
        "org.springframework.boot.test.web.server",
        "LocalServerPort",
    );

    w.line("/** Drives the generated service over HTTP through the svc contract. */");
    w.line(format!(
        "@{spring_boot_test}(webEnvironment = {spring_boot_test}.WebEnvironment.RANDOM_PORT,"
    ));
    w.line("        properties = {\"svc.security.key=\" + GraphHttpTests.KEY})");
    w.block("class GraphHttpTests {", "}", |w| {
        w.line("static final String KEY = \"test-credential-0123\";");
        w.line(format!("private static final {object_mapper} JSON = new {object_mapper}();"));
        w.line(format!("private final {http_client} client = {http_client}.newHttpClient();")).blank();
        w.line(format!("@{local_server_port}"));
        w.line("private int port;").blank();
        if svc_backend_sdk::subgraphs::calls_mcp_servers(doc) {
            // Spring 6.2's @TestBean replaces the bean: the real servers never start.
            let test_bean = w.name("org.springframework.test.context.bean.override.convention", "TestBean");
            let servers = runtime(&mut *w, "McpServers");
            let stub = runtime(&mut *w, "McpStub");
            let config = w.name(&format!("com.svc.{pkg}.config"), "McpConfig");
            w.line("/** The MCP servers are stubs (McpStub), started with the context. */");
            w.line(format!("@{test_bean}"));
            w.line(format!("private {servers} mcpServers;"));
            w.blank();
            w.block(format!("static {servers} mcpServers() {{"), "}", |w| {
                w.line(format!("return {stub}.servers({config}.SERVERS, {config}.TOOLS);"));
            });
            w.blank();
        }
        if checkpointer.env().is_some() {
            // The service the test starts opens the graph's own database.
            let before_all = w.name("org.junit.jupiter.api", "BeforeAll");
            w.line("/** The checkpointer's database, before the service starts. */");
            w.line(format!("@{before_all}"));
            w.block("static void database() throws Exception {", "}", |w| {
                w.line("TestDatabase.ready();");
            });
            w.blank();
        }
        if stub {
            let http_server = w.name("com.sun.net.httpserver", "HttpServer");
            let io_exception = w.name("java.io", "IOException");
            let inet_socket_address = w.name("java.net", "InetSocketAddress");
            let standard_charsets = w.name("java.nio.charset", "StandardCharsets");
            let after_all = w.name("org.junit.jupiter.api", "AfterAll");
            let dynamic_property_registry =
                w.name("org.springframework.test.context", "DynamicPropertyRegistry");
            let dynamic_property_source =
                w.name("org.springframework.test.context", "DynamicPropertySource");
            w.line(format!("private static {http_server} stub;")).blank();
            w.line("/** Model and HTTP tool calls go to a stub on loopback, never to the network. */");
            w.line(format!("@{dynamic_property_source}"));
            w.block(format!("static void upstream({dynamic_property_registry} registry) throws {io_exception} {{"), "}", |w| {
                w.line(format!("stub = {http_server}.create(new {inet_socket_address}(\"127.0.0.1\", 0), 0);"));
                w.line("stub.createContext(\"/v1/chat/completions\", exchange -> reply(exchange,");
                w.indent().indent()
                    .line(format!("{}));", quote(&model_reply(doc).to_string())))
                    .dedent().dedent();
                if calls_provider(doc, "anthropic") {
                    w.line("stub.createContext(\"/v1/messages\", exchange -> reply(exchange,");
                    w.indent().indent()
                        .line(format!("{}));", quote(&messages_reply(doc).to_string())))
                        .dedent().dedent();
                }
                for (name, reply) in &http {
                    w.line(format!(
                        "stub.createContext({}, exchange -> reply(exchange, {}));",
                        quote(&format!("/tools/{name}")),
                        quote(&reply.to_string())
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
                if !embeddings.is_empty() {
                    // An embedding per text: [1, its length].
                    let list = w.name("java.util", "List");
                    let array_list = w.name("java.util", "ArrayList");
                    w.line("stub.createContext(\"/v1/embeddings\", exchange -> {");
                    w.indent();
                    w.line("byte[] asked = exchange.getRequestBody().readAllBytes();");
                    w.line(format!("{list}<?> input = ({list}<?>) JSON.readValue(asked, {map}.class).get(\"input\");"));
                    w.line(format!("{list}<Object> data = new {array_list}<>();"));
                    w.block("for (int i = 0; i < input.size(); i++) {", "}", |w| {
                        w.line(format!("data.add({map}.of(\"index\", i, \"embedding\", {list}.of(1.0, (double) String.valueOf(input.get(i)).length())));"));
                    });
                    w.line(format!("reply(exchange, JSON.writeValueAsString({map}.of(\"data\", data)));"));
                    w.dedent();
                    w.line("});");
                }
                if !a2a.is_empty() {
                    // A stand-in A2A agent: its card names its JSON-RPC endpoint,
                    // which answers every message with one text message.
                    let list = w.name("java.util", "List");
                    w.line("String stubRpc = \"http://127.0.0.1:\" + stub.getAddress().getPort() + \"/a2a-stub/rpc\";");
                    w.line(format!("String stubCard = JSON.writeValueAsString({map}.of(\"name\", \"stub\", \"supportedInterfaces\","));
                    w.indent().indent()
                        .line(format!("{list}.of({map}.of(\"url\", stubRpc, \"protocolBinding\", \"JSONRPC\", \"protocolVersion\", \"1.0\"))));"))
                        .dedent().dedent();
                    w.line("stub.createContext(\"/a2a-stub/card\", exchange -> reply(exchange, stubCard));");
                    w.line("stub.createContext(\"/a2a-stub/rpc\", exchange -> {");
                    w.indent();
                    w.line(format!("Object id = JSON.readValue(exchange.getRequestBody().readAllBytes(), {map}.class).get(\"id\");"));
                    w.line(format!("{map}<String, Object> message = {map}.of(\"messageId\", \"m\", \"role\", \"ROLE_AGENT\","));
                    w.indent().indent()
                        .line(format!("\"parts\", {list}.of({map}.of(\"text\", \"stub reply\")));"))
                        .dedent().dedent();
                    w.line(format!("reply(exchange, JSON.writeValueAsString({map}.of(\"jsonrpc\", \"2.0\", \"id\", id,"));
                    w.indent().indent()
                        .line(format!("\"result\", {map}.of(\"message\", message))));"))
                        .dedent().dedent();
                    w.dedent();
                    w.line("});");
                }
                w.line("stub.start();");
                w.line("String base = \"http://127.0.0.1:\" + stub.getAddress().getPort();");
                for (name, key_env) in &a2a {
                    w.line(format!(
                        "System.setProperty({}, base + \"/a2a-stub/card\");",
                        quote(&format!("svc.agents.{name}.card-url"))
                    ));
                    if let Some(var) = key_env {
                        w.line(format!("System.setProperty({}, \"stub-key\");", quote(var)));
                    }
                }
                // The rag nodes' embedding APIs: the runtime reads the variables'
                // system properties first, and builds the indexes at start-up.
                for (url, key) in &embeddings {
                    w.line(format!("System.setProperty({}, base + \"/v1\");", quote(url)));
                    w.line(format!("System.setProperty({}, \"stub-key\");", quote(key)));
                }
                // Connector code resolves `env:NAME` from the system property first.
                for (node, var) in &connector_env {
                    w.line(format!(
                        "System.setProperty({}, base + {});",
                        quote(var),
                        quote(&format!("/connectors/{node}"))
                    ));
                }
                // Each provider's models read their own base URL variable.
                for (var, _, path) in model_stand_ins(doc) {
                    w.line(format!("registry.add({}, () -> base + {});", quote(&var), quote(path)));
                }
                for (name, _) in &http {
                    w.line(format!(
                        "registry.add({}, () -> base + {});",
                        quote(&format!("svc.tools.{name}.endpoint")),
                        quote(&format!("/tools/{name}"))
                    ));
                }
            });
            w.blank();
            w.block(format!("private static void reply(com.sun.net.httpserver.HttpExchange exchange, String body) throws {io_exception} {{"), "}", |w| {
                w.line("exchange.getRequestBody().readAllBytes();");
                w.line(format!("byte[] bytes = body.getBytes({standard_charsets}.UTF_8);"));
                w.line("exchange.getResponseHeaders().set(\"Content-Type\", \"application/json\");");
                w.line("exchange.sendResponseHeaders(200, bytes.length);");
                w.line("exchange.getResponseBody().write(bytes);");
                w.line("exchange.close();");
            });
            w.blank();
            w.line(format!("@{after_all}"));
            w.block("static void stopStub() {", "}", |w| {
                w.line("stub.stop(0);");
            });
            w.blank();
        }
        w.line(format!("private record Reply(int status, {map}<String, Object> body, {http_response}<String> raw) {{"));
        w.line("}").blank();
        w.block(
            "private Reply send(String method, String path, String contentType, String body, String key) throws Exception {",
            "}",
            |w| {
                w.line(format!("{http_request}.Builder request = {http_request}.newBuilder({uri}.create(\"http://127.0.0.1:\" + port + path))"));
                w.indent().indent().line(format!(".method(method, body == null ? {http_request}.BodyPublishers.noBody() : {http_request}.BodyPublishers.ofString(body));")).dedent().dedent();
                w.block("if (contentType != null) {", "}", |w| {
                    w.line("request.header(\"Content-Type\", contentType);");
                });
                w.block("if (key != null) {", "}", |w| {
                    w.line(if bearer {
                        "request.header(\"Authorization\", \"Bearer \" + key);"
                    } else {
                        "request.header(\"X-API-Key\", key);"
                    });
                });
                w.line(format!("{http_response}<String> response = client.send(request.build(), {http_response}.BodyHandlers.ofString());"));
                w.line(format!("{assert_equals}(\"application/json\", response.headers().firstValue(\"Content-Type\").orElse(\"\"), path);"));
                w.line("@SuppressWarnings(\"unchecked\")");
                w.line(format!("{map}<String, Object> parsed = JSON.readValue(response.body(), {map}.class);"));
                w.line("return new Reply(response.statusCode(), parsed, response);");
            },
        );
        w.blank();
        w.line("@SuppressWarnings(\"unchecked\")");
        w.block(format!("private static {map}<String, Object> error(Reply r) {{"), "}", |w| {
            w.line(format!("return ({map}<String, Object>) r.body().get(\"error\");"));
        });
        w.blank();
        w.line(format!("@{test}"));
        w.block("void healthNeedsNoCredential() throws Exception {", "}", |w| {
            w.line("Reply r = send(\"GET\", \"/health\", null, null, null);");
            w.line(format!("{assert_equals}(200, r.status());"));
            w.line(format!("{assert_equals}({map}.of(\"status\", \"ok\"), r.body());"));
        });
        w.blank();
        w.line(format!("@{test}"));
        w.block("void openApiIsPublicAndDescribesInvoke() throws Exception {", "}", |w| {
            w.line("Reply r = send(\"GET\", \"/openapi.json\", null, null, null);");
            w.line(format!("{assert_equals}(200, r.status());"));
            w.line(format!("{assert_equals}(\"3.1.0\", r.body().get(\"openapi\"));"));
            w.line(format!("{map}<?, ?> paths = ({map}<?, ?>) r.body().get(\"paths\");"));
            w.line(format!("{assert_true}(paths.containsKey(\"/invoke\"), paths::toString);"));
        });
        w.blank();
        w.line(format!("@{test}"));
        w.block("void unknownPathAndWrongMethod() throws Exception {", "}", |w| {
            w.line("Reply missing = send(\"GET\", \"/nowhere\", null, null, KEY);");
            w.line(format!("{assert_equals}(404, missing.status());"));
            w.line(format!("{assert_equals}(\"not_found\", error(missing).get(\"code\"));"));
            w.line("Reply wrongMethod = send(\"GET\", \"/invoke\", null, null, KEY);");
            w.line(format!("{assert_equals}(405, wrongMethod.status());"));
            w.line(format!("{assert_equals}(\"method_not_allowed\", error(wrongMethod).get(\"code\"));"));
        });
        w.blank();
        if auth {
            w.line(format!("@{test}"));
            w.block("void credentialIsRequired() throws Exception {", "}", |w| {
                w.line(format!("String body = {};", quote(&envelope)));
                w.block("for (String key : new String[] {null, \"wrong-credential\"}) {", "}", |w| {
                    w.line("Reply r = send(\"POST\", \"/invoke\", \"application/json\", body, key);");
                    w.line(format!("{assert_equals}(401, r.status());"));
                    w.line(format!("{assert_equals}(\"unauthorized\", error(r).get(\"code\"));"));
                    w.line(format!("{assert_false}(r.raw().body().contains(\"wrong-credential\"));"));
                    if bearer {
                        w.line(format!("{assert_equals}(\"Bearer\", r.raw().headers().firstValue(\"WWW-Authenticate\").orElse(\"\"));"));
                    }
                });
            });
            w.blank();
        }
        if bearer {
            w.line("/** The key in X-API-Key does not satisfy a bearer service. */");
            w.line(format!("@{test}"));
            w.block("void anApiKeyIsNotABearerToken() throws Exception {", "}", |w| {
                w.line(format!("{http_request} request = {http_request}.newBuilder({uri}.create(\"http://127.0.0.1:\" + port + \"/invoke\"))"));
                w.indent().indent();
                w.line(".header(\"Content-Type\", \"application/json\")");
                w.line(".header(\"X-API-Key\", KEY)");
                w.line(format!(".POST({http_request}.BodyPublishers.ofString({}))", quote(&envelope)));
                w.line(".build();");
                w.dedent().dedent();
                w.line(format!("{http_response}<String> r = client.send(request, {http_response}.BodyHandlers.ofString());"));
                w.line(format!("{assert_equals}(401, r.statusCode(), r.body());"));
                w.line(format!("{assert_equals}(\"Bearer\", r.headers().firstValue(\"WWW-Authenticate\").orElse(\"\"));"));
            });
            w.blank();
        }
        let cases = bad_requests(doc);
        w.line(format!("@{test}"));
        w.block("void badRequests() throws Exception {", "}", |w| {
            w.line(format!("{list}<String[]> cases = {list}.of("));
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
                w.line(format!("{assert_equals}(Integer.parseInt(c[3]), r.status(), c[0]);"));
                w.line(format!("{assert_equals}(c[4], error(r).get(\"code\"), c[0]);"));
                w.block("if (!c[5].isEmpty()) {", "}", |w| {
                    w.line("@SuppressWarnings(\"unchecked\")");
                    w.line(format!("{map}<String, Object> details = ({map}<String, Object>) error(r).get(\"details\");"));
                    w.line(format!("{assert_equals}(c[5], details.get(\"field\"), c[0]);"));
                });
            });
        });
        w.blank();
        w.line(format!("@{test}"));
        w.block("void bodyOverOneMiBIsRefused() throws Exception {", "}", |w| {
            w.line("String body = \"{\\\"state\\\": {\\\"x\\\": \\\"\" + \"a\".repeat(1 << 20) + \"\\\"}}\";");
            w.line("Reply r = send(\"POST\", \"/invoke\", \"application/json\", body, KEY);");
            w.line(format!("{assert_equals}(413, r.status());"));
            w.line(format!("{assert_equals}(\"payload_too_large\", error(r).get(\"code\"));"));
        });
        w.blank();
        let fields: Vec<String> = doc.logical.state.iter().map(|f| quote(&f.name)).collect();
        w.line(if threaded {
            "/** Runs the graph on a state with every required field, resuming each interrupt on its thread. */"
        } else {
            "/** Runs the graph on a state with every required field. */"
        });
        w.line(format!("@{test}"));
        w.block("void invokeRunsTheGraph() throws Exception {", "}", |w| {
            w.line(format!("Reply r = send(\"POST\", \"/invoke\", \"application/json\", {}, KEY);", quote(&envelope)));
            w.line(format!("{assert_equals}(200, r.status(), r.raw().body());"));
            if threaded {
                resume_each_interrupt(doc, w, &assert_equals, &assert_true, &map);
            }
            w.line("@SuppressWarnings(\"unchecked\")");
            w.line(format!("{map}<String, Object> result = ({map}<String, Object>) r.body().get(\"result\");"));
            w.block(format!("for (String field : {list}.of({})) {{", fields.join(", ")), "}", |w| {
                w.line(format!("{assert_true}(result.containsKey(field), field);"));
            });
        });
        if threaded {
            w.blank();
            w.line("/** A resume names a thread this service keeps. */");
            w.line(format!("@{test}"));
            w.block("void anUnknownThreadIsNotFound() throws Exception {", "}", |w| {
                w.line("Reply r = send(\"POST\", \"/invoke\", \"application/json\", \"{\\\"threadId\\\": \\\"svc-no-such-thread\\\", \\\"resume\\\": true}\", KEY);");
                w.line(format!("{assert_equals}(404, r.status(), r.raw().body());"));
                w.line(format!("{assert_equals}(\"thread_not_found\", error(r).get(\"code\"));"));
            });
            w.blank();
            // A thread's answer names the thread: the legacy answer has no room.
            w.line("/** A graph with a checkpointer has no legacy form: its answer names the thread. */");
            w.line(format!("@{test}"));
            w.block("void legacyInputFormIsRefused() throws Exception {", "}", |w| {
                w.line("Reply r = send(\"POST\", \"/invoke\", \"application/json\", \"{\\\"input\\\": \\\"example\\\"}\", KEY);");
                w.line(format!("{assert_equals}(400, r.status(), r.raw().body());"));
                w.line(format!("{assert_equals}(\"bad_request\", error(r).get(\"code\"));"));
            });
        } else if let Some(field) = legacy_field(doc) {
            let only_required = doc.logical.state.iter().filter(|f| f.required).count() == 1;
            if only_required {
                w.blank();
                w.line("/** The legacy form fills the first required string field. */");
                w.line(format!("@{test}"));
                w.block("void legacyInputForm() throws Exception {", "}", |w| {
                    w.line("Reply r = send(\"POST\", \"/invoke\", \"application/json\", \"{\\\"input\\\": \\\"example\\\"}\", KEY);");
                    w.line(format!("{assert_equals}(200, r.status(), r.raw().body());"));
                    w.line("@SuppressWarnings(\"unchecked\")");
                    w.line(format!("{map}<String, Object> state = ({map}<String, Object>) r.body().get(\"state\");"));
                    w.line(format!("{assert_equals}(\"example\", state.get({}));", quote(field)));
                    w.line(format!("{assert_true}(r.body().containsKey(\"output\"));"));
                });
            }
        }
        if doc.logical.settings.mcp.expose {
            mcp_endpoint_tests(doc, w, auth, threaded, &sample);
        }
    });
    w.finish_file(&format!("package com.svc.{pkg};\n\n"))
}

/// `/mcp` (settings.mcp.expose) through the official MCP Java SDK's client:
/// the graph is one tool with the state's schema, a call runs the graph, a
/// failed run is an error result with the envelope, and the credential and
/// methods are checked as on `/invoke`.
fn mcp_endpoint_tests(
    doc: &Document,
    w: &mut CodeWriter,
    auth: bool,
    threaded: bool,
    sample: &Value,
) {
    let assert_equals = w.static_name(ASSERTIONS, "assertEquals");
    let assert_false = w.static_name(ASSERTIONS, "assertFalse");
    let assert_true = w.static_name(ASSERTIONS, "assertTrue");
    let test = w.name("org.junit.jupiter.api", "Test");
    let map = w.name("java.util", "Map");
    let list = w.name("java.util", "List");
    let http_request = w.name("java.net.http", "HttpRequest");
    let duration = w.name("java.time", "Duration");
    let mcp_client = w.name("io.modelcontextprotocol.client", "McpClient");
    let sync_client = w.name("io.modelcontextprotocol.client", "McpSyncClient");
    let transport = w.name(
        "io.modelcontextprotocol.client.transport",
        "HttpClientStreamableHttpTransport",
    );
    let mapper = w.name(
        "io.modelcontextprotocol.json.jackson2",
        "JacksonMcpJsonMapper",
    );
    let schema = w.name("io.modelcontextprotocol.spec", "McpSchema");
    let endpoint = runtime(w, "McpEndpoint");
    let call = |w: &mut CodeWriter, var: &str, arguments: &str| {
        w.line(format!(
            "{schema}.CallToolResult {var} = client.callTool(new {schema}.CallToolRequest(GraphState.MCP_TOOL_NAME, {arguments}, null));"
        ));
    };
    w.blank();
    w.line("/** A client of the official MCP Java SDK on /mcp, with the credential. */");
    w.block(format!("private {sync_client} mcpClient() {{"), "}", |w| {
        w.line(format!(
            "{sync_client} client = {mcp_client}.sync({transport}.builder(\"http://127.0.0.1:\" + port)"
        ));
        w.indent().indent();
        w.line(".endpoint(\"/mcp\")");
        w.line(format!(
            ".requestBuilder({http_request}.newBuilder().header({}))",
            if doc.security.auth == Auth::Bearer {
                "\"Authorization\", \"Bearer \" + KEY"
            } else {
                "\"X-API-Key\", KEY"
            }
        ));
        w.line(format!(".jsonMapper(new {mapper}(JSON))"));
        w.line(".build())");
        w.line(format!(".requestTimeout({duration}.ofSeconds(30))"));
        w.line(".build();");
        w.dedent().dedent();
        w.line("client.initialize();");
        w.line("return client;");
    });
    w.blank();
    w.line("/** The graph is one tool, named and described by the state's schema. */");
    w.line(format!("@{test}"));
    w.block("void mcpOffersTheGraphAsOneTool() throws Exception {", "}", |w| {
        w.block(format!("try ({sync_client} client = mcpClient()) {{"), "}", |w| {
            w.line(format!("{assert_equals}(GraphState.NAME, client.getServerInfo().name());"));
            w.line(format!("{list}<{schema}.Tool> tools = client.listTools().tools();"));
            w.line(format!("{assert_equals}({list}.of(GraphState.MCP_TOOL_NAME), tools.stream().map({schema}.Tool::name).toList());"));
            w.line("// As the schema travels: JSON, read back by the client.");
            w.line(format!("Object input = JSON.readValue(JSON.writeValueAsString({endpoint}.stateSchema(GraphState.SCHEMA, false)), {map}.class);"));
            w.line(format!("{assert_equals}(input, tools.get(0).inputSchema());"));
            w.line(format!("Object output = JSON.readValue(JSON.writeValueAsString({endpoint}.stateSchema(GraphState.SCHEMA, true)), {map}.class);"));
            w.line(format!("{assert_equals}(output, tools.get(0).outputSchema());"));
        });
    });
    if !threaded {
        let fields: Vec<String> = doc.logical.state.iter().map(|f| quote(&f.name)).collect();
        w.blank();
        w.line("/** A call runs the graph on its arguments: the final state, as structured content and as text. */");
        w.line(format!("@{test}"));
        w.block("void mcpCallRunsTheGraph() throws Exception {", "}", |w| {
            w.block(format!("try ({sync_client} client = mcpClient()) {{"), "}", |w| {
                w.line("@SuppressWarnings(\"unchecked\")");
                w.line(format!(
                    "{map}<String, Object> state = JSON.readValue({}, {map}.class);",
                    quote(&sample.to_string())
                ));
                call(w, "done", "state");
                w.line(format!("{assert_false}(done.isError(), () -> String.valueOf(done.content()));"));
                w.line(format!("{map}<?, ?> result = ({map}<?, ?>) done.structuredContent();"));
                w.block(format!("for (String field : {list}.of({})) {{", fields.join(", ")), "}", |w| {
                    w.line(format!("{assert_true}(result.containsKey(field), field);"));
                });
                w.line(format!("{assert_equals}(result, JSON.readValue((({schema}.TextContent) done.content().get(0)).text(), {map}.class));"));
            });
        });
    }
    w.blank();
    w.line("/** A failed run is an error result whose structured content is the contract's envelope. */");
    w.line(format!("@{test}"));
    w.block("void mcpFailedRunIsAnErrorResult() throws Exception {", "}", |w| {
        w.block(format!("try ({sync_client} client = mcpClient()) {{"), "}", |w| {
            call(w, "wrong", &format!("{map}.of(\"svc_undeclared_field\", 1)"));
            w.line(format!("{assert_true}(wrong.isError());"));
            w.line(format!("{map}<?, ?> error = ({map}<?, ?>) (({map}<?, ?>) wrong.structuredContent()).get(\"error\");"));
            w.line(format!("{assert_equals}(\"invalid_state\", error.get(\"code\"));"));
            w.line(format!("{assert_equals}(wrong.structuredContent(), JSON.readValue((({schema}.TextContent) wrong.content().get(0)).text(), {map}.class));"));
        });
    });
    w.blank();
    w.line("/** The credential of /invoke, and POST only. */");
    w.line(format!("@{test}"));
    w.block("void mcpChecksTheCredentialAndTheMethod() throws Exception {", "}", |w| {
        w.line(format!(
            "String list = {};",
            quote(r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#)
        ));
        if auth {
            w.block("for (String key : new String[] {null, \"wrong-credential\"}) {", "}", |w| {
                w.line("Reply r = send(\"POST\", \"/mcp\", \"application/json\", list, key);");
                w.line(format!("{assert_equals}(401, r.status());"));
                w.line(format!("{assert_equals}(\"unauthorized\", error(r).get(\"code\"));"));
            });
        }
        w.block("for (String method : new String[] {\"GET\", \"DELETE\"}) {", "}", |w| {
            w.line("Reply r = send(method, \"/mcp\", null, null, KEY);");
            w.line(format!("{assert_equals}(405, r.status(), method);"));
            w.line(format!("{assert_equals}(\"POST\", r.raw().headers().firstValue(\"Allow\").orElse(\"\"));"));
            w.line(format!("{assert_equals}(\"method_not_allowed\", error(r).get(\"code\"));"));
        });
    });
}

/// Resumes the run `r` answered until it ends: each paused hitl node gets a
/// sample value of its `outputKey`'s type, on the same thread.
fn resume_each_interrupt(
    doc: &Document,
    w: &mut CodeWriter,
    assert_equals: &str,
    assert_true: &str,
    map: &str,
) {
    let answers = hitl_answers(doc);
    if answers.is_empty() {
        return;
    }
    let entries: Vec<String> = answers
        .iter()
        .map(|(node, value)| {
            format!(
                "{map}.entry({}, {})",
                quote(node),
                quote(&value.to_string())
            )
        })
        .collect();
    w.line("// The reviewer's answer to each hitl node, of its field's type.");
    w.line(format!(
        "{map}<String, String> answers = {map}.ofEntries({});",
        entries.join(", ")
    ));
    w.block("for (int i = 0; r.body().get(\"interrupt\") != null; i++) {", "}", |w| {
        w.line(format!(
            "{assert_true}(i < {}, \"the run never ends: \" + r.raw().body());",
            answers.len() * 4 + 4
        ));
        w.line(format!("{map}<?, ?> paused = ({map}<?, ?>) r.body().get(\"interrupt\");"));
        w.line("String thread = (String) r.body().get(\"threadId\");");
        w.line("String resume = \"{\\\"threadId\\\": \" + JSON.writeValueAsString(thread) + \", \\\"resume\\\": \"");
        w.indent().indent();
        w.line("+ answers.get((String) paused.get(\"node\")) + \"}\";");
        w.dedent().dedent();
        w.line("r = send(\"POST\", \"/invoke\", \"application/json\", resume, KEY);");
        w.line(format!(
            "{assert_equals}(200, r.status(), \"resume \" + paused.get(\"node\") + \": \" + r.raw().body());"
        ));
    });
    w.line(format!(
        "{assert_true}(r.body().get(\"threadId\") instanceof String, r.raw().body());"
    ));
}
