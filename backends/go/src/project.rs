//! Assembles the Go module: the project's own code (main, config, the
//! graph's package `internal/graph`, its tests) and, in `svc-runtime/`, the
//! copy of the runtime module (`svc.dev/runtime`) that go.mod's `replace`
//! points at, holding the runtime files the document uses (parts.rs).

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::parts::{self, Use};
use svc_backend_sdk::runtime_files::fill;
use svc_backend_sdk::subgraphs::all_graphs;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Connectors, Diagnostic, File};

use crate::golang::{file_stem, quote, RUNTIME_MCP, RUNTIME_OTEL};
use crate::parts::GoPart;
use crate::{graph, nodes, readme, tests};

const MAIN_GO: &str = include_str!("../runtime/project/main.go");
// The graph's test cases (svc test's NAME.tests.json) as `go test` runs them.
const CASES_TEST_GO: &str = include_str!("../runtime/server/cases_test.go");
const CASES_MODEL_TEST_GO: &str = include_str!("../runtime/server/cases_model_test.go");

/// The runtime helpers connectors may ask for (`svc-runtime:NAME`):
/// `upstream` is upstream.go, the HTTP client of HTTP tools and models.
const CONNECTOR_HELPERS: &[&str] = &["upstream"];

/// The module path of `runtime/` (its go.mod), which a project requires.
pub const RUNTIME_MODULE: &str = "svc.dev/runtime";

/// The version a project requires the runtime at (graph/doc.go says it
/// too); go.mod's `replace` points it at the copy in `svc-runtime/`.
pub const RUNTIME_VERSION: &str = "v0.1.0";

/// Where a project keeps its copy of the runtime module.
const RUNTIME_DIR: &str = "svc-runtime";

/// The runner of the graph's test cases (its stand-in model apart) and the
/// cases themselves (the bundle svc compile passes as the option
/// `testCases`), beside the service's tests in `internal/server` (package
/// server_test).
pub fn cases(bundle: &str) -> Vec<File> {
    vec![
        File::text("internal/server/cases_test.go", CASES_TEST_GO),
        File::text("internal/server/cases_model_test.go", CASES_MODEL_TEST_GO),
        File::text("internal/server/testdata/svc-cases.json", bundle),
    ]
}

