//! Assembles the Maven project; one module per file it writes.

use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::runtime_files::fill;
use svc_backend_sdk::{Connectors, Diagnostic, File};

use crate::java::package_segment;
use crate::{graph, nodes, tests};

mod application;
mod config;
mod container;
pub(crate) mod pom;
mod readme;
mod state;

use application::application_java;
use config::{ai_config, application_yaml, spring_yml};
use pom::{dependency_xml, pom};
use readme::readme;
use state::graph_state;
pub use state::legacy_field;

const RUNTIME: &[(&str, &str)] = &[
    (
        "runtime/SvcError.java",
        include_str!("../../runtime/java/SvcError.java"),
    ),
    (
        "runtime/GraphNode.java",
        include_str!("../../runtime/java/GraphNode.java"),
    ),
    (
        "runtime/StateSchema.java",
        include_str!("../../runtime/java/StateSchema.java"),
    ),
    (
        "runtime/Text.java",
        include_str!("../../runtime/java/Text.java"),
    ),
    (
        "runtime/GraphRun.java",
        include_str!("../../runtime/java/GraphRun.java"),
    ),
    (
        "runtime/Values.java",
        include_str!("../../runtime/java/Values.java"),
    ),
    (
        "runtime/RequestJson.java",
        include_str!("../../runtime/java/RequestJson.java"),
    ),
    (
        "runtime/EnvFile.java",
        include_str!("../../runtime/java/EnvFile.java"),
    ),
    (
        "runtime/HealthCheck.java",
        include_str!("../../runtime/java/HealthCheck.java"),
    ),
    (
        "config/AuthSettings.java",
        include_str!("../../runtime/java/AuthSettings.java"),
    ),
    (
        "web/GraphController.java",
        include_str!("../../runtime/java/GraphController.java"),
    ),
    (
        "web/ErrorAdvice.java",
        include_str!("../../runtime/java/ErrorAdvice.java"),
    ),
];
const UPSTREAM: (&str, &str) = (
    "runtime/Upstream.java",
    include_str!("../../runtime/java/Upstream.java"),
);
const HTTP_TOOL: (&str, &str) = (
    "runtime/HttpTool.java",
    include_str!("../../runtime/java/HttpTool.java"),
);
/// What connectors' code reaches of the runtime, in the package
/// `com.svc.connectors.runtime` (the runtime's own is named after the graph,
/// which a connector cannot know): `Fields` whenever the graph has a
/// connector node, `Upstream` for the runtime helper `upstream`.
const CONNECTOR_FIELDS: (&str, &str) = (
    "Fields.java",
    include_str!("../../runtime/java/connectors/Fields.java"),
);
const CONNECTOR_UPSTREAM: (&str, &str) = (
    "Upstream.java",
    include_str!("../../runtime/java/connectors/Upstream.java"),
);
const CONNECTOR_RUNTIME_DIR: &str = "src/main/java/com/svc/connectors/runtime";
/// The runtime helpers connectors may ask for (`svc-runtime:NAME`).
const CONNECTOR_HELPERS: &[&str] = &["upstream"];
const LLM_CLIENT: (&str, &str) = (
    "runtime/LlmClient.java",
    include_str!("../../runtime/java/LlmClient.java"),
);
/// A graph with settings.streaming: its runs' events, the observed run, the
/// SSE answer and, with LLM nodes, the model client that streams tokens.
const STREAMING: &[(&str, &str)] = &[
    (
        "runtime/RunEvents.java",
        include_str!("../../runtime/java/RunEvents.java"),
    ),
    (
        "runtime/ObservedRun.java",
        include_str!("../../runtime/java/ObservedRun.java"),
    ),
    (
        "web/EventStream.java",
        include_str!("../../runtime/java/EventStream.java"),
    ),
];
const STREAMING_LLM_CLIENT: (&str, &str) = (
    "runtime/StreamingLlmClient.java",
    include_str!("../../runtime/java/StreamingLlmClient.java"),
);
/// Agents, tool-calling llm nodes and intent classifiers: python-svc's
/// semantics down to the text fed to the model (PyJson). Each part ships
/// its tests (`runtime/test/`, against ModelStub, a local model provider).
const AGENTS: (&str, &str) = (
    "runtime/Agents.java",
    include_str!("../../runtime/java/Agents.java"),
);
const AGENTS_TEST: (&str, &str) = (
    "AgentsTest.java",
    include_str!("../../runtime/test/AgentsTest.java"),
);
const INTENT_CLASSIFIER: (&str, &str) = (
    "runtime/IntentClassifier.java",
    include_str!("../../runtime/java/IntentClassifier.java"),
);
const INTENT_CLASSIFIER_TEST: (&str, &str) = (
    "IntentClassifierTest.java",
    include_str!("../../runtime/test/IntentClassifierTest.java"),
);
const RETRIEVAL: (&str, &str) = (
    "runtime/Retrieval.java",
    include_str!("../../runtime/java/Retrieval.java"),
);
const RETRIEVAL_TEST: (&str, &str) = (
    "RetrievalTest.java",
    include_str!("../../runtime/test/RetrievalTest.java"),
);
const PY_JSON: (&str, &str) = (
    "runtime/PyJson.java",
    include_str!("../../runtime/java/PyJson.java"),
);
const PY_JSON_TESTS: &[(&str, &str)] = &[
    (
        "PyJsonTest.java",
        include_str!("../../runtime/test/PyJsonTest.java"),
    ),
    (
        "ModelStub.java",
        include_str!("../../runtime/test/ModelStub.java"),
    ),
];
const MVNW: &str = include_str!("../../runtime/wrapper/mvnw");
const MVNW_CMD: &str = include_str!("../../runtime/wrapper/mvnw.cmd");
const WRAPPER_PROPERTIES: &str = include_str!("../../runtime/wrapper/maven-wrapper.properties");
const GITIGNORE: &str = include_str!("../../runtime/gitignore");

