//! Tools, MCP servers and agents declared in `logical`.

use std::collections::HashSet;

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;

use super::ids::{is_identifier, is_node_id};
use super::Validator;

impl<'a> Validator<'a> {
    pub(super) fn tools(&mut self) {
        let doc = self.doc;
        let mut seen = HashSet::new();
        let servers: Vec<&str> = doc
            .logical
            .mcp_servers
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        for (i, t) in doc.logical.tools.iter().enumerate() {
            let ptr = format!("/logical/tools/{i}");
            if !is_node_id(&t.id) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_ID,
                        format!("tool id `{}` must match {NODE_ID_PATTERN}", t.id),
                    )
                    .at(format!("{ptr}/id")),
                );
            } else if !seen.insert(t.id.as_str()) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::DUPLICATE_ID,
                        format!("tool id `{}` is used twice", t.id),
                    )
                    .at(format!("{ptr}/id")),
                );
            }
            match &t.kind {
                ToolKind::Http { endpoint, .. } => {
                    if let Err(why) = check_endpoint(endpoint) {
                        self.err(
                            Diagnostic::error(
                                &INVALID_ENDPOINT,
                                format!("tool `{}`: {why}", t.id),
                            )
                            .at(format!("{ptr}/endpoint"))
                            .hint(
                                "write an http(s) URL, or env:NAME to read it from the environment",
                            ),
                        );
                    }
                }
                ToolKind::Mcp {
                    server,
                    connection_type,
                    ..
                } => {
                    // The specification's marker of an MCP tool: only `mcp`
                    // means anything, so another value is not kept silently.
                    if let Some(other) = connection_type.as_deref().filter(|c| *c != "mcp") {
                        self.err(
                            Diagnostic::error(
                                &crate::codes::INVALID_VALUE,
                                format!("tool `{}`: `connectionType` `{other}` is not `mcp`", t.id),
                            )
                            .at(format!("{ptr}/connectionType"))
                            .hint("write \"connectionType\": \"mcp\" or leave it out; the server's `transport` says how it is reached"),
                        );
                    }
                    if !servers.contains(&server.as_str()) {
                        let mut d = Diagnostic::error(
                            &crate::codes::UNRESOLVED_REF,
                            format!("tool `{}` names MCP server `{server}`, which is not in `logical.mcpServers`", t.id),
                        )
                        .at(format!("{ptr}/server"));
                        if let Some(s) = did_you_mean(server, servers.iter().copied()) {
                            d = d.hint(format!("did you mean `{s}`?"));
                        }
                        self.err(d);
                    }
                }
                ToolKind::Native => {}
            }
        }
        let mut seen = HashSet::new();
        for (i, s) in doc.logical.mcp_servers.iter().enumerate() {
            let ptr = format!("/logical/mcpServers/{i}");
            if !is_node_id(&s.id) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_ID,
                        format!("MCP server id `{}` must match {NODE_ID_PATTERN}", s.id),
                    )
                    .at(format!("{ptr}/id")),
                );
            } else if !seen.insert(s.id.as_str()) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::DUPLICATE_ID,
                        format!("MCP server id `{}` is used twice", s.id),
                    )
                    .at(format!("{ptr}/id")),
                );
            }
            match &s.transport {
                McpTransport::Stdio { command, env, .. } => {
                    if command.trim().is_empty() {
                        self.err(
                            Diagnostic::error(
                                &crate::codes::INVALID_VALUE,
                                format!("MCP server `{}` has an empty command", s.id),
                            )
                            .at(format!("{ptr}/command")),
                        );
                    }
                    // The child's environment is where its secrets go: only
                    // references to the service's own, never a value.
                    for (key, value) in env {
                        if env_reference(value).is_none() {
                            self.err(
                                Diagnostic::error(
                                    &crate::codes::INVALID_VALUE,
                                    format!(
                                        "MCP server `{}`: env `{key}` is a value; it must be `${{NAME}}` or `env:NAME`, read from the service's environment",
                                        s.id
                                    ),
                                )
                                .at(format!("{ptr}/env/{}", crate::diag::pointer_token(key)))
                                .hint(format!("write \"{key}\": \"${{{key}}}\" and set {key} where the service runs")),
                            );
                        }
                    }
                }
                McpTransport::Sse { url, .. } | McpTransport::StreamableHttp { url, .. } => {
                    if let Err(why) = check_endpoint(url) {
                        self.err(
                            Diagnostic::error(
                                &INVALID_ENDPOINT,
                                format!("MCP server `{}`: {why}", s.id),
                            )
                            .at(format!("{ptr}/url")),
                        );
                    }
                }
            }
        }
    }
}

/// The variable a whole-value reference names: `${NAME}` or `env:NAME`.
fn env_reference(value: &str) -> Option<&str> {
    value
        .strip_prefix("env:")
        .or_else(|| value.strip_prefix("${").and_then(|v| v.strip_suffix('}')))
        .filter(|name| is_identifier(name))
}

/// `env:NAME` or an absolute http(s) URL.
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    if let Some(name) = endpoint.strip_prefix("env:") {
        return if is_identifier(name) {
            Ok(())
        } else {
            Err(format!(
                "`{endpoint}` does not name an environment variable"
            ))
        };
    }
    let rest = endpoint
        .strip_prefix("https://")
        .or_else(|| endpoint.strip_prefix("http://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') && !r.contains(char::is_whitespace) => {
            Ok(())
        }
        _ => Err(format!("endpoint `{endpoint}` is not an http(s) URL")),
    }
}

crate::diagnostic_codes! {
    /// An HTTP tool endpoint, MCP server URL or connector URL is neither an http(s) URL nor env:NAME.
    ///
    /// Services call HTTP tools, remote MCP servers (`sse`, `streamable_http`) and webhook connectors at run time, so the address must be an absolute `http://` or `https://` URL with a host, or `env:NAME` to read it from the environment variable `NAME` when the service starts. A bare host name or a path is refused.
    ///
    /// Write the full URL, or `env:NAME` (preferable when the address differs between environments or holds a secret).
    ///
    /// # Example
    ///
    /// `fixtures/invalid/invalid_endpoint.graph.json`:
    ///
    /// ```json
    /// { "id": "crm", "kind": "http", "endpoint": "crm.internal/lookup" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "crm", "kind": "http", "endpoint": "env:CRM_URL" }
    /// ```
    pub INVALID_ENDPOINT = "invalid-endpoint", group "tools";
}
