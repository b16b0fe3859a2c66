//! The Python-only node kinds (`agent`, `rag`, `intent_classifier`,
//! `hitl`, `subgraph`) and the agents of `logical.agents` they run.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;

use super::ids::{is_identifier, is_node_id};
use super::tools::check_endpoint;
use super::Validator;

impl<'a> Validator<'a> {
    /// The fields of a Python-only node (its `outputKey` is already checked
    /// to exist).
    pub(super) fn python_only_node(&mut self, i: usize, n: &'a Node) {
        let ptr = Self::node_ptr(i);
        match &n.kind {
            NodeKind::Agent(a) => {
                self.check_template(&a.input, format!("{ptr}/input"), &n.id);
                self.text_output(&n.id, &a.output_key, &ptr, "its answer", true);
                if self.doc.agent(&a.agent).is_none() {
                    let ids: Vec<&str> = self
                        .doc
                        .logical
                        .agents
                        .iter()
                        .map(|a| a.id.as_str())
                        .collect();
                    let mut d = Diagnostic::error(
                        "unresolved-ref",
                        format!("agent `{}` is not declared in `logical.agents`", a.agent),
                    )
                    .at(format!("{ptr}/agent"))
                    .node(&n.id);
                    d = match did_you_mean(&a.agent, ids.iter().copied()) {
                        Some(s) => d.hint(format!("did you mean `{s}`?")),
                        None => d.hint("declare it in `logical.agents`"),
                    };
                    self.err(d);
                }
            }
            NodeKind::Rag(r) => {
                self.check_template(&r.query, format!("{ptr}/query"), &n.id);
                match &r.documents {
                    RagDocuments::Path(p) if p.trim().is_empty() => self.err(
                        Diagnostic::error("invalid-value", "`documents` is an empty path")
                            .at(format!("{ptr}/documents"))
                            .node(&n.id)
                            .hint("name a folder of .md/.txt files, relative to this document"),
                    ),
                    RagDocuments::Path(_) => {}
                    RagDocuments::List(docs) => {
                        let mut seen = HashSet::new();
                        for (j, d) in docs.iter().enumerate() {
                            if !seen.insert(d.id.as_str()) {
                                self.err(
                                    Diagnostic::error(
                                        "duplicate-id",
                                        format!("document id `{}` is used twice", d.id),
                                    )
                                    .at(format!("{ptr}/documents/{j}/id"))
                                    .node(&n.id),
                                );
                            }
                        }
                    }
                }
                if let Retriever::Embedding {
                    base_url_env,
                    api_key_env,
                    ..
                } = &r.retriever
                {
                    for (key, v) in [("baseUrlEnv", base_url_env), ("apiKeyEnv", api_key_env)] {
                        if let Some(name) = v.as_deref().filter(|v| !is_identifier(v)) {
                            self.err(
                                Diagnostic::error(
                                    "invalid-env-name",
                                    format!("`{name}` is not an environment variable name"),
                                )
                                .at(format!("{ptr}/retriever/{key}"))
                                .node(&n.id)
                                .hint(
                                    "name the variable, e.g. \"OPENAI_BASE_URL\"; never the value",
                                ),
                            );
                        }
                    }
                }
                if let Some(f) = self.fields.get(r.output_key.as_str()) {
                    if !matches!(f.ty, FieldType::String | FieldType::Array) {
                        self.err(
                            Diagnostic::error(
                                "output-type",
                                format!(
                                    "rag node `{}` writes passages to `{}`, {}; it needs an `array` field (passages) or a `string` field (their texts)",
                                    n.id,
                                    f.name,
                                    f.describe()
                                ),
                            )
                            .at(format!("{ptr}/outputKey"))
                            .node(&n.id),
                        );
                    }
                }
            }
            NodeKind::IntentClassifier(c) => {
                self.check_template(&c.input, format!("{ptr}/input"), &n.id);
                self.text_output(&n.id, &c.output_key, &ptr, "the intent's name", false);
                self.needs_model(c.model.is_some(), &n.id, &ptr, "intent_classifier node");
                if c.intents.is_empty() {
                    self.err(
                        Diagnostic::error(
                            "invalid-value",
                            format!("intent_classifier `{}` lists no intents", n.id),
                        )
                        .at(format!("{ptr}/intents"))
                        .node(&n.id)
                        .hint("add { \"name\": \"billing\", \"description\": \"...\" }"),
                    );
                }
                let mut seen: HashMap<String, usize> = HashMap::new();
                for (j, intent) in c.intents.iter().enumerate() {
                    let at = format!("{ptr}/intents/{j}/name");
                    if intent.name.trim().is_empty() {
                        self.err(
                            Diagnostic::error("invalid-value", "an intent has an empty name")
                                .at(at)
                                .node(&n.id),
                        );
                    } else if let Some(first) = seen.insert(intent.name.trim().to_lowercase(), j) {
                        self.err(
                            Diagnostic::error(
                                "duplicate-intent",
                                format!(
                                    "intent `{}` is listed twice (first at {ptr}/intents/{first}); replies are matched case-insensitively",
                                    intent.name
                                ),
                            )
                            .at(at)
                            .node(&n.id),
                        );
                    }
                }
                if c.fallback.trim().is_empty() {
                    self.err(
                        Diagnostic::error("invalid-value", "`fallback` is empty")
                            .at(format!("{ptr}/fallback"))
                            .node(&n.id)
                            .hint("name the intent written when nothing matches, e.g. \"other\""),
                    );
                }
            }
            NodeKind::Hitl(h) => {
                for (k, v) in &h.payload {
                    if let Value::String(s) = v {
                        self.check_template(s, format!("{ptr}/payload/{k}"), &n.id);
                    }
                }
                if self.doc.logical.settings.checkpointer.kind == CheckpointerKind::None {
                    self.err(
                        Diagnostic::error(
                            "hitl-checkpointer",
                            format!(
                                "hitl node `{}` pauses the run, which needs a checkpointer to resume it",
                                n.id
                            ),
                        )
                        .at(&ptr)
                        .node(&n.id)
                        .hint("set \"settings\": { \"checkpointer\": { \"type\": \"memory\" } }"),
                    );
                }
            }
            NodeKind::Subgraph(s) => {
                let parents = s
                    .input
                    .iter()
                    .map(|(child, parent)| (format!("{ptr}/input/{child}"), parent))
                    .chain(
                        s.output
                            .keys()
                            .map(|parent| (format!("{ptr}/output/{parent}"), parent)),
                    );
                for (at, parent) in parents {
                    self.check_field_ref(parent, at, Some(&n.id), "parent field");
                }
                self.subgraph(i, n, s);
            }
            _ => {}
        }
    }

