//! The Java backend's parts table (`svc_backend_sdk::parts`): each row the
//! capabilities it serves and the runtime classes (`runtime/java/`), the
//! Maven libraries they need, the tests over the graph's classes
//! (`runtime/test/`) and start-up failure analyzers a project gets when its
//! document uses them. The runtime's own
//! tests are not copied: they run once, in the runtime's Maven build
//! (`runtime/pom.xml`). `capabilities::info` declares the rows' capabilities;
//! `project::emit` writes the selected rows' parts into the project's
//! runtime module (`svc-runtime/`), all of the runtime's package
//! `dev.svc.runtime`, as they are: the HTTP contract's classes read
//! the graph through its beans (CompiledGraph, ServiceSpec, A2aSpec), and
//! ServiceAutoConfiguration registers whichever the module holds. Files
//! written per graph (Application, GraphState, the graphs, their nodes,
//! AiConfig, McpConfig, A2aAgent, ThreadsConfig, the tests) are written by
//! their modules, not here.

use svc_backend_sdk::parts::Serves::{Feature, NodeKind, ToolKind, Transport};
use svc_backend_sdk::parts::{Part, Use};
use svc_backend_sdk::{ALL_ROUTER_FEATURES, CORE_CAPABILITIES, OPENAI_PROVIDER};

/// One part of a project.
pub enum JavaPart {
    /// A class of the runtime, package `dev.svc.runtime` (`java::RUNTIME_DIR`),
    /// copied as it is: its file name and text.
    Runtime(&'static str, &'static str),
    /// A test class of the runtime's package (`java::RUNTIME_TEST_DIR`)
    /// that the project's own tests use (PgTest, McpStub, A2aEndpointContract).
    RuntimeTest(&'static str, &'static str),
    /// A FailureAnalyzer of the runtime (`dev.svc.runtime.<this>`) that
    /// prints a refused start as Spring Boot prints one
    /// (META-INF/spring.factories).
    RuntimeAnalyzer(&'static str),
    /// A library the row's runtime classes need: a dependency of the
    /// project's runtime module, optional there, and of the service, which
    /// pins its version over Spring Boot's BOM (project/pom.rs).
    Library(Library),
}

/// A Maven dependency, `group:artifact`, at `version` unless a BOM the poms
/// import manages it; `why` is the comment written before the first
/// library of a row.
pub struct Library {
    pub group: &'static str,
    pub artifact: &'static str,
    pub version: Option<&'static str>,
    pub why: &'static [&'static str],
}

/// The official MCP Java SDK, pinned.
const MCP_SDK: &[&str] = &[
    "MCP: the official Java SDK, with Jackson 2 as Spring Boot's (the umbrella",
    "artifact `mcp` would bring Jackson 3 beside it).",
];
/// OpenTelemetry's SDK, managed by its BOM (project/pom.rs).
const OPENTELEMETRY_SDK: &[&str] =
    &["OpenTelemetry: the SDK configured by OTEL_ variables, OTLP exporters."];

/// `runtime/java/<class>.java`, a class of the runtime.
macro_rules! runtime {
    ($class:literal) => {
        JavaPart::Runtime(
            concat!($class, ".java"),
            include_str!(concat!("../runtime/java/", $class, ".java")),
        )
    };
}

/// `runtime/test/<class>.java`, a test class of the runtime the project's
/// tests use.
macro_rules! runtime_test {
    ($class:literal) => {
        JavaPart::RuntimeTest(
            concat!($class, ".java"),
            include_str!(concat!("../runtime/test/", $class, ".java")),
        )
    };
}

use JavaPart::RuntimeAnalyzer;
use Use::*;

