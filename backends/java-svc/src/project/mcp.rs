//! MCP (issue 36) on java-svc, on the official Java SDK
//! (`io.modelcontextprotocol.sdk:mcp-core` and `mcp-json-jackson2`, pinned;
//! not the umbrella `mcp` artifact, which brings Jackson 3 beside Spring
//! Boot's Jackson 2): the document's `logical.mcpServers` and its tools of
//! kind `mcp` (runtime/McpServers.java, McpTransports.java,
//! McpArguments.java, McpTool.java; the servers are
//! declared in the generated `config/McpConfig.java` and opened before the
//! service listens), and `settings.mcp.expose` (web/McpEndpoint.java).

use std::collections::BTreeMap;

use svc_backend_sdk::ir::{Document, McpTransport, ToolKind};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::java::{quote, runtime};

/// The SDK's artifacts, pinned.
pub(super) const SDK: &[(&str, &str, &str)] = &[
    ("io.modelcontextprotocol.sdk", "mcp-core", "2.1.0"),
    ("io.modelcontextprotocol.sdk", "mcp-json-jackson2", "2.1.0"),
];

/// Runtime files of a graph that calls MCP servers (main, then tests).
pub(super) const CLIENT: &[(&str, &str)] = &[
    (
        "runtime/McpServers.java",
        include_str!("../../runtime/java/McpServers.java"),
    ),
    (
        "runtime/McpTransports.java",
        include_str!("../../runtime/java/McpTransports.java"),
    ),
    (
        "runtime/McpArguments.java",
        include_str!("../../runtime/java/McpArguments.java"),
    ),
    (
        "runtime/McpTool.java",
        include_str!("../../runtime/java/McpTool.java"),
    ),
    (
        "runtime/McpStartFailureAnalyzer.java",
        include_str!("../../runtime/java/McpStartFailureAnalyzer.java"),
    ),
];
pub(super) const CLIENT_TESTS: &[(&str, &str)] = &[
    (
        "McpServersTest.java",
        include_str!("../../runtime/test/McpServersTest.java"),
    ),
    (
        "McpFixtureServer.java",
        include_str!("../../runtime/test/McpFixtureServer.java"),
    ),
];
pub(super) const ENDPOINT: (&str, &str) = (
    "web/McpEndpoint.java",
    include_str!("../../runtime/java/McpEndpoint.java"),
);

/// Whether the document's own graph calls MCP servers.
pub fn uses_clients(doc: &Document) -> bool {
    !doc.logical.mcp_servers.is_empty()
        || doc
            .logical
            .tools
            .iter()
            .any(|t| matches!(t.kind, ToolKind::Mcp { .. }))
}

/// Whether the service needs the SDK at all.
pub fn speaks_mcp(doc: &Document) -> bool {
    uses_clients(doc) || doc.logical.settings.mcp.expose
}

/// A subgraph's MCP servers and tools are refused: java-svc's McpServers
/// holds the document's own servers only.
pub fn refuse_in_child(child: &Document, at: &str) -> Vec<Diagnostic> {
    let servers = child.logical.mcp_servers.iter().enumerate().map(|(i, s)| {
        (
            format!("{at}/logical/mcpServers/{i}"),
            format!("MCP server `{}`", s.id),
        )
    });
    let tools = child
        .logical
        .tools
        .iter()
        .enumerate()
        .filter(|(_, t)| matches!(t.kind, ToolKind::Mcp { .. }))
        .map(|(i, t)| {
            (
                format!("{at}/logical/tools/{i}"),
                format!("MCP tool `{}`", t.id),
            )
        });
    servers
        .chain(tools)
        .map(|(pointer, what)| {
            Diagnostic::error(
                &svc_backend_sdk::ir::codes::UNSUPPORTED,
                format!("the {what} is inside a subgraph; java-svc calls the MCP servers of the document's own graph only"),
            )
            .at(pointer)
            .hint("declare the server and its tools in the parent graph")
        })
        .collect()
}

/// `config/McpConfig.java`: the servers, the tools start-up checks, and
/// the bean that opens them.
pub(super) fn config(doc: &Document, pkg: &str) -> File {
    let mut w = CodeWriter::java();
    let servers = runtime(&mut w, pkg, "McpServers");
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
    let declared: Vec<String> = doc
        .logical
        .mcp_servers
        .iter()
        .map(|s| match &s.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                timeout_ms,
            } => {
                let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
                format!(
                    "{servers}.Server.stdio({}, {}, {list}.of({}), {}, {})",
                    quote(&s.id),
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
                    quote(&s.id),
                    quote(url),
                    string_map(&mut w, headers),
                    timeout(&servers, *timeout_ms)
                )
            }
        })
        .collect();
    let mut tools: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for t in &doc.logical.tools {
        if let ToolKind::Mcp { server, tool, .. } = &t.kind {
            tools
                .entry(server.as_str())
                .or_default()
                .push(tool.as_str());
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
    w.line("/** The graph's MCP servers (logical.mcpServers): their sessions open before the service listens. */");
    w.line(format!("@{configuration}"));
    w.block("public class McpConfig {", "}", |w| {
        w.line("/** logical.mcpServers */");
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

/// `META-INF/spring.factories`: McpStartFailureAnalyzer prints a failed
/// start (a server out of reach, a missing tool) as Spring Boot prints one.
pub(super) fn spring_factories(pkg: &str) -> File {
    File::text(
        "src/main/resources/META-INF/spring.factories",
        format!(
            "org.springframework.boot.diagnostics.FailureAnalyzer=com.svc.{pkg}.runtime.McpStartFailureAnalyzer\n"
        ),
    )
}