pub fn emit(doc: &Document, connectors: &Connectors) -> Result<Vec<File>, Vec<Diagnostic>> {
    let placed = svc_backend_sdk::connectors::place(doc, "go", CONNECTOR_HELPERS, connectors)?;
    let module = &doc.id;
    let main_go = fill("main.go", MAIN_GO, &[("SERVICE_NAME", module)]).map_err(|d| vec![d])?;

    // The runtime's files and modules the document's uses select (parts.rs).
    let uses = parts::uses(doc, placed.runtime.iter().map(String::as_str));
    let selected = parts::select(crate::parts::TABLE, &uses);
    let pinned = crate::modules::pinned(selected.iter().filter_map(|part| match part {
        GoPart::Modules(set) => Some(*set),
        GoPart::File(_) => None,
    }));
    let (go, runtime_requires) = match &pinned {
        Some(p) => (p.go.clone(), p.requires.clone()),
        None => (DEFAULT_GO.to_string(), Vec::new()),
    };
    let mut requires = vec![format!("{RUNTIME_MODULE} {RUNTIME_VERSION}")];
    requires.extend(runtime_requires.iter().cloned());
    requires.extend(placed.dependencies.iter().cloned());
    let mut files = vec![
        File::text("go.mod", go_mod(module, &go, &requires, true)),
        File::text(
            format!("{RUNTIME_DIR}/go.mod"),
            go_mod(RUNTIME_MODULE, &go, &runtime_requires, false),
        ),
        File::text("main.go", main_go),
        File::text(
            "openapi.json",
            svc_backend_sdk::openapi::document(doc, "go"),
        ),
        File::text("openapi_test.go", tests::openapi_test()),
        File::text("config.go", config_go(doc)),
        File::text("internal/server/server_test.go", tests::server_test(doc)),
        File::text("internal/graph/graph.go", graph::graph_go(doc)),
        File::text("README.md", readme::readme(doc)),
        File::text(
            "Dockerfile",
            dockerfile(&go, pinned.is_some(), doc.logical.settings.server.port),
        ),
    ];
    if let Some(p) = &pinned {
        files.push(File::text("go.sum", p.sums));
    }
    for part in &selected {
        if let GoPart::File(file) = part {
            files.push(File::text(file.path, file.text));
        }
    }
    if uses.contains(&Use::McpClient) {
        files.push(crate::mcp::servers_file(doc));
    }
    if uses.contains(&Use::McpExpose) {
        files.push(mcp_expose(doc));
    }
    if uses.contains(&Use::A2aPublish) {
        files.push(crate::a2a::agent_file(doc).map_err(|d| vec![d])?);
    }
    if !placed.snippets.is_empty() {
        files.push(crate::connectors::delegates(
            placed.runtime.contains("upstream"),
        ));
    }
    // Every missing body of every graph is reported at once.
    let mut errors = Vec::new();
    if uses.contains(&Use::Agents) {
        match crate::agents::registry(doc) {
            Ok(file) => files.push(file),
            Err(d) => errors.extend(d),
        }
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

/// `internal/graph/mcp_expose.go`: settings.mcp.expose, the graph published
/// as one MCP tool by the runtime's mcp package (mcp/expose.go).
fn mcp_expose(doc: &Document) -> File {
    let tool_name = doc
        .logical
        .settings
        .mcp
        .tool_name
        .as_deref()
        .unwrap_or(&doc.id);
    let mut w = CodeWriter::go();
    w.line("// The graph published as one MCP tool at /mcp (settings.mcp.expose).");
    w.block("func init() {", "}", |w| {
        let (expose, config) = (
            w.name(RUNTIME_MCP, "Expose"),
            w.name(RUNTIME_MCP, "ExposeOptions"),
        );
        w.line(format!(
            "{expose}({config}{{ToolName: {}, ServerName: {}, ServerVersion: {}}})",
            quote(tool_name),
            quote(&doc.id),
            quote(&doc.version)
        ));
    });
    File::text(
        "internal/graph/mcp_expose.go",
        w.finish_file("package graph\n\n"),
    )
}

/// The `go` line of a module whose requirements ask for no newer Go.
pub const DEFAULT_GO: &str = "1.22";

/// go.mod of `module`, with its `requires` (`path version`); the
/// project's (`replaces`) points the runtime module at its copy.
/// Tab-indented, as `go mod edit -fmt` writes it.
fn go_mod(module: &str, go: &str, requires: &[String], replaces: bool) -> String {
    let mut w = CodeWriter::text("\t");
    w.line(format!("module {module}")).blank();
    w.line(format!("go {go}"));
    match requires {
        [] => {}
        [one] => {
            w.blank().line(format!("require {one}"));
        }
        _ => {
            w.blank().block("require (", ")", |w| {
                for r in requires {
                    w.line(r);
                }
            });
        }
    }
    if replaces {
        w.blank()
            .line(format!("replace {RUNTIME_MODULE} => ./{RUNTIME_DIR}"));
    }
    w.finish()
}

/// Constants of `package main`, taken from the document.
fn config_go(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut w = CodeWriter::go();
    // The graph registers itself with the runtime as its package loads.
    w.import_for_effects(&format!("{}/internal/graph", doc.id));
    if s.tracing.enabled {
        // OpenTelemetry registers itself too: only a traced graph links it.
        w.import_for_effects(RUNTIME_OTEL);
    }
    w.line("// Settings compiled from the graph document; change the document and recompile.")
        .line("// SVC_HOST and SVC_PORT override the address at run time; the graph itself")
        .line("// is internal/graph, which registers with the runtime as it loads.")
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
    w.finish_file("package main\n\n")
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
        .line(format!("COPY {RUNTIME_DIR}/go.mod {RUNTIME_DIR}/"))
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
            go_mod("svc_app", "1.22", &[], false),
            "module svc_app\n\ngo 1.22\n"
        );
        let with = go_mod(
            "svc_app",
            "1.22",
            &[
                "svc.dev/runtime v0.1.0".to_string(),
                "github.com/google/uuid v1.6.0".to_string(),
            ],
            true,
        );
        assert_eq!(
            with,
            "module svc_app\n\ngo 1.22\n\nrequire (\n\tsvc.dev/runtime v0.1.0\n\t\
             github.com/google/uuid v1.6.0\n)\n\nreplace svc.dev/runtime => ./svc-runtime\n"
        );
        assert_eq!(
            go_mod(
                "svc_app",
                "1.22",
                &["svc.dev/runtime v0.1.0".to_string()],
                true
            ),
            "module svc_app\n\ngo 1.22\n\nrequire svc.dev/runtime v0.1.0\n\n\
             replace svc.dev/runtime => ./svc-runtime\n"
        );
    }

    /// graph/doc.go names the version projects require the runtime at.
    #[test]
    fn the_runtime_says_its_version() {
        let doc = include_str!("../runtime/graph/doc.go");
        assert!(
            doc.contains(&format!(
                "{} {}",
                super::RUNTIME_MODULE,
                super::RUNTIME_VERSION
            )),
            "runtime/graph/doc.go does not name {} {}",
            super::RUNTIME_MODULE,
            super::RUNTIME_VERSION
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
            child.contains("if steps == 3 {\n\t\t\treturn nil, svc.StepLimit(3)"),
            "{child}"
        );
        assert!(
            child.contains("schema_sub.Step(ctx, st, \"sub__say\", node_sub__say, false)"),
            "{child}"
        );
        // A child's steps send no events (a child cannot set `streaming`).
        assert!(
            !child.contains("StepObserved") && !child.contains("Routed("),
            "{child}"
        );
        assert!(text("internal/graph/node_sub.go")
            .contains("svc.RunChild(ctx, \"sub\", schema_sub, run_sub,"));
        assert!(files
            .iter()
            .any(|f| f.path == "svc-runtime/graph/subgraph.go"));
    }
}
