//! Assembles the Python project.

use svc_backend_sdk::ir::{AgentKind, Document, FieldType, ItemType, Reducer};
use svc_backend_sdk::parts;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Connectors, Diagnostic, File};

use crate::build_files;
use crate::py::{literal, module, module_file, package_init, quote, suite, write_expr, Expr};
use crate::scope::{self, Scope};
use crate::{agents, graph, mcp, nodes, project_tests, readme, tools};

/// The SDK a generated project depends on (this repository's sdk/python),
/// with the extras the document's uses select (parts.rs): `mcp` when the
/// graph talks MCP or is published over it, `a2a` when it is published as
/// an A2A agent or calls one, `tracing`, and LangGraph's saver for a
/// durable checkpointer (`checkpoint-sqlite`, `checkpoint-postgres`).
pub fn sdk_requirement(doc: &Document) -> String {
    let uses = parts::uses(doc, []);
    let extras: Vec<&str> = parts::select(crate::parts::TABLE, &uses)
        .into_iter()
        .copied()
        .collect();
    format!("svc-sdk[{}]>=0.3.2,<0.4", extras.join(","))
}

const EMPTY_PACKAGES: &[(&str, &str)] = &[
    ("skills", "Skills: reusable capabilities (@skill)."),
    (
        "guardrails",
        "Guardrails: checks on what comes in and goes out (@input_guardrail, @output_guardrail).",
    ),
    (
        "policies",
        "Business policies, evaluated by priority (@business_policy).",
    ),
    (
        "personas",
        "Personas: agent identities and system prompts (@persona).",
    ),
    ("mcp", "MCP servers and clients."),
];

/// The files every project gets as they are (`runtime/`).
const GITIGNORE: &str = include_str!("../runtime/gitignore");
const DOCKERIGNORE: &str = include_str!("../runtime/dockerignore");
/// `app/connectors/__init__.py`, when connector code is placed there.
const CONNECTORS_INIT: &str = include_str!("../runtime/connectors/__init__.py");
// The graph's test cases (svc test's NAME.tests.json) as pytest runs them.
const CASES_TEST_PY: &str = include_str!("../runtime/tests/test_svc_cases.py");

/// The runner of the graph's test cases and the cases themselves (the
/// bundle svc compile passes as the option `testCases`).
pub fn cases(bundle: &str) -> Vec<File> {
    vec![
        File::text("tests/test_svc_cases.py", CASES_TEST_PY),
        File::text("tests/svc_cases.json", bundle),
    ]
}

/// Where a project installs `svc-sdk` from (`svc compile --sdk`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdkSource {
    /// The wheel of the SDK this backend was built with, in `vendor/`.
    Vendor,
    /// The package index only, for when the SDK release is published there.
    Index,
}

impl SdkSource {
    /// The emit option `sdk`: `vendor` (the default) or `index`.
    pub fn from_option(value: Option<&str>) -> Result<Self, Diagnostic> {
        match value {
            None | Some("vendor") => Ok(SdkSource::Vendor),
            Some("index") => Ok(SdkSource::Index),
            Some(other) => Err(Diagnostic::error(
                &svc_backend_sdk::ir::codes::INVALID_VALUE,
                format!("the option `sdk` is `{other}`; python-svc takes `vendor` or `index`"),
            )
            .hint("`svc compile --sdk vendor` (the default) writes the SDK's wheel into vendor/; `--sdk index` installs it from the package index")),
        }
    }
}

/// The `svc-sdk` wheel built from this repository's sdk/python with the
/// backend (build.rs), and its file name.
const SDK_WHEEL: &[u8] = include_bytes!(env!("SVC_SDK_WHEEL_PATH"));
pub(crate) const SDK_WHEEL_NAME: &str = env!("SVC_SDK_WHEEL_NAME");

/// `vendor/`: the SDK's wheel, or with `--sdk index` a note on why it is
/// empty (the setup command's `--find-links vendor` then finds nothing and
/// everything comes from the index).
fn vendor(sdk: SdkSource) -> File {
    match sdk {
        SdkSource::Vendor => File {
            path: format!("vendor/{SDK_WHEEL_NAME}"),
            contents: SDK_WHEEL.to_vec(),
            executable: false,
        },
        SdkSource::Index => File::text("vendor/README.md", readme::vendor_readme()),
    }
}

