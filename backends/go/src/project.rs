//! Assembles the Go module.

use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::runtime_files::fill;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Connectors, Diagnostic, File};

use crate::golang::quote;
use crate::{graph, nodes, readme, tests};

const STATE_GO: &str = include_str!("../runtime/state.go");
const ERRORS_GO: &str = include_str!("../runtime/errors.go");
const RUNTIME_GO: &str = include_str!("../runtime/runtime.go");
const RUNTIME_TEST_GO: &str = include_str!("../runtime/runtime_test.go");
const TEXT_GO: &str = include_str!("../runtime/text.go");
const ENCODE_GO: &str = include_str!("../runtime/encode.go");
const CONDITIONS_GO: &str = include_str!("../runtime/conditions.go");
const UPSTREAM_GO: &str = include_str!("../runtime/upstream.go");
const HTTPTOOL_GO: &str = include_str!("../runtime/httptool.go");
const LLM_GO: &str = include_str!("../runtime/llm.go");
const LLM_TEST_GO: &str = include_str!("../runtime/llm_test.go");
const AGENTS_GO: &str = include_str!("../runtime/agents.go");
const AGENTS_TEST_GO: &str = include_str!("../runtime/agents_test.go");
const INTENT_GO: &str = include_str!("../runtime/intent.go");
const INTENT_TEST_GO: &str = include_str!("../runtime/intent_test.go");
const PYTEXT_GO: &str = include_str!("../runtime/pytext.go");
const PYTEXT_TEST_GO: &str = include_str!("../runtime/pytext_test.go");
const RAG_GO: &str = include_str!("../runtime/rag.go");
const RAG_TEST_GO: &str = include_str!("../runtime/rag_test.go");
const SERVER_GO: &str = include_str!("../runtime/server.go");
const REQUEST_GO: &str = include_str!("../runtime/request.go");
const MAIN_GO: &str = include_str!("../runtime/main.go");
// settings.streaming: the run's events (graph), the model's stream (with
// llm nodes) and the text/event-stream answer (server).
const STREAM_GO: &str = include_str!("../runtime/stream.go");
const LLM_STREAM_GO: &str = include_str!("../runtime/llm_stream.go");
const SERVER_STREAM_GO: &str = include_str!("../runtime/server_stream.go");
const STREAM_TEST_GO: &str = include_str!("../runtime/stream_test.go");
const SERVER_STREAM_TEST_GO: &str = include_str!("../runtime/server_stream_test.go");
const DOCKERIGNORE: &str = include_str!("../runtime/dockerignore");
const GITIGNORE: &str = include_str!("../runtime/gitignore");

/// The runtime helpers connectors may ask for (`svc-runtime:NAME`):
/// `upstream` is upstream.go, the HTTP client of HTTP tools and models.
const CONNECTOR_HELPERS: &[&str] = &["upstream"];

