//! The Java backend's parts table (`svc_backend_sdk::parts`): each row the
//! capabilities it serves and the runtime classes (`runtime/java/`), the
//! tests over the graph's classes (`runtime/test/`) and start-up failure
//! analyzers a project gets when its document uses them. The runtime's own
//! tests (package `dev.svc.runtime`) are not copied: they run once, in the
//! runtime's Maven build (`runtime/pom.xml`). `capabilities::info` declares
//! the rows' capabilities; `project::emit` writes the selected rows' parts:
//! the runtime's classes in its own package, `dev.svc.runtime`, as they
//! are, and the classes that read the graph's generated ones (the HTTP contract's
//! `web/`, `config/`) into the graph's package. Files written per graph
//! (GraphState, the graphs, their nodes, AiConfig, McpConfig, A2aAgent) and
//! the checkpointer's store (project/threads.rs) are written by their
//! modules, not here.

use svc_backend_sdk::parts::Serves::{Feature, NodeKind, ToolKind, Transport};
use svc_backend_sdk::parts::{Part, Use};
use svc_backend_sdk::{ALL_ROUTER_FEATURES, CORE_CAPABILITIES, OPENAI_PROVIDER};

/// One part of a project.
pub enum JavaPart {
    /// A class of the runtime, package `dev.svc.runtime` (`java::RUNTIME_DIR`),
    /// copied as it is: its file name and text.
    Runtime(&'static str, &'static str),
    /// A test class of the runtime's package (`java::RUNTIME_TEST_DIR`)
    /// that the project's own tests use (PgTest).
    RuntimeTest(&'static str, &'static str),
    /// A class in the graph's package (it reads the generated classes, or
    /// the graph's component scan finds it), at this path under it,
    /// `__SVC_PACKAGE__` filled with it.
    Main(&'static str, &'static str),
    /// A test, at this path under the graph's test package, filled so.
    Test(&'static str, &'static str),
    /// A FailureAnalyzer of the runtime (`dev.svc.runtime.<this>`) that
    /// prints a refused start as Spring Boot prints one
    /// (META-INF/spring.factories).
    RuntimeAnalyzer(&'static str),
    /// A FailureAnalyzer in the graph's package (`com.svc.<pkg>.<this>`).
    Analyzer(&'static str),
}

/// `runtime/java/<class>.java`, a class of the runtime.
macro_rules! runtime {
    ($class:literal) => {
        JavaPart::Runtime(
            concat!($class, ".java"),
            include_str!(concat!("../runtime/java/", $class, ".java")),
        )
    };
}

/// `runtime/java/<class>.java` at `<dir>/<class>.java` in the graph's package.
macro_rules! main {
    ($dir:literal, $class:literal) => {
        JavaPart::Main(
            concat!($dir, "/", $class, ".java"),
            include_str!(concat!("../runtime/java/", $class, ".java")),
        )
    };
}

/// `runtime/test/<class>.java` at `<dir>/<class>.java` in the graph's test
/// package (at its root without a dir).
macro_rules! test {
    ($dir:literal, $class:literal) => {
        JavaPart::Test(
            concat!($dir, "/", $class, ".java"),
            include_str!(concat!("../runtime/test/", $class, ".java")),
        )
    };
    ($class:literal) => {
        JavaPart::Test(
            concat!($class, ".java"),
            include_str!(concat!("../runtime/test/", $class, ".java")),
        )
    };
}

use JavaPart::{Analyzer, RuntimeAnalyzer};
use Use::*;

pub const TABLE: &[Part<JavaPart>] = &[
    Part {
        serves: CORE_CAPABILITIES,
        when: &[&[Always]],
        parts: &[
            runtime!("SvcError"),
            runtime!("GraphNode"),
            runtime!("StateSchema"),
            runtime!("Text"),
            runtime!("GraphRun"),
            // The spans of a run; a traced graph's Telemetry installs what records them.
            runtime!("Tracing"),
            // GraphRun's hitl step throws it (used by graphs with a checkpointer).
            runtime!("Interrupt"),
            runtime!("Values"),
            runtime!("RequestJson"),
            runtime!("EnvFile"),
            // The A2A caller a native body reads (Caller.current()); null outside an A2A call.
            runtime!("Caller"),
            runtime!("HealthCheck"),
            runtime!("TrainingRun"),
            main!("config", "AuthSettings"),
            main!("web", "GraphController"),
            main!("web", "ErrorAdvice"),
            main!("web", "RuntimeCounts"),
        ],
    },
    // Threads and interrupts: project/threads.rs writes the store the
    // checkpointer names.
    Part {
        serves: &[
            NodeKind("hitl"),
            Feature("checkpointer.memory"),
            Feature("checkpointer.sqlite"),
            Feature("checkpointer.postgres"),
        ],
        when: &[],
        parts: &[],
    },
    // Routers with conditions: python-svc's operators.
    Part {
        serves: ALL_ROUTER_FEATURES,
        when: &[&[RouterConditions]],
        parts: &[runtime!("Conditions")],
    },
    // The model client; agents reach the provider through it, even with no
    // model of their own (project::emit writes AiConfig beside it).
    Part {
        serves: &[NodeKind("llm"), OPENAI_PROVIDER],
        when: &[&[ModelCalls, Agents]],
        parts: &[runtime!("LlmClient")],
    },
    // Embeddings are fetched through Upstream too, and McpServers has it let
    // the JDK resend a POST on a dead connection.
    Part {
        serves: &[],
        when: &[&[
            ModelCalls,
            Agents,
            HttpTools,
            ConnectorUpstream,
            Rag,
            McpClient,
        ]],
        parts: &[runtime!("Upstream")],
    },
    Part {
        serves: &[ToolKind("http")],
        when: &[&[ModelCalls, Agents, HttpTools]],
        parts: &[runtime!("HttpTool")],
    },
    // Agents, tool-calling llm nodes and intent classifiers: python-svc's
    // semantics down to the text fed to the model (PyJson).
    Part {
        serves: &[
            NodeKind("agent"),
            Feature("llm.bound-tools"),
            Feature("agents.worker"),
            Feature("agents.supervisor"),
            Feature("agents.remote"),
            // Agents of kind a2a: Agents reaches them through A2aPeers.
            Feature("agents.a2a"),
        ],
        when: &[&[Agents]],
        parts: &[runtime!("Agents"), runtime!("A2aPeers")],
    },
    Part {
        serves: &[NodeKind("intent_classifier")],
        when: &[&[Classifier]],
        parts: &[runtime!("IntentClassifier")],
    },
    Part {
        serves: &[NodeKind("rag")],
        when: &[&[Rag]],
        parts: &[runtime!("Retrieval")],
    },
    Part {
        serves: &[],
        when: &[&[Agents, Classifier, Rag, A2aPublish]],
        parts: &[runtime!("PyJson")],
    },
    // A graph with subgraph nodes: python-svc's run_child.
    Part {
        serves: &[NodeKind("subgraph")],
        when: &[&[Subgraph]],
        parts: &[runtime!("Subgraphs")],
    },
    // MCP servers the graph calls (the official Java SDK's client;
    // project/mcp.rs writes McpConfig); McpStub serves the project's own
    // tests (GraphHttpTests' @TestBean).
    Part {
        serves: &[
            ToolKind("mcp"),
            Transport("stdio"),
            Transport("sse"),
            Transport("streamable_http"),
        ],
        when: &[&[McpClient]],
        parts: &[
            runtime!("McpServers"),
            runtime!("McpTransports"),
            runtime!("McpArguments"),
            runtime!("McpTool"),
            runtime!("McpStartFailureAnalyzer"),
            test!("McpStub"),
            RuntimeAnalyzer("McpStartFailureAnalyzer"),
        ],
    },
    Part {
        serves: &[Feature("mcp.expose")],
        when: &[&[McpExpose]],
        parts: &[main!("web", "McpEndpoint")],
    },
    // settings.a2a (project/a2a.rs writes the card's A2aAgent): who may
    // call /a2a, and a caller's token that cannot be read at start-up
    // reported with its entry and variable.
    Part {
        serves: &[Feature("a2a.publish")],
        when: &[&[A2aPublish]],
        parts: &[
            main!("web", "A2aEndpoint"),
            main!("web", "A2aCredentials"),
            main!("web", "A2aStartFailureAnalyzer"),
            test!("web", "A2aEndpointTests"),
            test!("web", "A2aCredentialsTest"),
            Analyzer("web.A2aStartFailureAnalyzer"),
        ],
    },
    // settings.streaming: its runs' events, the observed run, the SSE
    // answer; with a model, the client that streams tokens.
    Part {
        serves: &[Feature("streaming")],
        when: &[&[Streaming]],
        parts: &[
            runtime!("RunEvents"),
            runtime!("ObservedRun"),
            main!("web", "EventStream"),
        ],
    },
    Part {
        serves: &[],
        when: &[&[Streaming], &[ModelCalls, Agents]],
        parts: &[runtime!("StreamingLlmClient")],
    },
    // settings.tracing.enabled: OpenTelemetry, installed as the runtime's tracer.
    Part {
        serves: &[Feature("tracing")],
        when: &[&[Tracing]],
        parts: &[
            main!("config", "Telemetry"),
            test!("config", "TelemetryTest"),
        ],
    },
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{JavaPart, TABLE};

    /// Runtime classes that project/ copies itself (the checkpointer's, the
    /// cases' runner, the connectors' helpers).
    const ELSEWHERE: &[&str] = &[
        "java/Threads.java",
        "java/ThreadRun.java",
        "java/MemoryThreads.java",
        "java/ThreadedInvoke.java",
        "java/SqlThreads.java",
        "test/SvcCasesTests.java",
        "java/connectors/Fields.java",
        "java/connectors/Upstream.java",
    ];

    /// Whether `text` is a class of the runtime's package.
    fn in_runtime(text: &str) -> bool {
        text.starts_with("package dev.svc.runtime;\n")
    }

    /// The `runtime/` files below `dir`, `dir/<name>`, with their text.
    fn files(dir: &str) -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
        let mut files: Vec<(String, String)> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| !path.is_dir())
            .map(|path| {
                let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
                (name, std::fs::read_to_string(&path).unwrap())
            })
            .collect();
        files.sort();
        files
    }

