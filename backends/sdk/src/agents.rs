//! What agents of `logical.agents` mean before any code runs, decided once
//! for the backends that compile agents to their own runtime (go, java-svc);
//! python-svc's SDK composes the same text at run time (`svc.agents.run`).

use svc_ir::{Document, NodeKind, Persona};

use crate::environment::remote_service_env;

/// Whether any graph of the document has an agent of kind a2a (the service
/// then carries an A2A client).
pub fn calls_a2a(doc: &Document) -> bool {
    crate::subgraphs::any_graph(doc, |d| {
        d.logical
            .agents
            .iter()
            .any(|a| matches!(a.kind, svc_ir::AgentKind::A2a { .. }))
    })
}

/// Whether the graph runs the agent runtime: it has agents, or an `llm`
/// node that may call tools (the same loop as a worker).
pub fn runs_agents(doc: &Document) -> bool {
    !doc.logical.agents.is_empty()
        || doc
            .logical
            .nodes
            .iter()
            .any(|n| matches!(&n.kind, NodeKind::Llm(l) if !l.bound_tool_ids.is_empty()))
}

/// Where a remote agent's calls go and the variable holding their key: its
/// `url` (literal or `env:NAME`), else `env:<SERVICE>_URL`; `<SERVICE>_API_KEY`.
pub fn remote_endpoint(service: &str, url: Option<&str>) -> (String, String) {
    let (url_env, key_env) = remote_service_env(service, url);
    let url = url.map_or_else(|| format!("env:{url_env}"), str::to_string);
    (url, key_env)
}

/// A worker's system prompt: the persona's sentences ("You are the
/// <role>." "Answer in a <tone> tone."), then the instructions, joined by a
/// blank line; "" when there is neither.
pub fn worker_instructions(persona: Option<&Persona>, instructions: Option<&str>) -> String {
    let mut said = Vec::new();
    if let Some(p) = persona {
        if let Some(role) = p.role.as_deref().filter(|r| !r.is_empty()) {
            said.push(format!("You are the {role}."));
        }
        if let Some(tone) = p.tone.as_deref().filter(|t| !t.is_empty()) {
            said.push(format!("Answer in a {tone} tone."));
        }
    }
    [said.join(" "), instructions.unwrap_or_default().to_string()]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn persona(role: Option<&str>, tone: Option<&str>) -> Persona {
        Persona {
            role: role.map(String::from),
            tone: tone.map(String::from),
        }
    }

    #[test]
    fn a_persona_speaks_before_the_instructions() {
        let p = persona(Some("analyst"), Some("concise"));
        assert_eq!(
            worker_instructions(Some(&p), Some("You research.")),
            "You are the analyst. Answer in a concise tone.\n\nYou research."
        );
        let tone = persona(None, Some("formal"));
        assert_eq!(
            worker_instructions(Some(&tone), None),
            "Answer in a formal tone."
        );
        assert_eq!(worker_instructions(None, Some("You write.")), "You write.");
        assert_eq!(worker_instructions(Some(&persona(None, None)), None), "");
    }
}
