//! Assembles the Maven project; one module per file it writes.

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::parts::{self, Use};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Connectors, Diagnostic, File};

use crate::java::{package_segment, runtime, RUNTIME_DIR, RUNTIME_PACKAGE, RUNTIME_TEST_DIR};
use crate::parts::{JavaPart, Library};
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
use pom::{dependency_xml, reactor_pom, runtime_pom, service_pom};
use readme::readme;
use state::graph_state;
pub use state::{legacy_field, schema_constant};

/// What connectors' code reaches of the runtime, in the package
/// `com.svc.connectors.runtime`, delegating to `dev.svc.runtime` (connectors
/// written when the runtime's package was named after the graph call
/// these): `Fields` whenever the graph has a connector node, `Upstream` for
/// the runtime helper `upstream`. Copied as they are.
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
const MVNW: &str = include_str!("../../runtime/mvnw");
const MVNW_CMD: &str = include_str!("../../runtime/mvnw.cmd");
const WRAPPER_PROPERTIES: &str =
    include_str!("../../runtime/.mvn/wrapper/maven-wrapper.properties");
const GITIGNORE: &str = include_str!("../../runtime/gitignore");

/// The project's module of the runtime (`dev.svc:svc-runtime`), built
/// before the service by the reactor `pom.xml`, and the service's pom.
const RUNTIME_MODULE: &str = "svc-runtime";
const SERVICE_POM: &str = "service.pom.xml";
/// The runtime module's resources: what Spring Boot reads of a library.
const RUNTIME_RESOURCES: &str = "svc-runtime/src/main/resources/META-INF";

/// `META-INF/spring/...AutoConfiguration.imports` of the runtime module:
/// the runtime's beans, whichever of its classes the module holds
/// (ServiceAutoConfiguration).
fn auto_configuration() -> File {
    let mut w = CodeWriter::text("  ");
    w.line(format!("{RUNTIME_PACKAGE}.ServiceAutoConfiguration"));
    File::text(
        format!("{RUNTIME_RESOURCES}/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports"),
        w.finish(),
    )
}

/// `META-INF/spring.factories` of the runtime module: each of `analyzers`
/// (full class names) prints a failed start (an MCP server out of reach, an
/// A2A caller's unset token) as Spring Boot prints one.
fn spring_factories(analyzers: &[String]) -> File {
    let mut w = CodeWriter::text("  ");
    w.line(format!(
        "org.springframework.boot.diagnostics.FailureAnalyzer={}",
        analyzers.join(",")
    ));
    File::text(format!("{RUNTIME_RESOURCES}/spring.factories"), w.finish())
}

/// Spring Boot version of generated projects.
pub const SPRING_BOOT: &str = "3.5.16";

/// The runtime's runner of a graph's test cases (svc test's NAME.tests.json).
const CASES_RUNNER: &str = include_str!("../../runtime/test/SvcCases.java");
/// Its stand-in model's replies.
const CASES_MODEL: &str = include_str!("../../runtime/test/SvcCasesModel.java");

/// `SvcCasesTests`: the runtime's SvcCases in the graph's package, where
/// Spring finds the service; disabled as the cases say (JUnit does not
/// inherit @DisabledIf).
fn cases_test(pkg: &str) -> String {
    let mut w = CodeWriter::java();
    let runner = runtime(&mut w, "SvcCases");
    let disabled_if = w.name("org.junit.jupiter.api.condition", "DisabledIf");
    w.line("/** The graph's test cases (svc-cases.json), run against this service. */");
    w.line(format!(
        "@{disabled_if}(value = \"skipped\", disabledReason = \"svc-cases.json says why: its \\\"skip\\\"\")"
    ));
    w.block(
        format!("class SvcCasesTests extends {runner} {{"),
        "}",
        |_| {},
    );
    w.finish_file(&format!("package com.svc.{pkg};\n\n"))
}

