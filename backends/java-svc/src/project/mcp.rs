//! MCP (issue 36) on java-svc, on the official Java SDK
//! (`io.modelcontextprotocol.sdk:mcp-core` and `mcp-json-jackson2`, pinned
//! in parts.rs; not the umbrella `mcp` artifact, which brings Jackson 3 beside Spring
//! Boot's Jackson 2): every graph's `logical.mcpServers` and its tools of
//! kind `mcp` (runtime/McpServers.java, McpTransports.java,
//! McpArguments.java, McpTool.java; the servers of all graphs, a
//! subgraph's child's by registered name, are declared in the generated
//! `config/McpConfig.java` and opened before the service listens), and
//! `settings.mcp.expose` (runtime/McpEndpoint.java).

use std::collections::{BTreeMap, BTreeSet};

use svc_backend_sdk::ir::{Document, McpTransport, ToolKind};
use svc_backend_sdk::subgraphs::all_graphs;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::File;

use crate::java::{quote, runtime};

/// `config/McpConfig.java`: the servers, the tools start-up checks, and
/// the bean that opens them.
pub(super) fn config(doc: &Document, pkg: &str) -> File {
    let mut w = CodeWriter::java();
    let servers = runtime(&mut w, "McpServers");
    let list = w.name("java.util", "List");
    let map = w.name("java.util", "Map");
    let set = w.name("java.util", "Set");
    let bean = w.name("org.springframework.context.annotation", "Bean");
    let configuration = w.name("org.springframework.context.annotation", "Configuration");
    let string_map = |w: &mut CodeWriter, m: &BTreeMap<String, String>| {
        let map = w.name("java.util", "Map");
        if m.is_empty() {
            return format!("{map}.of()");
        }
        let entries: Vec<String> = m
            .iter()
            .map(|(k, v)| format!("{map}.entry({}, {})", quote(k), quote(v)))
            .collect();
        format!("{map}.ofEntries({})", entries.join(", "))
    };
    // Every graph's servers, by registered name: a child's carry its
    // subgraph node ids as a prefix (`inner__files`), as on go and python-svc.
    let graphs = all_graphs(doc);
    let declared: Vec<String> = graphs
        .iter()
        .flat_map(|(d, scope)| d.logical.mcp_servers.iter().map(move |s| (scope, s)))
        .map(|(scope, s)| match &s.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                timeout_ms,
            } => {
                let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
                format!(
                    "{servers}.Server.stdio({}, {}, {list}.of({}), {}, {})",
                    quote(&scope.name(&s.id)),
                    quote(command),
                    args.join(", "),
                    string_map(&mut w, env),
                    timeout(&servers, *timeout_ms)
                )
            }
            McpTransport::Sse {
                url,
                timeout_ms,
                headers,
            }
            | McpTransport::StreamableHttp {
                url,
                timeout_ms,
                headers,
            } => {
                // The runtime's enum constants are the IR's transport names in upper case.
                let transport = s.transport.name().to_ascii_uppercase();
                format!(
                    "{servers}.Server.http({}, {servers}.Transport.{transport}, {}, {}, {})",
                    quote(&scope.name(&s.id)),
                    quote(url),
                    string_map(&mut w, headers),
                    timeout(&servers, *timeout_ms)
                )
            }
        })
        .collect();
    // A set: two tools of a graph may call one tool of a server (Set.of refuses a duplicate).
    let mut tools: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (d, scope) in &graphs {
        for t in &d.logical.tools {
            if let ToolKind::Mcp { server, tool, .. } = &t.kind {
                tools
                    .entry(scope.name(server))
                    .or_default()
                    .insert(tool.as_str());
            }
        }
    }
    let tools: Vec<String> = tools
        .iter()
        .map(|(server, names)| {
            let names: Vec<String> = names.iter().map(|n| quote(n)).collect();
            format!(
                "{map}.entry({}, {set}.of({}))",
                quote(server),
                names.join(", ")
            )
        })
        .collect();
    w.line("/** The MCP servers of every graph (logical.mcpServers): their sessions open before the service listens. */");
    w.line(format!("@{configuration}"));
    w.block("public class McpConfig {", "}", |w| {
        w.line("/** Every graph's logical.mcpServers, a subgraph's child's by registered name. */");
        w.line(format!("public static final {list}<{servers}.Server> SERVERS = {list}.of("));
        w.indent().indent();
        let n = declared.len();
        for (i, d) in declared.iter().enumerate() {
            w.line(format!("{d}{}", if i + 1 < n { "," } else { ");" }));
        }
        if n == 0 {
            w.line(");");
        }
        w.dedent().dedent();
        w.blank();
        w.line("/** The tools the graph's mcp tools name on each server, which start-up checks it lists. */");
        w.line(format!(
            "public static final {map}<String, {set}<String>> TOOLS = {map}.ofEntries({});",
            tools.join(", ")
        ));
        w.blank();
        w.line("/**");
        w.line(" * Opens every session and checks the tools: a server out of reach, a missing tool or an");
        w.line(" * unset variable stops the service, naming them. Closed (every stdio child stopped)");
        w.line(" * when the service stops.");
        w.line(" */");
        w.line(format!("@{bean}"));
        w.block(format!("public {servers} mcpServers() {{"), "}", |w| {
            w.line(format!("{servers} servers = new {servers}(SERVERS, TOOLS);"));
            w.block("if (!trainingRun()) {", "}", |w| {
                w.line("servers.start();");
            });
            w.line("return servers;");
        });
        w.blank();
        w.line("/**");
        w.line(" * The build's training run (the pom's, the Dockerfile's; TrainingRun) answers only");
        w.line(" * requests no node runs for and has none of the servers' variables, so no session is");
        w.line(" * opened.");
        w.line(" */");
        w.block("private static boolean trainingRun() {", "}", |w| {
            w.line("return Boolean.getBoolean(\"svc.training-run\");");
        });
    });
    File::text(
        format!("src/main/java/com/svc/{pkg}/config/McpConfig.java"),
        w.finish_file(&format!("package com.svc.{pkg}.config;\n\n")),
    )
}

fn timeout(servers: &str, timeout_ms: Option<u64>) -> String {
    match timeout_ms {
        Some(ms) => ms.to_string(),
        None => format!("{servers}.DEFAULT_TIMEOUT_MS"),
    }
}