pub fn emit(doc: &Document, connectors: &Connectors) -> Result<Vec<File>, Vec<Diagnostic>> {
    let placed = svc_backend_sdk::connectors::place(doc, "go", CONNECTOR_HELPERS, connectors)?;
    let module = &doc.id;
    let (llm, http_tools) = (doc.has_llm_nodes(), doc.http_tools().next().is_some());
    let graph_import = format!("{module}/internal/graph");
    let server_import = format!("{module}/internal/server");
    let main_go = fill(
        "main.go",
        MAIN_GO,
        &[("SERVER_IMPORT", &server_import), ("SERVICE_NAME", module)],
    )
    .map_err(|d| vec![d])?;
    let server_go =
        fill("server.go", SERVER_GO, &[("GRAPH_IMPORT", &graph_import)]).map_err(|d| vec![d])?;

    let mut files = vec![
        File::text("go.mod", go_mod(module, &placed.dependencies)),
        File::text("main.go", main_go),
        File::text(
            "openapi.json",
            svc_backend_sdk::openapi::document(doc, "go"),
        ),
        File::text("openapi_test.go", tests::openapi_test()),
        File::text("config.go", config_go(doc)),
        File::text("internal/server/server.go", server_go),
        File::text("internal/server/request.go", REQUEST_GO),
        File::text("internal/server/server_test.go", tests::server_test(doc)),
        File::text("internal/graph/state.go", STATE_GO),
        File::text("internal/graph/errors.go", ERRORS_GO),
        File::text("internal/graph/runtime.go", RUNTIME_GO),
        File::text("internal/graph/runtime_test.go", RUNTIME_TEST_GO),
        File::text("internal/graph/text.go", TEXT_GO),
        File::text("internal/graph/encode.go", ENCODE_GO),
        File::text("internal/graph/conditions.go", CONDITIONS_GO),
        File::text("internal/graph/graph.go", graph::graph_go(doc)),
        File::text("README.md", readme::readme(doc)),
        File::text("Dockerfile", dockerfile()),
        File::text(".dockerignore", DOCKERIGNORE),
        File::text(".gitignore", GITIGNORE),
    ];
    if doc.logical.settings.streaming {
        let graph_import = [("GRAPH_IMPORT", graph_import.as_str())];
        let server_stream =
            fill("server_stream.go", SERVER_STREAM_GO, &graph_import).map_err(|d| vec![d])?;
        let server_stream_test = fill(
            "server_stream_test.go",
            SERVER_STREAM_TEST_GO,
            &graph_import,
        )
        .map_err(|d| vec![d])?;
        files.push(File::text("internal/server/stream.go", server_stream));
        files.push(File::text(
            "internal/server/stream_test.go",
            server_stream_test,
        ));
        files.push(File::text("internal/graph/stream.go", STREAM_GO));
        files.push(File::text("internal/graph/stream_test.go", STREAM_TEST_GO));
        if llm {
            files.push(File::text("internal/graph/llm_stream.go", LLM_STREAM_GO));
        }
    }
    // Agents and classifiers answer as python-svc does, down to the text
    // they feed the model (pytext.go).
    let agentic = svc_backend_sdk::agents::runs_agents(doc);
    let classifies = doc
        .logical
        .nodes
        .iter()
        .any(|n| matches!(n.kind, NodeKind::IntentClassifier(_)));
    let retrieves = doc
        .logical
        .nodes
        .iter()
        .any(|n| matches!(n.kind, NodeKind::Rag(_)));
    if agentic {
        files.push(crate::agents::registry(doc)?);
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
    if agentic || classifies || retrieves {
        files.push(File::text("internal/graph/pytext.go", PYTEXT_GO));
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
    files.extend(nodes::files(doc, &placed.snippets)?);
    placed.merge_into(&mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// go.mod, with the modules connector code requires (`path vX.Y.Z`).
/// Tab-indented, as `go mod edit -fmt` writes it.
fn go_mod(module: &str, requires: &[String]) -> String {
    let mut w = CodeWriter::text("\t");
    w.line(format!("module {module}")).blank();
    w.line("go 1.22");
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

/// A static binary, built on the Go image and run as a non-root user on a
/// distroless one.
fn dockerfile() -> String {
    let mut w = CodeWriter::text("    ");
    w.line("# Build a static binary, then run it as a non-root user on a minimal image.")
        .line("FROM golang:1.22 AS build")
        .line("WORKDIR /src")
        .line("COPY go.mod ./")
        .line("RUN go mod download all")
        .line("COPY . .")
        .line("RUN CGO_ENABLED=0 go build -trimpath -ldflags=\"-s -w\" -o /out/service .")
        .blank();
    w.line("FROM gcr.io/distroless/static-debian12:nonroot")
        .line("COPY --from=build /out/service /service")
        .line("# distroless's `nonroot` user, by number so the runtime needs no passwd lookup")
        .line("USER 65532:65532")
        .line("EXPOSE 8000")
        .line("ENTRYPOINT [\"/service\"]");
    w.finish()
}

#[cfg(test)]
mod go_mod_tests {
    use super::go_mod;

    #[test]
    fn connector_modules_are_required_in_go_mod() {
        assert_eq!(go_mod("svc_app", &[]), "module svc_app\n\ngo 1.22\n");
        let with = go_mod("svc_app", &["github.com/google/uuid v1.6.0".to_string()]);
        assert_eq!(
            with,
            "module svc_app\n\ngo 1.22\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n)\n"
        );
    }
}
