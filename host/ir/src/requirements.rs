//! What a document asks of a backend: the keys that capability negotiation
//! compares with a backend's capability matrix.

use std::collections::BTreeSet;

use crate::model::*;
use crate::subject::{Subject, SubjectKind};

/// One thing the document needs, with where it is needed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Requirement {
    /// `node-kind`, `tool-kind`, `transport`, `auth` or `feature`.
    pub category: Category,
    /// The name within the category: `hitl`, `http`, `stdio`, `bearer`,
    /// `checkpointer.memory`, `router.op.gt`, `router.field.integer`, ...
    pub name: String,
    pub pointer: String,
    pub node: Option<String>,
    /// The tool or MCP server that needs it, for requirements not of a node.
    pub subject: Option<Subject>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    NodeKind,
    ToolKind,
    Transport,
    Auth,
    Feature,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::NodeKind => "node-kind",
            Category::ToolKind => "tool-kind",
            Category::Transport => "transport",
            Category::Auth => "auth",
            Category::Feature => "feature",
        }
    }
}

impl Requirement {
    /// A `feature` requirement at `pointer`, of no node or subject yet.
    pub(crate) fn feature(name: &str, pointer: String) -> Self {
        Requirement {
            category: Category::Feature,
            name: name.to_string(),
            pointer,
            node: None,
            subject: None,
        }
    }

    /// `category:name`, the key backends use in `capabilities.reasons`.
    pub fn key(&self) -> String {
        format!("{}:{}", self.category.as_str(), self.name)
    }

    /// How a person would name it: "node kind `hitl`".
    pub fn describe(&self) -> String {
        let what = match self.category {
            Category::NodeKind => "node kind",
            Category::ToolKind => "tool kind",
            Category::Transport => "MCP transport",
            Category::Auth => "auth scheme",
            Category::Feature => "feature",
        };
        format!("{what} `{}`", self.name)
    }
}

/// What a model configuration at `at` asks: its provider, and the features
/// of how it is called that it names (`feature:model.timeout`,
/// `model.retry`, `model.fallbacks`; each fallback's provider and fields).
pub(crate) fn model_requirements(
    provider: &str,
    call: &CallPolicy,
    fallbacks: &[Fallback],
    at: &str,
    out: &mut Vec<Requirement>,
) {
    out.push(Requirement::feature(
        &crate::nodes::provider_feature(provider),
        format!("{at}/provider"),
    ));
    if call.timeout_ms.is_some() {
        out.push(Requirement::feature(
            "model.timeout",
            format!("{at}/timeoutMs"),
        ));
    }
    if call.retry.is_some() {
        out.push(Requirement::feature("model.retry", format!("{at}/retry")));
    }
    if !fallbacks.is_empty() {
        out.push(Requirement::feature(
            "model.fallbacks",
            format!("{at}/fallbacks"),
        ));
    }
    for (i, f) in fallbacks.iter().enumerate() {
        model_requirements(
            &f.provider,
            &f.call,
            &[],
            &format!("{at}/fallbacks/{i}"),
            out,
        );
    }
}

