//! `internal/server/server_test.go`: tests of the generated service that
//! drive the graph through the HTTP contract with `httptest`. LLM nodes and
//! HTTP tools are pointed at a stub server started by the test itself.

use serde_json::{json, Value};
use svc_backend_sdk::environment::remote_service_env;
use svc_backend_sdk::ir::{
    AgentKind, Auth, CheckpointerKind, Document, NodeKind, RagNode, Retriever, ToolKind,
};
use svc_backend_sdk::samples::{
    bad_requests, calls_provider, hitl_answers, messages_reply, model_reply, model_stand_ins,
    sample_state, tool_reply,
};
use svc_backend_sdk::subgraphs::{all_graphs, any_graph};
use svc_backend_sdk::writer::CodeWriter;

use crate::golang::{quote, RUNTIME_A2ATEST, RUNTIME_GRAPH, RUNTIME_MCP, RUNTIME_SERVER};

/// A Go string literal of some text (raw when possible).
fn go_string(text: &str) -> String {
    if text.contains('`') {
        quote(text)
    } else {
        format!("`{text}`")
    }
}

fn go_json(v: &Value) -> String {
    go_string(&v.to_string())
}

/// The rag nodes of every graph of the document.
fn rag_nodes(doc: &Document) -> Vec<&RagNode> {
    all_graphs(doc)
        .into_iter()
        .flat_map(|(d, _)| {
            d.logical.nodes.iter().filter_map(|n| match &n.kind {
                NodeKind::Rag(r) => Some(r),
                _ => None,
            })
        })
        .collect()
}

/// An HTTP tool of any graph: its registered name, endpoint and the stub's
/// reply.
struct HttpTool {
    name: String,
    endpoint: String,
    reply: Value,
}

