//! `<scope>/agents/`: one module per entry of `logical.agents`, each
//! registering the agent with the SDK (`@worker_agent`, `@supervisor`,
//! `@agent`), which runs it (`svc.agents`). Agent nodes call `run_agent` by
//! its registered name (the id, with the scope's prefix in a subgraph).

use svc_backend_sdk::ir::{AgentDef, AgentKind, Document, SupervisorRouter};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::model::model_expr;
use crate::py::{
    indent_body, module, module_file, package_init, quote, suite, top_level_gap, write_expr, Expr,
};
use crate::scope::Scope;

/// A list of registered names (tools, members) of this scope.
fn names(scope: &Scope, ids: &[String]) -> Expr {
    Expr::List(
        ids.iter()
            .map(|s| Expr::atom(quote(&scope.name(s))))
            .collect(),
    )
}

fn strings(items: &[String]) -> Expr {
    Expr::List(items.iter().map(|s| Expr::atom(quote(s))).collect())
}

/// The modules of `<scope>/agents/` and its `__init__.py`.
pub fn files(doc: &Document, scope: &Scope) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut modules = Vec::new();
    let mut missing = Vec::new();
    for (i, a) in doc.logical.agents.iter().enumerate() {
        let m = module(&a.id);
        let text = match agent_module(doc, scope, a) {
            Ok(text) => text,
            Err(d) => {
                missing.push(d.at(scope.at(&format!("/logical/agents/{i}"))));
                continue;
            }
        };
        out.push(File::text(format!("{}/agents/{m}.py", scope.dir), text));
        modules.push(m);
    }
    if !missing.is_empty() {
        return Err(missing);
    }
    out.push(File::text(
        format!("{}/agents/__init__.py", scope.dir),
        package_init(
            "Agents the graph can delegate to, one module each.",
            &modules,
        ),
    ));
    Ok(out)
}