/// Every requirement of the document, one per place it arises.
pub fn requirements(doc: &Document) -> Vec<Requirement> {
    let mut out = Vec::new();
    let mut nested = Vec::new();
    let mut push = |category, name: &str, pointer: String, node: Option<&str>| {
        out.push(Requirement {
            category,
            name: name.to_string(),
            pointer,
            node: node.map(str::to_string),
            subject: None,
        })
    };
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let ptr = format!("/logical/nodes/{i}");
        push(
            Category::NodeKind,
            n.kind.name(),
            ptr.clone(),
            Some(n.id.as_str()),
        );
        // What the kind needs beyond itself, each about this node.
        let mut needs = Vec::new();
        n.kind.rules().requirements(doc, &ptr, &mut needs);
        for mut r in needs {
            r.node.get_or_insert_with(|| n.id.clone());
            nested.push(r);
        }
    }
    push(
        Category::Auth,
        doc.security.auth.as_str(),
        "/security/auth".into(),
        None,
    );
    let s = &doc.logical.settings;
    if let Some(m) = &s.model {
        let mut needs = Vec::new();
        model_requirements(
            &m.provider,
            &m.call,
            &m.fallbacks,
            "/logical/settings/model",
            &mut needs,
        );
        for r in needs {
            push(r.category, &r.name, r.pointer, None);
        }
    }
    if !s.budget.is_default() {
        push(
            Category::Feature,
            "budget",
            "/logical/settings/budget".into(),
            None,
        );
    }
    if s.tracing.enabled {
        push(
            Category::Feature,
            "tracing",
            "/logical/settings/tracing/enabled".into(),
            None,
        );
        // A LangSmith project (the default one asks for nothing): a target
        // that sends no runs to LangSmith refuses it instead of ignoring it.
        if s.tracing.project != Tracing::default().project {
            push(
                Category::Feature,
                "tracing.project",
                "/logical/settings/tracing/project".into(),
                None,
            );
        }
        // Registering the graph with LangSmith as the service starts.
        if s.tracing.register_on_build {
            push(
                Category::Feature,
                "tracing.register",
                "/logical/settings/tracing/register_on_build".into(),
                None,
            );
        }
    }
    if s.checkpointer.kind != CheckpointerKind::None {
        push(
            Category::Feature,
            &format!("checkpointer.{}", s.checkpointer.kind.as_str()),
            "/logical/settings/checkpointer/type".into(),
            None,
        );
    }
    if s.a2a.enabled {
        push(
            Category::Feature,
            "a2a.publish",
            "/logical/settings/a2a/enabled".into(),
            None,
        );
    }
    if s.mcp.expose {
        push(
            Category::Feature,
            "mcp.expose",
            "/logical/settings/mcp/expose".into(),
            None,
        );
    }
    if s.streaming {
        push(
            Category::Feature,
            "streaming",
            "/logical/settings/streaming".into(),
            None,
        );
    }
    // `properties`: requests are checked against them, so a target that
    // would check only the type refuses them by name.
    for (i, f) in doc.logical.state.iter().enumerate() {
        if f.shape().has_properties() {
            push(
                Category::Feature,
                "state.properties",
                format!("/logical/state/{i}"),
                None,
            );
        }
    }
    // Tools and MCP servers: each requirement names its subject.
    for (i, t) in doc.logical.tools.iter().enumerate() {
        out.push(Requirement {
            category: Category::ToolKind,
            name: t.kind.name().to_string(),
            pointer: format!("/logical/tools/{i}"),
            node: None,
            subject: Some(Subject::new(SubjectKind::Tool, &t.id)),
        });
    }
    // Agents: `feature:agents.<kind>`, so a target without agents (or
    // without one kind) refuses them by name instead of dropping them.
    for (i, a) in doc.logical.agents.iter().enumerate() {
        out.push(Requirement {
            category: Category::Feature,
            name: format!("agents.{}", a.kind.name()),
            pointer: format!("/logical/agents/{i}"),
            node: None,
            subject: Some(Subject::new(SubjectKind::Agent, &a.id)),
        });
        if let AgentKind::Worker { model: Some(m), .. }
        | AgentKind::Supervisor { model: Some(m), .. } = &a.kind
        {
            let mut needs = Vec::new();
            m.requirements(doc, &format!("/logical/agents/{i}/model"), &mut needs);
            out.extend(needs.into_iter().map(|r| Requirement {
                subject: Some(Subject::new(SubjectKind::Agent, &a.id)),
                ..r
            }));
        }
    }
    for (i, s) in doc.logical.mcp_servers.iter().enumerate() {
        out.push(Requirement {
            category: Category::Transport,
            name: s.transport.name().to_string(),
            pointer: format!("/logical/mcpServers/{i}/transport"),
            node: None,
            subject: Some(Subject::new(SubjectKind::McpServer, &s.id)),
        });
    }
    out.extend(nested);
    out
}

/// The distinct `category:name` keys of a document, sorted.
pub fn requirement_keys(doc: &Document) -> BTreeSet<String> {
    requirements(doc).iter().map(Requirement::key).collect()
}