fn http_tools(doc: &Document) -> Vec<HttpTool> {
    all_graphs(doc)
        .into_iter()
        .flat_map(|(d, scope)| {
            d.http_tools()
                .map(|(id, endpoint)| HttpTool {
                    name: scope.name(id),
                    endpoint: endpoint.to_string(),
                    reply: tool_reply(d, id),
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

pub fn server_test(doc: &Document) -> String {
    let auth = doc.security.auth;
    let http_tools = http_tools(doc);
    // One stub path per literal endpoint (a child may reuse its parent's).
    let mut literal_tools: Vec<&HttpTool> = Vec::new();
    for t in http_tools
        .iter()
        .filter(|t| !t.endpoint.starts_with("env:"))
    {
        if literal_tools.iter().all(|seen| seen.endpoint != t.endpoint) {
            literal_tools.push(t);
        }
    }
    let stub = any_graph(doc, Document::has_llm_nodes)
        || svc_backend_sdk::subgraphs::calls_mcp_servers(doc)
        || !rag_nodes(doc).is_empty()
        || !http_tools.is_empty()
        || !svc_backend_sdk::connectors::env_refs(doc).is_empty()
        || svc_backend_sdk::agents::calls_a2a(doc);

    // The helpers below name these packages in their text.
    let mut w = CodeWriter::go();
    // The project's graph registers itself with the runtime.
    w.import_for_effects(&format!("{}/internal/graph", doc.id));
    for package in [
        "encoding/json",
        "net/http",
        "net/http/httptest",
        "strings",
        "testing",
    ] {
        w.import(package);
    }

    w.line("const testKey = \"test-credential-0123\"").blank();
    let threaded = doc.logical.settings.checkpointer.kind != CheckpointerKind::None;
    if threaded {
        // The threads of the tests live in memory, whatever the graph's
        // checkpointer (its own tests cover the database), and outlive a
        // request: a resume finds the thread its run paused.
        let memory = w.name(RUNTIME_GRAPH, "NewMemoryThreads");
        let options = w.name(RUNTIME_GRAPH, "ThreadOptions");
        w.line(format!("var testThreads = {memory}({options}{{}})"));
        w.blank();
    }
    w.block("func newTestHandler() http.Handler {", "}", |w| {
        let config = format!(
            "{}{{Auth: {}, Key: testKey, OpenAPI: []byte(`{{\"openapi\": \"3.1.0\"}}`)}}",
            w.name(RUNTIME_SERVER, "Config"),
            quote(auth.as_str())
        );
        if threaded {
            let new = w.name(RUNTIME_SERVER, "NewThreaded");
            w.line(format!("return {new}({config}, testThreads)"));
        } else {
            let new = w.name(RUNTIME_SERVER, "New");
            w.line(format!("return {new}({config})"));
        }
    });
    w.blank();
    w.block("type reply struct {", "}", |w| {
        w.line("status int");
        w.line("header http.Header");
        w.line("body   map[string]any");
    });
    w.blank();
    w.line("// send performs one request against the handler; auth adds the credential.");
    w.block("func send(t *testing.T, method, path, contentType, body string, auth bool) reply {", "}", |w| {
        w.line("t.Helper()");
        w.line("req := httptest.NewRequest(method, path, strings.NewReader(body))");
        w.block("if contentType != \"\" {", "}", |w| {
            w.line("req.Header.Set(\"Content-Type\", contentType)");
        });
        w.block("if auth {", "}", |w| {
            match auth {
                Auth::Bearer => w.line("req.Header.Set(\"Authorization\", \"Bearer \"+testKey)"),
                _ => w.line("req.Header.Set(\"X-API-Key\", testKey)"),
            };
        });
        w.line("rec := httptest.NewRecorder()");
        w.line("newTestHandler().ServeHTTP(rec, req)");
        w.line("var decoded map[string]any");
        w.block("if err := json.Unmarshal(rec.Body.Bytes(), &decoded); err != nil {", "}", |w| {
            w.line("t.Fatalf(\"%s %s: the reply is not a JSON object: %q\", method, path, rec.Body.String())");
        });
        w.block("if ct := rec.Header().Get(\"Content-Type\"); ct != \"application/json\" {", "}", |w| {
            w.line("t.Fatalf(\"%s %s: Content-Type %q\", method, path, ct)");
        });
        w.line("return reply{rec.Code, rec.Header(), decoded}");
    });
    w.blank();
    w.line("// errorOf returns the error code and details of an error reply.");
    w.block(
        "func errorOf(r reply) (string, map[string]any) {",
        "}",
        |w| {
            w.line("e, _ := r.body[\"error\"].(map[string]any)");
            w.line("code, _ := e[\"code\"].(string)");
            w.line("details, _ := e[\"details\"].(map[string]any)");
            w.line("return code, details");
        },
    );
    w.blank();

    w.block(
        "func TestHealthNeedsNoCredential(t *testing.T) {",
        "}",
        |w| {
            w.line("r := send(t, \"GET\", \"/health\", \"\", \"\", false)");
            w.block(
                "if r.status != http.StatusOK || r.body[\"status\"] != \"ok\" {",
                "}",
                |w| {
                    w.line("t.Fatalf(\"health: %d %v\", r.status, r.body)");
                },
            );
        },
    );
    w.blank();
    w.block("func TestOpenAPIIsPublic(t *testing.T) {", "}", |w| {
        w.line("r := send(t, \"GET\", \"/openapi.json\", \"\", \"\", false)");
        w.block(
            "if r.status != http.StatusOK || r.body[\"openapi\"] != \"3.1.0\" {",
            "}",
            |w| {
                w.line("t.Fatalf(\"openapi.json: %d %v\", r.status, r.body)");
            },
        );
    });
    w.blank();
    w.block("func TestUnknownPathAndWrongMethod(t *testing.T) {", "}", |w| {
        w.block("if r := send(t, \"GET\", \"/nowhere\", \"\", \"\", true); r.status != http.StatusNotFound {", "}", |w| {
            w.line("t.Fatalf(\"unknown path: %d %v\", r.status, r.body)");
        });
        w.line("r := send(t, \"GET\", \"/invoke\", \"\", \"\", true)");
        w.block("if code, _ := errorOf(r); r.status != http.StatusMethodNotAllowed || code != \"method_not_allowed\" {", "}", |w| {
            w.line("t.Fatalf(\"GET /invoke: %d %v\", r.status, r.body)");
        });
    });
    w.blank();

    let sample = Value::Object(sample_state(doc));
    let envelope = json!({ "state": sample });
    if auth != Auth::None {
        w.block("func TestCredentialIsRequired(t *testing.T) {", "}", |w| {
            w.line(format!("body := {}", go_json(&envelope)));
            w.line("r := send(t, \"POST\", \"/invoke\", \"application/json\", body, false)");
            w.block("if code, _ := errorOf(r); r.status != http.StatusUnauthorized || code != \"unauthorized\" {", "}", |w| {
                w.line("t.Fatalf(\"without a credential: %d %v\", r.status, r.body)");
            });
            if auth == Auth::Bearer {
                w.block("if r.header.Get(\"WWW-Authenticate\") != \"Bearer\" {", "}", |w| {
                    w.line("t.Fatal(\"a bearer 401 must carry WWW-Authenticate: Bearer\")");
                });
            }
            w.line("req := httptest.NewRequest(\"POST\", \"/invoke\", strings.NewReader(body))");
            w.line("req.Header.Set(\"Content-Type\", \"application/json\")");
            match auth {
                Auth::Bearer => w.line("req.Header.Set(\"Authorization\", \"Bearer wrong-credential\")"),
                _ => w.line("req.Header.Set(\"X-API-Key\", \"wrong-credential\")"),
            };
            w.line("rec := httptest.NewRecorder()");
            w.line("newTestHandler().ServeHTTP(rec, req)");
            w.block("if rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), \"wrong-credential\") {", "}", |w| {
                w.line("t.Fatalf(\"with a wrong credential: %d %s\", rec.Code, rec.Body.String())");
            });
        });
        w.blank();
    }

    let cases = bad_requests(doc);
    w.block("func TestBadRequests(t *testing.T) {", "}", |w| {
        w.line("cases := []struct {");
        w.indent()
            .line("name, contentType, body string")
            .line("status                  int")
            .line("code, field             string")
            .dedent();
        w.line("}{");
        w.indent();
        for c in &cases {
            w.line(format!(
                "{{{}, {}, {}, {}, {}, {}}},",
                quote(&c.name),
                quote(&c.content_type),
                go_string(&c.body),
                c.status,
                quote(&c.code),
                quote(c.field.as_deref().unwrap_or_default())
            ));
        }
        w.dedent().line("}");
        w.block("for _, c := range cases {", "}", |w| {
            w.line("r := send(t, \"POST\", \"/invoke\", c.contentType, c.body, true)");
            w.line("code, details := errorOf(r)");
            w.block("if r.status != c.status || code != c.code {", "}", |w| {
                w.line("t.Errorf(\"%s: got %d %q, want %d %q (%v)\", c.name, r.status, code, c.status, c.code, r.body)");
            });
            w.block("if c.field != \"\" && details[\"field\"] != c.field {", "}", |w| {
                w.line("t.Errorf(\"%s: details.field = %v, want %q\", c.name, details[\"field\"], c.field)");
            });
        });
    });
    w.blank();
    w.block("func TestBodyOverOneMiBIsRefused(t *testing.T) {", "}", |w| {
        let max = w.name(RUNTIME_SERVER, "MaxRequestBytes");
        w.line(format!("body := `{{\"state\": {{\"x\": \"` + strings.Repeat(\"a\", {max}) + `\"}}}}`"));
        w.line("r := send(t, \"POST\", \"/invoke\", \"application/json\", body, true)");
        w.block("if code, _ := errorOf(r); r.status != http.StatusRequestEntityTooLarge || code != \"payload_too_large\" {", "}", |w| {
            w.line("t.Fatalf(\"1 MiB + 1: %d %v\", r.status, r.body)");
        });
    });
    w.blank();

    let field_names = doc
        .logical
        .state
        .iter()
        .map(|f| quote(&f.name))
        .collect::<Vec<_>>()
        .join(", ");
    w.line("// TestInvokeRunsTheGraph runs the graph on a state with every required field.");
    w.block("func TestInvokeRunsTheGraph(t *testing.T) {", "}", |w| {
        if stub {
            w.line("stubUpstream(t)");
        }
        w.line(format!(
            "r := send(t, \"POST\", \"/invoke\", \"application/json\", {}, true)",
            go_json(&envelope)
        ));
        w.block("if r.status != http.StatusOK {", "}", |w| {
            w.line("t.Fatalf(\"invoke: %d %v\", r.status, r.body)");
        });
        if threaded {
            resume_each_interrupt(doc, w);
        }
        w.line("result, ok := r.body[\"result\"].(map[string]any)");
        w.block("if !ok {", "}", |w| {
            w.line("t.Fatalf(\"no result object: %v\", r.body)");
        });
        w.block(
            format!("for _, field := range []string{{{field_names}}} {{"),
            "}",
            |w| {
                w.block("if _, present := result[field]; !present {", "}", |w| {
                    w.line("t.Errorf(\"the result lacks state field %q: %v\", field, result)");
                });
            },
        );
    });
    w.blank();
    if threaded {
        // A thread's answer names the thread: the bare state has no room.
        w.line("// TestLegacyRawState: a checkpointed graph has no legacy form.");
        w.block("func TestLegacyRawState(t *testing.T) {", "}", |w| {
            w.line(format!(
                "r := send(t, \"POST\", \"/invoke\", \"application/json\", {}, true)",
                go_json(&sample)
            ));
            w.block("if code, _ := errorOf(r); r.status != http.StatusBadRequest || code != \"bad_request\" {", "}", |w| {
                w.line("t.Fatalf(\"raw state: %d %v\", r.status, r.body)");
            });
        });
        if stub {
            stub_upstream(doc, &mut w, &http_tools, &literal_tools);
        }
        return w.finish_file("package server_test\n\n");
    }
    w.line("// TestLegacyRawState sends the state itself as the body (the legacy Go form).");
    w.block("func TestLegacyRawState(t *testing.T) {", "}", |w| {
        if stub {
            w.line("stubUpstream(t)");
        }
        w.line(format!(
            "r := send(t, \"POST\", \"/invoke\", \"application/json\", {}, true)",
            go_json(&sample)
        ));
        w.block("if r.status != http.StatusOK {", "}", |w| {
            w.line("t.Fatalf(\"raw state: %d %v\", r.status, r.body)");
        });
        w.block(
            format!("for _, field := range []string{{{field_names}}} {{"),
            "}",
            |w| {
                w.block("if _, present := r.body[field]; !present {", "}", |w| {
                    w.line(
                        "t.Errorf(\"the legacy reply lacks state field %q: %v\", field, r.body)",
                    );
                });
            },
        );
    });

    if stub {
        stub_upstream(doc, &mut w, &http_tools, &literal_tools);
    }
    w.finish_file("package server_test\n\n")
}

/// Resumes the run `r` answered until it ends: each paused hitl node gets a
/// sample value of its `outputKey`'s type, on the same thread.
fn resume_each_interrupt(doc: &Document, w: &mut CodeWriter) {
    let answers = hitl_answers(doc);
    if answers.is_empty() {
        return;
    }
    w.line("// The reviewer's answer to each hitl node, of its field's type.");
    w.block("answers := map[string]string{", "}", |w| {
        for (node, value) in &answers {
            w.line(format!("{}: {},", quote(node), go_json(value)));
        }
    });
    w.block(
        "for i := 0; r.body[\"interrupt\"] != nil; i++ {",
        "}",
        |w| {
            w.block(format!("if i == {} {{", answers.len() * 4 + 4), "}", |w| {
                w.line("t.Fatalf(\"the run never ends: %v\", r.body)");
            });
            w.line("paused, _ := r.body[\"interrupt\"].(map[string]any)");
            w.line("node, _ := paused[\"node\"].(string)");
            w.line("thread, _ := r.body[\"threadId\"].(string)");
            w.line(
                "resume := `{\"threadId\": \"` + thread + `\", \"resume\": ` + answers[node] + `}`",
            );
            w.line("r = send(t, \"POST\", \"/invoke\", \"application/json\", resume, true)");
            w.block("if r.status != http.StatusOK {", "}", |w| {
                w.line("t.Fatalf(\"resume %s: %d %v\", node, r.status, r.body)");
            });
        },
    );
}

/// Points every A2A agent at the stand-in (a2a_stub_test.go): an
/// `env:NAME` card URL through its variable, one written in the graph
/// through its host; and sets each credential's variable.
fn a2a_stub(doc: &Document, w: &mut CodeWriter) {
    let mut vars = Vec::new();
    let mut hosts = Vec::new();
    for (d, _) in all_graphs(doc) {
        for a in &d.logical.agents {
            if let AgentKind::A2a {
                agent_card_url,
                service,
                ..
            } = &a.kind
            {
                if let Some(var) = agent_card_url.strip_prefix("env:") {
                    vars.push((var.to_string(), "a2aStub.URL".to_string()));
                } else {
                    // The URL's authority, as Go's url.URL.Host spells it.
                    let rest = agent_card_url.split_once("://").map_or("", |(_, r)| r);
                    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
                    hosts.push(quote(host));
                }
                if let Some(service) = service {
                    let (_, key_env) = remote_service_env(service, None);
                    vars.push((key_env, quote("stub-key")));
                }
            }
        }
    }
    if vars.is_empty() && hosts.is_empty() {
        return;
    }
    vars.sort();
    vars.dedup();
    hosts.sort();
    hosts.dedup();
    let start = w.name(RUNTIME_A2ATEST, "StartStub");
    w.line(format!("a2aStub := {start}(t)"));
    for (var, value) in vars {
        w.line(format!("t.Setenv({}, {value})", quote(&var)));
    }
    if !hosts.is_empty() {
        let stub = w.name(RUNTIME_A2ATEST, "StubHosts");
        w.line(format!("{stub}(t, a2aStub, {})", hosts.join(", ")));
    }
}

fn stub_upstream(
    doc: &Document,
    w: &mut CodeWriter,
    http_tools: &[HttpTool],
    literal_tools: &[&HttpTool],
) {
    w.import("io");
    w.blank();
    w.line("// stubUpstream answers model and HTTP tool calls from a local server, so");
    w.line("// tests never reach the network.");
    w.block("func stubUpstream(t *testing.T) {", "}", |w| {
        w.line("t.Helper()");
        w.line("srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {");
        w.indent();
        w.line("w.Header().Set(\"Content-Type\", \"application/json\")");
        w.line("switch r.URL.Path {");
        w.line("case \"/v1/chat/completions\":");
        w.indent()
            .line(format!("_, _ = io.WriteString(w, {})", go_json(&model_reply(doc))))
            .dedent();
        if calls_provider(doc, "anthropic") {
            w.line("case \"/v1/messages\":");
            w.indent()
                .line(format!("_, _ = io.WriteString(w, {})", go_json(&messages_reply(doc))))
                .dedent();
        }
        if !rag_nodes(doc).is_empty() {
            // An embedding per text: [1, its length].
            w.line("case \"/v1/embeddings\":");
            w.indent();
            w.line("var asked struct {");
            w.indent().line("Input []string `json:\"input\"`").dedent();
            w.line("}");
            w.line("_ = json.NewDecoder(r.Body).Decode(&asked)");
            w.line("data := []map[string]any{}");
            w.line("for i, text := range asked.Input {");
            w.indent()
                .line("data = append(data, map[string]any{\"index\": i, \"embedding\": []float64{1, float64(len(text))}})")
                .dedent();
            w.line("}");
            w.line("_ = json.NewEncoder(w).Encode(map[string]any{\"data\": data})");
            w.dedent();
        }
        for t in http_tools {
            w.line(format!("case {}:", quote(&format!("/tools/{}", t.name))));
            w.indent()
                .line(format!("_, _ = io.WriteString(w, {})", go_json(&t.reply)))
                .dedent();
        }
        let connector_env = svc_backend_sdk::connectors::env_refs(doc);
        let mut connector_nodes: Vec<&str> = connector_env.iter().map(|(n, _)| n.as_str()).collect();
        connector_nodes.dedup();
        for node in connector_nodes {
            w.line(format!("case {}:", quote(&format!("/connectors/{node}"))));
            w.indent().line("_, _ = io.WriteString(w, `{}`)").dedent();
        }
        w.line("default:");
        w.indent().line("http.NotFound(w, r)").dedent();
        w.line("}");
        w.dedent();
        w.line("}))");
        w.line("t.Cleanup(srv.Close)");
        // Each provider's models read their own variables.
        for (url, key, path) in model_stand_ins(doc) {
            w.line(format!("t.Setenv({}, srv.URL+{})", quote(&url), quote(path)));
            w.line(format!("t.Setenv({}, \"stub-key\")", quote(&key)));
        }
        for t in http_tools {
            if let Some(var) = t.endpoint.strip_prefix("env:") {
                w.line(format!("t.Setenv({}, srv.URL+{})", quote(var), quote(&format!("/tools/{}", t.name))));
            }
        }
        // `env:NAME` values of connector configs point at the stub.
        for (node, var) in svc_backend_sdk::connectors::env_refs(doc) {
            w.line(format!("t.Setenv({}, srv.URL+{})", quote(&var), quote(&format!("/connectors/{node}"))));
        }
        let mut embedding_envs: Vec<(&str, &str)> = rag_nodes(doc)
            .into_iter()
            .filter_map(|r| match &r.retriever {
                Retriever::Embedding {
                    base_url_env,
                    api_key_env,
                    ..
                } => Some((
                    base_url_env.as_deref().unwrap_or("OPENAI_BASE_URL"),
                    api_key_env.as_deref().unwrap_or("OPENAI_API_KEY"),
                )),
                Retriever::Bm25 => None,
            })
            .collect();
        embedding_envs.dedup();
        for (url, key) in embedding_envs {
            w.line(format!("t.Setenv({}, srv.URL+\"/v1\")", quote(url)));
            w.line(format!("t.Setenv({}, \"stub-key\")", quote(key)));
        }
        if !literal_tools.is_empty() {
            w.line("paths := map[string]string{");
            w.indent();
            for t in literal_tools {
                w.line(format!("{}: {},", quote(&t.endpoint), quote(&format!("/tools/{}", t.name))));
            }
            w.dedent().line("}");
            w.line("orig := http.DefaultTransport");
            w.line("http.DefaultTransport = rewrite{target: srv.URL, paths: paths, base: orig}");
            w.line("t.Cleanup(func() { http.DefaultTransport = orig })");
        }
        if svc_backend_sdk::subgraphs::calls_mcp_servers(doc) {
            mcp_stub(doc, w);
        }
        a2a_stub(doc, w);
        if !rag_nodes(doc).is_empty() {
            // The rag nodes' documents and indexes, as the service makes them at start-up.
            let background = w.name("context", "Background");
            let prepare = w.name(RUNTIME_SERVER, "Prepare");
            w.block(format!("if err := {prepare}({background}()); err != nil {{"), "}", |w| {
                w.line("t.Fatalf(\"start-up: %v\", err)");
            });
        }
    });
    if !literal_tools.is_empty() {
        w.import("net/url");
        w.blank();
        w.line("// rewrite sends requests for the graph's literal tool endpoints to the stub.");
        w.block("type rewrite struct {", "}", |w| {
            w.line("target string");
            w.line("paths  map[string]string");
            w.line("base   http.RoundTripper");
        });
        w.blank();
        w.block(
            "func (rw rewrite) RoundTrip(r *http.Request) (*http.Response, error) {",
            "}",
            |w| {
                w.line("path, ok := rw.paths[r.URL.String()]");
                w.block("if !ok {", "}", |w| {
                    w.line("return rw.base.RoundTrip(r)");
                });
                w.line("u, err := url.Parse(rw.target + path)");
                w.block("if err != nil {", "}", |w| {
                    w.line("return nil, err");
                });
                w.line("r2 := r.Clone(r.Context())");
                w.line("r2.URL = u");
                w.line("r2.Host = u.Host");
                w.line("return rw.base.RoundTrip(r2)");
            },
        );
    }
}

/// `openapi_test.go` (package main): the embedded document is the service's
/// OpenAPI 3.1 description of `/invoke` (the server tests serve a stand-in).
pub fn openapi_test() -> String {
    let mut w = CodeWriter::go();
    w.import("encoding/json");
    w.import("testing");
    w.block("func TestOpenAPIDocument(t *testing.T) {", "}", |w| {
        w.line("var doc map[string]any");
        w.block("if err := json.Unmarshal(openAPI, &doc); err != nil {", "}", |w| {
            w.line("t.Fatalf(\"openapi.json is not JSON: %v\", err)");
        });
        w.line("paths, _ := doc[\"paths\"].(map[string]any)");
        w.block("if doc[\"openapi\"] != \"3.1.0\" || paths[\"/invoke\"] == nil || paths[\"/health\"] == nil {", "}", |w| {
            w.line("t.Fatalf(\"openapi.json: %v\", doc)");
        });
    });
    w.finish_file("package main\n\n")
}

/// The MCP servers of the tests: one streamable HTTP server in process
/// offers every tool the graph calls (each answers "example"), and every
/// server of the graph points at it (the runtime's mcp.Stub).
fn mcp_stub(doc: &Document, w: &mut CodeWriter) {
    let mut names: Vec<&str> = all_graphs(doc)
        .into_iter()
        .flat_map(|(d, _)| &d.logical.tools)
        .filter_map(|t| match &t.kind {
            ToolKind::Mcp { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    names.sort();
    names.dedup();
    let sdk = "github.com/modelcontextprotocol/go-sdk/mcp";
    let context = w.name("context", "Context");
    let server = w.name(sdk, "NewServer");
    let implementation = w.name(sdk, "Implementation");
    // The SDK's package is `mcp` here, so the runtime's is `svcmcp`.
    let stub_mcp = w.name_as(RUNTIME_MCP, "svcmcp", "Stub");
    w.line("// One MCP server offers every tool the graph calls, whatever its");
    w.line("// server; each answers \"example\".");
    w.line(format!(
        "tools := {server}(&{implementation}{{Name: \"stub\", Version: \"1\"}}, nil)"
    ));
    let list: Vec<String> = names.iter().map(|n| quote(n)).collect();
    w.block(format!("for _, name := range []string{{{}}} {{", list.join(", ")), "}", |w| {
        w.line("tools.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{\"type\": \"object\"}},");
        w.indent();
        w.block(format!("func({context}, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {{"), "})", |w| {
            w.line("return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: \"example\"}}}, nil");
        });
        w.dedent();
    });
    w.line("mcpStub := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tools }, nil))");
    w.line("t.Cleanup(mcpStub.Close)");
    w.line(format!("t.Cleanup({stub_mcp}(mcpStub.URL))"));
}
