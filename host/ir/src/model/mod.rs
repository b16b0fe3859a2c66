//! The typed model of an IR v2 document (its JSON Schema, generated from this model, is
//! `fixtures/schema/ir-v2.schema.json`).
//!
//! Reading is done by [`crate::read`] (it collects every problem at once and
//! knows positions); this module only describes the shape. `Serialize` gives
//! the canonical (normalized) JSON that backends receive, and `JsonSchema`
//! gives the published schema. `presentation` and `extensions` are accepted
//! but never serialized: compilers ignore them, so they must not change the
//! normalized document or its hash.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

mod calls;
mod regions;
mod settings;
mod shape;

pub use calls::*;
pub(crate) use regions::region;
pub use regions::BranchRef;
pub use settings::*;
pub use shape::{MAX_SCHEMA_DEPTH, MAX_SCHEMA_PROPERTIES};

pub use crate::nodes::{
    default_fallback, default_map_concurrency, default_max_items, default_top_k, AgentNode, Branch,
    Condition, ConnectorNode, FunctionNode, HitlNode, Intent, IntentNode, LlmNode, MapNode,
    ModelRef, NodeKind, Op, OutputShape, ParallelNode, Prompt, RagDocument, RagDocuments, RagNode,
    ResponseTemplateNode, Retriever, RouterNode, SubgraphNode, SubgraphRef, ToolNode,
};

pub const ID_PATTERN: &str = "^[a-z][a-z0-9_-]{0,62}$";
pub const NODE_ID_PATTERN: &str = "^[A-Za-z][A-Za-z0-9_]*$";
pub const FIELD_NAME_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_]*$";
pub const ENV_NAME_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_]*$";

/// The platforms IR v2 names. Other platforms may be served by third-party
/// backends, so the model keeps platform names as strings.
pub const PLATFORMS: [&str; 3] = ["python-svc", "java-svc", "go"];

/// The largest `maxTokens` of a model: java-svc sends it as an `int`.
pub const MAX_TOKENS_LIMIT: u64 = i32::MAX as u64;

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "svc IR v2 graph document")]
pub struct Document {
    /// The IR version: `2`, `"2"`, `"2.N"` or `"2.N.M"`. Normalized to `"2.N.M"`.
    #[schemars(schema_with = "ir_version_schema")]
    pub ir_version: String,
    #[schemars(pattern(ID_PATTERN))]
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// semver; defaults to `0.1.0`.
    #[schemars(default = "default_version")]
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    #[schemars(default)]
    pub security: Security,
    pub logical: Logical,
    /// `{ platform: { node or tool id: native source } }`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(default)]
    pub bodies_by_platform: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Codegen::is_empty")]
    #[schemars(default)]
    pub codegen: Codegen,
    /// Canvas layout; kept by the designer, ignored by compilers.
    #[serde(skip_serializing)]
    pub presentation: Option<BTreeMap<String, Value>>,
    /// Free-form; ignored by compilers.
    #[serde(skip_serializing)]
    pub extensions: Option<BTreeMap<String, Value>>,
}

fn default_version() -> String {
    "0.1.0".into()
}

fn ir_version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "The IR version: 2, \"2\", \"2.N\" or \"2.N.M\".",
        "oneOf": [
            { "type": "integer", "const": 2 },
            { "type": "string", "pattern": "^2(\\.(0|[1-9][0-9]*)){0,2}$" }
        ]
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    #[schemars(extend("enum" = PLATFORMS))]
    pub platform: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Security {
    #[schemars(default = "default_auth")]
    pub auth: Auth,
    #[schemars(default = "default_key_env", pattern(ENV_NAME_PATTERN))]
    pub key_env: String,
}

fn default_auth() -> Auth {
    Auth::ApiKey
}
fn default_key_env() -> String {
    "SVC_API_KEY".into()
}

