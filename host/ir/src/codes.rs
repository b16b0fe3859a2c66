//! Diagnostic codes: every stable kebab-case `code` that `svc` reports (the
//! IR reader, negotiation, the backends, the connector packs, the plugin
//! runtime and the CLI), each a [`Code`] declared beside the rule that
//! raises it with [`diagnostic_codes!`](crate::diagnostic_codes), its doc
//! comment being its documentation: a one-line summary, the explanation,
//! then `# Example` and `# Fix`. The pages under `docs/diagnostics/` are
//! generated from those declarations (`host/cli/tests/declarations.rs`).
//!
//! This module declares the codes both the host and plugins raise, and
//! re-exports every code of this crate for the others.

/// One diagnostic code.
#[derive(Debug, PartialEq, Eq)]
pub struct Code {
    /// The code itself, kebab-case, as in `error[<name>]`.
    pub name: &'static str,
    /// One of the [`GROUPS`]: where in the pipeline it is reported.
    pub group: &'static str,
    /// Its doc comment, Markdown: the summary line, the explanation, then
    /// `# Example` (what triggers it) and `# Fix`.
    pub doc: &'static str,
}

impl Code {
    /// The first line of the documentation: what is wrong.
    pub fn summary(&self) -> String {
        self.text()
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned()
    }

    /// Why it is an error, what reports it, and how to fix it.
    pub fn explanation(&self) -> String {
        let text = self.text();
        let rest = text.split_once('\n').map_or("", |(_, r)| r);
        rest.split_once(EXAMPLE)
            .map_or(rest, |(e, _)| e)
            .trim()
            .to_owned()
    }

    /// What triggers the code.
    pub fn example(&self) -> String {
        let text = self.text();
        let after = text.split_once(EXAMPLE).map_or("", |(_, r)| r);
        after
            .split_once(FIX)
            .map_or(after, |(e, _)| e)
            .trim()
            .to_owned()
    }

    /// The example, fixed.
    pub fn fix(&self) -> String {
        let text = self.text();
        text.split_once(FIX)
            .map_or("", |(_, f)| f)
            .trim()
            .to_owned()
    }

