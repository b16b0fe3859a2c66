//! Assembles the Maven project; one module per file it writes.

use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::runtime_files::fill;
use svc_backend_sdk::subgraphs::any_graph;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Connectors, Diagnostic, File};

use crate::java::package_segment;
use crate::scope::all_graphs;
use crate::{graph, nodes, tests};

mod a2a;
mod application;
mod config;
mod container;
pub(crate) mod mcp;
pub(crate) mod pom;
mod readme;
mod state;
mod threads;

use application::application_java;
use config::{ai_config, application_yaml, spring_yml};
use pom::{dependency_xml, pom};
use readme::readme;
use state::graph_state;
pub use state::{legacy_field, schema_constant};

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
    // The spans of a run; a traced graph's Telemetry installs what records them.
    (
        "runtime/Tracing.java",
        include_str!("../../runtime/java/Tracing.java"),
    ),
    // GraphRun's hitl step throws it (used by graphs with a checkpointer).
    (
        "runtime/Interrupt.java",
        include_str!("../../runtime/java/Interrupt.java"),
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
    // The A2A caller a native body reads (Caller.current()); null outside an A2A call.
    (
        "runtime/Caller.java",
        include_str!("../../runtime/java/Caller.java"),
    ),
    (
        "runtime/HealthCheck.java",
        include_str!("../../runtime/java/HealthCheck.java"),
    ),
    (
        "runtime/TrainingRun.java",
        include_str!("../../runtime/java/TrainingRun.java"),
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
    (
        "web/RuntimeCounts.java",
        include_str!("../../runtime/java/RuntimeCounts.java"),
    ),
];
/// settings.tracing.enabled: OpenTelemetry, installed as the runtime's tracer.
const TELEMETRY: (&str, &str) = (
    "config/Telemetry.java",
    include_str!("../../runtime/java/Telemetry.java"),
);
const TELEMETRY_TEST: &str = include_str!("../../runtime/test/TelemetryTest.java");
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
const OBSERVED_RUN_TEST: (&str, &str) = (
    "ObservedRunTest.java",
    include_str!("../../runtime/test/ObservedRunTest.java"),
);
const STREAMING_LLM_CLIENT: (&str, &str) = (
    "runtime/StreamingLlmClient.java",
    include_str!("../../runtime/java/StreamingLlmClient.java"),
);
/// A streaming graph with agents: its workers' turns stream (tested here).
const STREAMING_AGENTS_TEST: (&str, &str) = (
    "StreamingAgentsTest.java",
    include_str!("../../runtime/test/StreamingAgentsTest.java"),
);
/// Routers with conditions: python-svc's operators.
const CONDITIONS: (&str, &str) = (
    "runtime/Conditions.java",
    include_str!("../../runtime/java/Conditions.java"),
);
const CONDITIONS_TEST: (&str, &str) = (
    "ConditionsTest.java",
    include_str!("../../runtime/test/ConditionsTest.java"),
);
/// A graph with subgraph nodes: python-svc's run_child.
const SUBGRAPHS: (&str, &str) = (
    "runtime/Subgraphs.java",
    include_str!("../../runtime/java/Subgraphs.java"),
);
const SUBGRAPHS_TEST: (&str, &str) = (
    "SubgraphsTest.java",
    include_str!("../../runtime/test/SubgraphsTest.java"),
);
/// Agents, tool-calling llm nodes and intent classifiers: python-svc's
/// semantics down to the text fed to the model (PyJson). Each part ships
/// its tests (`runtime/test/`, against ModelStub, a local model provider).
const AGENTS: (&str, &str) = (
    "runtime/Agents.java",
    include_str!("../../runtime/java/Agents.java"),
);
/// Agents of kind a2a (Agents reaches them through it).
const A2A_PEERS: (&str, &str) = (
    "runtime/A2aPeers.java",
    include_str!("../../runtime/java/A2aPeers.java"),
);
const A2A_PEERS_TEST: (&str, &str) = (
    "A2aPeersTest.java",
    include_str!("../../runtime/test/A2aPeersTest.java"),
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
const MCP_STUB: &str = include_str!("../../runtime/test/McpStub.java");
const MVNW: &str = include_str!("../../runtime/wrapper/mvnw");
const MVNW_CMD: &str = include_str!("../../runtime/wrapper/mvnw.cmd");
const WRAPPER_PROPERTIES: &str = include_str!("../../runtime/wrapper/maven-wrapper.properties");
const GITIGNORE: &str = include_str!("../../runtime/gitignore");

/// `META-INF/spring.factories`: each of `analyzers` (classes under
/// `com.svc.<pkg>`) prints a failed start (an MCP server out of reach, an
/// A2A caller's unset token) as Spring Boot prints one.
fn spring_factories(pkg: &str, analyzers: &[&str]) -> File {
    let classes: Vec<String> = analyzers
        .iter()
        .map(|a| format!("com.svc.{pkg}.{a}"))
        .collect();
    let mut w = CodeWriter::text("  ");
    w.line(format!(
        "org.springframework.boot.diagnostics.FailureAnalyzer={}",
        classes.join(",")
    ));
    File::text("src/main/resources/META-INF/spring.factories", w.finish())
}

/// Spring Boot version of generated projects.
pub const SPRING_BOOT: &str = "3.5.16";

/// The graph's test cases (svc test's NAME.tests.json) as JUnit runs them.
const CASES_TEST: &str = include_str!("../../runtime/test/SvcCasesTests.java");

/// The runner of the graph's test cases and the cases themselves (the
/// bundle svc compile passes as the option `testCases`).
pub fn cases(doc: &Document, bundle: &str) -> Result<Vec<File>, Vec<Diagnostic>> {
    let pkg = package_segment(&doc.id);
    let runner =
        fill("SvcCasesTests.java", CASES_TEST, &[("PACKAGE", &pkg)]).map_err(|d| vec![d])?;
    Ok(vec![
        File::text(
            format!("src/test/java/com/svc/{pkg}/SvcCasesTests.java"),
            runner,
        ),
        File::text("src/test/resources/svc-cases.json", bundle),
    ])
}

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
    // What the runtime must hold is decided over every graph: a child's
    // model, tool or retriever runs in the same service.
    let has = |kind: fn(&NodeKind) -> bool| {
        any_graph(doc, |d| d.logical.nodes.iter().any(|n| kind(&n.kind)))
    };
    let agentic = any_graph(doc, svc_backend_sdk::agents::runs_agents);
    // Agents reach the provider through LlmClient, even with no model of their own.
    let llm = agentic || any_graph(doc, Document::has_llm_nodes);
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
        File::text(
            format!("{base}/Application.java"),
            application_java(doc, &pkg),
        ),
        File::text(format!("{base}/GraphState.java"), graph_state(doc, &pkg)),
        File::text(
            format!("src/test/java/com/svc/{pkg}/GraphHttpTests.java"),
            tests::http_tests(doc, &pkg),
        ),
    ];
    let mut runtime: Vec<(&str, &str)> = RUNTIME.to_vec();
    let http_tools = any_graph(doc, |d| d.http_tools().next().is_some());
    let connector_upstream = placed.runtime.contains("upstream");
    // Embeddings are fetched through Upstream too.
    let retrieves = has(|k| matches!(k, NodeKind::Rag(_)));
    // McpServers has Upstream let the JDK resend a POST on a dead connection.
    let mcp_clients = svc_backend_sdk::subgraphs::calls_mcp_servers(doc);
    if llm || http_tools || connector_upstream || retrieves || mcp_clients {
        runtime.push(UPSTREAM);
    }
    if llm || http_tools {
        runtime.push(HTTP_TOOL);
    }
    let (threads_main, threads_tests) =
        threads::runtime_files(doc.logical.settings.checkpointer.kind);
    runtime.extend(threads_main);
    let mut runtime_tests: Vec<(&str, &str)> = threads_tests;
    // The FailureAnalyzers that print a refused start without a stack trace.
    let mut analyzers: Vec<&str> = Vec::new();
    files.extend(threads::files(doc, &pkg));
    if mcp_clients {
        runtime.extend(mcp::CLIENT);
        runtime_tests.extend(mcp::CLIENT_TESTS);
        files.push(mcp::config(doc, &pkg));
        analyzers.push("runtime.McpStartFailureAnalyzer");
        // The servers of the project's own tests (GraphHttpTests' @TestBean).
        let stub = fill("McpStub.java", MCP_STUB, &[("PACKAGE", &pkg)]).map_err(|d| vec![d])?;
        files.push(File::text(
            format!("src/test/java/com/svc/{pkg}/McpStub.java"),
            stub,
        ));
    }
    if doc.logical.settings.mcp.expose {
        runtime.push(mcp::ENDPOINT);
    }
    let published = doc.logical.settings.a2a.enabled;
    if published {
        runtime.push(a2a::ENDPOINT);
        runtime.push(a2a::CREDENTIALS);
        runtime.push(a2a::START_FAILURE_ANALYZER);
        analyzers.push("web.A2aStartFailureAnalyzer");
        files.push(a2a::agent(doc, &pkg).map_err(|d| vec![d])?);
        for (name, text) in a2a::TESTS {
            let tests = fill(name, text, &[("PACKAGE", &pkg)]).map_err(|d| vec![d])?;
            files.push(File::text(
                format!("src/test/java/com/svc/{pkg}/web/{name}"),
                tests,
            ));
        }
    }
    if !analyzers.is_empty() {
        files.push(spring_factories(&pkg, &analyzers));
    }
    if doc.logical.settings.tracing.enabled {
        runtime.push(TELEMETRY);
        let test = fill("TelemetryTest.java", TELEMETRY_TEST, &[("PACKAGE", &pkg)])
            .map_err(|d| vec![d])?;
        files.push(File::text(
            format!("src/test/java/com/svc/{pkg}/config/TelemetryTest.java"),
            test,
        ));
    }
    if doc.logical.settings.streaming {
        runtime.extend(STREAMING);
        runtime_tests.push(OBSERVED_RUN_TEST);
        if llm {
            runtime.push(STREAMING_LLM_CLIENT);
        }
    }
    let classifies = has(|k| matches!(k, NodeKind::IntentClassifier(_)));
    if has(|k| matches!(k, NodeKind::Router(r) if r.branches.iter().any(|b| b.when.is_some()))) {
        runtime.push(CONDITIONS);
        runtime_tests.push(CONDITIONS_TEST);
    }
    if has(|k| matches!(k, NodeKind::Subgraph(_))) {
        runtime.push(SUBGRAPHS);
        runtime_tests.push(SUBGRAPHS_TEST);
    }
    if agentic {
        runtime.push(AGENTS);
        runtime.push(A2A_PEERS);
        runtime_tests.push(A2A_PEERS_TEST);
        runtime_tests.push(AGENTS_TEST);
        if doc.logical.settings.streaming {
            runtime_tests.push(STREAMING_AGENTS_TEST);
        }
    }
    if classifies {
        runtime.push(INTENT_CLASSIFIER);
        runtime_tests.push(INTENT_CLASSIFIER_TEST);
    }
    if retrieves {
        runtime.push(RETRIEVAL);
        runtime_tests.push(RETRIEVAL_TEST);
    }
    if agentic || classifies || retrieves || published {
        runtime.push(PY_JSON);
    }
    // Its tests call the model client too.
    if agentic || classifies || retrieves {
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
    // Each graph in its package: its run loop (the document's own is
    // MainGraph), its agents and its nodes.
    let mut errors = Vec::new();
    for (d, scope) in &all_graphs(doc, &pkg) {
        files.push(File::text(
            format!("{}/graph/{}.java", scope.dir, scope.graph_class()),
            graph::graph_class(d, scope),
        ));
        if svc_backend_sdk::agents::runs_agents(d) {
            files.push(File::text(
                format!("{}/graph/GraphAgents.java", scope.dir),
                crate::agents::graph_agents(d, scope),
            ));
        }
        match nodes::files(d, scope, &placed.snippets) {
            Ok(made) => files.extend(made),
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    placed.merge_into(&mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

#[cfg(test)]
mod emit_tests {
    use serde_json::{json, Value};
    use svc_backend_sdk::{Connectors, File};

    use super::emit;
    use crate::scope::samples::{graph, parse, subgraph, template};

    /// A child whose model, HTTP tool, agents and retriever are the only
    /// ones of the document; its models read `model`.
    fn child(model: Value) -> Value {
        graph(
            "child",
            json!([
                {"id": "docs", "kind": "rag", "query": "{{a}}", "outputKey": "a", "documents": [{"id": "d", "text": "t"}]},
                {"id": "ask", "kind": "agent", "agent": "writer", "input": "{{a}}", "outputKey": "a"},
                {"id": "say", "kind": "llm", "prompt": {"user": "{{a}}"}, "outputKey": "a"}
            ]),
            json!({
                "tools": [{"id": "crm", "kind": "http", "endpoint": "env:CRM_URL"}],
                "agents": [{"id": "writer", "kind": "worker", "toolIds": ["crm"]}],
                "settings": {"model": model}
            }),
        )
    }

    fn emitted(doc: &Value) -> Vec<File> {
        emit(&parse(doc), &Connectors::new([])).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn text<'a>(files: &'a [File], path: &str) -> std::borrow::Cow<'a, str> {
        let file = files
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("no {path}"));
        String::from_utf8_lossy(&file.contents)
    }

    #[test]
    fn what_only_a_child_uses_ships_too() {
        let model = json!({"provider": "openai", "name": "m", "baseUrlEnv": "CHILD_URL", "apiKeyEnv": "CHILD_KEY"});
        let files = emitted(&graph(
            "root",
            json!([template("pad"), subgraph("sub", child(model))]),
            json!({}),
        ));
        let base = "src/main/java/com/svc/root";
        for path in [
            "runtime/Subgraphs.java",
            "runtime/LlmClient.java",
            "config/AiConfig.java",
            "runtime/HttpTool.java",
            "runtime/Upstream.java",
            "runtime/Agents.java",
            "runtime/PyJson.java",
            "runtime/Retrieval.java",
            "subgraphs/sub/graph/ChildGraph.java",
            "subgraphs/sub/graph/GraphAgents.java",
            "subgraphs/sub/nodes/DocsNode.java",
        ] {
            assert!(
                files.iter().any(|f| f.path == format!("{base}/{path}")),
                "{path}"
            );
        }
        assert!(files
            .iter()
            .any(|f| f.path == "src/test/java/com/svc/root/runtime/SubgraphsTest.java"));
        assert!(files
            .iter()
            .any(|f| f.path == "src/main/resources/documents/sub__docs.json"));
        // The document's own graph runs no agents.
        assert!(!files
            .iter()
            .any(|f| f.path == format!("{base}/graph/GraphAgents.java")));
        let yml = text(&files, "src/main/resources/application.yml");
        assert!(
            yml.contains("  tools:\n    sub__crm:\n      endpoint: \"${CRM_URL:}\""),
            "{yml}"
        );
        let child = text(
            &files,
            &format!("{base}/subgraphs/sub/graph/ChildGraph.java"),
        );
        assert!(
            child.contains("@Value(\"${svc.tools.sub__crm.endpoint:}\") String crmEndpoint"),
            "{child}"
        );
        let tests = text(&files, "src/test/java/com/svc/root/GraphHttpTests.java");
        for want in [
            "stub.createContext(\"/tools/sub__crm\"",
            "registry.add(\"svc.tools.sub__crm.endpoint\", () -> base + \"/tools/sub__crm\");",
            "registry.add(\"CHILD_URL\", () -> base + \"/v1\");",
        ] {
            assert!(tests.contains(want), "{want}");
        }
    }

    /// Each graph's models call the provider its own settings.model names:
    /// no variable of it in application.yml, read when a model calls.
    #[test]
    fn every_graph_calls_its_own_model_provider() {
        let model = |url: &str, key: &str| json!({"provider": "openai", "name": "m", "baseUrlEnv": url, "apiKeyEnv": key});
        let say =
            json!({"id": "say", "kind": "llm", "prompt": {"user": "{{a}}"}, "outputKey": "a"});
        let files = emitted(&graph(
            "root",
            json!([say, subgraph("sub", child(model("CHILD_URL", "CHILD_KEY")))]),
            json!({"settings": {"model": model("ROOT_URL", "ROOT_KEY")}}),
        ));
        let base = "src/main/java/com/svc/root";
        let provider = |url: &str, key: &str| {
            format!("new LlmClient.Model(new LlmClient.Provider(\"{url}\", \"{key}\"), \"m\", null, null)")
        };
        for (path, url, key) in [
            ("nodes/SayNode.java", "ROOT_URL", "ROOT_KEY"),
            ("subgraphs/sub/nodes/SayNode.java", "CHILD_URL", "CHILD_KEY"),
            (
                "subgraphs/sub/graph/GraphAgents.java",
                "CHILD_URL",
                "CHILD_KEY",
            ),
        ] {
            let code = text(&files, &format!("{base}/{path}"));
            assert!(code.contains(&provider(url, key)), "{path}\n---\n{code}");
        }
        let yml = text(&files, "src/main/resources/application.yml");
        for variable in ["ROOT_URL", "ROOT_KEY", "CHILD_URL", "CHILD_KEY", "llm"] {
            assert!(!yml.contains(variable), "{variable}\n---\n{yml}");
        }
        let config = text(&files, &format!("{base}/config/AiConfig.java"));
        assert!(
            config.contains("public LlmClient llmClient(Environment environment) {\n        return new LlmClient(environment::getProperty, Duration.ofMillis(30000));"),
            "{config}"
        );
        let tests = text(&files, "src/test/java/com/svc/root/GraphHttpTests.java");
        for var in ["ROOT_URL", "CHILD_URL"] {
            let want = format!("registry.add(\"{var}\", () -> base + \"/v1\");");
            assert!(tests.contains(&want), "{want}\n---\n{tests}");
        }
        for var in ["README.md", "env.yaml"] {
            let listing = text(&files, var);
            for name in ["ROOT_URL", "ROOT_KEY", "CHILD_URL", "CHILD_KEY"] {
                assert!(listing.contains(name), "{var}: {name}\n---\n{listing}");
            }
        }
    }
}
