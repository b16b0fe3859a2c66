//! Top-level rules: ids, versions, the target platform, settings.

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;

use super::ids::{is_doc_id, is_identifier};
use super::Validator;

impl<'a> Validator<'a> {
    pub(super) fn top_level(&mut self) {
        let doc = self.doc;
        if !doc.id.is_empty() && !is_doc_id(&doc.id) {
            self.err(
                Diagnostic::error(
                    "invalid-id",
                    format!("document id `{}` must match {ID_PATTERN}", doc.id),
                )
                .at("/id")
                .hint("use lowercase letters, digits, `_` and `-`, starting with a letter; it names packages and artifacts"),
            );
        }
        if semver::Version::parse(&doc.version).is_err() {
            self.err(
                Diagnostic::error(
                    "invalid-version",
                    format!("version `{}` is not semver", doc.version),
                )
                .at("/version")
                .hint("write MAJOR.MINOR.PATCH, e.g. \"0.1.0\""),
            );
        }
        if let Some(t) = &doc.target {
            self.check_platform(&t.platform, "/target/platform".into());
        }
        if !is_identifier(&doc.security.key_env) {
            self.err(
                Diagnostic::error(
                    "invalid-env-name",
                    format!(
                        "keyEnv `{}` is not an environment variable name",
                        doc.security.key_env
                    ),
                )
                .at("/security/keyEnv")
                .hint("name the variable that holds the key, e.g. \"SVC_API_KEY\"; never the key itself"),
            );
        }
    }

    pub(super) fn check_platform(&mut self, platform: &str, ptr: String) -> bool {
        if PLATFORMS.contains(&platform) {
            return true;
        }
        let mut d = Diagnostic::error(
            "invalid-platform",
            format!("`{platform}` is not a platform"),
        )
        .at(ptr);
        d = match did_you_mean(platform, PLATFORMS) {
            Some(s) => d.hint(format!(
                "did you mean `{s}`? platforms: {}",
                PLATFORMS.join(", ")
            )),
            None => d.hint(format!("platforms: {}", PLATFORMS.join(", "))),
        };
        self.err(d);
        false
    }

    pub(super) fn settings(&mut self) {
        let s = &self.doc.logical.settings;
        let base = "/logical/settings";
        let mut skills = std::collections::HashMap::new();
        for (i, skill) in s.a2a.skills.iter().enumerate() {
            if let Some(first) = skills.insert(skill.id.as_str(), i) {
                self.err(
                    Diagnostic::error(
                        "duplicate-id",
                        format!(
                            "A2A skill id `{}` is used twice (first at {base}/a2a/skills/{first})",
                            skill.id
                        ),
                    )
                    .at(format!("{base}/a2a/skills/{i}/id")),
                );
            }
        }
        if let Some(name) = &s.mcp.tool_name {
            let ok = !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !ok {
                self.err(
                    Diagnostic::error(
                        "invalid-name",
                        format!(
                            "MCP tool name `{name}` must be 1 to 64 letters, digits, `_` or `-`"
                        ),
                    )
                    .at(format!("{base}/mcp/toolName"))
                    .hint("clients call the tool by this name, e.g. \"answer_question\""),
                );
            }
        }
        // One format for the service's logs: `tracing.log_format` is the
        // SDK configuration's name for what the IR calls `logging.format`.
        if s.tracing.log_format != s.logging.format {
            self.err(
                Diagnostic::error(
                    "invalid-value",
                    format!(
                        "`tracing.log_format` is `{}` but `logging.format` is `{}`; both are the format of the service's logs",
                        s.tracing.log_format.as_str(),
                        s.logging.format.as_str()
                    ),
                )
                .at(format!("{base}/tracing/log_format"))
                .hint(format!(
                    "set \"logging\": {{ \"format\": \"{}\" }} (which every target reads) and remove `tracing.log_format`, or make the two equal",
                    s.tracing.log_format.as_str()
                )),
            );
        }
        let c = &s.checkpointer;
        for (key, name, owner) in [
            ("pathEnv", &c.path_env, CheckpointerKind::Sqlite),
            ("urlEnv", &c.url_env, CheckpointerKind::Postgres),
        ] {
            let Some(name) = name else { continue };
            let at = format!("{base}/checkpointer/{key}");
            if c.kind != owner {
                self.err(
                    Diagnostic::error(
                        "invalid-value",
                        format!(
                            "`{key}` belongs to a `{}` checkpointer, not to `{}`",
                            owner.as_str(),
                            c.kind.as_str()
                        ),
                    )
                    .at(at)
                    .hint(format!(
                        "remove `{key}`, or set \"type\": \"{}\"",
                        owner.as_str()
                    )),
                );
            } else if !is_identifier(name) {
                self.err(
                    Diagnostic::error(
                        "invalid-env-name",
                        format!("{key} `{name}` is not an environment variable name"),
                    )
                    .at(at)
                    .hint("name the variable that holds it, e.g. \"SVC_CHECKPOINT_URL\"; a database URL carries a password and never goes into the graph"),
                );
            }
        }
        if s.max_steps == 0 {
            self.err(
                Diagnostic::error("out-of-range", "maxSteps must be at least 1")
                    .at(format!("{base}/maxSteps")),
            );
        }
        if s.request_timeout_ms == 0 {
            self.err(
                Diagnostic::error("out-of-range", "requestTimeoutMs must be at least 1")
                    .at(format!("{base}/requestTimeoutMs")),
            );
        }
        if s.server.port == 0 {
            self.err(
                Diagnostic::error("out-of-range", "server.port must be from 1 to 65535")
                    .at(format!("{base}/server/port")),
            );
        }
        if let Some(m) = &s.model {
            for (key, name) in [
                ("baseUrlEnv", &m.base_url_env),
                ("apiKeyEnv", &m.api_key_env),
            ] {
                if !is_identifier(name) {
                    self.err(
                        Diagnostic::error(
                            "invalid-env-name",
                            format!("{key} `{name}` is not an environment variable name"),
                        )
                        .at(format!("{base}/model/{key}"))
                        .hint("name the variable; secrets are never written into the graph"),
                    );
                }
            }
        }
    }
}
