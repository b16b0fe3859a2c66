//! What the service's tests stand in for: every upstream the service
//! calls, subgraphs' included, and the `Upstream` handler of
//! `tests/test_service.py` that answers the HTTP ones on loopback.

use serde_json::json;
use svc_backend_sdk::ir::{
    default_base_url_env, AgentKind, Document, NodeKind, RagNode, Retriever,
};
use svc_backend_sdk::samples::{
    calls_provider, messages_reply, model_reply, model_stand_ins, tool_reply,
};
use svc_backend_sdk::writer::CodeWriter;

use super::js;
use crate::py::{quote, suite, top_level_gap, write_expr, Expr};
use crate::scope::{all_graphs, Scope};

/// Every upstream the service calls, subgraphs' included.
pub(super) struct Upstreams<'a> {
    /// Whether any graph calls a model.
    pub llm: bool,
    /// The (base-URL, key) variables of each graph that calls a model
    /// (each graph reads its own `settings.model`), sorted, once each.
    pub models: Vec<(String, String, &'static str)>,
    /// (its graph, its scope, tool id, endpoint) of every HTTP tool.
    pub http: Vec<(&'a Document, Scope, &'a str, &'a str)>,
    /// (node, variable) of every `env:NAME` value of a connector config.
    pub connector_env: Vec<(String, String)>,
    /// (registered name, service, url, output field) of every remote agent.
    pub remotes: Vec<(String, &'a str, Option<&'a str>, &'a str)>,
    /// (registered name, card URL, service) of every A2A agent.
    pub a2a_agents: Vec<(String, &'a str, Option<&'a str>)>,
    /// The base-URL variables of embedding retrievers, sorted, once each.
    pub embedding_envs: Vec<String>,
    /// Registered names of every MCP server.
    pub mcp_servers: Vec<String>,
    /// What every model call is answered with.
    pub model_reply: serde_json::Value,
    /// The same, as the Messages API's reply, when a model is anthropic's.
    pub messages_reply: Option<serde_json::Value>,
}

impl<'a> Upstreams<'a> {
    pub fn of(doc: &'a Document) -> Self {
        let mut u = Upstreams {
            llm: false,
            models: model_stand_ins(doc),
            http: Vec::new(),
            connector_env: svc_backend_sdk::connectors::env_refs(doc),
            remotes: Vec::new(),
            a2a_agents: Vec::new(),
            embedding_envs: Vec::new(),
            mcp_servers: Vec::new(),
            model_reply: model_reply(doc),
            messages_reply: calls_provider(doc, "anthropic").then(|| messages_reply(doc)),
        };
        for (d, scope) in all_graphs(doc) {
            if d.has_llm_nodes() {
                u.llm = true;
            }
            u.http
                .extend(d.http_tools().map(|(id, e)| (d, scope.clone(), id, e)));
            for a in &d.logical.agents {
                match &a.kind {
                    AgentKind::Remote {
                        service,
                        url,
                        output_field,
                        ..
                    } => u.remotes.push((
                        scope.name(&a.id),
                        service.as_str(),
                        url.as_deref(),
                        output_field.as_str(),
                    )),
                    AgentKind::A2a {
                        agent_card_url,
                        service,
                        ..
                    } => u.a2a_agents.push((
                        scope.name(&a.id),
                        agent_card_url.as_str(),
                        service.as_deref(),
                    )),
                    AgentKind::Supervisor { .. } => {}
                    AgentKind::Worker { .. } => {}
                }
            }
            for n in &d.logical.nodes {
                // Only a rag node's retriever calls an embeddings API.
                if let NodeKind::Rag(RagNode {
                    retriever: Retriever::Embedding { base_url_env, .. },
                    ..
                }) = &n.kind
                {
                    let env = base_url_env.clone().unwrap_or_else(default_base_url_env);
                    u.embedding_envs.push(env);
                }
            }
            u.mcp_servers
                .extend(d.logical.mcp_servers.iter().map(|m| scope.name(&m.id)));
        }
        u.embedding_envs.sort();
        u.embedding_envs.dedup();
        u
    }

    /// Whether the tests serve [`Upstreams::handler`]: models, HTTP tools,
    /// connectors, remote agents or embeddings are called.
    pub fn served(&self) -> bool {
        self.llm
            || !self.http.is_empty()
            || !self.connector_env.is_empty()
            || !self.remotes.is_empty()
            || !self.embedding_envs.is_empty()
    }

    /// `class Upstream`: answers model and HTTP tool calls with canned replies.
    pub fn handler(&self, w: &mut CodeWriter) {
        top_level_gap(w);
        let handler = w.name("http.server", "BaseHTTPRequestHandler");
        suite(w, format!("class Upstream({handler}):"), |w| {
            w.line(
                "\"\"\"Answers model and HTTP tool calls, so tests never reach the network.\"\"\"",
            );
            w.blank();
            suite(w, "def do_POST(self):", |w| {
                let read = "self.rfile.read(int(self.headers.get(\"Content-Length\") or 0))";
                if self.embedding_envs.is_empty() {
                    w.line(read);
                } else {
                    w.line(format!("data = {read}"));
                }
                let mut replies = vec![(
                    "\"/v1/chat/completions\"".to_string(),
                    js(&self.model_reply),
                )];
                if let Some(reply) = &self.messages_reply {
                    replies.push(("\"/v1/messages\"".to_string(), js(reply)));
                }
                for (id, _, _, output) in &self.remotes {
                    replies.push((
                        quote(&format!("/remote/{id}/invoke")),
                        js(&json!({"result": {*output: "stub answer"}})),
                    ));
                }
                for (d, scope, id, _) in &self.http {
                    let path = format!("/tools/{}", scope.name(id));
                    replies.push((quote(&path), js(&tool_reply(d, id))));
                }
                for (node, _) in &self.connector_env {
                    replies.push((quote(&format!("/connectors/{node}")), quote("{}")));
                }
                let dict = Expr::Dict(
                    replies
                        .into_iter()
                        .map(|(k, v)| (k, Expr::atom(v)))
                        .collect(),
                );
                write_expr(w, 2, "replies = ", &dict, "");
                w.line("body = replies.get(self.path)");
                if !self.embedding_envs.is_empty() {
                    // One vector per input text, so retrieval has something to rank.
                    let json_mod = w.name("json", "loads");
                    suite(w, "if self.path == \"/v1/embeddings\":", |w| {
                        w.line(format!("texts = {json_mod}(data)[\"input\"]"));
                        w.line("vectors = [[1.0, float(len(t))] for t in texts]");
                        w.line("data = [{\"index\": i, \"embedding\": v} for i, v in enumerate(vectors)]");
                        let dumps = w.name("json", "dumps");
                        w.line(format!("body = {dumps}({{\"data\": data}})"));
                    });
                }
                w.line("self.send_response(200 if body else 404)");
                w.line("self.send_header(\"Content-Type\", \"application/json\")");
                w.line("self.end_headers()");
                w.line("self.wfile.write((body or \"{}\").encode())");
            });
            w.blank();
            suite(w, "def log_message(self, *args):", |w| {
                w.line("pass");
            });
        });
    }
}
