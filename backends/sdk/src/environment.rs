//! The environment variables a generated service reads, with what each is
//! for: the credential, the checkpointer's database, the model provider, HTTP tools' endpoints, remote
//! agents' services and MCP servers.
//! READMEs and env.yaml files list them.

use svc_ir::{
    AgentKind, Auth, CheckpointerKind, Document, McpTransport, NodeKind, RagNode, Retriever,
    SubgraphNode, SubgraphRef,
};

use crate::writer::CodeWriter;

/// The variables a remote agent's service reads: its base URL (the
/// agent's `url` when that is `env:NAME`, else `<SERVICE>_URL`) and the key
/// sent to it (`<SERVICE>_API_KEY`).
pub fn remote_service_env(service: &str, url: Option<&str>) -> (String, String) {
    let stem: String = service
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    let url_env = url
        .and_then(|u| u.strip_prefix("env:"))
        .map(str::to_string)
        .unwrap_or_else(|| format!("{stem}_URL"));
    (url_env, format!("{stem}_API_KEY"))
}

pub fn variables(doc: &Document) -> Vec<(String, String)> {
    let mut vars = Vec::new();
    match doc.security.auth {
        Auth::None => {}
        Auth::ApiKey => vars.push((
            doc.security.key_env.clone(),
            "the API key clients send in X-API-Key (required: the service does not start without it)".into(),
        )),
        Auth::Bearer => vars.push((
            doc.security.key_env.clone(),
            "the token clients send as Authorization: Bearer <token> (required: the service does not start without it)".into(),
        )),
    }
    // The validator refuses a table without a2a.enabled.
    for t in &doc.logical.settings.a2a.tokens {
        vars.push((
            t.token_env.clone(),
            format!(
                "the token of the A2A caller `{}` (settings.a2a.tokens), sent as {} at /a2a (required: the service does not start without it)",
                t.subject,
                t.scheme.header()
            ),
        ));
    }
    let checkpointer = &doc.logical.settings.checkpointer;
    if let Some(env) = checkpointer.env() {
        let what = match checkpointer.kind {
            CheckpointerKind::Sqlite => "path of the SQLite database file that keeps paused threads",
            _ => "PostgreSQL URL (postgresql://user:password@host/db) of the database that keeps paused threads",
        };
        vars.push((
            env.to_string(),
            format!("{what} (required: the service does not start without it)"),
        ));
    }
    graph_variables(doc, &mut vars);
    for (node, var) in crate::connectors::env_refs(doc) {
        if !vars.iter().any(|(v, _)| *v == var) {
            vars.push((var, format!("used by the connector node `{node}`")));
        }
    }
    vars
}

/// An env.yaml listing the variables with empty values (which are skipped
/// when exported, so the file never blanks out a real variable).
pub fn env_yaml(doc: &Document) -> String {
    let mut w = CodeWriter::text("  ");
    w.line("# Environment of the service: at start-up each non-empty value is exported unless the")
        .line("# variable is already set. Keep this file out of version control once it holds secrets.");
    let vars = variables(doc);
    if vars.is_empty() {
        w.line("{}");
    }
    for (name, what) in vars {
        w.line(format!("# {what}")).line(format!("{name}: \"\""));
    }
    w.finish()
}

/// The variables of one graph's model, rag nodes, remote agents and HTTP
/// tools, then of each embedded subgraph (a child reads the same
/// environment as its parent). The first description of a variable stays.
fn graph_variables(doc: &Document, vars: &mut Vec<(String, String)>) {
    fn push(vars: &mut Vec<(String, String)>, var: String, what: String) {
        if !vars.iter().any(|(v, _)| *v == var) {
            vars.push((var, what));
        }
    }
    if doc.has_llm_nodes() {
        if let Some(m) = &doc.logical.settings.model {
            push(
                vars,
                m.base_url_env.clone(),
                "base URL of the OpenAI-compatible chat-completions API (default https://api.openai.com/v1)".into(),
            );
            push(
                vars,
                m.api_key_env.clone(),
                "API key of the model provider".into(),
            );
        }
    }
    for n in &doc.logical.nodes {
        match &n.kind {
            NodeKind::Rag(RagNode {
                retriever:
                    Retriever::Embedding {
                        base_url_env,
                        api_key_env,
                        ..
                    },
                ..
            }) => {
                let base = base_url_env
                    .clone()
                    .unwrap_or_else(svc_ir::default_base_url_env);
                let key = api_key_env
                    .clone()
                    .unwrap_or_else(svc_ir::default_api_key_env);
                let what = format!("(rag node `{}`)", n.id);
                push(
                    vars,
                    base,
                    format!("base URL of the OpenAI-compatible embeddings API {what}"),
                );
                push(vars, key, format!("API key of the embeddings API {what}"));
            }
            NodeKind::Subgraph(SubgraphNode {
                graph: SubgraphRef::Embedded(child),
                ..
            }) => graph_variables(child, vars),
            _ => {}
        }
    }
    for a in &doc.logical.agents {
        if let AgentKind::Remote { url, service, .. } = &a.kind {
            let (url_env, key_env) = remote_service_env(service, url.as_deref());
            if url.as_deref().is_none_or(|u| u.starts_with("env:")) {
                let what = format!(
                    "base URL of the service `{service}` (remote agent `{}`)",
                    a.id
                );
                push(vars, url_env, what);
            }
            let what = format!("the API key sent to the service `{service}` in X-API-Key");
            push(vars, key_env, what);
        }
        if let AgentKind::A2a {
            agent_card_url,
            service,
            ..
        } = &a.kind
        {
            if let Some(var) = agent_card_url.strip_prefix("env:") {
                let what = format!("agent card URL of the A2A agent `{}`", a.id);
                push(vars, var.to_string(), what);
            }
            if let Some(service) = service {
                let (_, key_env) = remote_service_env(service, None);
                let what = format!("the credential sent to the A2A service `{service}` (X-API-Key, or as its card asks on go and java-svc)");
                push(vars, key_env, what);
            }
        }
    }
    for (id, endpoint) in doc.http_tools() {
        if let Some(var) = endpoint.strip_prefix("env:") {
            push(
                vars,
                var.to_string(),
                format!("endpoint of the HTTP tool `{id}`"),
            );
        }
    }
    for server in &doc.logical.mcp_servers {
        let what = format!("used by the MCP server `{}`", server.id);
        let (url, values): (Option<&str>, Vec<&String>) = match &server.transport {
            McpTransport::Stdio { env, .. } => (None, env.values().collect()),
            McpTransport::Sse { url, headers, .. }
            | McpTransport::StreamableHttp { url, headers, .. } => {
                (Some(url.as_str()), headers.values().collect())
            }
        };
        if let Some(var) = url.and_then(|u| u.strip_prefix("env:")) {
            push(
                vars,
                var.to_string(),
                format!("URL of the MCP server `{}`", server.id),
            );
        }
        for value in values {
            for var in env_refs(value) {
                push(vars, var, what.clone());
            }
        }
    }
}

/// The variables a value names as `${NAME}` or as a whole `env:NAME`.
fn env_refs(value: &str) -> Vec<String> {
    if let Some(name) = value.strip_prefix("env:") {
        return vec![name.to_string()];
    }
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let name = &after[..end];
        if svc_ir::is_identifier(name) {
            out.push(name.to_string());
        }
        rest = &after[end + 1..];
    }
    out
}
