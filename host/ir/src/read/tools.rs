//! Reading `logical.tools`, `logical.mcpServers` and `logical.agents`.

use crate::json::Node as JNode;
use crate::model::*;

use super::Reader;

impl Reader {
    pub(super) fn agent(&mut self, n: &JNode, p: &str) -> Option<AgentDef> {
        let mut o = self.object(n, p)?;
        let id = self.req_str(&mut o, "id", "an agent");
        let description = self.opt_str(&mut o, "description");
        let roles = self.strings(&mut o, "roles");
        let kind_name = match o.field("kind") {
            Some((kn, kp)) => {
                let names: Vec<(&'static str, &'static str)> =
                    AgentKind::NAMES.iter().map(|k| (*k, *k)).collect();
                self.enumerated(kn, &kp, "agent kind", &names)
            }
            None => {
                self.missing(&o, "kind", "an agent");
                None
            }
        }?;
        let what = format!("a `{kind_name}` agent");
        let kind = match kind_name {
            "worker" => AgentKind::Worker {
                instructions: self.opt_str(&mut o, "instructions"),
                persona: Self::opt(&mut o, "persona").and_then(|(pn, pp)| {
                    let mut po = self.object(pn, &pp)?;
                    let persona = Persona {
                        role: self.opt_str(&mut po, "role"),
                        tone: self.opt_str(&mut po, "tone"),
                    };
                    self.finish(po, "`persona`");
                    Some(persona)
                }),
                tool_ids: self.strings(&mut o, "toolIds"),
                max_turns: u32::try_from(self.positive(
                    &mut o,
                    "maxTurns",
                    u64::from(default_max_turns()),
                    10_000,
                ))
                .unwrap_or(u32::MAX),
                model: self.optional::<ModelRef>(&mut o, "model", ""),
            },
            "supervisor" => AgentKind::Supervisor {
                members: {
                    if !o.has("members") {
                        self.missing(&o, "members", &what);
                    }
                    self.strings(&mut o, "members")
                },
                router: self
                    .opt_enum(
                        &mut o,
                        "router",
                        "supervisor router",
                        &[
                            ("llm", SupervisorRouter::Llm),
                            ("custom", SupervisorRouter::Custom),
                        ],
                    )
                    .unwrap_or(SupervisorRouter::Llm),
                max_rounds: u32::try_from(self.positive(
                    &mut o,
                    "maxRounds",
                    u64::from(default_max_rounds()),
                    10_000,
                ))
                .unwrap_or(u32::MAX),
                instructions: self.opt_str(&mut o, "instructions"),
                model: self.optional::<ModelRef>(&mut o, "model", ""),
            },
            "remote" => AgentKind::Remote {
                url: self.opt_str(&mut o, "url"),
                service: self.req_str(&mut o, "service", &what),
                input_field: self
                    .opt_str(&mut o, "inputField")
                    .unwrap_or_else(default_input_field),
                output_field: self
                    .opt_str(&mut o, "outputField")
                    .unwrap_or_else(default_output_field),
                timeout_ms: self.positive(&mut o, "timeoutMs", default_remote_timeout(), 3_600_000),
            },
            _ => AgentKind::A2a {
                agent_card_url: self.req_str(&mut o, "agentCardUrl", &what),
                service: self.opt_str(&mut o, "service"),
                skill_id: self.opt_str(&mut o, "skillId"),
            },
        };
        self.finish(o, &what);
        Some(AgentDef {
            id,
            description,
            roles,
            kind,
        })
    }

    pub(super) fn tool(&mut self, n: &JNode, p: &str) -> Option<Tool> {
        let mut o = self.object(n, p)?;
        let id = self.req_str(&mut o, "id", "a tool");
        let description = self.opt_str(&mut o, "description");
        let kind_name = match o.field("kind") {
            Some((kn, kp)) => {
                let names: Vec<(&'static str, &'static str)> =
                    ToolKind::NAMES.iter().map(|k| (*k, *k)).collect();
                self.enumerated(kn, &kp, "tool kind", &names)
            }
            None => {
                self.missing(&o, "kind", "a tool");
                None
            }
        }?;
        let what = format!("a `{kind_name}` tool");
        let kind = match kind_name {
            "native" => ToolKind::Native,
            "http" => ToolKind::Http {
                endpoint: self.req_str(&mut o, "endpoint", &what),
                timeout_ms: self.positive(&mut o, "timeoutMs", 10_000, 3_600_000),
                headers: self.string_map(&mut o, "headers"),
            },
            _ => ToolKind::Mcp {
                connection_type: self.opt_str(&mut o, "connectionType"),
                server: self.req_str(&mut o, "server", &what),
                tool: self.req_str(&mut o, "tool", &what),
            },
        };
        self.finish(o, &what);
        Some(Tool {
            id,
            description,
            kind,
        })
    }

    pub(super) fn mcp_server(&mut self, n: &JNode, p: &str) -> Option<McpServer> {
        let mut o = self.object(n, p)?;
        let id = self.req_str(&mut o, "id", "an MCP server");
        let transport = match o.field("transport") {
            Some((tn, tp)) => {
                let names: Vec<(&'static str, &'static str)> =
                    McpTransport::NAMES.iter().map(|k| (*k, *k)).collect();
                self.enumerated(tn, &tp, "MCP transport", &names)
            }
            None => {
                self.missing(&o, "transport", "an MCP server");
                None
            }
        }?;
        let what = format!("a `{transport}` MCP server");
        let transport = match transport {
            "stdio" => McpTransport::Stdio {
                command: self.req_str(&mut o, "command", &what),
                args: self.strings(&mut o, "args"),
                env: self.string_map(&mut o, "env"),
                timeout_ms: self.opt_positive(&mut o, "timeoutMs", 3_600_000),
            },
            "sse" => McpTransport::Sse {
                url: self.req_str(&mut o, "url", &what),
                timeout_ms: self.opt_positive(&mut o, "timeoutMs", 3_600_000),
                headers: self.string_map(&mut o, "headers"),
            },
            _ => McpTransport::StreamableHttp {
                url: self.req_str(&mut o, "url", &what),
                timeout_ms: self.opt_positive(&mut o, "timeoutMs", 3_600_000),
                headers: self.string_map(&mut o, "headers"),
            },
        };
        self.finish(o, &what);
        Some(McpServer { id, transport })
    }
}
