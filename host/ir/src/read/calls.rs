//! Reading what every model configuration shares: its `provider`, how it
//! is called (`timeoutMs`, `retry`) and its `fallbacks`.

use super::{Obj, Reader};
use crate::diag::{did_you_mean, Diagnostic};
use crate::json::Node as JNode;
use crate::model::*;
use crate::validate::is_identifier;

impl Reader {
    /// The required `provider`, one of [`PROVIDERS`].
    pub(crate) fn provider(&mut self, o: &mut Obj<'_>, what: &str) -> String {
        let s = self.req_str(o, "provider", what);
        if !s.is_empty() && !PROVIDERS.contains(&s.as_str()) {
            let valid = PROVIDERS.join(", ");
            let hint = match did_you_mean(&s, PROVIDERS) {
                Some(close) => format!("did you mean `{close}`? valid: {valid}"),
                None => format!(
                    "valid: {valid} (`openai` is any OpenAI-compatible chat-completions API, reached through `baseUrlEnv`)"
                ),
            };
            self.push(
                Diagnostic::error(
                    &crate::codes::INVALID_VALUE,
                    format!("`{s}` is not a model provider"),
                )
                .at(o.child_ptr("provider"))
                .hint(hint),
            );
        }
        s
    }

    /// `timeoutMs` and `retry`.
    pub(crate) fn call_policy(&mut self, o: &mut Obj<'_>) -> CallPolicy {
        let timeout_ms = self.opt_positive(o, "timeoutMs", CALL_MS_LIMIT);
        let retry = Self::opt(o, "retry").and_then(|(n, p)| {
            let mut r = self.object(n, &p)?;
            let defaults = Retry::default();
            let retry = Retry {
                max_attempts: u32::try_from(self.positive(
                    &mut r,
                    "maxAttempts",
                    u64::from(defaults.max_attempts),
                    MAX_ATTEMPTS_LIMIT,
                ))
                .unwrap_or(defaults.max_attempts),
                initial_delay_ms: self.positive(
                    &mut r,
                    "initialDelayMs",
                    defaults.initial_delay_ms,
                    CALL_MS_LIMIT,
                ),
                max_delay_ms: self.positive(
                    &mut r,
                    "maxDelayMs",
                    defaults.max_delay_ms,
                    CALL_MS_LIMIT,
                ),
            };
            self.finish(r, "`retry`");
            Some(retry)
        });
        CallPolicy { timeout_ms, retry }
    }

    /// `fallbacks`, when present (an empty list says: none, not even the
    /// settings' ones).
    pub(crate) fn fallbacks(&mut self, o: &mut Obj<'_>) -> Option<Vec<Fallback>> {
        let (n, p) = Self::opt(o, "fallbacks")?;
        let items = self.array(n, &p);
        Some(
            items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| self.fallback(item, &format!("{p}/{i}")))
                .collect(),
        )
    }

    fn fallback(&mut self, n: &JNode, p: &str) -> Option<Fallback> {
        let what = "a fallback model";
        let mut o = self.object(n, p)?;
        if let Some((_, at)) = o.field("fallbacks") {
            self.push(
                Diagnostic::error(
                    &NESTED_FALLBACKS,
                    "a fallback model has `fallbacks` of its own",
                )
                .at(at)
                .hint("list every model to try, in order, in the first model's `fallbacks`"),
            );
        }
        let fallback = Fallback {
            provider: self.provider(&mut o, what),
            name: self.req_str(&mut o, "name", what),
            temperature: self.opt_f64(&mut o, "temperature"),
            max_tokens: self
                .opt_positive(&mut o, "maxTokens", MAX_TOKENS_LIMIT)
                .and_then(|v| u32::try_from(v).ok()),
            base_url_env: self.env_name(&mut o, "baseUrlEnv"),
            api_key_env: self.env_name(&mut o, "apiKeyEnv"),
            call: self.call_policy(&mut o),
        };
        self.finish(o, what);
        Some(fallback)
    }

    /// An optional member naming an environment variable.
    pub(crate) fn env_name(&mut self, o: &mut Obj<'_>, key: &'static str) -> Option<String> {
        let at = o.child_ptr(key);
        let name = self.opt_str(o, key)?;
        if !is_identifier(&name) {
            self.push(
                Diagnostic::error(
                    &crate::codes::INVALID_ENV_NAME,
                    format!("{key} `{name}` is not an environment variable name"),
                )
                .at(at)
                .hint("name the variable; secrets are never written into the graph"),
            );
        }
        Some(name)
    }
}

crate::diagnostic_codes! {
    /// A fallback model has fallbacks of its own.
    ///
    /// A model's `fallbacks` are tried in order once its attempts are spent on failures worth retrying. A fallback is one model of that list: a list inside it would make the order of models a tree, which no target tries.
    ///
    /// List every model in the first model's `fallbacks`, in the order to try them.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/nested_fallbacks.graph.json`:
    ///
    /// ```json
    /// "model": { "provider": "openai", "name": "gpt-4o", "fallbacks": [
    ///   { "provider": "openai", "name": "gpt-4o-mini", "fallbacks": [ { "provider": "anthropic", "name": "claude-haiku-4-5" } ] } ] }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "model": { "provider": "openai", "name": "gpt-4o", "fallbacks": [
    ///   { "provider": "openai", "name": "gpt-4o-mini" }, { "provider": "anthropic", "name": "claude-haiku-4-5" } ] }
    /// ```
    pub NESTED_FALLBACKS = "nested-fallbacks", group "document";
}
