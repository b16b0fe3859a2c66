//! Capability negotiation: the document's requirements against the
//! backend's matrix, before `emit` is called. Every gap is reported at once.

use svc_ir::{
    requirements, AgentKind, Category, Diagnostic, Document, NodeKind, SupervisorRouter, ToolKind,
};
use svc_runtime::BackendInfo;

/// Whether the backend's matrix has `name` in `category`.
fn supports(info: &BackendInfo, category: Category, name: &str) -> bool {
    let c = &info.capabilities;
    let list = match category {
        Category::NodeKind => &c.node_kinds,
        Category::ToolKind => &c.tool_kinds,
        Category::Transport => &c.transports,
        Category::Auth => &c.auth,
        Category::Feature => &c.features,
    };
    list.iter().any(|s| s == name)
        // Backends written before providers were declared call every model
        // as an OpenAI-compatible API: an `llm` backend supports that one.
        || (category == Category::Feature
            && name == "model.provider.openai"
            && c.node_kinds.iter().any(|k| k == "llm"))
}

/// Whether the backend's matrix holds the requirement `key`
/// (`category:name`, as [`svc_ir::Requirement::key`] writes it); a key of
/// no known category is not held.
pub fn holds(info: &BackendInfo, key: &str) -> bool {
    let categories = [
        Category::NodeKind,
        Category::ToolKind,
        Category::Transport,
        Category::Auth,
        Category::Feature,
    ];
    key.split_once(':').is_some_and(|(category, name)| {
        categories
            .into_iter()
            .find(|c| c.as_str() == category)
            .is_some_and(|c| supports(info, c, name))
    })
}

/// The backend's reason for refusing `key`: the one given for the key, else
/// for a prefix of it written with a trailing `*` (`feature:model.provider.*`).
pub fn reason<'a>(info: &'a BackendInfo, key: &str) -> Option<&'a str> {
    let reasons = &info.capabilities.reasons;
    reasons
        .iter()
        .find(|(k, _)| k == key)
        .or_else(|| {
            reasons.iter().find(|(k, _)| {
                k.strip_suffix('*')
                    .is_some_and(|prefix| key.starts_with(prefix))
            })
        })
        .map(|(_, r)| r.as_str())
}

/// All gaps between `doc` and what the backend for `platform` offers.
pub fn negotiate(doc: &Document, platform: &str, info: &BackendInfo) -> Vec<Diagnostic> {
    let mut gaps = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for req in requirements(doc) {
        if supports(info, req.category, &req.name) {
            continue;
        }
        // One report per requirement and place.
        if !seen.insert((req.key(), req.pointer.clone())) {
            continue;
        }
        let why = reason(info, &req.key())
            .map(|r| format!("; {r}"))
            .unwrap_or_default();
        let of = req
            .subject
            .as_ref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        let mut d = Diagnostic::error(
            &svc_ir::codes::UNSUPPORTED,
            format!("{platform} does not support {}{of}{why}", req.describe()),
        )
        .at(req.pointer.clone())
        .hint(
            "change the graph, or compile for a platform that supports it (see `svc capabilities`)",
        );
        if let Some(n) = &req.node {
            d = d.node(n);
        }
        d.subject = req.subject.clone();
        gaps.push(d);
    }
    gaps.extend(bodies_and_templates(doc, platform, info));
    gaps
}

/// What a custom supervisor's body is on each platform (ir-v2.md, "Agents").
fn router_signature(platform: &str) -> &'static str {
    match platform {
        "go" => "the body of `func(ctx context.Context, state State) (string, error)`",
        "java-svc" => {
            "statements that assign `String result` from the read-only `Map<String, Object> state`"
        }
        _ => "the body of `def route(state: dict) -> str`",
    }
}