    /// A class added to runtime/java, or a test over the graph's classes
    /// added to runtime/test, reaches projects: a row copies it, or
    /// project/ does (named above). The runtime's own tests (its package's,
    /// in runtime/test) run in its build instead (runtime/pom.xml).
    #[test]
    fn every_runtime_class_is_copied() {
        let texts: Vec<&str> = TABLE
            .iter()
            .flat_map(|row| row.parts.iter())
            .filter_map(|part| match part {
                JavaPart::Runtime(_, text)
                | JavaPart::RuntimeTest(_, text)
                | JavaPart::Main(_, text)
                | JavaPart::Test(_, text) => Some(*text),
                JavaPart::RuntimeAnalyzer(_) | JavaPart::Analyzer(_) => None,
            })
            .collect();
        let mut missing = Vec::new();
        for dir in ["java", "java/connectors", "test"] {
            for (name, text) in files(dir) {
                let own_test = dir == "test" && in_runtime(&text);
                if !own_test
                    && !ELSEWHERE.contains(&name.as_str())
                    && !texts.contains(&text.as_str())
                {
                    missing.push(name);
                }
            }
        }
        assert!(missing.is_empty(), "no row of parts.rs copies {missing:?}");
    }

    /// The runtime's build (runtime/pom.xml) compiles runtime/java and
    /// runtime/test but the graph's package's files: it leaves out exactly
    /// those (and java/connectors/, the connectors' package).
    #[test]
    fn the_runtime_build_leaves_out_the_graphs_package() {
        let xml = include_str!("../runtime/pom.xml");
        let listed = |tag: &str| -> Vec<String> {
            xml.split(&format!("<{tag}>"))
                .skip(1)
                .map(|rest| rest.split(&format!("</{tag}>")).next().unwrap().to_string())
                .collect()
        };
        let outside = |dir: &str| -> Vec<String> {
            files(dir)
                .into_iter()
                .filter(|(_, text)| !in_runtime(text))
                .map(|(name, _)| name[dir.len() + 1..].to_string())
                .collect()
        };
        let mut main = outside("java");
        main.push("connectors/**".to_string());
        assert_eq!(listed("exclude"), main);
        assert_eq!(listed("testExclude"), outside("test"));
        assert!(xml.contains("<sourceDirectory>java</sourceDirectory>"));
        assert!(xml.contains("<testSourceDirectory>test</testSourceDirectory>"));
    }