    /// The doc comment as Markdown: rustdoc keeps the space after each
    /// `///`, which would indent every line by one.
    fn text(&self) -> String {
        self.doc
            .lines()
            .map(|line| line.strip_prefix(' ').unwrap_or(line))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

const EXAMPLE: &str = "\n# Example\n";
const FIX: &str = "\n# Fix\n";

/// The groups codes belong to, in pipeline order, each with a one-line
/// description (the headings of `docs/diagnostics/README.md`).
pub const GROUPS: &[(&str, &str)] = &[
    (
        "document",
        "Reading the graph document: JSON syntax, shapes, names and references.",
    ),
    (
        "state",
        "The state schema in `logical.state` and references to its fields.",
    ),
    ("nodes", "The fields of individual nodes."),
    (
        "topology",
        "The shape of the graph: start, ends, edges, reachability.",
    ),
    ("tools", "Tools and MCP servers in `logical.tools` and `logical.mcpServers`."),
    (
        "templates",
        "Native bodies (`bodiesByPlatform`) and connector templates (`codegen.templates`) a platform needs.",
    ),
    (
        "negotiation",
        "Matching the document with the backend that compiles it.",
    ),
    (
        "plugin",
        "Loading and running backend and connector components in the sandbox.",
    ),
    (
        "connector",
        "Connector nodes: finding the connector, checking its config, placing what it renders.",
    ),
    (
        "pack",
        "Connector packs (`.svc-pack.zip`): building, opening and finding them.",
    ),
    ("archive", "The ZIP layer that reads packs as hostile input."),
    ("project", "Pack projects: `svc.project.json`."),
    ("cli", "The command line: files, output folders, scaffolding."),
    (
        "tests",
        "Test files (`NAME.tests.json`) that `svc test` runs against the compiled services.",
    ),
];

/// Declares diagnostic codes, each with its doc comment as its
/// documentation (see [`Code`]), and `CODES`, the list of them:
///
/// ```ignore
/// svc_ir::diagnostic_codes! {
///     /// A node id is used twice.
///     ///
///     /// Why, and how to fix it.
///     ///
///     /// # Example
///     ///
///     /// ...
///     ///
///     /// # Fix
///     ///
///     /// ...
///     pub DUPLICATE_ID = "duplicate-id", group "document";
/// }
/// ```
#[macro_export]
macro_rules! diagnostic_codes {
    ($(
        $(#[doc = $doc:literal])*
        $vis:vis $name:ident = $code:literal, group $group:literal;
    )*) => {
        $(
            $(#[doc = $doc])*
            $vis const $name: $crate::codes::Code = $crate::codes::Code {
                name: $code,
                group: $group,
                doc: concat!($($doc, "\n"),*),
            };
        )*

        /// The codes declared in this module.
        pub const CODES: &[&$crate::codes::Code] = &[$(&$name),*];
    };
}

crate::diagnostic_codes! {
    /// A connector node's `config` does not match the config schema its connector publishes.
    ///
    /// A connector publishes a JSON Schema for its nodes' `config` in `info()`: the one declaration of the config, which the designer shows too. Before the connector renders a node, the host checks the node's config against that schema, once, and reports every violation with a pointer into the node's `config`. A violation that a rule of the document also names takes that rule's code (`wrong-type`, `missing-field`, `unknown-field` with a did-you-mean, `out-of-range`, `invalid-value`), one of svc's formats its own (`invalid-field-name`, `invalid-endpoint`, `invalid-header`, ...); this code is for the rest (combinations such as `oneOf`, `minItems`, a standard `format` such as `uri`).
    ///
    /// Make the node's `config` match the schema the connector publishes (its `configSchema`); the message quotes the violated rule, and the hint is the value's description in the schema.
    ///
    /// # Example
    ///
    /// ```json
    /// { "id": "notify", "kind": "connector", "config": { "url": "env:HOOK", "recipients": [] } }
    /// ```
    ///
    /// with a connector whose schema says `"recipients": { "type": "array", "minItems": 1 }`.
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "notify", "kind": "connector", "config": { "url": "env:HOOK", "recipients": ["ops"] } }
    /// ```
    pub CONNECTOR_CONFIG = "connector-config", group "connector";

    /// The connector a node's codegen.templates entry names is in no available pack.
    ///
    /// A connector node's code is rendered by the connector that `codegen.templates[platform][node]` names. The host looks for it in the packs on `--plugins PATH` and in the plugin directory (`$SVC_PLUGIN_DIR`); when no pack provides that connector id, the node cannot be rendered. A compile run without any packs (the `NoConnectors` source) reports the same code for every connector node.
    ///
    /// The code is also used for an internal mismatch: a backend that finds no rendered code for a connector node in its emit request (SDK `connectors::place`), or a 0.1 backend asking the host for a node it did not render. Those mean the host and the backend disagree about the document and should be reported to their authors.
    ///
    /// Make the connector's pack available with `svc compile --plugins PATH`, or put it in the plugin directory. `fixtures/valid/connector_node.graph.json` reports it for `python-svc`, where no pack is loaded.
    ///
    /// # Example
    ///
    /// `fixtures/valid/connector_node.graph.json` compiled for `python-svc` without packs:
    ///
    /// ```json
    /// "codegen": { "templates": { "python-svc": { "notify": { "connector": "svc/webhook", "version": "^0.1" } } } }
    /// ```
    ///
    /// ```sh
    /// svc compile connector_node.graph.json --out build/notify --platform python-svc
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile connector_node.graph.json --out build/notify --platform python-svc --plugins ./dist/webhook-0.1.0.svc-pack.zip
    /// ```
    pub CONNECTOR_MISSING = "connector-missing", group "connector";

    /// A connector config lists the same state field twice (svc/webhook `fields`).
    ///
    /// A list of state fields in a connector's config (an array whose schema has `uniqueItems` and items of the format `svc-field-name`, such as `fields` of `svc/webhook`, which sends them) may name each once, since a repeated name would be sent twice or hide a typo.
    ///
    /// List each state field once.
    ///
    /// # Example
    ///
    /// ```json
    /// "config": { "url": "env:HOOK", "fields": ["question", "question"] }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "config": { "url": "env:HOOK", "fields": ["question", "answer"] }
    /// ```
    pub DUPLICATE_FIELD = "duplicate-field", group "connector";

    /// A webhook header name is not an HTTP token, is set by the HTTP client, or its value spans lines.
    ///
    /// A connector sends the headers of its config with every call (`svc/webhook`'s `headers`: names of the format `svc-header-name`, values of `svc-header-value`). A name must be an HTTP token (letters, digits and ``!#$%&'*+-.^_`|~``); `Connection`, `Content-Length`, `Expect`, `Host`, `TE`, `Transfer-Encoding` and `Upgrade` are set by the HTTP client and cannot be configured; and a value may not hold a line break or NUL, which would inject headers.
    ///
    /// Fix the header name, remove a client-managed header, or write the value on one line.
    ///
    /// # Example
    ///
    /// ```json
    /// "config": { "url": "env:HOOK", "headers": { "Content-Length": "12" } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "config": { "url": "env:HOOK", "headers": { "X-Source": "svc" } }
    /// ```
    pub INVALID_HEADER = "invalid-header", group "connector";

    /// A file or folder could not be read or written.
    ///
    /// The operating system refused an operation svc needed: reading the graph document, inspecting, creating or renaming the `--out` folder and its temporary siblings, or writing a pack (which is also refused when the output folder is a symbolic link). The message names the path and the system's reason.
    ///
    /// Check the path, its permissions and free space.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile missing.graph.json --out build/app
    /// # error[io]: cannot read `missing.graph.json`: No such file or directory
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app
    /// ```
    pub IO = "io", group "cli";

    /// A function node or native tool has no body for the platform being compiled.
    ///
    /// `function` nodes and `native` tools run code written by hand for each platform, in `bodiesByPlatform[platform][id]`; bodies are never translated between languages. Compiling for a platform without the body is refused (by negotiation before emitting, and by the backend itself).
    ///
    /// Add the body for the platform, or compile for a platform that has one.
    ///
    /// # Example
    ///
    /// `fixtures/valid/missing_go_body.graph.json` compiled for `go`:
    ///
    /// ```json
    /// "bodiesByPlatform": { "python-svc": { "clean": "..." }, "java-svc": { "clean": "..." } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "bodiesByPlatform": { "python-svc": { "clean": "..." }, "java-svc": { "clean": "..." }, "go": { "clean": "..." } }
    /// ```
    pub MISSING_BODY = "missing-body", group "templates";

    /// A connector node has no template for the platform being compiled.
    ///
    /// A connector node's code comes from the connector named in `codegen.templates[platform][node]`. Without an entry for the platform the node cannot be rendered (reported by negotiation, before anything is rendered). It is also reported when the chosen version of the connector has no template for the platform (its pack was built without it, with the reason), and by `svc pack` when a platform's template folder is missing or empty.
    ///
    /// Add the `codegen.templates` entry, use a connector version that supports the platform, or add the platform's templates to the pack project.
    ///
    /// # Example
    ///
    /// `fixtures/valid/connector_node.graph.json` compiled for `go`:
    ///
    /// ```json
    /// "codegen": { "templates": { "python-svc": { "notify": { "connector": "svc/webhook", "version": "^0.1" } } } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "codegen": { "templates": {
    ///   "python-svc": { "notify": { "connector": "svc/webhook", "version": "^0.1" } },
    ///   "go": { "notify": { "connector": "svc/webhook", "version": "^0.1" } }
    /// } }
    /// ```
    pub TEMPLATE_REQUIRED = "template-required", group "templates";

    /// The target platform's backend does not support something the graph uses.
    ///
    /// Before emitting, the host matches what the document needs (node kinds, tool kinds, MCP transports, the auth scheme, and features such as `streaming`, `checkpointer.memory`, `llm.bound-tools` or router operators on field types) with the capabilities the backend declares. Every gap is reported at once, at the place that needs it, with the backend's reason when it gives one. `svc capabilities` prints each backend's matrix.
    ///
    /// Change the graph, or compile for a platform that supports it.
    ///
    /// # Example
    ///
    /// `fixtures/valid/bearer_auth.graph.json` compiled for `java-svc`:
    ///
    /// ```json
    /// "security": { "auth": "bearer", "keyEnv": "SVC_TOKEN" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "security": { "auth": "api_key", "keyEnv": "SVC_TOKEN" }
    /// ```
    /// or compile for `go` or `python-svc`.
    pub UNSUPPORTED = "unsupported", group "negotiation";

    /// A connector config field does not apply to the chosen operation (svc/kv-cache).
    ///
    /// `svc/kv-cache` nodes perform one `op`: `field` applies to `get` and `set`, `hitField` to `get`, `ttlSeconds` to `set`. A field the operation ignores is refused, since it usually shows a misunderstanding of what the node does.
    ///
    /// Remove the field, or change `op`.
    ///
    /// # Example
    ///
    /// ```json
    /// "config": { "op": "get", "key": "answer:{{question}}", "field": "answer", "ttlSeconds": 60 }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "config": { "op": "get", "key": "answer:{{question}}", "field": "answer" }
    /// ```
    pub UNUSED_FIELD = "unused-field", group "connector";
}

pub use crate::config_formats::INVALID_FIELD_NAME;
pub use crate::json::JSON_SYNTAX;
pub use crate::nodes::end::NO_END;
pub use crate::nodes::hitl::HITL_CHECKPOINTER;
pub use crate::nodes::intent_classifier::DUPLICATE_INTENT;
pub use crate::nodes::llm::{EMPTY_PROMPT, MISSING_MODEL, OUTPUT_SCHEMA};
pub use crate::nodes::map::MAP_TYPE;
pub use crate::nodes::router::{INVALID_CONDITION, ROUTER_DEFAULT};
pub use crate::nodes::start::START_COUNT;
pub use crate::nodes::subgraph::SUBGRAPH_TYPE;
pub use crate::read::calls::NESTED_FALLBACKS;
pub use crate::read::{INVALID_VALUE, IR_VERSION, MISSING_FIELD, UNKNOWN_FIELD, WRONG_TYPE};
pub use crate::validate::agents::AGENT_CYCLE;
pub use crate::validate::document::{
    INVALID_ENV_NAME, INVALID_NAME, INVALID_PLATFORM, INVALID_VERSION, OUT_OF_RANGE,
};
pub use crate::validate::ids::{DUPLICATE_ID, INVALID_ID};
pub use crate::validate::parallel::{PARALLEL_REGION, PARALLEL_WRITE};
pub use crate::validate::state::{DEFAULT_TYPE, ITEMS_TYPE, PROPERTIES_TYPE, REDUCER_TYPE};
pub use crate::validate::templates::UNRESOLVED_REF;
pub use crate::validate::tools::INVALID_ENDPOINT;
pub use crate::validate::topology::{DUPLICATE_EDGE, EDGE_COUNT, NO_PATH_TO_END, UNREACHABLE};
pub use crate::validate::{OUTPUT_TYPE, UNKNOWN_STATE_FIELD};

/// Every code this crate declares.
pub fn all() -> Vec<&'static Code> {
    [
        CODES,
        crate::config_formats::CODES,
        crate::json::CODES,
        crate::nodes::end::CODES,
        crate::nodes::hitl::CODES,
        crate::nodes::intent_classifier::CODES,
        crate::nodes::llm::CODES,
        crate::nodes::map::CODES,
        crate::nodes::router::CODES,
        crate::nodes::start::CODES,
        crate::nodes::subgraph::CODES,
        crate::read::CODES,
        crate::read::calls::CODES,
        crate::validate::CODES,
        crate::validate::agents::CODES,
        crate::validate::document::CODES,
        crate::validate::ids::CODES,
        crate::validate::parallel::CODES,
        crate::validate::state::CODES,
        crate::validate::templates::CODES,
        crate::validate::tools::CODES,
        crate::validate::topology::CODES,
    ]
    .concat()
}
