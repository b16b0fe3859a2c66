//! `logical.settings`: limits, server, default model, logging, tracing,
//! checkpointer, streaming, and publishing over MCP and A2A.

use schemars::JsonSchema;
use serde::Serialize;

use super::{Budget, CallPolicy, Fallback, ENV_NAME_PATTERN};

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    #[schemars(default = "default_max_steps", range(min = 1))]
    pub max_steps: u32,
    #[schemars(default = "default_request_timeout", range(min = 1))]
    pub request_timeout_ms: u64,
    #[schemars(default)]
    pub server: ServerSettings,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSettings>,
    /// What one run may spend on model calls.
    #[serde(skip_serializing_if = "Budget::is_default")]
    #[schemars(default)]
    pub budget: Budget,
    #[schemars(default)]
    pub logging: Logging,
    #[schemars(default)]
    pub tracing: Tracing,
    #[schemars(default)]
    pub checkpointer: Checkpointer,
    /// Streaming responses (server-sent events of the run).
    #[schemars(default)]
    pub streaming: bool,
    /// Publishing the graph as an MCP tool.
    #[serde(skip_serializing_if = "McpSettings::is_default")]
    #[schemars(default)]
    pub mcp: McpSettings,
    /// Publishing the graph as an A2A agent.
    #[serde(skip_serializing_if = "A2aSettings::is_default")]
    #[schemars(default)]
    pub a2a: A2aSettings,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aSettings {
    /// Serve the agent card and A2A JSON-RPC next to `/invoke`.
    #[schemars(default)]
    pub enabled: bool,
    /// The card's name; defaults to the document's name or id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub skills: Vec<A2aSkill>,
    /// Who may call `/a2a`: each caller's subject, roles and the variable
    /// holding its token. With any entry, the service's own key is not
    /// accepted at `/a2a`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub tokens: Vec<A2aToken>,
}

/// One caller of the A2A agent: a subject with roles, known by the token
/// in an environment variable (never the token itself).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aToken {
    /// Who the caller is (the run sees it as the caller's subject).
    pub subject: String,
    /// What the caller holds: a skill with `roles` needs one of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub roles: Vec<String>,
    /// The variable holding the caller's token.
    #[schemars(pattern(ENV_NAME_PATTERN))]
    pub token_env: String,
    /// How the token is sent: `Authorization: Bearer` or `X-API-Key`.
    #[schemars(default)]
    pub scheme: A2aScheme,
}

/// How an A2A caller sends its token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum A2aScheme {
    /// `Authorization: Bearer <token>`.
    #[default]
    Bearer,
    /// `X-API-Key: <token>`.
    ApiKey,
}

impl A2aScheme {
    /// Every scheme, in the order agent cards list them.
    pub const ALL: [A2aScheme; 2] = [A2aScheme::Bearer, A2aScheme::ApiKey];

    /// The name in the document (and in python-svc's configuration).
    pub fn as_str(self) -> &'static str {
        match self {
            A2aScheme::Bearer => "bearer",
            A2aScheme::ApiKey => "api_key",
        }
    }

    /// The header a caller sends its token in, as READMEs and env.yaml
    /// files write it.
    pub fn header(self) -> &'static str {
        match self {
            A2aScheme::Bearer => "Authorization: Bearer <token>",
            A2aScheme::ApiKey => "X-API-Key: <token>",
        }
    }
}

impl A2aSettings {
    fn is_default(&self) -> bool {
        *self == A2aSettings::default()
    }
}

/// A skill the card advertises; each runs the graph.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aSkill {
    pub id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub tags: Vec<String>,
    /// Caller roles allowed to use the skill (any one suffices).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub roles: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpSettings {
    /// Serve the compiled graph as one MCP tool at `/mcp`.
    #[schemars(default)]
    pub expose: bool,
    /// The tool's name; defaults to the document id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
}

impl McpSettings {
    fn is_default(&self) -> bool {
        *self == McpSettings::default()
    }
}

fn default_max_steps() -> u32 {
    25
}
fn default_request_timeout() -> u64 {
    30_000
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_steps: default_max_steps(),
            request_timeout_ms: default_request_timeout(),
            server: ServerSettings::default(),
            model: None,
            budget: Budget::default(),
            logging: Logging::default(),
            tracing: Tracing::default(),
            checkpointer: Checkpointer::default(),
            streaming: false,
            mcp: McpSettings::default(),
            a2a: A2aSettings::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    #[schemars(default = "default_host")]
    pub host: String,
    #[schemars(default = "default_port", range(min = 1, max = 65535))]
    pub port: u16,
}

