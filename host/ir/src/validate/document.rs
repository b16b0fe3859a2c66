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
                    &crate::codes::INVALID_ID,
                    format!("document id `{}` must match {ID_PATTERN}", doc.id),
                )
                .at("/id")
                .hint("use lowercase letters, digits, `_` and `-`, starting with a letter; it names packages and artifacts"),
            );
        }
        if semver::Version::parse(&doc.version).is_err() {
            self.err(
                Diagnostic::error(
                    &INVALID_VERSION,
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
                    &INVALID_ENV_NAME,
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
        let mut d =
            Diagnostic::error(&INVALID_PLATFORM, format!("`{platform}` is not a platform")).at(ptr);
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
        // With tracing off there is nothing to name a project for, register
        // or leave node spans out of: such a key would be kept and unused.
        let (t, off) = (&s.tracing, Tracing::default());
        if !t.enabled {
            for (key, given) in [
                ("project", t.project != off.project),
                ("register_on_build", t.register_on_build),
                ("trace_nodes", !t.trace_nodes),
            ] {
                if given {
                    self.unused("tracing", key, "enabled");
                }
            }
        }
        // One format for the service's logs: `tracing.log_format` is the
        // SDK configuration's name for what the IR calls `logging.format`.
        if s.tracing.log_format != s.logging.format {
            self.err(
                Diagnostic::error(
                    &crate::codes::INVALID_VALUE,
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
                        &crate::codes::INVALID_VALUE,
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
                        &INVALID_ENV_NAME,
                        format!("{key} `{name}` is not an environment variable name"),
                    )
                    .at(at)
                    .hint("name the variable that holds it, e.g. \"SVC_CHECKPOINT_URL\"; a database URL carries a password and never goes into the graph"),
                );
            }
        }
        if s.max_steps == 0 {
            self.err(
                Diagnostic::error(&OUT_OF_RANGE, "maxSteps must be at least 1")
                    .at(format!("{base}/maxSteps")),
            );
        }
        if s.request_timeout_ms == 0 {
            self.err(
                Diagnostic::error(&OUT_OF_RANGE, "requestTimeoutMs must be at least 1")
                    .at(format!("{base}/requestTimeoutMs")),
            );
        }
        if s.server.port == 0 {
            self.err(
                Diagnostic::error(&OUT_OF_RANGE, "server.port must be from 1 to 65535")
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
                            &INVALID_ENV_NAME,
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

crate::diagnostic_codes! {
    /// A value that must name an environment variable is not a variable name.
    ///
    /// Secrets and addresses are never written into the graph: `security.keyEnv`, `settings.model.baseUrlEnv`, `settings.model.apiKeyEnv`, `settings.a2a.tokens[].tokenEnv` and `env:NAME` values in connector configs name environment variables, which must match `^[A-Za-z_][A-Za-z0-9_]*$`. A value such as a pasted key is refused so that it does not end up in generated code.
    ///
    /// Write the name of the variable that holds the value, and set the variable where the service runs.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/invalid_key_env.graph.json`:
    ///
    /// ```json
    /// "security": { "auth": "api_key", "keyEnv": "sk-12345 secret" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "security": { "auth": "api_key", "keyEnv": "SVC_API_KEY" }
    /// ```
    pub INVALID_ENV_NAME = "invalid-env-name", group "document";

    /// The name given to `svc new` or `svc plugin new` is not a valid project or pack name.
    ///
    /// `svc new NAME` scaffolds a Python project: the name must start with a lowercase letter followed by lowercase letters, digits, `_` or `-`. `svc plugin new [OWNER/]NAME` scaffolds a pack project: owner and name are lowercase letters, digits and single dashes, starting with a letter, at most 64 characters. The names become folder, package and crate names.
    ///
    /// Choose a name that matches.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc plugin new Acme/Slack
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc plugin new acme/slack
    /// ```
    pub INVALID_NAME = "invalid-name", group "cli";

    /// A platform name is not one of python-svc, java-svc or go.
    ///
    /// `target.platform` and the platform keys of `bodiesByPlatform` and `codegen.templates` name the backends svc has: `python-svc`, `java-svc` and `go`. Anything else, including near misses like `golang` or `python`, is refused with a did-you-mean hint.
    ///
    /// Use one of the three names.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/invalid_platform.graph.json`:
    ///
    /// ```json
    /// "target": { "platform": "golang" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "target": { "platform": "go" }
    /// ```
    pub INVALID_PLATFORM = "invalid-platform", group "document";

    /// The document `version` is not semver, or a codegen.templates `version` is not a semver range.
    ///
    /// The document's `version` (default `0.1.0`) is written into generated packages and the build manifest, so it must be a semver version `MAJOR.MINOR.PATCH`. The `version` of a `codegen.templates` entry selects a connector and must be a semver range such as `"^1.2"`.
    ///
    /// Write a full semver version, or a valid range.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/invalid_version.graph.json`:
    ///
    /// ```json
    /// "version": "1.0"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "version": "1.0.0"
    /// ```
    pub INVALID_VERSION = "invalid-version", group "document";

    /// A number is outside the range its field allows.
    ///
    /// Integer settings have bounds: `maxSteps` 1 to 1,000,000, `requestTimeoutMs` 1 to 86,400,000, `server.port` 1 to 65535, tool, MCP and model `timeoutMs` 1 to 3,600,000, a model's `retry.maxAttempts` 1 to 10 and its delays 1 to 3,600,000, `maxTokens` 1 to 2,147,483,647 (java-svc sends it as an `int`), and negative or fractional values are refused where an integer is expected. Connectors report their own bounds (for example `timeoutMs`, `ttlSeconds`, `maxEntries`) with this code.
    ///
    /// Use a value inside the range given in the message.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/retry_attempts.graph.json`:
    ///
    /// ```json
    /// "model": { "provider": "openai", "name": "gpt-4o", "retry": { "maxAttempts": 11 } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "model": { "provider": "openai", "name": "gpt-4o", "retry": { "maxAttempts": 10 } }
    /// ```
    pub OUT_OF_RANGE = "out-of-range", group "document";
}