impl Default for Security {
    fn default() -> Self {
        Security {
            auth: default_auth(),
            key_env: default_key_env(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Auth {
    None,
    ApiKey,
    Bearer,
}

impl Auth {
    pub const ALL: [Auth; 3] = [Auth::None, Auth::ApiKey, Auth::Bearer];

    pub fn as_str(self) -> &'static str {
        match self {
            Auth::None => "none",
            Auth::ApiKey => "api_key",
            Auth::Bearer => "bearer",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Codegen {
    /// `{ platform: { connector node id: template reference } }`.
    #[schemars(default)]
    pub templates: BTreeMap<String, BTreeMap<String, TemplateRef>>,
}

impl Codegen {
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TemplateRef {
    /// Connector id such as `acme/slack`.
    #[schemars(pattern(r"^[a-z0-9][a-z0-9_-]*/[a-z0-9][a-z0-9_-]*$"))]
    pub connector: String,
    /// semver requirement such as `^1.2`.
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Logical {
    #[schemars(default)]
    pub state: Vec<StateField>,
    pub nodes: Vec<Node>,
    #[schemars(default)]
    pub edges: Vec<Edge>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub tools: Vec<Tool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub mcp_servers: Vec<McpServer>,
    /// Agents that `agent` nodes run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub agents: Vec<AgentDef>,
    #[schemars(default)]
    pub settings: Settings,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateField {
    #[schemars(pattern(FIELD_NAME_PATTERN))]
    pub name: String,
    #[serde(rename = "type")]
    pub ty: FieldType,
    /// Item type of an `array` field (default: any JSON value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<ItemType>,
    /// The properties of an `object` field, in declared order: the shape a
    /// request's value and an `llm` node's structured reply must have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Properties>,
    #[schemars(default = "default_reducer")]
    pub reducer: Reducer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[schemars(default)]
    pub required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

fn default_reducer() -> Reducer {
    Reducer::Replace
}

/// How a node whose output is one text (a response template, a model's
/// scalar reply) writes it to a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextWrite {
    /// A `string` field takes the text.
    Text,
    /// A `messages` field takes it as one assistant message.
    Message,
    /// An `append` array of strings (or of any value) gets it as one more item.
    Item,
}

impl StateField {
    /// How text is written to this field, or `None` when it cannot be.
    pub fn text_write(&self) -> Option<TextWrite> {
        match self.ty {
            FieldType::String => Some(TextWrite::Text),
            FieldType::Messages => Some(TextWrite::Message),
            FieldType::Array
                if self.reducer == Reducer::Append
                    && self
                        .items
                        .as_ref()
                        .is_none_or(|it| it.ty == FieldType::String) =>
            {
                Some(TextWrite::Item)
            }
            _ => None,
        }
    }

    /// The field's type as a person reads it, with its article: "a
    /// `string` field", "an `append` array of `integer`".
    pub fn describe(&self) -> String {
        let (append, ty) = (self.reducer == Reducer::Append, self.ty.as_str());
        let mut out = match (append, self.ty) {
            (true, _) => format!("an `append` {ty}"),
            (false, FieldType::Integer | FieldType::Object | FieldType::Array) => {
                format!("an `{ty}`")
            }
            (false, _) => format!("a `{ty}`"),
        };
        match &self.items {
            Some(items) => out.push_str(&format!(" of `{}`", items.ty.as_str())),
            None if !append => out.push_str(" field"),
            None => {}
        }
        out
    }
}

/// The type of an array's items or of an object's property, nestable.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemType {
    #[serde(rename = "type")]
    pub ty: FieldType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<ItemType>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Properties>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// An object's properties by name, in the order the document declares them
/// (the order a structured reply is checked in, the same on every target).
pub type Properties = indexmap::IndexMap<String, ItemType>;

impl ItemType {
    /// A type with nothing nested.
    pub fn plain(ty: FieldType) -> Self {
        ItemType {
            ty,
            items: None,
            properties: None,
            description: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    String,
    Integer,
    Number,
    Boolean,
    Object,
    Array,
    Messages,
}

impl FieldType {
    pub const ALL: [FieldType; 7] = [
        FieldType::String,
        FieldType::Integer,
        FieldType::Number,
        FieldType::Boolean,
        FieldType::Object,
        FieldType::Array,
        FieldType::Messages,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::String => "string",
            FieldType::Integer => "integer",
            FieldType::Number => "number",
            FieldType::Boolean => "boolean",
            FieldType::Object => "object",
            FieldType::Array => "array",
            FieldType::Messages => "messages",
        }
    }

    pub fn is_list(self) -> bool {
        matches!(self, FieldType::Array | FieldType::Messages)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reducer {
    Replace,
    Append,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Node {
    #[schemars(pattern(NODE_ID_PATTERN))]
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(flatten)]
    pub kind: NodeKind,
}

/// An agent of `logical.agents`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentDef {
    #[schemars(pattern(NODE_ID_PATTERN))]
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Caller roles allowed to run the agent (any one suffices); empty: anyone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub roles: Vec<String>,
    #[serde(flatten)]
    pub kind: AgentKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AgentKind {
    /// A tool-calling loop on the model.
    Worker {
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        persona: Option<Persona>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        #[schemars(default)]
        tool_ids: Vec<String>,
        #[schemars(default = "default_max_turns", range(min = 1))]
        max_turns: u32,
        /// Falls back to `settings.model`; normalization fills it in.
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<ModelRef>,
    },
    /// Routes between member agents until it routes to `finish`.
    Supervisor {
        members: Vec<String>,
        #[schemars(default = "default_router")]
        router: SupervisorRouter,
        #[schemars(default = "default_max_rounds", range(min = 1))]
        max_rounds: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<String>,
        /// Falls back to `settings.model`; normalization fills it in.
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<ModelRef>,
    },
    /// Another svc service, reached over its `/invoke`.
    Remote {
        /// The service's base URL, literal or `env:NAME`; defaults to the
        /// `serverUrl` of `external_services.<service>`.
        #[serde(skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// The `external_services` entry holding the credential.
        service: String,
        #[schemars(default = "default_input_field")]
        input_field: String,
        #[schemars(default = "default_output_field")]
        output_field: String,
        #[schemars(default = "default_remote_timeout", range(min = 1))]
        timeout_ms: u64,
    },
    /// An A2A peer reached through its agent card.
    A2a {
        agent_card_url: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        service: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skill_id: Option<String>,
    },
}

impl AgentKind {
    pub const NAMES: [&'static str; 4] = ["worker", "supervisor", "remote", "a2a"];

    pub fn name(&self) -> &'static str {
        match self {
            AgentKind::Worker { .. } => "worker",
            AgentKind::Supervisor { .. } => "supervisor",
            AgentKind::Remote { .. } => "remote",
            AgentKind::A2a { .. } => "a2a",
        }
    }
}

pub fn default_max_turns() -> u32 {
    8
}
pub fn default_max_rounds() -> u32 {
    10
}
fn default_router() -> SupervisorRouter {
    SupervisorRouter::Llm
}
pub fn default_input_field() -> String {
    "input".into()
}
pub fn default_output_field() -> String {
    "output".into()
}
pub fn default_remote_timeout() -> u64 {
    20_000
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Persona {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tone: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SupervisorRouter {
    /// The model picks the next member.
    Llm,
    /// A body per platform, `bodiesByPlatform[<platform>][<agent id>]`, names the next member or `finish`.
    Custom,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    #[schemars(pattern(NODE_ID_PATTERN))]
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub kind: ToolKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum ToolKind {
    /// Body in `bodiesByPlatform[platform][tool id]`.
    Native,
    /// JSON POST of the tool input to `endpoint`, a literal http(s) URL or `env:NAME`.
    Http {
        endpoint: String,
        #[schemars(default = "default_tool_timeout", range(min = 1, max = 3_600_000))]
        timeout_ms: u64,
        #[schemars(default)]
        headers: BTreeMap<String, String>,
    },
    /// A tool of an MCP server declared in `logical.mcpServers`.
    Mcp {
        #[serde(skip_serializing_if = "Option::is_none")]
        connection_type: Option<String>,
        server: String,
        tool: String,
    },
}

fn default_tool_timeout() -> u64 {
    10_000
}

impl ToolKind {
    pub const NAMES: [&'static str; 3] = ["native", "http", "mcp"];

    pub fn name(&self) -> &'static str {
        match self {
            ToolKind::Native => "native",
            ToolKind::Http { .. } => "http",
            ToolKind::Mcp { .. } => "mcp",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    #[schemars(pattern(NODE_ID_PATTERN))]
    pub id: String,
    #[serde(flatten)]
    pub transport: McpTransport,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(
    tag = "transport",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum McpTransport {
    Stdio {
        command: String,
        #[schemars(default)]
        args: Vec<String>,
        /// Values may reference the environment as `${NAME}`.
        #[schemars(default)]
        env: BTreeMap<String, String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1, max = 3_600_000))]
        timeout_ms: Option<u64>,
    },
    Sse {
        url: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1, max = 3_600_000))]
        timeout_ms: Option<u64>,
        #[schemars(default)]
        headers: BTreeMap<String, String>,
    },
    StreamableHttp {
        url: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1, max = 3_600_000))]
        timeout_ms: Option<u64>,
        #[schemars(default)]
        headers: BTreeMap<String, String>,
    },
}

impl McpTransport {
    pub const NAMES: [&'static str; 3] = ["stdio", "sse", "streamable_http"];

    pub fn name(&self) -> &'static str {
        match self {
            McpTransport::Stdio { .. } => "stdio",
            McpTransport::Sse { .. } => "sse",
            McpTransport::StreamableHttp { .. } => "streamable_http",
        }
    }
}

impl Document {
    /// The platform named by `target.platform`, if any.
    pub fn platform(&self) -> Option<&str> {
        self.target.as_ref().map(|t| t.platform.as_str())
    }

    pub fn node(&self, id: &str) -> Option<&Node> {
        self.logical.nodes.iter().find(|n| n.id == id)
    }

    pub fn state_field(&self, name: &str) -> Option<&StateField> {
        self.logical.state.iter().find(|f| f.name == name)
    }

    pub fn tool(&self, id: &str) -> Option<&Tool> {
        self.logical.tools.iter().find(|t| t.id == id)
    }

    pub fn agent(&self, id: &str) -> Option<&AgentDef> {
        self.logical.agents.iter().find(|a| a.id == id)
    }

    /// Whether anything asks a model: an LLM or intent_classifier node, a
    /// worker agent or a supervisor with the `llm` router (which decides the
    /// LLM runtime parts).
    pub fn has_llm_nodes(&self) -> bool {
        self.logical.nodes.iter().any(|n| n.kind.asks_model())
            || self.logical.agents.iter().any(|a| {
                matches!(
                    a.kind,
                    AgentKind::Worker { .. }
                        | AgentKind::Supervisor {
                            router: SupervisorRouter::Llm,
                            ..
                        }
                )
            })
    }

    /// The HTTP registry tools, as (tool id, endpoint).
    pub fn http_tools(&self) -> impl Iterator<Item = (&str, &str)> {
        self.logical.tools.iter().filter_map(|t| match &t.kind {
            ToolKind::Http { endpoint, .. } => Some((t.id.as_str(), endpoint.as_str())),
            _ => None,
        })
    }

    /// The native body of a node or tool for a platform.
    pub fn body(&self, platform: &str, id: &str) -> Option<&str> {
        self.bodies_by_platform
            .get(platform)
            .and_then(|b| b.get(id))
            .map(String::as_str)
    }

    /// The successor of every non-router node (its single outgoing edge),
    /// by node id. Build it once; looking edges up one by one is quadratic
    /// on large graphs.
    pub fn successors(&self) -> std::collections::HashMap<&str, &str> {
        self.logical
            .edges
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str()))
            .collect()
    }

    /// The id of the `start` node.
    pub fn start_id(&self) -> Option<&str> {
        self.logical
            .nodes
            .iter()
            .find(|n| matches!(n.kind, NodeKind::Start))
            .map(|n| n.id.as_str())
    }

    /// The canonical JSON of the (already normalized) document.
    pub fn to_canonical_json(&self) -> String {
        // Serializing plain data to a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The names a `{{field}}` placeholder refers to in a template string.
pub fn placeholders(template: &str) -> Vec<&str> {
    crate::template::parts(template)
        .into_iter()
        .filter_map(|part| match part {
            crate::template::Part::Field(name) => Some(name),
            crate::template::Part::Text(_) => None,
        })
        .collect()
}
