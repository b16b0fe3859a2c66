//! What every backend's generated README starts with and how it shows a
//! first request, and the paragraphs on MCP and paused runs every target
//! serves alike; each backend writes the rest of its own README.

use svc_ir::{CheckpointerKind, Document, NodeKind};

use crate::writer::CodeWriter;

/// A Markdown writer for a README, with its heading (the graph's name, else
/// its id) and the graph's description.
pub fn start(doc: &Document) -> CodeWriter {
    let mut w = CodeWriter::text("    ");
    let title = doc.name.as_deref().unwrap_or(&doc.id);
    w.line(format!("# {title}")).blank();
    if let Some(d) = &doc.description {
        w.lines(d).blank();
    }
    w
}

/// A shell block that checks `/health` and sends `body` to `/invoke` on
/// `port`, with `header` (a credential's `-H ...`, or "") on the request.
pub fn first_request(w: &mut CodeWriter, port: u16, header: &str, body: &str) {
    w.line("```sh")
        .line(format!("curl -s localhost:{port}/health"))
        .line(format!(
            "curl -s localhost:{port}/invoke -H 'Content-Type: application/json'{header} -d '{body}'"
        ))
        .line("```");
}

/// How a `hitl` run pauses and resumes.
const HITL: &str = "A run that reaches a `hitl` node answers `{\"interrupt\": {\"node\", \"value\"}, \"threadId\"}`; \
    a reviewer resumes it with `POST /invoke` and `{\"threadId\": \"...\", \"resume\": <value>}`, and the run goes on \
    to its result or to the next interrupt.";

/// "Human in the loop": how a paused run resumes, and where its thread is
/// kept (the checkpointer); nothing for a graph without hitl nodes.
pub fn human_in_the_loop(w: &mut CodeWriter, doc: &Document, header: &str) {
    if !doc
        .logical
        .nodes
        .iter()
        .any(|n| matches!(n.kind, NodeKind::Hitl(_)))
    {
        return;
    }
    let s = &doc.logical.settings;
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
    w.line("## Human in the loop")
        .blank()
        .line(format!("{HITL} {kept}"))
        .blank()
        .line("```sh")
        .line(format!(
            "curl -s localhost:{}/invoke -H 'Content-Type: application/json'{header} -d '{{\"threadId\": \"<id>\", \"resume\": \"approved\"}}'",
            s.server.port
        ))
        .line("```")
        .blank();
}

/// The MCP paragraph: the servers `uses_servers` says the service opens at
/// start (their commands need an interpreter `image` lacks), and `/mcp`.
pub fn mcp(w: &mut CodeWriter, doc: &Document, uses_servers: bool, image: &str) {
    if uses_servers {
        w.line(format!(
            "The MCP servers of `logical.mcpServers` are opened when the service starts: it does not start when one \
             cannot be reached, a variable it reads is unset, or it lacks a tool the graph calls. A stdio server's \
             command runs beside the service; the container image ({image}) has no interpreter, so a `python` \
             or `npx` server needs an image of your own."
        ));
    }
    let mcp = &doc.logical.settings.mcp;
    if mcp.expose {
        let tool = mcp.tool_name.as_deref().unwrap_or(&doc.id);
        w.line(format!(
            "`/mcp` (MCP over streamable HTTP, stateless) offers the graph as one tool, `{tool}`, whose arguments \
             are the state and whose result is the final state; it needs the credential of `/invoke`."
        ));
    }
}

/// What `settings.a2a` serves and what A2A agents need, for the go and
/// java-svc READMEs (python-svc's SDK writes its own); `caller` is how a
/// native body reads the A2A caller on the target.
pub fn a2a(w: &mut CodeWriter, doc: &Document, calls_agents: bool, caller: &str) {
    let a = &doc.logical.settings.a2a;
    if a.enabled {
        let credential = if a.tokens.is_empty() {
            "with the credential of `/invoke`"
        } else {
            "with the token of a caller below"
        };
        w.line(format!(
            "A2A: the agent card is at `/.well-known/agent-card.json` (and `/.well-known/agent.json`), public; \
             JSON-RPC (A2A 1.0 and 0.3) at `/a2a`, {credential}. A message's text goes to the \
             graph's first required `string` field (or its `messages`), and the reply is the field the run wrote last. \
             A native body reads who called with {caller}."
        ));
        if !a.tokens.is_empty() {
            w.blank();
            a2a_callers(w, doc);
        }
    }
    if calls_agents {
        w.line(
            "The graph's A2A agents are reached through their agent cards (the variables above); each credential \
             goes only to its card's origin, in the header the card asks for.",
        );
    }
}

/// The callers of `settings.a2a.tokens`, where they are configured and
/// the variable of each; nothing without a table.
pub fn a2a_callers(w: &mut CodeWriter, doc: &Document) {
    let tokens = &doc.logical.settings.a2a.tokens;
    if tokens.is_empty() {
        return;
    }
    w.line(
        "The callers of `/a2a` are configured in the graph, `settings.a2a.tokens` (change them there and \
         compile again); each token comes from its variable, which must be set and hold a token of its own, or the \
         service does not start. The service's own key is not accepted at `/a2a`, and a caller without any of a \
         skill's `roles` is answered `403` (code `forbidden`).",
    )
    .blank();
    w.line("| caller | roles | token in | sent as |")
        .line("|---|---|---|---|");
    for t in tokens {
        let roles = if t.roles.is_empty() {
            "none".to_string()
        } else {
            t.roles.join(", ")
        };
        w.line(format!(
            "| `{}` | {roles} | `{}` | `{}` |",
            t.subject,
            t.token_env,
            t.scheme.header()
        ));
    }
    w.blank();
}

/// What `settings.tracing.enabled` exports, and where to (docs/telemetry.md
/// of the svc repository): the same on every target.
pub fn telemetry(w: &mut CodeWriter, doc: &Document) {
    if !doc.logical.settings.tracing.enabled {
        return;
    }
    w.line(format!(
        "Traces and metrics (OpenTelemetry) go over OTLP to `OTEL_EXPORTER_OTLP_ENDPOINT` (default \
         `http://localhost:4318`; `OTEL_EXPORTER_OTLP_PROTOCOL=grpc` for gRPC), as the service `{}` unless \
         `OTEL_SERVICE_NAME` names another; the standard `OTEL_` variables configure the rest. Each request is \
         one trace: the HTTP span, the run (`invoke_workflow`), a span per node, model calls (`chat`) and tool \
         calls (`execute_tool`), the same on every svc target. A collector that cannot be reached never slows \
         an answer.",
        doc.id
    ));
}
