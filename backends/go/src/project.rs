//! Assembles the Go module.

use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::runtime_files::{fill, rewrite_import};
use svc_backend_sdk::subgraphs::{all_graphs, any_graph};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Connectors, Diagnostic, File};

use crate::golang::{file_stem, quote};
use crate::{graph, nodes, readme, tests};

const STATE_GO: &str = include_str!("../runtime/graph/state.go");
const ERRORS_GO: &str = include_str!("../runtime/graph/errors.go");
const RUNTIME_GO: &str = include_str!("../runtime/graph/runtime.go");
const RUNTIME_TEST_GO: &str = include_str!("../runtime/graph/runtime_test.go");
const TEXT_GO: &str = include_str!("../runtime/graph/text.go");
// The A2A caller a native body reads (Caller(ctx)); nil outside an A2A call.
const CALLER_GO: &str = include_str!("../runtime/graph/caller.go");
const ENCODE_GO: &str = include_str!("../runtime/graph/encode.go");
const CONDITIONS_GO: &str = include_str!("../runtime/graph/conditions.go");
const UPSTREAM_GO: &str = include_str!("../runtime/graph/upstream.go");
const HTTPTOOL_GO: &str = include_str!("../runtime/graph/httptool.go");
const LLM_GO: &str = include_str!("../runtime/graph/llm.go");
const LLM_TEST_GO: &str = include_str!("../runtime/graph/llm_test.go");
const AGENTS_GO: &str = include_str!("../runtime/graph/agents.go");
const AGENTS_TEST_GO: &str = include_str!("../runtime/graph/agents_test.go");
const INTENT_GO: &str = include_str!("../runtime/graph/intent.go");
const INTENT_TEST_GO: &str = include_str!("../runtime/graph/intent_test.go");
const PYTEXT_GO: &str = include_str!("../runtime/graph/pytext.go");
const PYTEXT_TEST_GO: &str = include_str!("../runtime/graph/pytext_test.go");
const RAG_GO: &str = include_str!("../runtime/graph/rag.go");
const RAG_TEST_GO: &str = include_str!("../runtime/graph/rag_test.go");
const SERVER_GO: &str = include_str!("../runtime/server/server.go");
const REQUEST_GO: &str = include_str!("../runtime/server/request.go");
const MAIN_GO: &str = include_str!("../runtime/project/main.go");
const SUBGRAPH_GO: &str = include_str!("../runtime/graph/subgraph.go");
const SUBGRAPH_TEST_GO: &str = include_str!("../runtime/graph/subgraph_test.go");
// settings.streaming: the run's events (graph), the model's stream (with
// llm nodes) and the text/event-stream answer (server).
const STREAM_GO: &str = include_str!("../runtime/graph/stream.go");
const LLM_STREAM_GO: &str = include_str!("../runtime/graph/llm_stream.go");
// ... and, with agents, each worker turn's stream.
const AGENTS_STREAM_GO: &str = include_str!("../runtime/graph/agents_stream.go");
const AGENTS_STREAM_TEST_GO: &str = include_str!("../runtime/graph/agents_stream_test.go");
const SERVER_STREAM_GO: &str = include_str!("../runtime/server/server_stream.go");
const STREAM_TEST_GO: &str = include_str!("../runtime/graph/stream_test.go");
const SERVER_STREAM_TEST_GO: &str = include_str!("../runtime/server/server_stream_test.go");
// MCP servers the graph calls (the official Go SDK's client).
const MCP_CLIENT: &[(&str, &str)] = &[
    (
        "internal/graph/mcp_client.go",
        include_str!("../runtime/graph/mcp_client.go"),
    ),
    (
        "internal/graph/mcp_sessions.go",
        include_str!("../runtime/graph/mcp_sessions.go"),
    ),
    (
        "internal/graph/mcp_proc_unix.go",
        include_str!("../runtime/graph/mcp_proc_unix.go"),
    ),
    (
        "internal/graph/mcp_proc_other.go",
        include_str!("../runtime/graph/mcp_proc_other.go"),
    ),
    (
        "internal/graph/mcp_client_test.go",
        include_str!("../runtime/graph/mcp_client_test.go"),
    ),
    (
        "internal/graph/mcp_proc_unix_test.go",
        include_str!("../runtime/graph/mcp_proc_unix_test.go"),
    ),
];
// settings.mcp.expose: the graph as one MCP tool at /mcp.
const TELEMETRY_GO: &str = include_str!("../runtime/graph/telemetry.go");
const TELEMETRY_TEST_GO: &str = include_str!("../runtime/graph/telemetry_test.go");
const MCP_SERVER_GO: &str = include_str!("../runtime/server/mcp_server.go");
const MCP_SERVER_TEST_GO: &str = include_str!("../runtime/server/mcp_server_test.go");
// settings.a2a: the graph as an A2A agent (the card, /a2a), and the client
// of agents of kind a2a (the official a2a-go SDK, both).
const A2A_SERVER_GO: &str = include_str!("../runtime/server/a2a_server.go");
const A2A_SERVER_TEST_GO: &str = include_str!("../runtime/server/a2a_server_test.go");
const A2A_CREDENTIALS_GO: &str = include_str!("../runtime/server/a2a_credentials.go");
const A2A_RUN_GO: &str = include_str!("../runtime/graph/a2a_run.go");
const A2A_CARD_GO: &str = include_str!("../runtime/graph/a2a_card.go");
const A2A_CLIENT_GO: &str = include_str!("../runtime/graph/a2a_client.go");
const A2A_STUB_TEST_GO: &str = include_str!("../runtime/server/a2a_stub_test.go");
const A2A_CLIENT_TEST_GO: &str = include_str!("../runtime/graph/a2a_client_test.go");
// The graph's test cases (svc test's NAME.tests.json) as `go test` runs them.
const REQUEST_TEST_GO: &str = include_str!("../runtime/server/request_test.go");
const CASES_TEST_GO: &str = include_str!("../runtime/server/cases_test.go");
const DOCKERIGNORE: &str = include_str!("../runtime/project/dockerignore");
const GITIGNORE: &str = include_str!("../runtime/project/gitignore");

