//! `svc-backend-sdk`: the crate a backend (or connector) author builds on.
//!
//! * [`Backend`] is the trait a backend implements with plain Rust types;
//!   [`export_backend!`] turns it into the `backend` world's exports when
//!   compiled for `wasm32-wasip2`. Natively the same code is an ordinary
//!   library, so emit logic is unit-tested without wasmtime.
//! * [`ir`] is `svc-ir`: the typed, normalized document a backend receives.
//! * [`writer::CodeWriter`] builds indented source text and tracks imports.
//! * [`Connector`] and [`export_connector!`] do the same for connectors.
//!
//! Running a finished component against the shared fixtures: the `testkit`
//! feature (native builds only), or `svc test-plugin COMPONENT.wasm`.

pub mod a2a;
pub mod agents;
pub mod bindings;
pub mod codes;
pub mod connector_kit;
pub mod connectors;
pub mod environment;
pub(crate) mod glue;
pub mod literals;
pub mod llm;
pub mod names;
pub mod openapi;
pub mod parts;
pub mod placeholders;
pub mod readme;
pub mod runtime_files;
pub mod samples;
pub mod subgraphs;
pub mod template;
#[cfg(all(feature = "testkit", not(target_arch = "wasm32")))]
pub mod testkit;
pub mod writer;

pub use svc_ir as ir;
pub use svc_ir::Diagnostic;

use parts::Serves::{self, Auth, Feature, NodeKind, ToolKind};

#[doc(hidden)]
pub use glue::{__connector_info, __connector_render, __emit, __info};

/// One file of the generated project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub path: String,
    pub contents: Vec<u8>,
    pub executable: bool,
}

impl File {
    pub fn text(path: impl Into<String>, contents: impl Into<String>) -> Self {
        File {
            path: path.into(),
            contents: contents.into().into_bytes(),
            executable: false,
        }
    }

    pub fn executable(mut self) -> Self {
        self.executable = true;
        self
    }
}

/// What every built-in backend serves with its core runtime (its row that
/// every project gets): the plain node kinds, native tools, every auth scheme.
pub const CORE_CAPABILITIES: &[Serves] = &[
    NodeKind("start"),
    NodeKind("end"),
    NodeKind("function"),
    NodeKind("tool"),
    NodeKind("router"),
    NodeKind("response_template"),
    NodeKind("connector"),
    ToolKind("native"),
    Auth("none"),
    Auth("api_key"),
    Auth("bearer"),
];

/// The capability keys of router conditions, for a backend supporting every
/// condition operator on every scalar field (a row of its parts table).
pub const ALL_ROUTER_FEATURES: &[Serves] = &[
    Feature("router.op.eq"),
    Feature("router.op.ne"),
    Feature("router.op.gt"),
    Feature("router.op.ge"),
    Feature("router.op.lt"),
    Feature("router.op.le"),
    Feature("router.op.in"),
    Feature("router.op.exists"),
    Feature("router.op.truthy"),
    Feature("router.field.string"),
    Feature("router.field.integer"),
    Feature("router.field.number"),
    Feature("router.field.boolean"),
];

/// The capability key of the model API every built-in backend calls
/// (`model.provider: openai`): OpenAI's chat completions, at any compatible
/// server (`baseUrlEnv`).
pub const OPENAI_PROVIDER: Serves = Feature("model.provider.openai");

/// What a backend can compile; see `wit/since_v0.2.0/codegen.wit`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capabilities {
    pub node_kinds: Vec<String>,
    pub tool_kinds: Vec<String>,
    pub transports: Vec<String>,
    pub auth: Vec<String>,
    pub features: Vec<String>,
    /// Why a requirement key (`node-kind:hitl`) is refused.
    pub reasons: Vec<(String, String)>,
}

/// Shell lines run from the generated project's root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildCommands {
    pub setup: String,
    pub test: String,
    pub build: String,
    pub run: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendInfo {
    pub platform: String,
    pub name: String,
    pub version: String,
    pub ir_versions: String,
    pub capabilities: Capabilities,
    pub commands: BuildCommands,
}