/// The runner of the graph's test cases and the cases themselves (the
/// bundle svc compile passes as the option `testCases`).
pub fn cases(doc: &Document, bundle: &str) -> Result<Vec<File>, Vec<Diagnostic>> {
    let pkg = package_segment(&doc.id);
    Ok(vec![
        File::text(format!("{RUNTIME_TEST_DIR}/SvcCases.java"), CASES_RUNNER),
        File::text(
            format!("{RUNTIME_TEST_DIR}/SvcCasesModel.java"),
            CASES_MODEL,
        ),
        File::text(
            format!("src/test/java/com/svc/{pkg}/SvcCasesTests.java"),
            cases_test(&pkg),
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
    // What the runtime must hold is decided over every graph (parts.rs):
    // a child's model, tool or retriever runs in the same service.
    let uses = parts::uses(doc, placed.runtime.iter().map(String::as_str));
    let mut files = vec![
        File::text("pom.xml", reactor_pom(doc)),
        File::text("mvnw", MVNW).executable(),
        File::text("mvnw.cmd", MVNW_CMD),
        File::text(".mvn/wrapper/maven-wrapper.properties", WRAPPER_PROPERTIES),
        File::text(".gitignore", GITIGNORE),
        File::text("Dockerfile", container::dockerfile(doc)),
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
    // The runtime's classes as they are, in its package, in the runtime
    // module, with the libraries they need.
    // The FailureAnalyzers that print a refused start without a stack trace.
    let mut analyzers: Vec<String> = Vec::new();
    let mut libraries: Vec<&Library> = Vec::new();
    for part in parts::select(crate::parts::TABLE, &uses) {
        match part {
            JavaPart::Library(library) => libraries.push(library),
            JavaPart::Runtime(name, text) => {
                files.push(File::text(format!("{RUNTIME_DIR}/{name}"), *text))
            }
            JavaPart::RuntimeTest(name, text) => {
                files.push(File::text(format!("{RUNTIME_TEST_DIR}/{name}"), *text))
            }
            JavaPart::RuntimeAnalyzer(class) => {
                analyzers.push(format!("{RUNTIME_PACKAGE}.{class}"))
            }
        }
    }
    files.push(File::text(
        format!("{RUNTIME_MODULE}/pom.xml"),
        runtime_pom(doc, &libraries),
    ));
    files.push(File::text(
        SERVICE_POM,
        service_pom(doc, &libraries, &placed.dependencies),
    ));
    files.push(auto_configuration());
    files.extend(threads::files(doc, &pkg));
    if uses.contains(&Use::McpClient) {
        files.push(mcp::config(doc, &pkg));
    }
    if uses.contains(&Use::A2aPublish) {
        files.push(a2a::agent(doc, &pkg).map_err(|d| vec![d])?);
        files.push(a2a::endpoint_tests(&pkg));
    }
    if !analyzers.is_empty() {
        files.push(spring_factories(&analyzers));
    }
    // Agents reach the provider through LlmClient, even with no model of their own.
    if uses.contains(&Use::ModelCalls) || uses.contains(&Use::Agents) {
        files.push(File::text(
            format!("{base}/config/AiConfig.java"),
            ai_config(doc, &pkg),
        ));
    }
    let mut for_connectors = Vec::new();
    if !placed.is_empty() {
        for_connectors.push(CONNECTOR_FIELDS);
    }
    if uses.contains(&Use::ConnectorUpstream) {
        for_connectors.push(CONNECTOR_UPSTREAM);
    }
    for (path, text) in for_connectors {
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
        let runtime = "svc-runtime/src/main/java/dev/svc/runtime";
        for path in [
            format!("{runtime}/Subgraphs.java"),
            format!("{runtime}/LlmClient.java"),
            format!("{base}/config/AiConfig.java"),
            format!("{runtime}/HttpTool.java"),
            format!("{runtime}/Upstream.java"),
            format!("{runtime}/Agents.java"),
            format!("{runtime}/PyJson.java"),
            format!("{runtime}/Retrieval.java"),
            format!("{base}/subgraphs/sub/graph/ChildGraph.java"),
            format!("{base}/subgraphs/sub/graph/GraphAgents.java"),
            format!("{base}/subgraphs/sub/nodes/DocsNode.java"),
        ] {
            assert!(files.iter().any(|f| f.path == path), "{path}");
        }
        // The runtime's tests run in its own build, not the project's.
        assert!(!files
            .iter()
            .any(|f| f.path.starts_with("src/test/java/dev/svc/runtime/")));
        // Nothing of the runtime is left in the graph's package.
        assert!(!files
            .iter()
            .any(|f| f.path.contains("/com/svc/root/runtime/")));
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

    /// The dependencies of each `<dependency>` of `pom`, as
    /// `group:artifact[:version][ optional]`.
    fn dependencies(pom: &str) -> Vec<String> {
        let text = |dep: &str, tag: &str| {
            dep.split_once(&format!("<{tag}>"))
                .and_then(|(_, rest)| rest.split_once(&format!("</{tag}>")))
                .map(|(text, _)| text.to_string())
        };
        pom.split("<dependency>")
            .skip(1)
            .map(|dep| dep.split("</dependency>").next().unwrap())
            .filter(|dep| text(dep, "scope").is_none())
            .map(|dep| {
                let mut spec = format!(
                    "{}:{}",
                    text(dep, "groupId").unwrap(),
                    text(dep, "artifactId").unwrap()
                );
                if let Some(version) = text(dep, "version") {
                    spec = format!("{spec}:{version}");
                }
                if text(dep, "optional").is_some() {
                    spec.push_str(" optional");
                }
                spec
            })
            .collect()
    }

    /// The reactor (pom.xml) builds the runtime module, then the service,
    /// which depends on it; the libraries of the features a graph uses
    /// (the parts table's) are the runtime module's, optional there, and
    /// the service's, pinned as the runtime pins them (over Spring Boot's
    /// BOM); a graph that uses none downloads none.
    #[test]
    fn the_runtime_is_a_module_of_the_build() {
        let reactor_and_poms = |files: &[File]| {
            let reactor = text(files, "pom.xml").to_string();
            assert!(
                reactor.contains("<packaging>pom</packaging>")
                    && reactor.contains(
                        "<module>svc-runtime</module>\n        <module>service.pom.xml</module>"
                    ),
                "{reactor}"
            );
            (
                dependencies(&text(files, "svc-runtime/pom.xml")),
                dependencies(&text(files, "service.pom.xml")),
            )
        };
        let web = "org.springframework.boot:spring-boot-starter-web";
        let runtime = "dev.svc:svc-runtime:0.1.0";
        let plain = emitted(&graph("root", json!([template("pad")]), json!({})));
        assert_eq!(
            reactor_and_poms(&plain),
            (
                vec![web.to_string()],
                vec![web.to_string(), runtime.to_string()]
            )
        );
        assert!(!plain
            .iter()
            .any(|f| f.path.starts_with("src/main/java/dev/")));
        assert!(plain.iter().any(|f| f.path
            == "svc-runtime/src/main/resources/META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports"));

        let settings = json!({"settings": {
            "tracing": {"enabled": true},
            "mcp": {"expose": true, "toolName": "run"},
            "checkpointer": {"type": "sqlite", "pathEnv": "DB"}
        }});
        let featured = emitted(&graph("root", json!([template("pad")]), settings));
        let libraries = [
            "com.zaxxer:HikariCP:7.1.0",
            "org.xerial:sqlite-jdbc:3.54.1.0",
            "io.modelcontextprotocol.sdk:mcp-core:2.1.0",
            "io.modelcontextprotocol.sdk:mcp-json-jackson2:2.1.0",
            "io.opentelemetry:opentelemetry-sdk-extension-autoconfigure",
            "io.opentelemetry:opentelemetry-exporter-otlp",
        ];
        let (in_runtime, in_service) = reactor_and_poms(&featured);
        let mut want_runtime = vec![web.to_string()];
        want_runtime.extend(libraries.iter().map(|l| format!("{l} optional")));
        let mut want_service = vec![web.to_string(), runtime.to_string()];
        want_service.extend(libraries.iter().map(|l| l.to_string()));
        assert_eq!((in_runtime, in_service), (want_runtime, want_service));
        for pom in ["svc-runtime/pom.xml", "service.pom.xml"] {
            let xml = text(&featured, pom);
            assert!(xml.contains("<opentelemetry.version>"), "{pom}");
        }
        assert!(featured
            .iter()
            .any(|f| f.path == "svc-runtime/src/main/java/dev/svc/runtime/McpEndpoint.java"));
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