/// The runtime helpers connectors may ask for (`svc-runtime:NAME`):
/// `upstream` is upstream.go, the HTTP client of HTTP tools and models.
const CONNECTOR_HELPERS: &[&str] = &["upstream"];

/// The runner of the graph's test cases and the cases themselves (the
/// bundle svc compile passes as the option `testCases`).
pub fn cases(bundle: &str) -> Vec<File> {
    vec![
        File::text("internal/server/cases_test.go", CASES_TEST_GO),
        File::text("internal/server/testdata/svc-cases.json", bundle),
    ]
}

pub fn emit(doc: &Document, connectors: &Connectors) -> Result<Vec<File>, Vec<Diagnostic>> {
    let placed = svc_backend_sdk::connectors::place(doc, "go", CONNECTOR_HELPERS, connectors)?;
    let module = &doc.id;
    // What the runtime must hold is decided over every graph: a child's
    // model or tool is called from the same package.
    let llm = any_graph(doc, Document::has_llm_nodes);
    let http_tools = any_graph(doc, |d| d.http_tools().next().is_some());
    let main_go = fill("main.go", MAIN_GO, &[("SERVICE_NAME", module)])
        .and_then(|text| local_import("main.go", &text, module, "server"))
        .map_err(|d| vec![d])?;
    let server_go = local_import("server.go", SERVER_GO, module, "graph").map_err(|d| vec![d])?;

    let pinned = crate::modules::pinned(doc);
    let (go, mut requires) = match &pinned {
        Some(p) => (p.go.clone(), p.requires.clone()),
        None => (DEFAULT_GO.to_string(), Vec::new()),
    };
    requires.extend(placed.dependencies.iter().cloned());
    let mut files = vec![
        File::text("go.mod", go_mod(module, &go, &requires)),
        File::text("main.go", main_go),
        File::text(
            "openapi.json",
            svc_backend_sdk::openapi::document(doc, "go"),
        ),
        File::text("openapi_test.go", tests::openapi_test()),
        File::text("config.go", config_go(doc)),
        File::text("internal/server/server.go", server_go),
        File::text("internal/server/request.go", REQUEST_GO),
        File::text("internal/server/request_test.go", REQUEST_TEST_GO),
        File::text("internal/server/server_test.go", tests::server_test(doc)),
        File::text("internal/graph/state.go", STATE_GO),
        File::text("internal/graph/errors.go", ERRORS_GO),
        File::text("internal/graph/runtime.go", RUNTIME_GO),
        File::text("internal/graph/runtime_test.go", RUNTIME_TEST_GO),
        File::text("internal/graph/text.go", TEXT_GO),
        File::text("internal/graph/caller.go", CALLER_GO),
        File::text("internal/graph/encode.go", ENCODE_GO),
        File::text("internal/graph/conditions.go", CONDITIONS_GO),
        File::text("internal/graph/graph.go", graph::graph_go(doc)),
        File::text("README.md", readme::readme(doc)),
        File::text(
            "Dockerfile",
            dockerfile(&go, pinned.is_some(), doc.logical.settings.server.port),
        ),
        File::text(".dockerignore", DOCKERIGNORE),
        File::text(".gitignore", GITIGNORE),
    ];
    if let Some(p) = &pinned {
        files.push(File::text("go.sum", p.sums));
    }
    files.extend(crate::threads::emit(doc, module)?);
    if doc.logical.settings.tracing.enabled {
        files.push(File::text("internal/graph/telemetry.go", TELEMETRY_GO));
        files.push(File::text(
            "internal/graph/telemetry_test.go",
            TELEMETRY_TEST_GO,
        ));
    }
    if svc_backend_sdk::subgraphs::calls_mcp_servers(doc) {
        files.push(crate::mcp::servers_file(doc));
        for (path, text) in MCP_CLIENT {
            files.push(File::text(*path, *text));
        }
    }
    if doc.logical.settings.mcp.expose {
        let mcp = &doc.logical.settings.mcp;
        let tool_name = mcp.tool_name.as_deref().unwrap_or(&doc.id);
        let values = [
            ("MCP_TOOL_NAME", tool_name),
            ("SERVICE_NAME", module.as_str()),
            ("SERVICE_VERSION", doc.version.as_str()),
        ];
        let server = fill("mcp_server.go", MCP_SERVER_GO, &values)
            .and_then(|text| local_import("mcp_server.go", &text, module, "graph"))
            .map_err(|d| vec![d])?;
        let test = local_import("mcp_server_test.go", MCP_SERVER_TEST_GO, module, "graph")
            .map_err(|d| vec![d])?;
        files.push(File::text("internal/server/mcp.go", server));
        files.push(File::text("internal/server/mcp_test.go", test));
    }
    // Agents and classifiers answer as python-svc does, down to the text
    // they feed the model (pytext.go).
    let agentic = any_graph(doc, svc_backend_sdk::agents::runs_agents);
    let published = doc.logical.settings.a2a.enabled;
    if published {
        let graph = |path, text| local_import(path, text, module, "graph").map_err(|d| vec![d]);
        let server = graph("a2a_server.go", A2A_SERVER_GO)?;
        let test = graph("a2a_server_test.go", A2A_SERVER_TEST_GO)?;
        let credentials = graph("a2a_credentials.go", A2A_CREDENTIALS_GO)?;
        files.push(File::text("internal/server/a2a.go", server));
        files.push(File::text("internal/server/a2a_test.go", test));
        files.push(File::text(
            "internal/server/a2a_credentials.go",
            credentials,
        ));
        files.push(crate::a2a::agent_file(doc).map_err(|d| vec![d])?);
        files.push(File::text("internal/graph/a2a_run.go", A2A_RUN_GO));
        // The reply is the field the run wrote last: the run's node events
        // say which (stream.go), whether or not the graph streams.
        if !doc.logical.settings.streaming {
            files.push(File::text("internal/graph/stream.go", STREAM_GO));
        }
    }
    if crate::modules::speaks_a2a(doc) {
        files.push(File::text("internal/graph/a2a_card.go", A2A_CARD_GO));
    }
    if crate::agents::calls_a2a(doc) {
        files.push(File::text("internal/graph/a2a_client.go", A2A_CLIENT_GO));
        files.push(File::text(
            "internal/graph/a2a_client_test.go",
            A2A_CLIENT_TEST_GO,
        ));
        files.push(File::text(
            "internal/server/a2a_stub_test.go",
            A2A_STUB_TEST_GO,
        ));
    }
    if doc.logical.settings.streaming {
        let graph = |path, text| local_import(path, text, module, "graph").map_err(|d| vec![d]);
        let server_stream = graph("server_stream.go", SERVER_STREAM_GO)?;
        let server_stream_test = graph("server_stream_test.go", SERVER_STREAM_TEST_GO)?;
        files.push(File::text("internal/server/stream.go", server_stream));
        files.push(File::text(
            "internal/server/stream_test.go",
            server_stream_test,
        ));
        files.push(File::text("internal/graph/stream.go", STREAM_GO));
        files.push(File::text("internal/graph/stream_test.go", STREAM_TEST_GO));
        // The model's stream serves llm nodes and workers' turns alike.
        if llm || agentic {
            files.push(File::text("internal/graph/llm_stream.go", LLM_STREAM_GO));
        }
        if agentic {
            files.push(File::text(
                "internal/graph/agents_stream.go",
                AGENTS_STREAM_GO,
            ));
            files.push(File::text(
                "internal/graph/agents_stream_test.go",
                AGENTS_STREAM_TEST_GO,
            ));
        }
    }
    let has = |kind: fn(&NodeKind) -> bool| {
        any_graph(doc, |d| d.logical.nodes.iter().any(|n| kind(&n.kind)))
    };
    let classifies = has(|k| matches!(k, NodeKind::IntentClassifier(_)));
    let retrieves = has(|k| matches!(k, NodeKind::Rag(_)));
    if has(|k| matches!(k, NodeKind::Subgraph(_))) {
        files.push(File::text("internal/graph/subgraph.go", SUBGRAPH_GO));
        files.push(File::text(
            "internal/graph/subgraph_test.go",
            SUBGRAPH_TEST_GO,
        ));
    }
    // Every missing body of every graph is reported at once.
    let mut errors = Vec::new();
    if agentic {
        match crate::agents::registry(doc) {
            Ok(file) => files.push(file),
            Err(d) => errors.extend(d),
        }
        files.push(File::text("internal/graph/agents.go", AGENTS_GO));
        files.push(File::text("internal/graph/agents_test.go", AGENTS_TEST_GO));
    }
    if classifies {
        files.push(File::text("internal/graph/intent.go", INTENT_GO));
        files.push(File::text("internal/graph/intent_test.go", INTENT_TEST_GO));
    }
    if retrieves {
        files.push(File::text("internal/graph/rag.go", RAG_GO));
        files.push(File::text("internal/graph/rag_test.go", RAG_TEST_GO));
    }
    if agentic || classifies || retrieves || published {
        files.push(File::text("internal/graph/pytext.go", PYTEXT_GO));
    }
    // Its tests call the model client too.
    if agentic || classifies || retrieves {
        files.push(File::text("internal/graph/pytext_test.go", PYTEXT_TEST_GO));
    }
    // The model client's plumbing serves agents and embeddings too.
    let llm = llm || agentic || retrieves;
    if llm || http_tools || placed.runtime.contains("upstream") {
        files.push(File::text("internal/graph/upstream.go", UPSTREAM_GO));
    }
    if http_tools {
        files.push(File::text("internal/graph/httptool.go", HTTPTOOL_GO));
    }
    if llm {
        files.push(File::text("internal/graph/llm.go", LLM_GO));
        files.push(File::text("internal/graph/llm_test.go", LLM_TEST_GO));
    }
    for (d, scope) in all_graphs(doc) {
        if !scope.is_root() {
            let owner = scope.owner.as_deref().unwrap_or_default();
            files.push(File::text(
                format!("internal/graph/{}.go", file_stem("subgraph", owner)),
                graph::child_go(d, &scope, doc.logical.settings.tracing.enabled),
            ));
        }
        match nodes::files(d, &scope, &placed.snippets) {
            Ok(made) => files.extend(made),
            Err(d) => errors.extend(d),
        }
    }
    match nodes::rag::files(doc) {
        Ok(made) => files.extend(made),
        Err(d) => errors.extend(d),
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    placed.merge_into(&mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The module path of `runtime/` (its go.mod), where the runtime's files
/// are vetted and tested: a file of one package imports another by it
/// (`svc.dev/runtime/graph`).
pub const RUNTIME_MODULE: &str = "svc.dev/runtime";

/// The runtime file `text` (named `path`) importing the project's
/// `internal/<package>` where it imports the runtime module's `<package>`
/// (graph, server, pgtest), which it must do exactly once.
pub fn local_import(
    path: &str,
    text: &str,
    module: &str,
    package: &str,
) -> Result<String, Diagnostic> {
    rewrite_import(
        path,
        text,
        &format!("{RUNTIME_MODULE}/{package}"),
        &format!("{module}/internal/{package}"),
    )
}

/// The `go` line of a module whose requirements ask for no newer Go.
pub const DEFAULT_GO: &str = "1.22";

/// go.mod, with the modules connector code and a database checkpointer
/// require (`path vX.Y.Z`). Tab-indented, as `go mod edit -fmt` writes it.
fn go_mod(module: &str, go: &str, requires: &[String]) -> String {
    let mut w = CodeWriter::text("\t");
    w.line(format!("module {module}")).blank();
    w.line(format!("go {go}"));
    if !requires.is_empty() {
        w.blank().block("require (", ")", |w| {
            for r in requires {
                w.line(r);
            }
        });
    }
    w.finish()
}

/// Constants of `package main`, taken from the document.
fn config_go(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut w = CodeWriter::go();
    w.line("package main").blank();
    w.line("// Settings compiled from the graph document; change the document and recompile.")
        .line("// SVC_HOST and SVC_PORT override the address at run time.")
        .blank();
    let consts = [
        ("serviceName", quote(&doc.id)),
        ("serviceVersion", quote(&doc.version)),
        ("authScheme", quote(doc.security.auth.as_str())),
        ("keyEnv", quote(&doc.security.key_env)),
        ("defaultHost", quote(&s.server.host)),
        ("defaultPort", s.server.port.to_string()),
        (
            "logLevel",
            quote(doc.logical.settings.logging.level.as_str()),
        ),
        (
            "logFormat",
            quote(doc.logical.settings.logging.format.as_str()),
        ),
    ];
    for (name, value) in consts {
        w.line(format!("const {name} = {value}"));
    }
    w.finish()
}

/// A static binary, built on the Go image the module's `go` line names and
/// run as a non-root user on a distroless one, listening on every
/// interface of the container at the graph's port (as the other targets'
/// images do: `settings.server.host` is where it listens outside one).
fn dockerfile(go: &str, sums: bool, port: u16) -> String {
    let minor: String = go.split('.').take(2).collect::<Vec<_>>().join(".");
    let mut w = CodeWriter::text("    ");
    w.line("# Build a static binary, then run it as a non-root user on a minimal image.")
        .line(format!("FROM golang:{minor} AS build"))
        .line("WORKDIR /src")
        .line(if sums {
            "COPY go.mod go.sum ./"
        } else {
            "COPY go.mod ./"
        })
        .line("RUN go mod download all")
        .line("COPY . .")
        .line("RUN CGO_ENABLED=0 go build -trimpath -ldflags=\"-s -w\" -o /out/service .")
        .blank();
    w.line("FROM gcr.io/distroless/static-debian12:nonroot")
        .line("COPY --from=build /out/service /service")
        .line("# distroless's `nonroot` user, by number so the runtime needs no passwd lookup")
        .line("USER 65532:65532")
        .line(format!("ENV SVC_HOST=0.0.0.0 SVC_PORT={port}"))
        .line(format!("EXPOSE {port}"))
        .line("ENTRYPOINT [\"/service\"]");
    w.finish()
}

#[cfg(test)]
mod go_mod_tests {
    use super::go_mod;

    #[test]
    fn connector_modules_are_required_in_go_mod() {
        assert_eq!(
            go_mod("svc_app", "1.22", &[]),
            "module svc_app\n\ngo 1.22\n"
        );
        let with = go_mod(
            "svc_app",
            "1.22",
            &["github.com/google/uuid v1.6.0".to_string()],
        );
        assert_eq!(
            with,
            "module svc_app\n\ngo 1.22\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n)\n"
        );
    }
}

#[cfg(test)]
mod subgraph_tests {
    use super::emit;
    use serde_json::json;
    use svc_backend_sdk::ir::Document;
    use svc_backend_sdk::Connectors;

    /// A document running `child_nodes` (with `child_extra` in the child's
    /// logical object) in the embedded child of its subgraph node `sub`.
    fn document(child_nodes: serde_json::Value, child_extra: serde_json::Value) -> Document {
        let mut nodes = vec![json!({"id": "start", "kind": "start"})];
        nodes.extend(child_nodes.as_array().cloned().unwrap_or_default());
        nodes.push(json!({"id": "end", "kind": "end"}));
        let edges: Vec<_> = nodes
            .windows(2)
            .map(|pair| json!({"from": pair[0]["id"], "to": pair[1]["id"]}))
            .collect();
        let mut child = json!({
            "irVersion": "2.2", "id": "child",
            "logical": {"state": [{"name": "a", "type": "string"}], "nodes": nodes, "edges": edges}
        });
        for (k, v) in child_extra.as_object().cloned().unwrap_or_default() {
            child["logical"][k] = v;
        }
        let doc = json!({
            "irVersion": "2.2", "id": "parent",
            "logical": {
                "state": [{"name": "a", "type": "string"}],
                "nodes": [{"id": "start", "kind": "start"},
                          {"id": "sub", "kind": "subgraph", "graph": child, "output": {"a": "a"}},
                          {"id": "end", "kind": "end"}],
                "edges": [{"from": "start", "to": "sub"}, {"from": "sub", "to": "end"}]
            }
        });
        svc_backend_sdk::ir::SourceFile::new("parent.graph.json", doc.to_string())
            .parse()
            .unwrap()
    }

    fn refusals(doc: &Document) -> Vec<(String, String)> {
        emit(doc, &Connectors::default())
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|d| (d.code, d.pointer.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn a_childs_missing_bodies_are_pointed_at_in_the_child() {
        let doc = document(
            json!([{"id": "f", "kind": "function", "outputKey": "a"}]),
            json!({"tools": [{"id": "t", "kind": "native"}],
                   "agents": [{"id": "w", "kind": "worker", "instructions": "w"},
                              {"id": "boss", "kind": "supervisor", "members": ["w"], "router": "custom"}],
                   "settings": {"model": {"provider": "openai", "name": "m"}}}),
        );
        let mut got = refusals(&doc);
        got.sort();
        let at = |p: &str| {
            (
                "missing-body".to_string(),
                format!("/logical/nodes/1/graph{p}"),
            )
        };
        assert_eq!(
            got,
            [
                at("/logical/agents/1"),
                at("/logical/nodes/1"),
                at("/logical/tools/0")
            ]
        );
    }

    #[test]
    fn a_connector_in_a_child_is_refused_where_it_is() {
        let doc = document(
            json!([{"id": "c", "kind": "connector", "config": {}}]),
            json!({}),
        );
        assert_eq!(
            refusals(&doc),
            [(
                "unsupported".to_string(),
                "/logical/nodes/1/graph/logical/nodes/1".to_string()
            )]
        );
    }

    #[test]
    fn a_child_runs_under_its_registered_names_and_own_limit() {
        let doc = document(
            json!([{"id": "say", "kind": "response_template", "template": "x", "outputKey": "a"}]),
            json!({"settings": {"maxSteps": 3}}),
        );
        let files = emit(&doc, &Connectors::default()).unwrap();
        let text = |path: &str| {
            let f = files
                .iter()
                .find(|f| f.path == path)
                .unwrap_or_else(|| panic!("no {path}"));
            String::from_utf8(f.contents.clone()).unwrap()
        };
        let child = text("internal/graph/subgraph_sub.go");
        assert!(
            child.contains("if steps == 3 {\n\t\t\treturn nil, stepLimit(3)"),
            "{child}"
        );
        assert!(
            child.contains("schema_sub.step(ctx, st, \"sub__say\", node_sub__say, false)"),
            "{child}"
        );
        // A child's steps send no events (a child cannot set `streaming`).
        assert!(
            !child.contains("stepObserved") && !child.contains("routed("),
            "{child}"
        );
        assert!(text("internal/graph/node_sub.go")
            .contains("runChild(ctx, \"sub\", schema_sub, run_sub,"));
        assert!(files.iter().any(|f| f.path == "internal/graph/subgraph.go"));
    }
}
