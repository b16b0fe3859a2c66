//! Reading `logical.settings`.

use crate::json::Node as JNode;
use crate::model::*;

use super::Reader;

const LOG_FORMATS: [(&str, LogFormat); 2] = [("text", LogFormat::Text), ("json", LogFormat::Json)];

impl Reader {
    pub(super) fn settings(&mut self, n: &JNode, p: &str) -> Settings {
        let mut s = Settings::default();
        let Some(mut o) = self.object(n, p) else {
            return s;
        };
        if let Some(v) = self.opt_uint(&mut o, "maxSteps", 1_000_000) {
            s.max_steps = u32::try_from(v).unwrap_or(u32::MAX);
        }
        if let Some(v) = self.opt_uint(&mut o, "requestTimeoutMs", 86_400_000) {
            s.request_timeout_ms = v;
        }
        if let Some((n, p)) = o.field("server") {
            if let Some(mut so) = self.object(n, &p) {
                if let Some((n, p)) = Self::opt(&mut so, "host") {
                    if let Some(h) = self.string(n, &p) {
                        if is_listen_host(&h) {
                            s.server.host = h;
                        } else {
                            // It lands in each target's configuration file.
                            self.push(
                                crate::Diagnostic::error(
                                    &crate::codes::INVALID_VALUE,
                                    format!("{h:?} is not an address to listen on"),
                                )
                                .at(p)
                                .hint("write an IP address (`0.0.0.0`, `127.0.0.1`, `::`) or a host name (letters, digits, `.`, `-`)"),
                            );
                        }
                    }
                }
                if let Some(port) = self.opt_uint(&mut so, "port", 65_535) {
                    s.server.port = u16::try_from(port).unwrap_or(0);
                }
                self.finish(so, "`settings.server`");
            }
        }
        if let Some((n, p)) = o.field("model") {
            if let Some(mut m) = self.object(n, &p) {
                let w = "`settings.model`";
                let provider = self.provider(&mut m, w);
                let (base_url_env, api_key_env) = provider_variables(&provider);
                s.model = Some(ModelSettings {
                    name: self.req_str(&mut m, "name", w),
                    temperature: self.opt_f64(&mut m, "temperature"),
                    max_tokens: self
                        .opt_positive(&mut m, "maxTokens", MAX_TOKENS_LIMIT)
                        .and_then(|v| u32::try_from(v).ok()),
                    base_url_env: self.opt_str(&mut m, "baseUrlEnv").unwrap_or(base_url_env),
                    api_key_env: self.opt_str(&mut m, "apiKeyEnv").unwrap_or(api_key_env),
                    call: self.call_policy(&mut m),
                    fallbacks: self.fallbacks(&mut m).unwrap_or_default(),
                    provider,
                });
                self.finish(m, w);
            }
        }
        if let Some((n, p)) = o.field("budget") {
            if let Some(mut b) = self.object(n, &p) {
                s.budget = Budget {
                    max_tokens: self.opt_positive(&mut b, "maxTokens", u64::from(u32::MAX)),
                    max_model_calls: self.opt_positive(&mut b, "maxModelCalls", 1_000_000),
                };
                self.finish(b, "`settings.budget`");
            }
        }
        if let Some((n, p)) = o.field("logging") {
            if let Some(mut lo) = self.object(n, &p) {
                let levels = [
                    ("debug", LogLevel::Debug),
                    ("info", LogLevel::Info),
                    ("warning", LogLevel::Warning),
                    ("error", LogLevel::Error),
                ];
                if let Some(l) = self.opt_enum(&mut lo, "level", "log level", &levels) {
                    s.logging.level = l;
                }
                if let Some(f) = self.opt_enum(&mut lo, "format", "log format", &LOG_FORMATS) {
                    s.logging.format = f;
                }
                self.finish(lo, "`settings.logging`");
            }
        }
        // Unless the tracing section says otherwise, its log format (the SDK
        // configuration's name for it) is the logs' format.
        s.tracing.log_format = s.logging.format;
        if let Some((n, p)) = o.field("tracing") {
            if let Some(mut t) = self.object(n, &p) {
                let tr = &mut s.tracing;
                if let Some(v) = self.opt_bool(&mut t, "enabled") {
                    tr.enabled = v;
                }
                if let Some(v) = self.opt_str(&mut t, "project") {
                    tr.project = v;
                }
                if let Some(v) = self.opt_enum(&mut t, "log_format", "log format", &LOG_FORMATS) {
                    tr.log_format = v;
                }
                if let Some(v) = self.opt_bool(&mut t, "register_on_build") {
                    tr.register_on_build = v;
                }
                if let Some(v) = self.opt_bool(&mut t, "trace_nodes") {
                    tr.trace_nodes = v;
                }
                self.finish(t, "`settings.tracing`");
            }
        }
        if let Some((n, p)) = o.field("checkpointer") {
            if let Some(mut c) = self.object(n, &p) {
                let kinds = [
                    ("none", CheckpointerKind::None),
                    ("memory", CheckpointerKind::Memory),
                    ("sqlite", CheckpointerKind::Sqlite),
                    ("postgres", CheckpointerKind::Postgres),
                ];
                if let Some(k) = self.opt_enum(&mut c, "type", "checkpointer type", &kinds) {
                    s.checkpointer.kind = k;
                }
                s.checkpointer.path_env = self.opt_str(&mut c, "pathEnv");
                s.checkpointer.url_env = self.opt_str(&mut c, "urlEnv");
                self.finish(c, "`settings.checkpointer`");
            }
        }
        if let Some(v) = self.opt_bool(&mut o, "streaming") {
            s.streaming = v;
        }
        if let Some((n, p)) = o.field("mcp") {
            if let Some(mut m) = self.object(n, &p) {
                if let Some(v) = self.opt_bool(&mut m, "expose") {
                    s.mcp.expose = v;
                }
                s.mcp.tool_name = self.opt_str(&mut m, "toolName");
                self.finish(m, "`settings.mcp`");
            }
        }
        if let Some((n, p)) = o.field("a2a") {
            if let Some(mut a) = self.object(n, &p) {
                if let Some(v) = self.opt_bool(&mut a, "enabled") {
                    s.a2a.enabled = v;
                }
                s.a2a.title = self.opt_str(&mut a, "title");
                s.a2a.description = self.opt_str(&mut a, "description");
                s.a2a.skills = self
                    .opt_array(&mut a, "skills")
                    .into_iter()
                    .filter_map(|(n, p)| {
                        let mut k = self.object(n, &p)?;
                        let w = "an A2A skill";
                        let skill = A2aSkill {
                            id: self.req_str(&mut k, "id", w),
                            name: self.req_str(&mut k, "name", w),
                            description: self.opt_str(&mut k, "description"),
                            tags: self.strings(&mut k, "tags"),
                            roles: self.strings(&mut k, "roles"),
                        };
                        self.finish(k, w);
                        Some(skill)
                    })
                    .collect();
                s.a2a.tokens = self
                    .opt_array(&mut a, "tokens")
                    .into_iter()
                    .filter_map(|(n, p)| {
                        let mut k = self.object(n, &p)?;
                        let w = "an A2A token";
                        let schemes = A2aScheme::ALL.map(|s| (s.as_str(), s));
                        let token = A2aToken {
                            subject: self.req_str(&mut k, "subject", w),
                            roles: self.strings(&mut k, "roles"),
                            token_env: self.req_str(&mut k, "tokenEnv", w),
                            scheme: self
                                .opt_enum(&mut k, "scheme", "A2A token scheme", &schemes)
                                .unwrap_or_default(),
                        };
                        self.finish(k, w);
                        Some(token)
                    })
                    .collect();
                self.finish(a, "`settings.a2a`");
            }
        }
        self.finish(o, "`settings`");
        s
    }
}

/// An IP address or a host name: what `settings.server.host` may hold
/// (each target writes it into a configuration file of its own).
fn is_listen_host(h: &str) -> bool {
    h.parse::<std::net::IpAddr>().is_ok()
        || (!h.is_empty()
            && h.len() <= 253
            && h.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            }))
}
