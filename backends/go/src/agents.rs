//! `internal/graph/agent_registry.go`: what agents and tool-calling `llm`
//! nodes reach at run time (agents.go): every native and HTTP tool, every
//! agent of `logical.agents`, and the body of each custom supervisor, of
//! every graph of the document, by registered name (a child's carry its
//! subgraph's prefix, as on python-svc).

use svc_backend_sdk::agents::{calls_a2a, remote_endpoint, worker_instructions};
use svc_backend_sdk::environment::remote_service_env;
use svc_backend_sdk::ir::{AgentDef, AgentKind, Document, SupervisorRouter, ToolKind};
use svc_backend_sdk::subgraphs::{all_graphs, GraphScope};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::golang::{quote, rt, RUNTIME_A2A, RUNTIME_MCP};
use crate::nodes::llm::{model_literal, strings};
use crate::nodes::{place_body, tool_name};

/// `var <decl>{...}` with the entries `body` writes; `{}` on one line, as
/// gofmt writes it, when there are none.
fn literal(w: &mut CodeWriter, decl: &str, any: bool, body: impl FnOnce(&mut CodeWriter)) {
    if any {
        w.block(format!("var {decl}{{"), "}", body);
    } else {
        w.line(format!("var {decl}{{}}"));
    }
}

fn route_name(agent: &str) -> String {
    format!("route_{agent}")
}

pub fn registry(doc: &Document) -> Result<File, Vec<Diagnostic>> {
    let graphs = all_graphs(doc);
    let mut w = CodeWriter::go();
    if calls_a2a(doc) {
        // Agents of kind a2a run through the runtime's a2a client, which
        // registers itself as its package loads.
        w.import_for_effects(RUNTIME_A2A);
    }
    w.line("// agentTools are the tools agents and tool-calling llm nodes may call.");
    let tools = graphs.iter().any(|(d, _)| !d.logical.tools.is_empty());
    let agent_tool = rt(&mut w, "AgentTool");
    literal(
        &mut w,
        &format!("agentTools = map[string]{agent_tool}"),
        tools,
        |w| {
            for (d, scope) in &graphs {
                tool_entries(w, d, scope);
            }
        },
    );
    let mut missing = Vec::new();
    for (d, scope) in &graphs {
        routers(&mut w, d, scope, &mut missing);
    }
    if !missing.is_empty() {
        return Err(missing);
    }
    w.blank();
    w.line("// agents are the agents of logical.agents.");
    let any = graphs.iter().any(|(d, _)| !d.logical.agents.is_empty());
    let agent = rt(&mut w, "Agent");
    literal(&mut w, &format!("agents = map[string]*{agent}"), any, |w| {
        for (d, scope) in &graphs {
            for a in &d.logical.agents {
                // One entry per block: gofmt aligns nothing across them.
                let fields = agent_fields(w, d, scope, a);
                w.block(format!("{}: {{", quote(&scope.name(&a.id))), "},", |w| {
                    w.line(format!("{},", fields.join(", ")));
                });
            }
        }
    });
    w.blank();
    w.line("// The agents and tools runs call (the runtime's agents.go).");
    w.block("func init() {", "}", |w| {
        let register = rt(w, "RegisterAgents");
        w.line(format!("{register}(agents, agentTools)"));
    });
    Ok(File::text(
        "internal/graph/agent_registry.go",
        w.finish_file("package graph\n\n"),
    ))
}

/// The `agentTools` entries of one graph's tools. An MCP tool's model sees
/// the input schema (and, without its own, the description) its server
/// listed (`Listed`).
fn tool_entries(w: &mut CodeWriter, doc: &Document, scope: &GraphScope) {
    for t in &doc.logical.tools {
        let name = scope.name(&t.id);
        let mut listed = String::new();
        let call = match &t.kind {
            ToolKind::Native => format!(
                "out, err := {}(ctx, State(args))\nreturn map[string]any(out), err",
                tool_name(&name)
            ),
            ToolKind::Http { .. } => format!(
                "return {}(ctx, {}, {}, args)",
                rt(w, "PostHTTPTool"),
                quote(&name),
                tool_name(&name)
            ),
            ToolKind::Mcp { .. } => {
                listed = format!(", Listed: {}.Listed", tool_name(&name));
                format!(
                    "out, err := {}(ctx, {}, {}, args)\nif err != nil {{\n\treturn nil, err\n}}\nreturn out.ForModel(), nil",
                    w.name(RUNTIME_MCP, "CallTool"),
                    quote(&name),
                    tool_name(&name)
                )
            }
        };
        // Imported only where used: a graph without tools has none.
        let context = w.name("context", "Context");
        w.line(format!(
                "{}: {{Name: {}, Description: {}{listed}, Call: func(ctx {context}, args map[string]any) (any, error) {{",
                quote(&name),
                quote(&name),
                quote(t.description.as_deref().unwrap_or_default())
            ));
        w.indent();
        for line in call.lines() {
            // A tab opens a block's body.
            match line.strip_prefix('\t') {
                Some(inner) => w.indent().line(inner).dedent(),
                None => w.line(line),
            };
        }
        w.dedent();
        w.line("}},");
    }
}

