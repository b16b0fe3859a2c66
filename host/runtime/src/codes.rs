//! The diagnostic codes this crate reports, declared beside the rules that
//! raise them (see `svc_ir::codes`), gathered for other crates and for the
//! generated pages of `docs/diagnostics/`.

/// Every code this crate declares.
pub fn all() -> Vec<&'static svc_ir::codes::Code> {
    [CODES].concat()
}

svc_ir::diagnostic_codes! {
    /// The compiled-component cache directory cannot be used.
    ///
    /// Compiled components are cached on disk (`--cache-dir`, else `$SVC_CACHE_DIR`, `$XDG_CACHE_HOME/svc` or `~/.cache/svc`) so a warm run skips compilation. When an entry cannot be stored there (permissions, a full disk), the compile stops with this code rather than running without notice.
    ///
    /// Pass `--no-cache`, or point `--cache-dir` at a writable directory.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --cache-dir /read-only
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --no-cache
    /// ```
    pub PLUGIN_CACHE = "plugin-cache", group "plugin";

    /// A component could not be loaded (or the runtime engine could not start).
    ///
    /// Backends and connectors are WebAssembly components, compiled by wasmtime when loaded. A file that is not a valid component (a plain `.wasm` module, a truncated download, a component for another wasmtime), or an engine that cannot be configured, is reported with this code and the engine's message.
    ///
    /// Use a component built for the `svc:codegen` interface with `wasm32-wasip2`; if the engine itself fails, report it.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --backend ./README.md
    /// # error[plugin-load]: component `./README.md` could not be loaded: …
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --backend ./svc-backend-go.wasm
    /// ```
    pub PLUGIN_LOAD = "plugin-load", group "plugin";

    /// A component tried to use more memory than its cap.
    ///
    /// Every call into a component runs in a fresh sandbox with a memory cap (256 MiB by default). A component that grows past it is stopped. Very large graphs can legitimately need more; otherwise the component is faulty.
    ///
    /// Raise the limit with `--memory-mb`, or report it to the component's author.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile huge.graph.json --out build/huge
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile huge.graph.json --out build/huge --memory-mb 1024
    /// ```
    pub PLUGIN_MEMORY = "plugin-memory", group "plugin";

    /// A component returned more bytes of files than the output cap.
    ///
    /// The files a backend emits, or a connector renders, are capped in total size (256 MiB by default), paths included, so a faulty component cannot fill the disk.
    ///
    /// Raise the limit with `--max-output-mb` if the output is expected.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile huge.graph.json --out build/huge
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile huge.graph.json --out build/huge --max-output-mb 1024
    /// ```
    pub PLUGIN_OUTPUT_TOO_LARGE = "plugin-output-too-large", group "plugin";

    /// A component ran past its time limit and was stopped.
    ///
    /// Every call into a component has a deadline (10 seconds by default). A component stuck in a loop is stopped; a very large graph may legitimately need longer.
    ///
    /// Raise the limit with `--timeout-ms`, or report it to the component's author.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile huge.graph.json --out build/huge
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile huge.graph.json --out build/huge --timeout-ms 60000
    /// ```
    pub PLUGIN_TIMEOUT = "plugin-timeout", group "plugin";

    /// A component returned more files than the cap.
    ///
    /// The number of files a backend emits, or a connector renders, is capped (10,000 by default).
    ///
    /// Raise the limit with `--max-files` if the output is expected.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile huge.graph.json --out build/huge
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile huge.graph.json --out build/huge --max-files 50000
    /// ```
    pub PLUGIN_TOO_MANY_FILES = "plugin-too-many-files", group "plugin";

    /// A component trapped (panicked, or failed to instantiate) while being called.
    ///
    /// A WebAssembly trap (a panic in a Rust component, an out-of-bounds access, `unreachable`), or a failure to instantiate the component, stops the call. Nothing a component does can crash the host; the message carries the component's trap text, cut to 4000 characters.
    ///
    /// The component is faulty: report it to its author with the document.
    ///
    /// # Example
    ///
    /// A connector whose `render` calls `unwrap()` on a missing config field:
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --plugins ./dist
    /// # error[plugin-trap]: component `acme/slack 0.1.0 (…)` trapped: …
    /// ```
    ///
    /// # Fix
    ///
    /// Return a diagnostic instead of panicking:
    ///
    /// ```rust,ignore
    /// let Some(url) = config.get("url") else { return Err(vec![Diagnostic::error(&svc_backend_sdk::ir::codes::MISSING_FIELD, "…")]) };
    /// ```
    pub PLUGIN_TRAP = "plugin-trap", group "plugin";

    /// A component does not implement the svc world it is loaded as (backend or connector-plugin).
    ///
    /// Backends implement the `backend` world and connectors the `connector-plugin` world of `svc:codegen`. The host loads components built against any `svc:codegen` version it supports (0.1.0 and 0.2.0, through an adapter for the older one). A component that exports none of those versions of its world's interface (the message lists its exports), or that lacks the imports or exports the host links for its version, cannot be called.
    ///
    /// Use a component built for a supported `svc:codegen` version (rebuild it against the current SDK).
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --backend ./connector.wasm
    /// # error[plugin-world]: component `./connector.wasm` does not implement the svc `backend` world: …
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --backend ./svc-backend-go.wasm
    /// ```
    pub PLUGIN_WORLD = "plugin-world", group "plugin";
}