fn default_host() -> String {
    "0.0.0.0".into()
}
fn default_port() -> u16 {
    8000
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            host: default_host(),
            port: default_port(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelSettings {
    #[schemars(extend("enum" = ["openai", "anthropic"]))]
    pub provider: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2_147_483_647))]
    pub max_tokens: Option<u32>,
    /// The variable holding the provider's base URL (default
    /// `OPENAI_BASE_URL`; `ANTHROPIC_BASE_URL` for `anthropic`).
    #[schemars(default = "default_base_url_env", pattern(ENV_NAME_PATTERN))]
    pub base_url_env: String,
    /// The variable holding the provider's API key (default
    /// `OPENAI_API_KEY`; `ANTHROPIC_API_KEY` for `anthropic`).
    #[schemars(default = "default_api_key_env", pattern(ENV_NAME_PATTERN))]
    pub api_key_env: String,
    #[serde(flatten)]
    pub call: CallPolicy,
    /// Models tried in order once this one's attempts are spent on
    /// failures worth retrying.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub fallbacks: Vec<Fallback>,
}

/// The base-URL variable of OpenAI-compatible models that name none (an
/// embedding retriever's too).
pub fn default_base_url_env() -> String {
    "OPENAI_BASE_URL".into()
}
/// The key variable of OpenAI-compatible models that name none.
pub fn default_api_key_env() -> String {
    "OPENAI_API_KEY".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Logging {
    #[schemars(default = "default_log_level")]
    pub level: LogLevel,
    #[schemars(default = "default_log_format")]
    pub format: LogFormat,
}

fn default_log_level() -> LogLevel {
    LogLevel::Info
}
fn default_log_format() -> LogFormat {
    LogFormat::Text
}

impl Default for Logging {
    fn default() -> Self {
        Logging {
            level: default_log_level(),
            format: default_log_format(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Debug,
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    Text,
    Json,
}

impl LogLevel {
    /// The name the document writes.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
        }
    }
}

impl LogFormat {
    /// The name the document writes.
    pub fn as_str(self) -> &'static str {
        match self {
            LogFormat::Text => "text",
            LogFormat::Json => "json",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tracing {
    #[schemars(default)]
    pub enabled: bool,
    #[schemars(default = "default_project")]
    pub project: String,
    #[schemars(default = "default_log_format")]
    pub log_format: LogFormat,
    #[schemars(default)]
    pub register_on_build: bool,
    #[schemars(default = "default_true")]
    pub trace_nodes: bool,
}

fn default_project() -> String {
    "default".into()
}
fn default_true() -> bool {
    true
}

impl Default for Tracing {
    fn default() -> Self {
        Tracing {
            enabled: false,
            project: default_project(),
            log_format: default_log_format(),
            register_on_build: false,
            trace_nodes: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Checkpointer {
    #[serde(rename = "type")]
    #[schemars(default)]
    pub kind: CheckpointerKind,
    /// `sqlite` only: the environment variable holding the database file's
    /// path (default `SVC_CHECKPOINT_DB`).
    #[serde(rename = "pathEnv", skip_serializing_if = "Option::is_none")]
    pub path_env: Option<String>,
    /// `postgres` only: the environment variable holding the connection URL
    /// (default `SVC_CHECKPOINT_URL`); the URL carries a password, so it is
    /// never written into the graph.
    #[serde(rename = "urlEnv", skip_serializing_if = "Option::is_none")]
    pub url_env: Option<String>,
}

impl Checkpointer {
    /// The variable a durable checkpointer reads its database from (the
    /// document's, else the default); None for `none` and `memory`.
    pub fn env(&self) -> Option<&str> {
        match self.kind {
            CheckpointerKind::Sqlite => {
                Some(self.path_env.as_deref().unwrap_or("SVC_CHECKPOINT_DB"))
            }
            CheckpointerKind::Postgres => {
                Some(self.url_env.as_deref().unwrap_or("SVC_CHECKPOINT_URL"))
            }
            CheckpointerKind::None | CheckpointerKind::Memory => None,
        }
    }
}

/// Where a paused run is kept: nowhere (`none`), in the process (`memory`),
/// or in a database that outlives it and is shared by replicas (`sqlite`,
/// `postgres`). Every target builds all four.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointerKind {
    #[default]
    None,
    Memory,
    Sqlite,
    Postgres,
}

impl CheckpointerKind {
    /// The name in the document (`memory`, ...), also the feature's suffix.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointerKind::None => "none",
            CheckpointerKind::Memory => "memory",
            CheckpointerKind::Sqlite => "sqlite",
            CheckpointerKind::Postgres => "postgres",
        }
    }
}