pub fn emit(
    doc: &Document,
    connectors: &Connectors,
    sdk: SdkSource,
) -> Result<Vec<File>, Vec<Diagnostic>> {
    let placed = svc_backend_sdk::connectors::place(doc, "python-svc", &["upstream"], connectors)?;
    let mut files = vec![
        vendor(sdk),
        File::text(
            "pyproject.toml",
            build_files::pyproject(doc, &placed.dependencies),
        ),
        File::text("application.yaml", application_yaml(doc)),
        File::text(
            "openapi.json",
            svc_backend_sdk::openapi::document(doc, "python-svc"),
        ),
        File::text("env.yaml", svc_backend_sdk::environment::env_yaml(doc)),
        File::text(".gitignore", GITIGNORE),
        File::text("README.md", readme::readme(doc, sdk)),
        File::text("Dockerfile", build_files::dockerfile(doc)),
        File::text(".dockerignore", DOCKERIGNORE),
        File::text("app/__init__.py", app_init(doc)),
        File::text("app/config.py", config_py()),
        File::text("app/main.py", main_py()),
        File::text("app/graphs/__init__.py", graphs_init(doc)),
    ];
    files.extend(project_tests::files(doc));
    for (name, doc_line) in EMPTY_PACKAGES {
        if *name == "mcp" && !doc.logical.mcp_servers.is_empty() {
            continue; // graph_files writes it with the servers
        }
        files.push(File::text(
            format!("app/{name}/__init__.py"),
            package_init(doc_line, &[]),
        ));
    }
    files.extend(graph_files(doc, &Scope::root(), &placed.snippets)?);
    if placed.has_files_under("app/connectors/") {
        files.push(File::text("app/connectors/__init__.py", CONNECTORS_INIT));
    }
    placed.merge_into(&mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The code of one graph in its scope: state, run loop, nodes, tools,
/// agents and MCP servers, then the same for each subgraph's child, below it.
fn graph_files(
    doc: &Document,
    scope: &Scope,
    snippets: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<File>, Vec<Diagnostic>> {
    let dir = &scope.dir;
    let mut files = vec![File::text(format!("{dir}/state.py"), state_py(doc))];
    let graph = graph::graph_py(doc, scope);
    if scope.is_root() {
        files.push(File::text(
            format!("app/graphs/{}.py", module(&doc.id)),
            graph,
        ));
    } else {
        files.push(File::text(format!("{dir}/graph.py"), graph));
    }
    let mut errors = Vec::new();
    for part in [
        nodes::files(doc, scope, snippets),
        tools::files(doc, scope),
        agents::files(doc, scope),
    ] {
        match part {
            Ok(f) => files.extend(f),
            Err(d) => errors.extend(d),
        }
    }
    files.extend(mcp::files(doc, scope));
    let has_servers = !doc.logical.mcp_servers.is_empty();
    let children = scope::children(doc, scope);
    let mut child_modules = Vec::new();
    for (child, child_scope) in &children {
        match graph_files(child, child_scope, snippets) {
            Ok(f) => files.extend(f),
            Err(d) => errors.extend(d),
        }
        child_modules.push(
            child_scope
                .dir
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string(),
        );
    }
    if !children.is_empty() {
        files.push(File::text(
            format!("{dir}/subgraphs/__init__.py"),
            package_init(
                "The child graphs of the subgraph nodes, one package each.",
                &child_modules,
            ),
        ));
    }
    if !scope.is_root() {
        let mut parts = vec!["agents", "graph", "nodes", "state", "tools"];
        if has_servers {
            parts.push("mcp");
        }
        if !children.is_empty() {
            parts.push("subgraphs");
        }
        parts.sort();
        files.push(File::text(
            format!("{dir}/__init__.py"),
            package_init(
                &format!("The child graph `{}`.", doc.id),
                &parts.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            ),
        ));
    }
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(errors)
    }
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A YAML mapping under `key`: `key:`, then `body` one level deeper.
fn section(w: &mut CodeWriter, key: &str, body: impl FnOnce(&mut CodeWriter)) {
    w.line(format!("{key}:")).indent();
    body(w);
    w.dedent();
}

/// `application.yaml`: the settings svc-sdk reads, one section per
/// concern, a blank line between sections.
fn application_yaml(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut w = CodeWriter::text("  ");
    w.line("# Configuration compiled from the graph document (svc-sdk reads it at start-up;")
        .line("# `python -m svc compile` precompiles it to application.json).");
    section(&mut w, "app", |w| {
        w.line(format!("name: {}", yaml_str(&doc.id)))
            .line(format!("version: {}", yaml_str(&doc.version)));
    });
    w.blank();
    section(&mut w, "server", |w| {
        w.line(format!("host: {}", yaml_str(&s.server.host)))
            .line(format!("port: {}", s.server.port));
        section(w, "auth", |w| {
            w.line(format!("type: {}", doc.security.auth.as_str()))
                .line(format!("key_env: {}", doc.security.key_env));
        });
    });
    w.blank();
    section(&mut w, "graph", |w| {
        w.line(format!("entrypoint: {}", yaml_str(&doc.id)))
            .line(format!("max_steps: {}", s.max_steps))
            .line(format!("request_timeout_ms: {}", s.request_timeout_ms));
        if s.streaming {
            // POST /invoke may answer text/event-stream (svc.server.app).
            w.line("streaming: true");
        }
    });
    if let Some(m) = &s.model {
        w.blank();
        section(&mut w, "model", |w| {
            w.line(format!("provider: {}", yaml_str(&m.provider)))
                .line(format!("name: {}", yaml_str(&m.name)))
                .line(format!("base_url_env: {}", m.base_url_env))
                .line(format!("api_key_env: {}", m.api_key_env));
            // What the generated nodes send; get_llm_provider() too.
            if let Some(t) = m.temperature {
                w.line(format!("temperature: {t}"));
            }
            if let Some(n) = m.max_tokens {
                w.line(format!("max_tokens: {n}"));
            }
        });
    }
    external_services(&mut w, doc);
    if s.mcp.expose {
        // Served at /mcp by the SDK, behind the service's credentials.
        let name = s.mcp.tool_name.as_deref().unwrap_or(&doc.id);
        w.blank();
        section(&mut w, "mcp", |w| {
            w.line("expose: true")
                .line(format!("tool_name: {}", yaml_str(name)));
        });
    }
    if s.a2a.enabled {
        // The agent card and /a2a, served by the SDK behind the service's
        // credentials; each skill runs the graph.
        w.blank();
        section(&mut w, "a2a", |w| a2a(w, &s.a2a));
    }
    let t = &s.tracing;
    // The IR checked that tracing.log_format is logging.format.
    let format = s.logging.format.as_str();
    w.blank();
    section(&mut w, "logging", |w| {
        w.line(format!("level: {}", s.logging.level.as_str()))
            .line(format!("format: {format}"));
    });
    w.blank();
    section(&mut w, "tracing", |w| {
        w.line(format!("enabled: {}", t.enabled))
            .line(format!("project: {}", yaml_str(&t.project)))
            .line(format!("log_format: {format}"))
            .line(format!("register_on_build: {}", t.register_on_build))
            .line(format!("trace_nodes: {}", t.trace_nodes));
    });
    w.finish()
}

/// application.yaml's `external_services`: the services of remote and A2A
/// agents, each with its credential (and a remote agent's URL), all from
/// the environment.
fn external_services(w: &mut CodeWriter, doc: &Document) {
    // Remote agents' services have a URL; A2A agents' services only a
    // credential (the agent card names the endpoint). A service both kinds
    // name keeps the remote agent's URL.
    let mut services: std::collections::BTreeMap<String, Option<Option<String>>> =
        std::collections::BTreeMap::new();
    for (graph, _) in scope::all_graphs(doc) {
        for a in &graph.logical.agents {
            match &a.kind {
                AgentKind::Remote { url, service, .. } => {
                    let entry = services.entry(service.clone()).or_insert(None);
                    if entry.is_none() {
                        *entry = Some(url.clone());
                    }
                }
                AgentKind::A2a {
                    service: Some(service),
                    ..
                } => {
                    services.entry(service.clone()).or_insert(None);
                }
                _ => {}
            }
        }
    }
    if services.is_empty() {
        return;
    }
    w.blank();
    section(w, "external_services", |w| {
        for (service, remote) in services {
            section(w, &yaml_str(&service), |w| {
                if let Some(url) = &remote {
                    let (url_env, _) =
                        svc_backend_sdk::environment::remote_service_env(&service, url.as_deref());
                    let server_url = match url.as_deref() {
                        Some(u) if !u.starts_with("env:") => yaml_str(u),
                        _ => yaml_str(&format!("${{{url_env}}}")),
                    };
                    w.line(format!("serverUrl: {server_url}"));
                }
                let (_, key_env) = svc_backend_sdk::environment::remote_service_env(&service, None);
                section(w, "auth", |w| {
                    w.line("type: api_key")
                        .line(format!("token: {}", yaml_str(&format!("${{{key_env}}}"))));
                });
            });
        }
    });
}

/// application.yaml's `a2a` section: the agent card's title, description,
/// skills and callers (`server.tokens`).
fn a2a(w: &mut CodeWriter, a: &svc_backend_sdk::ir::A2aSettings) {
    let list = |items: &[String]| {
        let quoted: Vec<String> = items.iter().map(|i| yaml_str(i)).collect();
        format!("[{}]", quoted.join(", "))
    };
    w.line("enabled: true");
    if let Some(t) = &a.title {
        w.line(format!("title: {}", yaml_str(t)));
    }
    if let Some(d) = &a.description {
        w.line(format!("description: {}", yaml_str(d)));
    }
    if !a.skills.is_empty() {
        section(w, "skills", |w| {
            for k in &a.skills {
                // A list item: `- ` and its first key, the other keys under it.
                w.line(format!("- id: {}", yaml_str(&k.id))).indent();
                w.line(format!("name: {}", yaml_str(&k.name)));
                if let Some(d) = &k.description {
                    w.line(format!("description: {}", yaml_str(d)));
                }
                if !k.tags.is_empty() {
                    w.line(format!("tags: {}", list(&k.tags)));
                }
                if !k.roles.is_empty() {
                    w.line(format!("roles: {}", list(&k.roles)));
                }
                w.dedent();
            }
        });
    }
    if !a.tokens.is_empty() {
        // The callers of /a2a (settings.a2a.tokens), read by the SDK's
        // credentials (svc/a2a/credentials.py); each token from its variable.
        section(w, "server", |w| {
            section(w, "tokens", |w| {
                for t in &a.tokens {
                    w.line(format!("- subject: {}", yaml_str(&t.subject)))
                        .indent();
                    if !t.roles.is_empty() {
                        w.line(format!("roles: {}", list(&t.roles)));
                    }
                    w.line(format!(
                        "token: {}",
                        yaml_str(&format!("${{{}}}", t.token_env))
                    ))
                    .line(format!("scheme: {}", t.scheme.as_str()));
                    w.dedent();
                }
            });
        });
    }
}

fn app_init(doc: &Document) -> String {
    let mut packages = vec![
        "agents",
        "config",
        "graphs",
        "guardrails",
        "mcp",
        "nodes",
        "personas",
        "policies",
        "skills",
        "state",
        "tools",
    ];
    if !scope::children(doc, &Scope::root()).is_empty() {
        packages.push("subgraphs");
    }
    let mut packages: Vec<String> = packages.into_iter().map(String::from).collect();
    packages.sort();
    package_init(
        "The application package: importing it registers every component.",
        &packages,
    )
}

fn config_py() -> String {
    let mut w = CodeWriter::python();
    let configuration = w.name("svc", "configuration");
    let dataclass = w.name("dataclasses", "dataclass");
    w.line(format!("@{configuration}(\"graph\")"));
    w.line(format!("@{dataclass}"));
    suite(&mut w, "class GraphSettings:", |w| {
        w.line("entrypoint: str = \"\"");
        w.line("max_steps: int = 25");
        w.line("request_timeout_ms: int = 30000");
        w.line("streaming: bool = False");
    });
    module_file("Typed views of application.yaml sections.", w)
}

fn main_py() -> String {
    let mut w = CodeWriter::python();
    let load_config = w.name("svc.config", "load_config");
    let configure_logging = w.name("svc.tracing", "configure_logging");
    let configure_tracing = w.name("svc.tracing", "configure_tracing");
    let create_app = w.name("svc.server", "create_app");
    w.line("# The graph's logging and tracing settings, as `python -m svc run` applies them.");
    w.line(format!("config = {load_config}()"));
    w.line(format!("{configure_logging}(config)"));
    w.line(format!("{configure_tracing}(config)"));
    w.line(format!("app = {create_app}(config=config)"));
    module_file(
        "The ASGI application: `uvicorn app.main:app`, or `python -m svc run`.",
        w,
    )
}

/// `app/graphs/__init__.py`: imports the root graph's module (on one line
/// whatever its length, unlike [`package_init`]).
fn graphs_init(doc: &Document) -> String {
    let mut w = CodeWriter::python();
    w.line(format!("from . import {}  # noqa: F401", module(&doc.id)));
    module_file("The graphs of the project.", w)
}

fn field_type(ty: FieldType) -> &'static str {
    ty.as_str()
}

/// The type annotation of a state field; `Any` is imported through `w`
/// when the annotation uses it.
fn py_annotation(w: &mut CodeWriter, ty: FieldType, items: Option<&ItemType>) -> String {
    match ty {
        FieldType::String => "str".into(),
        FieldType::Integer => "int".into(),
        FieldType::Number => "float".into(),
        FieldType::Boolean => "bool".into(),
        FieldType::Object => format!("dict[str, {}]", w.name("typing", "Any")),
        FieldType::Array => match items {
            Some(it) => format!("list[{}]", py_annotation(w, it.ty, it.items.as_deref())),
            None => format!("list[{}]", w.name("typing", "Any")),
        },
        FieldType::Messages => "list[dict[str, str]]".into(),
    }
}

fn item_expr(w: &mut CodeWriter, it: &ItemType) -> Expr {
    let mut args = vec![Expr::atom(quote(field_type(it.ty)))];
    if let Some(inner) = &it.items {
        args.push(Expr::kw("items", item_expr(w, inner)));
    }
    Expr::call(w.name("svc.runtime", "Item"), args)
}

fn state_py(doc: &Document) -> String {
    let state = &doc.logical.state;
    let mut w = CodeWriter::python();
    let annotations = Expr::Dict(
        state
            .iter()
            .map(|f| {
                (
                    quote(&f.name),
                    Expr::atom(py_annotation(&mut w, f.ty, f.items.as_ref())),
                )
            })
            .collect(),
    );
    let typed = Expr::call(
        w.name("typing", "TypedDict"),
        vec![
            Expr::atom("\"State\""),
            annotations,
            Expr::kw("total", Expr::atom("False")),
        ],
    );
    w.line("# The state as a type, for editors and type checkers.");
    write_expr(&mut w, 0, "State = ", &typed, "");
    let mut fields = Vec::new();
    for f in state {
        let mut args = vec![
            Expr::atom(quote(&f.name)),
            Expr::atom(quote(field_type(f.ty))),
        ];
        if let Some(it) = &f.items {
            args.push(Expr::kw("items", item_expr(&mut w, it)));
        }
        if f.reducer == Reducer::Append {
            args.push(Expr::kw("append", Expr::atom("True")));
        }
        if f.required {
            args.push(Expr::kw("required", Expr::atom("True")));
        }
        if let Some(d) = f.default.as_ref().filter(|d| !d.is_null()) {
            args.push(Expr::kw("default", literal(d)));
        }
        // The shape of `properties`, checked after the type.
        if let Some(schema) = f.value_schema() {
            args.push(Expr::kw("schema", literal(&schema)));
        }
        fields.push(Expr::call(w.name("svc.runtime", "Field"), args));
    }
    w.blank();
    w.line("# What requests are validated against and patches merged with.");
    let schema = Expr::call(
        w.name("svc.runtime", "StateSchema"),
        vec![Expr::List(fields)],
    );
    write_expr(&mut w, 0, "SCHEMA = ", &schema, "");
    module_file(
        "The state of the graph: its fields, types, reducers and defaults.",
        w,
    )
}
