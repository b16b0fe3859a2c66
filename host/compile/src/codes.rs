//! The diagnostic codes this crate reports, declared beside the rules that
//! raise them (see `svc_ir::codes`), gathered for other crates and for the
//! generated pages of `docs/diagnostics/`.

pub use crate::check::UNSAFE_PATH;
pub use crate::resolve::SUBGRAPH_CYCLE;
pub use crate::write::{OUT_NOT_DIRECTORY, OUT_NOT_EMPTY, OUT_UNSAFE};

/// Every code this crate declares.
pub fn all() -> Vec<&'static svc_ir::codes::Code> {
    [
        CODES,
        crate::check::CODES,
        crate::resolve::CODES,
        crate::write::CODES,
    ]
    .concat()
}

svc_ir::diagnostic_codes! {
    /// The backend component declares an IR version range that is not a semver range.
    ///
    /// Before emitting, the host reads the backend's `info()` and checks that its `irVersions` range admits the document's `irVersion`. When `irVersions` does not parse as a semver range (for example `"2.x or so"`), the backend cannot be matched with any document and the compile stops.
    ///
    /// This is a fault of the backend component, not of the graph: report it to the backend's author, or use another backend with `--backend PATH.wasm`.
    ///
    /// # Example
    ///
    /// A backend whose `info()` returns
    ///
    /// ```rust,ignore
    /// ir_versions: "two and up".into(),
    /// ```
    ///
    /// fails every compile with `component `…` declares an invalid IR range`.
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// ir_versions: ">=2.0.0, <3.0.0".into(),
    /// ```
    pub BACKEND_INFO = "backend-info", group "negotiation";

    /// The backend component serves another platform than the one being compiled.
    ///
    /// The platform comes from `--platform` or the document's `target.platform`; the backend (built in, `--backend` or `SVC_BACKEND_<PLATFORM>`) reports its own platform in `info()`. A Go backend cannot compile for `python-svc`, so a mismatch stops the compile before anything is emitted.
    ///
    /// Pass a backend built for the platform, or change `--platform` to the backend's.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --platform python-svc --backend ./svc-backend-go.wasm
    /// # error[backend-platform]: component `./svc-backend-go.wasm` is a backend for `go`, not `python-svc`
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --platform go --backend ./svc-backend-go.wasm
    /// ```
    pub BACKEND_PLATFORM = "backend-platform", group "negotiation";

    /// The backend does not read the document's IR version.
    ///
    /// Each backend declares in `info()` the IR versions it reads (a semver range such as `>=2.0.0, <2.3.0`). A document that is valid IR 2 but newer than the backend knows (for example `2.4` with a backend for `<2.3`) cannot be compiled by it, since it may use features the backend does not know.
    ///
    /// Use a backend release that reads this IR version, or write the document for an older minor version.
    ///
    /// # Example
    ///
    /// A document with `"irVersion": "2.9"` and a backend that reads `>=2.0.0, <2.3.0`:
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --backend ./old-backend.wasm
    /// ```
    ///
    /// # Fix
    ///
    /// Use the built-in backend (drop `--backend`) or a newer backend component.
    pub IR_VERSION_UNSUPPORTED = "ir-version-unsupported", group "negotiation";

    /// The document names no target platform and none was passed.
    ///
    /// A compile needs a platform: `--platform` on the command line, or `target.platform` in the document.
    ///
    /// Add `"target": { "platform": "go" }` (or `python-svc`, `java-svc`), or pass `--platform`.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app   # the document has no "target"
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --platform go
    /// ```
    pub NO_PLATFORM = "no-platform", group "negotiation";

    /// A backend refused to emit but gave no diagnostic.
    ///
    /// A backend that fails must say why, with diagnostics. An empty failure leaves nothing to fix in the graph, so the host reports the component as faulty.
    ///
    /// Report it to the backend's author, with the document.
    ///
    /// # Example
    ///
    /// A backend whose `emit` returns `Err(vec![])`.
    ///
    /// # Fix
    ///
    /// Return a diagnostic saying what is wrong:
    ///
    /// ```rust,ignore
    /// Err(vec![Diagnostic::error(&svc_backend_sdk::ir::codes::UNSUPPORTED, "…").at(pointer)])
    /// ```
    pub PLUGIN_FAILED = "plugin-failed", group "plugin";
}