/// Native bodies and connector templates the platform needs.
fn bodies_and_templates(doc: &Document, platform: &str, info: &BackendInfo) -> Vec<Diagnostic> {
    let mut gaps = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        if !supports(info, Category::NodeKind, n.kind.name()) {
            continue;
        }
        let ptr = format!("/logical/nodes/{i}");
        match &n.kind {
            NodeKind::Function(_) if doc.body(platform, &n.id).is_none() => gaps.push(
                Diagnostic::error(
                    &svc_ir::codes::MISSING_BODY,
                    format!("function node `{}` has no {platform} body", n.id),
                )
                .at(ptr)
                .node(&n.id)
                .hint(format!(
                    "add bodiesByPlatform[\"{platform}\"][\"{}\"]; bodies are never translated between languages",
                    n.id
                )),
            ),
            NodeKind::Connector(_) => {
                let has = doc
                    .codegen
                    .templates
                    .get(platform)
                    .is_some_and(|t| t.contains_key(&n.id));
                if !has {
                    gaps.push(
                        Diagnostic::error(
                            &svc_ir::codes::TEMPLATE_REQUIRED,
                            format!(
                                "connector node `{}`: template required (codegen.templates[\"{platform}\"])",
                                n.id
                            ),
                        )
                        .at(ptr)
                        .node(&n.id)
                        .hint(format!(
                            "add codegen.templates[\"{platform}\"][\"{}\"] = {{ \"connector\": \"vendor/name\", \"version\": \"^1\" }}",
                            n.id
                        )),
                    );
                }
            }
            _ => {}
        }
    }
    for (i, a) in doc.logical.agents.iter().enumerate() {
        let custom = matches!(
            a.kind,
            AgentKind::Supervisor {
                router: SupervisorRouter::Custom,
                ..
            }
        );
        if custom
            && supports(info, Category::Feature, "agents.supervisor")
            && doc.body(platform, &a.id).is_none()
        {
            gaps.push(
                Diagnostic::error(
                    &svc_ir::codes::MISSING_BODY,
                    format!(
                        "supervisor `{}` routes with `custom` but has no {platform} body",
                        a.id
                    ),
                )
                .at(format!("/logical/agents/{i}"))
                .hint(format!(
                    "add bodiesByPlatform[\"{platform}\"][\"{}\"]: {}",
                    a.id,
                    router_signature(platform)
                )),
            );
        }
    }
    for (i, t) in doc.logical.tools.iter().enumerate() {
        if matches!(t.kind, ToolKind::Native)
            && supports(info, Category::ToolKind, "native")
            && doc.body(platform, &t.id).is_none()
        {
            gaps.push(
                Diagnostic::error(
                    &svc_ir::codes::MISSING_BODY,
                    format!("native tool `{}` has no {platform} body", t.id),
                )
                .at(format!("/logical/tools/{i}"))
                .hint(format!(
                    "add bodiesByPlatform[\"{platform}\"][\"{}\"]",
                    t.id
                )),
            );
        }
    }
    gaps
}

#[cfg(test)]
mod tests {
    use svc_runtime::{BackendInfo, BuildCommands, Capabilities};

    use super::negotiate;

    /// A backend that builds no MCP tool and no server transport (every
    /// built-in one does): its refusals name the tool or server and the
    /// nodes that use it.
    fn without_mcp() -> BackendInfo {
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
        BackendInfo {
            platform: "plain".into(),
            name: "plain".into(),
            version: "0".into(),
            ir_versions: ">=2.0.0, <3.0.0".into(),
            capabilities: Capabilities {
                node_kinds: strings(&["start", "end", "tool", "response_template"]),
                tool_kinds: strings(&["native", "http"]),
                transports: Vec::new(),
                auth: strings(&["none", "api_key"]),
                features: Vec::new(),
                reasons: Vec::new(),
            },
            commands: BuildCommands {
                setup: String::new(),
                test: String::new(),
                build: String::new(),
                run: String::new(),
            },
        }
    }

    #[test]
    fn tool_and_server_refusals_name_their_id_and_nodes() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/valid/mcp_tools.graph.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let mut source = svc_ir::SourceFile::new("mcp_tools.graph.json", text);
        let doc = source.parse().unwrap();
        // As the pipeline does: the source file adds each subject's users.
        let gaps: Vec<_> = negotiate(&doc, "plain", &without_mcp())
            .into_iter()
            .map(|d| source.locate(d))
            .collect();
        let rendered: Vec<String> = gaps.iter().map(|d| d.render()).collect();
        let all = rendered.join("\n");
        assert!(
            all.contains("plain does not support tool kind `mcp` (tool `read_file`)"),
            "{all}"
        );
        assert!(
            all.contains("= tool: read_file (used by node read)"),
            "{all}"
        );
        assert!(
            all.contains("= MCP server: files (used by node read)"),
            "{all}"
        );
        assert!(all.contains("= MCP server: search\n"), "{all}");
        let tool = gaps
            .iter()
            .find(|d| d.pointer.as_deref() == Some("/logical/tools/0"))
            .expect("the tool's diagnostic");
        assert_eq!(tool.used_by, ["read"]);
        assert_eq!(
            serde_json::to_value(&tool.subject).unwrap(),
            serde_json::json!({"kind": "tool", "id": "read_file"})
        );
        let server = gaps
            .iter()
            .find(|d| d.pointer.as_deref() == Some("/logical/mcpServers/0/transport"))
            .expect("the server's diagnostic");
        assert_eq!(
            serde_json::to_value(&server.subject).unwrap(),
            serde_json::json!({"kind": "mcpServer", "id": "files"})
        );
        assert_eq!(server.used_by, ["read"]);
    }
}