pub const TABLE: &[Part<JavaPart>] = &[
    Part {
        serves: CORE_CAPABILITIES,
        when: &[&[Always]],
        parts: &[
            runtime!("SvcError"),
            runtime!("GraphNode"),
            runtime!("StateSchema"),
            // StateSchema checks a field's `properties` with it.
            runtime!("OutputSchema"),
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
            // The HTTP contract, and what it reads of the graph (Application's bean).
            runtime!("CompiledGraph"),
            runtime!("ServiceSpec"),
            runtime!("ServiceAutoConfiguration"),
            runtime!("AuthSettings"),
            runtime!("GraphController"),
            runtime!("ErrorAdvice"),
            runtime!("RuntimeCounts"),
        ],
    },
    // A field's `properties` are checked by the core's StateSchema.
    Part {
        serves: &[Feature("state.properties")],
        when: &[],
        parts: &[],
    },
    // Threads and interrupts: the thread contract and the memory store for
    // every checkpointer (project/threads.rs writes the graph's
    // ThreadsConfig, which opens the store the checkpointer names).
    Part {
        serves: &[NodeKind("hitl"), Feature("checkpointer.memory")],
        when: &[&[Threads]],
        parts: &[
            runtime!("Threads"),
            runtime!("ThreadRun"),
            runtime!("MemoryThreads"),
            runtime!("ThreadedInvoke"),
        ],
    },
    // sqlite and postgres: the tables through JDBC and a HikariCP pool, the
    // pool SqlThreads builds itself (Spring Boot's DataSource
    // auto-configuration would read `spring.datasource.*` and cannot set
    // SQLite's pragmas on every connection).
    Part {
        serves: &[],
        when: &[&[SqliteCheckpointer, PostgresCheckpointer]],
        parts: &[
            runtime!("SqlThreads"),
            JavaPart::Library(Library {
                group: "com.zaxxer",
                artifact: "HikariCP",
                version: Some("7.1.0"),
                why: &[
                    "settings.checkpointer sqlite and postgres: the threads' tables through JDBC",
                    "(SqlThreads), a HikariCP pool and the driver.",
                ],
            }),
        ],
    },
    // Each database's JDBC driver, pinned rather than left to Spring Boot's
    // BOM (which manages older ones).
    Part {
        serves: &[Feature("checkpointer.sqlite")],
        when: &[&[SqliteCheckpointer]],
        parts: &[JavaPart::Library(Library {
            group: "org.xerial",
            artifact: "sqlite-jdbc",
            version: Some("3.54.1.0"),
            why: &[],
        })],
    },
    // postgres also brings PgTest, which starts a throwaway PostgreSQL
    // server (initdb, pg_ctl) for the project's own tests (TestDatabase), as
    // for the runtime's.
    Part {
        serves: &[Feature("checkpointer.postgres")],
        when: &[&[PostgresCheckpointer]],
        parts: &[
            JavaPart::Library(Library {
                group: "org.postgresql",
                artifact: "postgresql",
                version: Some("42.7.14"),
                why: &[],
            }),
            runtime_test!("PgTest"),
        ],
    },
    // Routers with conditions: python-svc's operators.
    Part {
        serves: ALL_ROUTER_FEATURES,
        when: &[&[RouterConditions]],
        parts: &[runtime!("Conditions")],
    },
    // The model client; agents reach the provider through it, even with no
    // model of their own (project::emit writes AiConfig beside it). Its
    // switch over LlmClient.Api names AnthropicWire, the Messages API's
    // format, so the two are copied together.
    Part {
        serves: &[
            NodeKind("llm"),
            OPENAI_PROVIDER,
            Feature("model.timeout"),
            Feature("model.retry"),
            Feature("model.fallbacks"),
            Feature("model.provider.anthropic"),
            Feature("budget"),
            Feature("llm.structured-output"),
        ],
        when: &[&[ModelCalls, Agents]],
        parts: &[
            runtime!("LlmClient"),
            runtime!("AnthropicWire"),
            runtime!("StructuredOutput"),
        ],
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
            Kind("rag"),
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
        when: &[&[Kind("intent_classifier")]],
        parts: &[runtime!("IntentClassifier")],
    },
    Part {
        serves: &[NodeKind("rag")],
        when: &[&[Kind("rag")]],
        parts: &[runtime!("Retrieval")],
    },
    Part {
        serves: &[],
        when: &[&[Agents, Kind("intent_classifier"), Kind("rag"), A2aPublish]],
        parts: &[runtime!("PyJson")],
    },
    // A graph with subgraph nodes: python-svc's run_child.
    Part {
        serves: &[NodeKind("subgraph")],
        when: &[&[Kind("subgraph"), Kind("map")]],
        parts: &[runtime!("Subgraphs")],
    },
    // Branches and map items run at once (docs/ir-reference.md, "Parallel
    // branches and map"); a map's children run as a subgraph's.
    Part {
        serves: &[NodeKind("parallel"), NodeKind("join"), NodeKind("map")],
        when: &[&[Kind("parallel"), Kind("map")]],
        parts: &[runtime!("Parallel")],
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
            runtime_test!("McpStub"),
            RuntimeAnalyzer("McpStartFailureAnalyzer"),
        ],
    },
    Part {
        serves: &[Feature("mcp.expose")],
        when: &[&[McpExpose]],
        parts: &[runtime!("McpEndpoint")],
    },
    Part {
        serves: &[],
        when: &[&[McpClient, McpExpose]],
        parts: &[
            JavaPart::Library(Library {
                group: "io.modelcontextprotocol.sdk",
                artifact: "mcp-core",
                version: Some("2.1.0"),
                why: MCP_SDK,
            }),
            JavaPart::Library(Library {
                group: "io.modelcontextprotocol.sdk",
                artifact: "mcp-json-jackson2",
                version: Some("2.1.0"),
                why: MCP_SDK,
            }),
        ],
    },
    // settings.a2a (project/a2a.rs writes the card's A2aAgent and the
    // tests that run A2aEndpointContract): who may call /a2a, and a caller's
    // token that cannot be read at start-up reported with its entry and
    // variable.
    Part {
        serves: &[Feature("a2a.publish")],
        when: &[&[A2aPublish]],
        parts: &[
            runtime!("A2aSpec"),
            runtime!("A2aEndpoint"),
            runtime!("A2aCredentials"),
            runtime!("A2aStartFailureAnalyzer"),
            runtime_test!("A2aEndpointContract"),
            RuntimeAnalyzer("A2aStartFailureAnalyzer"),
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
            runtime!("EventStream"),
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
            runtime!("Telemetry"),
            JavaPart::Library(Library {
                group: "io.opentelemetry",
                artifact: "opentelemetry-sdk-extension-autoconfigure",
                version: None,
                why: OPENTELEMETRY_SDK,
            }),
            JavaPart::Library(Library {
                group: "io.opentelemetry",
                artifact: "opentelemetry-exporter-otlp",
                version: None,
                why: OPENTELEMETRY_SDK,
            }),
        ],
    },
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{JavaPart, TABLE};

    #[test]
    fn every_kind_the_table_names_is_a_kind() {
        assert_eq!(
            svc_backend_sdk::parts::unknown_kinds(TABLE),
            Vec::<&str>::new()
        );
    }

    /// Runtime classes that project/ copies itself (the connectors'
    /// helpers).
    const ELSEWHERE: &[&str] = &[
        "java/connectors/Fields.java",
        "java/connectors/Upstream.java",
    ];

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

    /// A class added to runtime/java reaches projects: a row copies it, or
    /// project/ does (named above). The runtime's tests run in its build
    /// (runtime/pom.xml); the few the project's tests use are rows' parts.
    #[test]
    fn every_runtime_class_is_copied() {
        let texts: Vec<&str> = TABLE
            .iter()
            .flat_map(|row| row.parts.iter())
            .filter_map(|part| match part {
                JavaPart::Runtime(_, text) | JavaPart::RuntimeTest(_, text) => Some(*text),
                JavaPart::RuntimeAnalyzer(_) | JavaPart::Library(_) => None,
            })
            .collect();
        let mut missing = Vec::new();
        for dir in ["java", "java/connectors"] {
            for (name, text) in files(dir) {
                if !ELSEWHERE.contains(&name.as_str()) && !texts.contains(&text.as_str()) {
                    missing.push(name);
                }
            }
        }
        assert!(missing.is_empty(), "no row of parts.rs copies {missing:?}");
    }

    /// The runtime's build (runtime/pom.xml) compiles and tests every file
    /// of runtime/java and runtime/test but java/connectors/ (the
    /// connectors' package): nothing there is a template of the graph's.
    #[test]
    fn the_runtime_build_holds_every_class() {
        let xml = include_str!("../runtime/pom.xml");
        assert_eq!(xml.matches("<exclude>").count(), 1, "{xml}");
        assert!(xml.contains("<exclude>connectors/**</exclude>"));
        assert!(!xml.contains("<testExclude>"));
        assert!(xml.contains("<sourceDirectory>java</sourceDirectory>"));
        assert!(xml.contains("<testSourceDirectory>test</testSourceDirectory>"));
    }

    /// The runtime's classes and tests are package dev.svc.runtime, copied
    /// as they are: no placeholder, and nothing of a graph's package
    /// outside comments.
    #[test]
    fn the_runtime_package_is_copied_as_it_is() {
        let code = |text: &str| {
            text.lines()
                .map(str::trim_start)
                .filter(|l| !l.starts_with('*') && !l.starts_with("//") && !l.starts_with("/*"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let mut classes = 0;
        for dir in ["java", "test"] {
            for (name, text) in files(dir) {
                classes += 1;
                assert!(text.starts_with("package dev.svc.runtime;\n"), "{name}");
                assert!(!text.contains("__SVC_"), "{name} has a placeholder");
                assert!(!code(&text).contains("com.svc."), "{name} names com.svc");
            }
        }
        assert!(classes > 70, "{classes}");
        for part in TABLE.iter().flat_map(|row| row.parts.iter()) {
            if let JavaPart::Runtime(name, text) | JavaPart::RuntimeTest(name, text) = part {
                assert!(text.starts_with("package dev.svc.runtime;\n"), "{name}");
            }
        }
    }
}