/// Spring Boot version of generated projects.
pub const SPRING_BOOT: &str = "3.5.16";

pub fn emit(doc: &Document, connectors: &Connectors) -> Result<Vec<File>, Vec<Diagnostic>> {
    let placed =
        svc_backend_sdk::connectors::place(doc, "java-svc", CONNECTOR_HELPERS, connectors)?;
    let bad: Vec<Diagnostic> = placed
        .dependencies
        .iter()
        .filter_map(|d| dependency_xml(d).err())
        .collect();
    if !bad.is_empty() {
        return Err(bad);
    }
    let pkg = package_segment(&doc.id);
    let base = format!("src/main/java/com/svc/{pkg}");
    // Agents reach the provider through LlmClient, even with no model of their own.
    let llm = doc.has_llm_nodes() || svc_backend_sdk::agents::runs_agents(doc);
    let mut files = vec![
        File::text("pom.xml", pom(doc, &placed.dependencies)),
        File::text("mvnw", MVNW).executable(),
        File::text("mvnw.cmd", MVNW_CMD),
        File::text(".mvn/wrapper/maven-wrapper.properties", WRAPPER_PROPERTIES),
        File::text(".gitignore", GITIGNORE),
        File::text("Dockerfile", container::dockerfile(doc, &pkg)),
        File::text(".dockerignore", container::DOCKERIGNORE),
        File::text("application.yaml", application_yaml(doc)),
        File::text(
            "openapi.json",
            svc_backend_sdk::openapi::document(doc, "java-svc"),
        ),
        File::text("env.yaml", svc_backend_sdk::environment::env_yaml(doc)),
        File::text("README.md", readme(doc)),
        File::text("src/main/resources/application.yml", spring_yml(doc)),
        File::text(format!("{base}/Application.java"), application_java(&pkg)),
        File::text(format!("{base}/GraphState.java"), graph_state(doc, &pkg)),
        File::text(
            format!("{base}/graph/MainGraph.java"),
            graph::main_graph(doc, &pkg),
        ),
        File::text(
            format!("src/test/java/com/svc/{pkg}/GraphHttpTests.java"),
            tests::http_tests(doc, &pkg),
        ),
    ];
    let mut runtime: Vec<(&str, &str)> = RUNTIME.to_vec();
    let http_tools = doc.http_tools().next().is_some();
    let connector_upstream = placed.runtime.contains("upstream");
    // Embeddings are fetched through Upstream too.
    let retrieves = doc
        .logical
        .nodes
        .iter()
        .any(|n| matches!(n.kind, NodeKind::Rag(_)));
    if llm || http_tools || connector_upstream || retrieves {
        runtime.push(UPSTREAM);
    }
    if llm || http_tools {
        runtime.push(HTTP_TOOL);
    }
    if doc.logical.settings.streaming {
        runtime.extend(STREAMING);
        if llm {
            runtime.push(STREAMING_LLM_CLIENT);
        }
    }
    let agentic = svc_backend_sdk::agents::runs_agents(doc);
    let classifies = doc
        .logical
        .nodes
        .iter()
        .any(|n| matches!(n.kind, NodeKind::IntentClassifier(_)));
    let mut runtime_tests: Vec<(&str, &str)> = Vec::new();
    if agentic {
        runtime.push(AGENTS);
        runtime_tests.push(AGENTS_TEST);
        files.push(File::text(
            format!("{base}/graph/GraphAgents.java"),
            crate::agents::graph_agents(doc, &pkg),
        ));
    }
    if classifies {
        runtime.push(INTENT_CLASSIFIER);
        runtime_tests.push(INTENT_CLASSIFIER_TEST);
    }
    if retrieves {
        runtime.push(RETRIEVAL);
        runtime_tests.push(RETRIEVAL_TEST);
    }
    if agentic || classifies || retrieves {
        runtime.push(PY_JSON);
        runtime_tests.extend(PY_JSON_TESTS);
    }
    for (name, text) in runtime_tests {
        let text = fill(name, text, &[("PACKAGE", &pkg)]).map_err(|d| vec![d])?;
        files.push(File::text(
            format!("src/test/java/com/svc/{pkg}/runtime/{name}"),
            text,
        ));
    }
    if llm {
        runtime.push(LLM_CLIENT);
        files.push(File::text(
            format!("{base}/config/AiConfig.java"),
            ai_config(doc, &pkg),
        ));
    }
    for (path, text) in runtime {
        let text = fill(path, text, &[("PACKAGE", &pkg)]).map_err(|d| vec![d])?;
        files.push(File::text(format!("{base}/{path}"), text));
    }
    let mut for_connectors = Vec::new();
    if !placed.is_empty() {
        for_connectors.push(CONNECTOR_FIELDS);
    }
    if connector_upstream {
        for_connectors.push(CONNECTOR_UPSTREAM);
    }
    for (path, text) in for_connectors {
        let text = fill(path, text, &[("PACKAGE", &pkg)]).map_err(|d| vec![d])?;
        files.push(File::text(format!("{CONNECTOR_RUNTIME_DIR}/{path}"), text));
    }
    files.extend(nodes::files(doc, &pkg, &base, &placed.snippets)?);
    placed.merge_into(&mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}