/// The body of each custom supervisor router of one graph (`route_<name>`);
/// a missing body is added to `missing`.
fn routers(w: &mut CodeWriter, doc: &Document, scope: &GraphScope, missing: &mut Vec<Diagnostic>) {
    for (i, a) in doc.logical.agents.iter().enumerate() {
        if let AgentKind::Supervisor {
            router: SupervisorRouter::Custom,
            ..
        } = a.kind
        {
            let Some(body) = doc.body("go", &a.id) else {
                // The host reports it first for the document itself.
                missing.push(
                    Diagnostic::error(
                        &svc_backend_sdk::ir::codes::MISSING_BODY,
                        format!(
                            "supervisor `{}` routes with `custom` but has no go body",
                            a.id
                        ),
                    )
                    .at(scope.at(&format!("/logical/agents/{i}"))),
                );
                continue;
            };
            let name = scope.name(&a.id);
            w.blank();
            let context = w.name("context", "Context");
            w.line(format!(
                "// {} is the custom router of the supervisor {}: it names the next member, or \"finish\".",
                route_name(&name),
                quote(&name)
            ));
            w.block(
                format!(
                    "func {}(ctx {context}, state State) (string, error) {{",
                    route_name(&name)
                ),
                "}",
                |w| place_body(w, body),
            );
        }
    }
}

/// The fields of an agent's `Agent` literal.
fn agent_fields(
    w: &mut CodeWriter,
    doc: &Document,
    scope: &GraphScope,
    a: &AgentDef,
) -> Vec<String> {
    let names = |ids: &[String]| strings(&ids.iter().map(|id| scope.name(id)).collect::<Vec<_>>());
    let mut f = vec![
        format!("Name: {}", quote(&scope.name(&a.id))),
        format!("Kind: {}", quote(a.kind.name())),
    ];
    if let Some(d) = &a.description {
        f.push(format!("Description: {}", quote(d)));
    }
    if !a.roles.is_empty() {
        f.push(format!("Roles: {}", strings(&a.roles)));
    }
    match &a.kind {
        AgentKind::Worker {
            instructions,
            persona,
            tool_ids,
            max_turns,
            model,
        } => {
            let text = worker_instructions(persona.as_ref(), instructions.as_deref());
            if !text.is_empty() {
                f.push(format!("Instructions: {}", quote(&text)));
            }
            if !tool_ids.is_empty() {
                f.push(format!("Tools: {}", names(tool_ids)));
            }
            f.push(format!("Model: {}", model_literal(w, doc, model.as_ref())));
            f.push(format!("MaxTurns: {max_turns}"));
        }
        AgentKind::Supervisor {
            members,
            router,
            max_rounds,
            instructions,
            model,
        } => {
            if let Some(text) = instructions.as_deref().filter(|t| !t.is_empty()) {
                f.push(format!("Instructions: {}", quote(text)));
            }
            f.push(format!("Members: {}", names(members)));
            match router {
                SupervisorRouter::Llm => {
                    f.push(format!("Model: {}", model_literal(w, doc, model.as_ref())))
                }
                // A child's body names members by their own ids.
                SupervisorRouter::Custom if scope.is_root() => {
                    f.push(format!("Route: {}", route_name(&a.id)))
                }
                SupervisorRouter::Custom => f.push(format!(
                    "Route: {}({}, {})",
                    rt(w, "PrefixedRoute"),
                    quote(&scope.prefix),
                    route_name(&scope.name(&a.id))
                )),
            }
            f.push(format!("MaxRounds: {max_rounds}"));
        }
        AgentKind::Remote {
            url,
            service,
            input_field,
            output_field,
            timeout_ms,
        } => {
            let (url, key_env) = remote_endpoint(service, url.as_deref());
            f.push(format!("URL: {}", quote(&url)));
            f.push(format!("KeyEnv: {}", quote(&key_env)));
            f.push(format!("InputField: {}", quote(input_field)));
            f.push(format!("OutputField: {}", quote(output_field)));
            f.push(format!("Timeout: {}({timeout_ms})", rt(w, "Millis")));
        }
        AgentKind::A2a {
            agent_card_url,
            service,
            skill_id,
        } => {
            f.push(format!("CardURL: {}", quote(agent_card_url)));
            if let Some(service) = service {
                let (_, key_env) = remote_service_env(service, None);
                f.push(format!("KeyEnv: {}", quote(&key_env)));
            }
            if let Some(skill) = skill_id {
                f.push(format!("SkillID: {}", quote(skill)));
            }
            // python-svc's default bound of an A2A call.
            f.push(format!("Timeout: {}({A2A_TIMEOUT_MS})", rt(w, "Millis")));
        }
    }
    f
}

/// How long an A2A call may take, as on python-svc (its `timeout_ms`).
const A2A_TIMEOUT_MS: u64 = 20_000;