    /// `outputKey` of a node writing one text: a `string` field, or (when
    /// `messages` is allowed) a `messages` field.
    fn text_output(&mut self, node: &str, key: &str, ptr: &str, what: &str, messages: bool) {
        let Some(f) = self.fields.get(key) else {
            return;
        };
        let ok = f.ty == FieldType::String || (messages && f.ty == FieldType::Messages);
        if !ok {
            let want = if messages {
                "a `string` field or a `messages` field (one assistant message)"
            } else {
                "a `string` field"
            };
            self.err(
                Diagnostic::error(
                    "output-type",
                    format!(
                        "node `{node}` writes {what} to `{}`, {}; it needs {want}",
                        f.name,
                        f.describe()
                    ),
                )
                .at(format!("{ptr}/outputKey"))
                .node(node),
            );
        }
    }

    fn needs_model(&mut self, has: bool, id: &str, ptr: &str, what: &str) {
        if has {
            return;
        }
        self.err(
            Diagnostic::error(
                "missing-model",
                format!("{what} `{id}` names no model and `settings.model` is absent"),
            )
            .at(ptr)
            .hint("add \"model\": { \"provider\": \"openai\", \"name\": \"gpt-4o-mini\" } to it or to `logical.settings`"),
        );
    }

    /// `logical.agents`: ids, tools, members, endpoints, and no membership cycle.
    pub(super) fn agents(&mut self) {
        let doc = self.doc;
        let node_ids: HashSet<&str> = doc.logical.nodes.iter().map(|n| n.id.as_str()).collect();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, a) in doc.logical.agents.iter().enumerate() {
            let ptr = format!("/logical/agents/{i}");
            if !is_node_id(&a.id) {
                self.err(
                    Diagnostic::error(
                        "invalid-id",
                        format!("agent id `{}` must match {NODE_ID_PATTERN}", a.id),
                    )
                    .at(format!("{ptr}/id")),
                );
            } else if let Some(first) = seen.insert(a.id.as_str(), i) {
                self.err(
                    Diagnostic::error(
                        "duplicate-id",
                        format!(
                            "agent id `{}` is used twice (first at /logical/agents/{first})",
                            a.id
                        ),
                    )
                    .at(format!("{ptr}/id")),
                );
            } else if node_ids.contains(a.id.as_str()) {
                self.err(
                    Diagnostic::error(
                        "duplicate-id",
                        format!(
                            "agent id `{}` is also a node id; agent ids must differ from node ids",
                            a.id
                        ),
                    )
                    .at(format!("{ptr}/id"))
                    .hint("rename the agent, e.g. with an `_agent` suffix"),
                );
            }
            match &a.kind {
                AgentKind::Worker {
                    tool_ids, model, ..
                } => {
                    for (j, t) in tool_ids.iter().enumerate() {
                        self.check_tool_ref(t, format!("{ptr}/toolIds/{j}"), &a.id);
                    }
                    self.needs_model(model.is_some(), &a.id, &ptr, "worker agent");
                }
                AgentKind::Supervisor {
                    members,
                    router,
                    model,
                    ..
                } => {
                    if members.is_empty() {
                        self.err(
                            Diagnostic::error(
                                "invalid-value",
                                format!("supervisor `{}` has no members", a.id),
                            )
                            .at(format!("{ptr}/members"))
                            .hint("list the agent ids it routes between"),
                        );
                    }
                    for (j, m) in members.iter().enumerate() {
                        let at = format!("{ptr}/members/{j}");
                        if m == "finish" {
                            self.err(
                                Diagnostic::error(
                                    "invalid-value",
                                    "`finish` is the routing decision to stop, not a member",
                                )
                                .at(at),
                            );
                        } else if doc.agent(m).is_none() {
                            let ids: Vec<&str> =
                                doc.logical.agents.iter().map(|a| a.id.as_str()).collect();
                            let mut d = Diagnostic::error(
                                "unresolved-ref",
                                format!("member `{m}` of supervisor `{}` is not an agent", a.id),
                            )
                            .at(at);
                            if let Some(s) = did_you_mean(m, ids.iter().copied()) {
                                d = d.hint(format!("did you mean `{s}`?"));
                            }
                            self.err(d);
                        }
                    }
                    if *router == SupervisorRouter::Llm {
                        self.needs_model(model.is_some(), &a.id, &ptr, "supervisor");
                    }
                }
                AgentKind::Remote { url, .. } => {
                    if let Some(url) = url {
                        if let Err(e) = check_endpoint(url) {
                            self.err(
                                Diagnostic::error("invalid-endpoint", e)
                                    .at(format!("{ptr}/url"))
                                    .hint("use an http(s) URL or env:NAME"),
                            );
                        }
                    }
                }
                AgentKind::A2a { agent_card_url, .. } => {
                    if let Err(e) = check_endpoint(agent_card_url) {
                        self.err(
                            Diagnostic::error("invalid-endpoint", e)
                                .at(format!("{ptr}/agentCardUrl"))
                                .hint("use an http(s) URL or env:NAME"),
                        );
                    }
                }
            }
        }
        self.membership_cycles();
    }

    /// A supervisor that is (through its members) its own member.
    fn membership_cycles(&mut self) {
        let doc = self.doc;
        let members = |id: &str| -> Vec<&'a str> {
            match doc.agent(id).map(|a| &a.kind) {
                Some(AgentKind::Supervisor { members, .. }) => {
                    members.iter().map(String::as_str).collect()
                }
                _ => Vec::new(),
            }
        };
        let mut reported: HashSet<&str> = HashSet::new();
        for (i, a) in doc.logical.agents.iter().enumerate() {
            // Depth-first from each supervisor, keeping the path.
            let mut stack: Vec<(&str, Vec<&str>)> = vec![(a.id.as_str(), vec![a.id.as_str()])];
            let mut visited: HashSet<&str> = HashSet::new();
            while let Some((id, path)) = stack.pop() {
                for m in members(id) {
                    if m == a.id {
                        // One report per cycle, at its first supervisor.
                        if !reported.contains(a.id.as_str()) {
                            reported.extend(path.iter().copied());
                            let cycle = path.iter().chain([&m]).copied().collect::<Vec<_>>();
                            self.err(
                                Diagnostic::error(
                                    "agent-cycle",
                                    format!(
                                        "supervisors form a membership cycle: {}",
                                        cycle.join(" -> ")
                                    ),
                                )
                                .at(format!("/logical/agents/{i}/members"))
                                .hint("a supervisor's members must not lead back to it"),
                            );
                        }
                    } else if visited.insert(m) {
                        let mut next = path.clone();
                        next.push(m);
                        stack.push((m, next));
                    }
                }
            }
        }
    }
}
