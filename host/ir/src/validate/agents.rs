//! The agents of `logical.agents`, and the output rules the kinds that run
//! a model share.

use std::collections::{HashMap, HashSet};

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;

use super::ids::is_node_id;
use super::tools::check_endpoint;
use super::Validator;

impl<'a> Validator<'a> {
    /// `outputKey` of a node writing one text: a `string` field, or (when
    /// `messages` is allowed) a `messages` field.
    pub(crate) fn text_output(
        &mut self,
        node: &str,
        key: &str,
        ptr: &str,
        what: &str,
        messages: bool,
    ) {
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
                    &crate::codes::OUTPUT_TYPE,
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

    pub(crate) fn needs_model(&mut self, has: bool, id: &str, ptr: &str, what: &str) {
        if has {
            return;
        }
        self.err(
            Diagnostic::error(
                &crate::codes::MISSING_MODEL,
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
                        &crate::codes::INVALID_ID,
                        format!("agent id `{}` must match {NODE_ID_PATTERN}", a.id),
                    )
                    .at(format!("{ptr}/id")),
                );
            } else if let Some(first) = seen.insert(a.id.as_str(), i) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::DUPLICATE_ID,
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
                        &crate::codes::DUPLICATE_ID,
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
                    instructions,
                    ..
                } => {
                    if members.is_empty() {
                        self.err(
                            Diagnostic::error(
                                &crate::codes::INVALID_VALUE,
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
                                    &crate::codes::INVALID_VALUE,
                                    "`finish` is the routing decision to stop, not a member",
                                )
                                .at(at),
                            );
                        } else if doc.agent(m).is_none() {
                            let ids: Vec<&str> =
                                doc.logical.agents.iter().map(|a| a.id.as_str()).collect();
                            let mut d = Diagnostic::error(
                                &crate::codes::UNRESOLVED_REF,
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
                    } else {
                        // A custom router is its body: no model is asked,
                        // so these would be kept and never used.
                        for (key, given) in [
                            ("model", model.is_some()),
                            ("instructions", instructions.is_some()),
                        ] {
                            if given {
                                self.err(
                                    Diagnostic::error(
                                        &crate::codes::INVALID_VALUE,
                                        format!("supervisor `{}` routes with its `custom` body, which uses no `{key}`", a.id),
                                    )
                                    .at(format!("{ptr}/{key}"))
                                    .hint(format!("remove `{key}`, or route with \"router\": \"llm\"")),
                                );
                            }
                        }
                    }
                }
                AgentKind::Remote { url, .. } => {
                    if let Some(url) = url {
                        if let Err(e) = check_endpoint(url) {
                            self.err(
                                Diagnostic::error(&crate::codes::INVALID_ENDPOINT, e)
                                    .at(format!("{ptr}/url"))
                                    .hint("use an http(s) URL or env:NAME"),
                            );
                        }
                    }
                }
                AgentKind::A2a { agent_card_url, .. } => {
                    if let Err(e) = check_endpoint(agent_card_url) {
                        self.err(
                            Diagnostic::error(&crate::codes::INVALID_ENDPOINT, e)
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
                                    &AGENT_CYCLE,
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

crate::diagnostic_codes! {
    /// Supervisors in `logical.agents` are members of each other in a cycle.
    ///
    /// A supervisor routes a task between its `members`, and a member may itself be a supervisor. If following members leads back to a supervisor, a run could delegate forever, so the document is refused, naming the cycle.
    ///
    /// Remove one of the memberships so the supervisors form a tree.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/agent_cycle.graph.json`:
    ///
    /// ```json
    /// "agents": [
    ///   { "id": "a", "kind": "supervisor", "members": ["b"], "router": "custom" },
    ///   { "id": "b", "kind": "supervisor", "members": ["a"], "router": "custom" }
    /// ]
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "agents": [
    ///   { "id": "a", "kind": "supervisor", "members": ["b"], "router": "custom" },
    ///   { "id": "b", "kind": "supervisor", "members": ["writer"], "router": "custom" },
    ///   { "id": "writer", "kind": "worker", "instructions": "You write." }
    /// ]
    /// ```
    pub AGENT_CYCLE = "agent-cycle", group "nodes";
}
