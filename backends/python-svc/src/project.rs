//! Assembles the Python project.

use svc_backend_sdk::ir::{
    AgentKind, Auth, CheckpointerKind, Document, FieldType, ItemType, NodeKind, Reducer,
};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Connectors, Diagnostic, File};

use crate::build_files::{self, PYTHON_IMAGE};
use crate::py::{literal, module, module_file, package_init, quote, suite, write_expr, Expr};
use crate::scope::{self, Scope};
use crate::{agents, graph, mcp, nodes, project_tests, tools};

/// The SDK a generated project depends on (this repository's sdk/python),
/// with the `mcp` extra when the graph talks MCP or is published over it,
/// the `a2a` extra when it is published as an A2A agent, and LangGraph's
/// saver for a durable checkpointer (`checkpoint-sqlite`, `checkpoint-postgres`).
pub fn sdk_requirement(doc: &Document) -> String {
    let mcp = doc.logical.settings.mcp.expose
        || scope::all_graphs(doc)
            .iter()
            .any(|(d, _)| !d.logical.mcp_servers.is_empty());
    let mut extras = vec!["server", "http"];
    if mcp {
        extras.push("mcp");
    }
    let a2a_peers = scope::all_graphs(doc).iter().any(|(d, _)| {
        d.logical
            .agents
            .iter()
            .any(|a| matches!(a.kind, AgentKind::A2a { .. }))
    });
    if doc.logical.settings.a2a.enabled || a2a_peers {
        extras.push("a2a");
    }
    if doc.logical.settings.tracing.enabled {
        extras.push("tracing");
    }
    match doc.logical.settings.checkpointer.kind {
        CheckpointerKind::Sqlite => extras.push("checkpoint-sqlite"),
        CheckpointerKind::Postgres => extras.push("checkpoint-postgres"),
        CheckpointerKind::None | CheckpointerKind::Memory => {}
    }
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
const SDK_WHEEL_NAME: &str = env!("SVC_SDK_WHEEL_NAME");

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
        SdkSource::Index => File::text(
            "vendor/README.md",
            "# vendor\n\nThis project was compiled with `svc compile --sdk index`: `svc-sdk` comes from the \
             package index. `pip install --find-links vendor ...` prefers a wheel put here.\n",
        ),
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
        File::text(
            ".gitignore",
            "env.yaml\n.venv/\n__pycache__/\n*.egg-info/\n.pytest_cache/\n",
        ),
        File::text("README.md", readme(doc, sdk)),
        File::text("Dockerfile", build_files::dockerfile(doc)),
        File::text(
            ".dockerignore",
            ".venv/\nenv.yaml\n__pycache__/\n*.egg-info/\n.pytest_cache/\n.git/\n",
        ),
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
        files.push(File::text(
            "app/connectors/__init__.py",
            "\"\"\"Code of the marketplace connectors the graph uses.\"\"\"\n",
        ));
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
    });
    if let Some(m) = &s.model {
        w.blank();
        section(&mut w, "model", |w| {
            w.line(format!("provider: {}", yaml_str(&m.provider)))
                .line(format!("name: {}", yaml_str(&m.name)))
                .line(format!("base_url_env: {}", m.base_url_env))
                .line(format!("api_key_env: {}", m.api_key_env));
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

/// application.yaml's `a2a` section: the agent card's title, description
/// and skills.
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
    if a.skills.is_empty() {
        return;
    }
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

fn readme(doc: &Document, sdk: SdkSource) -> String {
    let title = doc.name.clone().unwrap_or_else(|| doc.id.clone());
    let s = &doc.logical.settings;
    let mut out = format!("# {title}\n\n");
    if let Some(d) = &doc.description {
        out.push_str(&format!("{d}\n\n"));
    }
    out.push_str(&format!(
        "A FastAPI service on the `svc` Python SDK, generated by svc from the graph `{}` (version {}). \
         The graph is compiled to a direct run loop (`app/graphs/{}.py`).\n\n",
        doc.id,
        doc.version,
        module(&doc.id)
    ));
    let from = match sdk {
        SdkSource::Vendor => format!(
            "`vendor/{SDK_WHEEL_NAME}` is the SDK this project was compiled with, so it installs \
             where no package index has that release; everything else comes from the index"
        ),
        SdkSource::Index => "the SDK comes from the package index".to_string(),
    };
    out.push_str(&format!(
        "## Install\n\nPython 3.10 to 3.13. The project depends on `{requirement}`; {from}:\n\n\
         ```sh\npython -m venv .venv && . .venv/bin/activate\npip install --find-links vendor -e \".[test]\"\n```\n\n",
        requirement = sdk_requirement(doc),
    ));
    out.push_str("## Configure\n\n| variable | meaning |\n|---|---|\n");
    out.push_str(&format!(
        "| `SVC_HOST` | listen address (default `{}`) |\n",
        s.server.host
    ));
    out.push_str(&format!(
        "| `SVC_PORT` | listen port (default `{}`) |\n",
        s.server.port
    ));
    for (k, v) in svc_backend_sdk::environment::variables(doc) {
        out.push_str(&format!("| `{k}` | {v} |\n"));
    }
    out.push_str(&format!(
        "\nValues may also be put in `env.yaml`; other settings are in `application.yaml`. The run is limited to \
         {} steps and {} ms; requests over 1 MiB and responses over 4 MiB are refused.\n\n",
        s.max_steps, s.request_timeout_ms
    ));
    out.push_str("## Authenticate\n\n");
    let (header, export) = match doc.security.auth {
        Auth::None => {
            out.push_str("Authentication is off (`security.auth` is `none` in the graph).\n\n");
            (String::new(), String::new())
        }
        Auth::ApiKey => {
            out.push_str("Every `/invoke` and `/info` request carries the key in `X-API-Key`; `/health` needs none.\n\n");
            (
                format!(" -H \"X-API-Key: ${}\"", doc.security.key_env),
                format!("export {}=change-me\n", doc.security.key_env),
            )
        }
        Auth::Bearer => {
            out.push_str("Every `/invoke` and `/info` request carries `Authorization: Bearer <token>`; `/health` needs none.\n\n");
            (
                format!(" -H \"Authorization: Bearer ${}\"", doc.security.key_env),
                format!("export {}=change-me\n", doc.security.key_env),
            )
        }
    };
    out.push_str(&format!(
        "## Test and run\n\n```sh\npython -m pytest -q\n{export}python -m svc run   # or: uvicorn app.main:app\n```\n\n\
         ```sh\ncurl -s localhost:{port}/health\ncurl -s localhost:{port}/invoke -H 'Content-Type: application/json'{header} -d '{{\"state\": {{...}}}}'\n```\n\n\
         `POST /invoke` takes `{{\"state\": {{...}}}}` (or `{{\"messages\": [...]}}` when the state has a `messages` \
         field) and answers `{{\"result\": {{...}}}}`; errors are `{{\"error\": {{\"code\", \"message\", \"details\"}}}}`. \
         With `SVC_DEV_EVENTS=1`, `GET /runs/{{run_id}}/events` streams the events of a run (the id is in the \
         `X-Run-Id` response header).\n\n\
         `python -m svc run` serves the graph's routes on a plain Starlette app, which starts faster; \
         `uvicorn app.main:app` serves the FastAPI app of `app/main.py`, where you can add your own routes.\n\n\
         The `Dockerfile` installs the project into a virtual environment and runs `python -m svc run` on \
         `{PYTHON_IMAGE}` as a non-root user, with a health check on `/health`. Secrets come from the \
         environment of `docker run`{secret}, never from the image (`env.yaml` is in `.dockerignore`); \
         it installs `svc-sdk` with `--find-links vendor`, as the setup command does.\n\n",
        port = s.server.port,
        secret = if doc.security.auth == Auth::None {
            String::new()
        } else {
            format!(" (`-e {}=...`)", doc.security.key_env)
        },
    ));
    if s.mcp.expose || s.a2a.enabled {
        out.push_str("## Published to other agents\n\n");
        if s.mcp.expose {
            out.push_str("- MCP: `/mcp` (streamable HTTP) offers the graph as one tool whose input is the state; `python -m svc mcp` serves it over stdio.\n");
        }
        if s.a2a.enabled {
            out.push_str("- A2A: the agent card is at `/.well-known/agent-card.json` (and `/.well-known/agent.json`), JSON-RPC at `/a2a`; a message's text goes to the graph's first required `string` field and the reply is the field the run wrote last.\n");
        }
        out.push_str("\nBoth need the same credential as `/invoke`; the agent card does not.\n\n");
    }
    if doc
        .logical
        .nodes
        .iter()
        .any(|n| matches!(n.kind, NodeKind::Hitl(_)))
    {
        let kept = match (s.checkpointer.kind, s.checkpointer.env()) {
            (CheckpointerKind::Sqlite, Some(env)) => format!(
                "Paused threads are kept in the SQLite database file whose path `{env}` holds (made on first start; \
                 the service does not start without it): a restart loses nothing, and the processes of one machine \
                 that share the file share the threads. A thread is dropped 24 h after its last use."
            ),
            (CheckpointerKind::Postgres, Some(env)) => format!(
                "Paused threads are kept in the PostgreSQL database whose URL `{env}` holds (tables made on first \
                 start; the service does not start without it): a restart loses nothing, and every replica sharing \
                 the database can resume any thread. While the database cannot be reached, `/invoke` answers \
                 `503` with code `checkpointer_unavailable` and the threads wait there. A thread is dropped 24 h \
                 after its last use."
            ),
            _ => "Paused threads are kept in this process's memory (at most 10,000, for at most 24 h): a restart \
                  forgets every paused thread."
                .to_string(),
        };
        out.push_str(&format!(
            "## Human in the loop\n\nA run that reaches a `hitl` node answers `{{\"interrupt\": {{\"node\", \"value\"}}, \"threadId\"}}`; \
             a reviewer resumes it with `POST /invoke` and `{{\"threadId\": \"...\", \"resume\": <value>}}`, and the run goes on \
             to its result or to the next interrupt. {kept}\n\n\
             ```sh\ncurl -s localhost:{port}/invoke -H 'Content-Type: application/json'{header} -d '{{\"threadId\": \"<id>\", \"resume\": \"approved\"}}'\n```\n\n",
            port = s.server.port
        ));
    }
    out.push_str(
        "## Layout\n\n\
         - `app/state.py`: the typed state and its schema\n\
         - `app/graphs/`: the compiled graph (`@graph(entrypoint=True)`)\n\
         - `app/nodes/`: one module per node (native bodies from `bodiesByPlatform[\"python-svc\"]`)\n\
         - `app/tools/`: the graph's tools; `app/agents/`: its agents (`logical.agents`)\n\
         - `app/documents/` (with rag nodes): their documents, copied at compile time\n\
         - `app/guardrails/`, `app/policies/`, `app/personas/`, `app/skills/`: add your own modules there and import them in the package's `__init__.py`\n\
         - `app/main.py`: the ASGI app; `application.yaml`, `env.yaml`: configuration\n\
         - `tests/`: tests that drive the service through the HTTP contract\n",
    );
    out
}