    /// The runtime's classes (package dev.svc.runtime) are copied as they
    /// are: no placeholder, and nothing of a graph's package outside
    /// comments. The classes that read the generated ones (the HTTP
    /// contract's) are filled with the graph's package; a part's kind is
    /// its file's package.
    #[test]
    fn the_runtime_package_is_copied_as_it_is() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
        let code = |text: &str| {
            text.lines()
                .map(str::trim_start)
                .filter(|l| !l.starts_with('*') && !l.starts_with("//") && !l.starts_with("/*"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let mut classes = 0;
        for dir in ["java", "test"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                if text.starts_with("package dev.svc.runtime;\n") {
                    classes += 1;
                    assert!(!text.contains("__SVC_"), "{path:?} has a placeholder");
                    assert!(!code(&text).contains("com.svc."), "{path:?} names com.svc");
                }
            }
        }
        assert!(classes > 50, "{classes}");
        for part in TABLE.iter().flat_map(|row| row.parts.iter()) {
            match part {
                JavaPart::Runtime(name, text) | JavaPart::RuntimeTest(name, text) => {
                    assert!(text.starts_with("package dev.svc.runtime;\n"), "{name}");
                }
                JavaPart::Main(path, text) | JavaPart::Test(path, text) => {
                    assert!(
                        text.starts_with("package com.svc.__SVC_PACKAGE__"),
                        "{path}"
                    );
                }
                JavaPart::RuntimeAnalyzer(_) | JavaPart::Analyzer(_) => {}
            }
        }
    }
}