/// The registration of one agent.
fn agent_module(doc: &Document, scope: &Scope, a: &AgentDef) -> Result<String, Diagnostic> {
    let mut w = CodeWriter::python();
    let mut args = vec![Expr::atom(quote(&scope.name(&a.id)))];
    let description = a.description.clone().unwrap_or_default();
    let (decorator, what) = match &a.kind {
        AgentKind::Worker {
            instructions,
            persona,
            tool_ids,
            max_turns,
            model,
        } => {
            if !tool_ids.is_empty() {
                args.push(Expr::kw("tools", names(scope, tool_ids)));
            }
            if let Some(p) = persona {
                let mut entries = Vec::new();
                if let Some(role) = &p.role {
                    entries.push((quote("role"), Expr::atom(quote(role))));
                }
                if let Some(tone) = &p.tone {
                    entries.push((quote("tone"), Expr::atom(quote(tone))));
                }
                args.push(Expr::kw("persona", Expr::Dict(entries)));
            }
            if let Some(text) = instructions {
                args.push(Expr::kw("instructions", Expr::atom(quote(text))));
            }
            if let Some(m) = model {
                let model = model_expr(&mut w, doc, m);
                args.push(Expr::kw("model", model));
            }
            args.push(Expr::kw("max_turns", Expr::atom(max_turns.to_string())));
            (w.name("svc", "worker_agent"), "worker agent")
        }
        AgentKind::Supervisor {
            members,
            router,
            max_rounds,
            instructions,
            model,
        } => {
            args.push(Expr::kw("members", names(scope, members)));
            let router_name = match router {
                SupervisorRouter::Llm => "llm",
                SupervisorRouter::Custom => "custom",
            };
            args.push(Expr::kw("router", Expr::atom(quote(router_name))));
            args.push(Expr::kw("max_rounds", Expr::atom(max_rounds.to_string())));
            if let Some(text) = instructions {
                args.push(Expr::kw("instructions", Expr::atom(quote(text))));
            }
            if let Some(m) = model {
                let model = model_expr(&mut w, doc, m);
                args.push(Expr::kw("model", model));
            }
            (w.name("svc", "supervisor"), "supervisor")
        }
        AgentKind::Remote {
            url,
            service,
            input_field,
            output_field,
            timeout_ms,
        } => {
            args.push(Expr::kw("transport", Expr::atom(quote("remote"))));
            args.push(Expr::kw("service", Expr::atom(quote(service))));
            if let Some(url) = url {
                args.push(Expr::kw("url", Expr::atom(quote(url))));
            }
            args.push(Expr::kw("input_field", Expr::atom(quote(input_field))));
            args.push(Expr::kw("output_field", Expr::atom(quote(output_field))));
            args.push(Expr::kw("timeout_ms", Expr::atom(timeout_ms.to_string())));
            (w.name("svc", "agent"), "remote agent")
        }
        AgentKind::A2a {
            agent_card_url,
            service,
            skill_id,
        } => {
            args.push(Expr::kw("transport", Expr::atom(quote("a2a"))));
            args.push(Expr::kw(
                "agent_card_url",
                Expr::atom(quote(agent_card_url)),
            ));
            if let Some(service) = service {
                args.push(Expr::kw("service", Expr::atom(quote(service))));
            }
            if let Some(skill) = skill_id {
                args.push(Expr::kw("skill_id", Expr::atom(quote(skill))));
            }
            (w.name("svc", "agent"), "A2A agent")
        }
    };
    if !a.roles.is_empty() {
        args.push(Expr::kw("roles", strings(&a.roles)));
    }
    if !description.is_empty() {
        args.push(Expr::kw("description", Expr::atom(quote(&description))));
    }
    let custom = match &a.kind {
        AgentKind::Supervisor {
            router: SupervisorRouter::Custom,
            ..
        } => Some(doc.body("python-svc", &a.id).ok_or_else(|| {
            Diagnostic::error(
                &svc_backend_sdk::ir::codes::MISSING_BODY,
                format!(
                    "supervisor `{}` routes with `custom` but has no python-svc body",
                    a.id
                ),
            )
            .hint(format!(
                "add bodiesByPlatform[\"python-svc\"][\"{}\"]: the body of `def route(state: dict) -> str`",
                a.id
            ))
        })?),
        _ => None,
    };
    match custom {
        Some(body) if scope.is_root() => {
            write_expr(&mut w, 0, "@", &Expr::call(decorator, args), "");
            suite(&mut w, "def route(state: dict) -> str:", |w| {
                w.lines(&indent_body(body, 0));
            });
        }
        Some(body) => {
            // In a subgraph the members are registered with the scope's
            // prefix, and the body is written with the plain ids.
            w.line(format!("PREFIX = {}", quote(&scope.prefix)));
            top_level_gap(&mut w);
            suite(&mut w, "def decide(state: dict) -> str:", |w| {
                w.lines(&indent_body(body, 0));
            });
            top_level_gap(&mut w);
            write_expr(&mut w, 0, "@", &Expr::call(decorator, args), "");
            suite(&mut w, "def route(state: dict) -> str:", |w| {
                w.line("last = state[\"last_member\"]");
                w.line("decision = decide({**state, \"last_member\": last and last.removeprefix(PREFIX)})");
                suite(
                    w,
                    "if not isinstance(decision, str) or decision.strip().lower() == \"finish\":",
                    |w| {
                        w.line("return decision");
                    },
                );
                w.line("return PREFIX + decision.strip()");
            });
        }
        None => {
            write_expr(&mut w, 0, "@", &Expr::call(decorator, args), "");
            // A comment, not a docstring: the SDK would take a docstring
            // for the agent's description, which a supervisor's router
            // shows the model (the IR's `description` is the only one).
            let note = match &a.kind {
                AgentKind::Remote { service, .. } => format!(
                    "# Runs on the service `{service}` (external_services.{service} in application.yaml)."
                ),
                AgentKind::A2a {
                    service: Some(service),
                    ..
                } => format!(
                    "# An A2A peer; its credential is external_services.{service}.auth in application.yaml."
                ),
                AgentKind::A2a { service: None, .. } => {
                    "# An A2A peer called without a credential.".to_string()
                }
                _ => "# Its instructions are given above; returning None keeps them.".to_string(),
            };
            suite(&mut w, "def agent() -> None:", |w| {
                w.line(note);
                w.line("return None");
            });
        }
    }
    Ok(module_file(&format!("The {what} `{}`.", a.id), w))
}
