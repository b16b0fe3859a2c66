//! The node kinds, one module each: its type (each field described once,
//! see [`fields`]), its validation rules, its requirements for negotiation
//! and its diagnostics. [`node_kinds!`] below is the one list of the kinds:
//! it gives the `NodeKind` enum, the kinds' names (also in the JSON Schema)
//! and the dispatch from a node to its kind's rules, so a kind added here
//! is a compile error in every `match` on `NodeKind` that does not handle
//! it (see "How to add a node kind" in docs/architecture.md).

pub(crate) mod fields;

mod agent;
mod connector;
pub(crate) mod end;
mod function;
pub(crate) mod hitl;
pub(crate) mod intent_classifier;
pub(crate) mod llm;
pub(crate) mod map;
pub(crate) mod parallel;
mod rag;
mod response_template;
pub(crate) mod router;
pub(crate) mod start;
pub(crate) mod subgraph;
mod tool;

pub use agent::AgentNode;
pub use connector::ConnectorNode;
pub use function::FunctionNode;
pub use hitl::HitlNode;
pub use intent_classifier::{default_fallback, Intent, IntentNode};
pub(crate) use llm::provider_feature;
pub use llm::{LlmNode, ModelRef, OutputShape, Prompt};
pub use map::{default_map_concurrency, default_max_items, map_child_checks, MapNode};
pub use parallel::ParallelNode;
pub use rag::{default_top_k, RagDocument, RagDocuments, RagNode, Retriever};
pub use response_template::ResponseTemplateNode;
pub use router::{Branch, Condition, Op, RouterNode};
pub use subgraph::{subgraph_child_checks, SubgraphNode, SubgraphRef};
pub use tool::ToolNode;

use serde::Serialize;

use crate::model::Document;
use crate::read::{Obj, Reader};
use crate::requirements::Requirement;
use crate::validate::Validator;

/// The node a kind's rule is checking.
pub(crate) struct Here<'a> {
    pub index: usize,
    pub id: &'a str,
    /// Its JSON pointer, `/logical/nodes/<index>`.
    pub at: String,
}

/// What each kind adds to the shared checks of a node (its id, its
/// `outputKey` as a state field, its requirement `node-kind:<name>`).
pub(crate) trait KindRules {
    /// The state field the node writes, for kinds that have one.
    fn output_key(&self) -> Option<&str> {
        None
    }

    /// Whether the node calls a model (which decides the LLM runtime parts).
    fn asks_model(&self) -> bool {
        false
    }

    /// The kind's own rules.
    fn validate<'a>(&'a self, _v: &mut Validator<'a>, _here: &Here<'a>) {}

    /// What the kind needs from a backend beyond its kind, pushed to `out`.
    fn requirements(&self, _doc: &Document, _at: &str, _out: &mut Vec<Requirement>) {}
}

/// A kind without fields (`start`, `end`).
struct NoFields;

impl KindRules for NoFields {}

macro_rules! node_kinds {
    ($(
        $(#[$vmeta:meta])*
        $variant:ident $(($ty:ty))? => $name:literal
    ),* $(,)?) => {
        /// The node kinds, with their fields. `response_transformer` is
        /// read as `response_template`.
        #[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
        #[serde(tag = "kind")]
        pub enum NodeKind {
            $(
                $(#[$vmeta])*
                #[serde(rename = $name)]
                $variant $(($ty))?,
            )*
        }

        impl NodeKind {
            /// Every kind's name, in the order of the declaration.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            pub fn name(&self) -> &'static str {
                match self {
                    $( node_kinds!(@pattern $variant $(, $ty)?) => $name, )*
                }
            }

            pub(crate) fn rules(&self) -> &dyn KindRules {
                match self {
                    $( node_kinds!(@bind k, $variant $(, $ty)?) => node_kinds!(@rules k $(, $ty)?), )*
                }
            }

            /// Reads the fields of the kind named `name` from the node's
            /// object `o`.
            pub(crate) fn read(r: &mut Reader, name: &str, o: &mut Obj<'_>, what: &str) -> Option<Self> {
                match name {
                    $( $name => Some(node_kinds!(@read r, o, what, $variant $(, $ty)?)), )*
                    _ => None,
                }
            }
        }
    };
    (@pattern $variant:ident) => { NodeKind::$variant };
    (@pattern $variant:ident, $ty:ty) => { NodeKind::$variant(_) };
    (@bind $k:ident, $variant:ident) => { NodeKind::$variant };
    (@bind $k:ident, $variant:ident, $ty:ty) => { NodeKind::$variant($k) };
    (@rules $k:ident) => { &NoFields };
    (@rules $k:ident, $ty:ty) => { $k };
    (@read $r:ident, $o:ident, $what:ident, $variant:ident) => { NodeKind::$variant };
    (@read $r:ident, $o:ident, $what:ident, $variant:ident, $ty:ty) => {
        NodeKind::$variant(<$ty>::read_fields($r, $o, $what))
    };
}

node_kinds! {
    Start => "start",
    End => "end",
    Function(FunctionNode) => "function",
    Llm(LlmNode) => "llm",
    Tool(ToolNode) => "tool",
    Router(RouterNode) => "router",
    #[serde(alias = "response_transformer")]
    ResponseTemplate(ResponseTemplateNode) => "response_template",
    Subgraph(SubgraphNode) => "subgraph",
    Agent(AgentNode) => "agent",
    Rag(RagNode) => "rag",
    IntentClassifier(IntentNode) => "intent_classifier",
    Hitl(HitlNode) => "hitl",
    Connector(ConnectorNode) => "connector",
    Parallel(ParallelNode) => "parallel",
    Join => "join",
    Map(MapNode) => "map",
}

impl NodeKind {
    /// The state field the node writes, for kinds that have one.
    pub fn output_key(&self) -> Option<&str> {
        self.rules().output_key()
    }

    /// Whether a node of this kind calls a model.
    pub fn asks_model(&self) -> bool {
        self.rules().asks_model()
    }
}
