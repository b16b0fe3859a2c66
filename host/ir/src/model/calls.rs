//! How a model is called (every model configuration: `settings.model`, a
//! node's or an agent's `model`, a fallback): one attempt's time limit,
//! retries and the models tried after it; and `settings.budget`, what a
//! run may spend on model calls.

use schemars::JsonSchema;
use serde::Serialize;

use super::ENV_NAME_PATTERN;

/// The providers a model configuration may name.
pub const PROVIDERS: [&str; 2] = ["openai", "anthropic"];

/// The largest `maxAttempts` of a retry: more only delays a failure.
pub const MAX_ATTEMPTS_LIMIT: u64 = 10;

/// The largest `timeoutMs`, `initialDelayMs` or `maxDelayMs`: one hour.
pub const CALL_MS_LIMIT: u64 = 3_600_000;

/// One attempt's limit and the retries of a model; absent fields take the
/// defaults (60000 ms; 3 attempts from 500 ms, at most 8000 ms apart).
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallPolicy {
    /// One attempt's limit in milliseconds, within the run's deadline
    /// (default 60000).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3_600_000))]
    pub timeout_ms: Option<u64>,
    /// Attempts per model and the delays between them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
}

impl CallPolicy {
    /// The default one attempt's limit.
    pub const TIMEOUT_MS: u64 = 60_000;

    /// `self` with what it leaves out taken from `outer` (a node's model
    /// from `settings.model`).
    pub fn or(&self, outer: &CallPolicy) -> CallPolicy {
        CallPolicy {
            timeout_ms: self.timeout_ms.or(outer.timeout_ms),
            retry: self.retry.clone().or_else(|| outer.retry.clone()),
        }
    }

    /// The limit of one attempt in milliseconds.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(Self::TIMEOUT_MS)
    }

    /// The retry rule, defaults filled in.
    pub fn retry(&self) -> Retry {
        self.retry.clone().unwrap_or_default()
    }
}

/// Attempts per model: exponential delays with full jitter from
/// `initialDelayMs`, capped at `maxDelayMs` (a longer `Retry-After` is
/// obeyed up to the cap).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Retry {
    /// Attempts per model, 1 (no retry) to 10.
    #[schemars(default = "default_max_attempts", range(min = 1, max = 10))]
    pub max_attempts: u32,
    #[schemars(default = "default_initial_delay", range(min = 1, max = 3_600_000))]
    pub initial_delay_ms: u64,
    #[schemars(default = "default_max_delay", range(min = 1, max = 3_600_000))]
    pub max_delay_ms: u64,
}

fn default_max_attempts() -> u32 {
    3
}
fn default_initial_delay() -> u64 {
    500
}
fn default_max_delay() -> u64 {
    8_000
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            max_attempts: default_max_attempts(),
            initial_delay_ms: default_initial_delay(),
            max_delay_ms: default_max_delay(),
        }
    }
}

/// A model tried once the models before it spent their attempts on
/// failures worth retrying: the fields of a model, without `fallbacks`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fallback {
    #[schemars(extend("enum" = ["openai", "anthropic"]))]
    pub provider: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2_147_483_647))]
    pub max_tokens: Option<u32>,
    /// The variable holding the provider's base URL: by default the one of
    /// the graph's `settings.model` when the provider is the same, else the
    /// provider's own (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(ENV_NAME_PATTERN))]
    pub base_url_env: Option<String>,
    /// The variable holding the provider's key, chosen as `baseUrlEnv` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(ENV_NAME_PATTERN))]
    pub api_key_env: Option<String>,
    #[serde(flatten)]
    pub call: CallPolicy,
}

/// What one run may spend on model calls; a resumed thread continues its
/// run's count.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Budget {
    /// Input and output tokens over the run, as the provider reports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u64>,
    /// Model calls over the run (a call's retries and fallbacks are one call).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_model_calls: Option<u64>,
}

impl Budget {
    pub fn is_default(&self) -> bool {
        *self == Budget::default()
    }
}

/// The variables a node's or an agent's model of `provider` reads its base
/// URL and key from: those of the graph's `settings.model` when it names
/// the same provider, else the provider's own (a fallback names its own
/// after normalization).
pub fn model_variables(doc: &super::Document, provider: &str) -> (String, String) {
    match &doc.logical.settings.model {
        Some(s) if s.provider == provider => (s.base_url_env.clone(), s.api_key_env.clone()),
        _ => provider_variables(provider),
    }
}

impl Fallback {
    /// The variables this fallback reads its base URL and key from: its
    /// own (normalization writes them), else [`model_variables`].
    pub fn variables(&self, doc: &super::Document) -> (String, String) {
        let (base_url_env, api_key_env) = model_variables(doc, &self.provider);
        (
            self.base_url_env.clone().unwrap_or(base_url_env),
            self.api_key_env.clone().unwrap_or(api_key_env),
        )
    }
}

/// The variables a provider's base URL and key are read from when a
/// model configuration names none.
pub fn provider_variables(provider: &str) -> (String, String) {
    match provider {
        "anthropic" => ("ANTHROPIC_BASE_URL".into(), "ANTHROPIC_API_KEY".into()),
        _ => (super::default_base_url_env(), super::default_api_key_env()),
    }
}

#[cfg(test)]
mod tests {
    use super::PROVIDERS;

    /// The schema's `enum` of providers is written out in three places
    /// (an attribute takes no constant): each must be this list.
    #[test]
    fn the_schema_lists_the_providers() {
        let schema: serde_json::Value =
            serde_json::from_str(&crate::schema::json_schema()).unwrap();
        for def in ["ModelRef", "ModelSettings", "Fallback"] {
            let listed = &schema["$defs"][def]["properties"]["provider"]["enum"];
            assert_eq!(*listed, serde_json::json!(PROVIDERS), "{def}");
        }
    }
}