/// Options the host passes with every emit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmitOptions {
    pub pairs: Vec<(String, String)>,
}

impl EmitOptions {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A runtime dependency of rendered connector code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    pub platform: String,
    pub spec: String,
}

/// What a connector rendered for one node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    pub files: Vec<File>,
    pub snippet: String,
    pub dependencies: Vec<Dependency>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorInfo {
    pub id: String,
    pub version: String,
    pub platforms: Vec<String>,
    pub config_schema: String,
    pub dependencies: Vec<Dependency>,
}

/// The connector nodes of the document, rendered by the host before it
/// asked the backend to emit: the code of each, by node id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Connectors {
    nodes: std::collections::BTreeMap<String, Rendered>,
}

impl Connectors {
    pub fn new(nodes: impl IntoIterator<Item = (String, Rendered)>) -> Self {
        Connectors {
            nodes: nodes.into_iter().collect(),
        }
    }

    /// The rendered code of a connector node.
    pub fn get(&self, node_id: &str) -> Option<&Rendered> {
        self.nodes.get(node_id)
    }
}

/// A backend's project, and the warnings that come with it (shown to the
/// user after a successful compile).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Emitted {
    pub files: Vec<File>,
    pub warnings: Vec<Diagnostic>,
}

impl From<Vec<File>> for Emitted {
    fn from(files: Vec<File>) -> Self {
        Emitted {
            files,
            warnings: Vec::new(),
        }
    }
}

/// A target backend.
pub trait Backend {
    fn info() -> BackendInfo;
    fn emit(
        doc: &ir::Document,
        options: &EmitOptions,
        connectors: &Connectors,
    ) -> Result<Emitted, Vec<Diagnostic>>;
}

/// A marketplace connector. `render` is called once per connector node,
/// with the node's id and its config, which the host has already checked
/// against [`ConnectorInfo::config_schema`].
pub trait Connector {
    fn info() -> ConnectorInfo;
    fn render(
        node_id: &str,
        platform: &str,
        node_config: &serde_json::Value,
    ) -> Result<Rendered, Vec<Diagnostic>>;
}

/// Exports a [`Backend`] implementation as the component's `emitter`.
/// Expands to nothing outside wasm32, so native builds and tests link.
#[macro_export]
macro_rules! export_backend {
    ($backend:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct SvcBackendExport;
            impl $crate::bindings::backend::exports::svc::codegen::emitter::Guest for SvcBackendExport {
                fn info() -> $crate::bindings::backend::svc::codegen::types::BackendInfo {
                    $crate::__info::<$backend>()
                }
                fn emit(
                    request: $crate::bindings::backend::svc::codegen::types::EmitRequest,
                ) -> Result<
                    $crate::bindings::backend::svc::codegen::types::Emitted,
                    Vec<$crate::bindings::backend::svc::codegen::types::Diagnostic>,
                > {
                    $crate::__emit::<$backend>(request)
                }
            }
            $crate::bindings::backend::__export_backend_world!(
                SvcBackendExport with_types_in $crate::bindings::backend
            );
        };
    };
}

/// Exports a [`Connector`] implementation as the component's `connector`.
#[macro_export]
macro_rules! export_connector {
    ($connector:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct SvcConnectorExport;
            impl $crate::bindings::connector::exports::svc::codegen::connector::Guest
                for SvcConnectorExport
            {
                fn info() -> $crate::bindings::backend::svc::codegen::types::ConnectorInfo {
                    $crate::__connector_info::<$connector>()
                }
                fn render(
                    node_id: String,
                    platform: String,
                    node_config: String,
                ) -> Result<
                    $crate::bindings::backend::svc::codegen::types::Rendered,
                    Vec<$crate::bindings::backend::svc::codegen::types::Diagnostic>,
                > {
                    $crate::__connector_render::<$connector>(node_id, platform, node_config)
                }
            }
            $crate::bindings::connector::__export_connector_world!(
                SvcConnectorExport with_types_in $crate::bindings::connector
            );
        };
    };
}
