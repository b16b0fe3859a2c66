//! What the Python backend compiles, and why it refuses the rest (for now).

use svc_backend_sdk::ir::emit_options::MODULE_CHECK_FEATURE;
use svc_backend_sdk::{parts, BackendInfo, BuildCommands};

pub fn info() -> BackendInfo {
    // What the rows of parts.rs serve.
    let mut capabilities = parts::capabilities(crate::parts::TABLE, Vec::new());
    // The host may run the module check in a call of its own (not in the
    // bench/compile.py build without the check).
    if !cfg!(feature = "bench-without-module-parse") {
        capabilities.features.push(MODULE_CHECK_FEATURE.to_string());
    }
    BackendInfo {
        platform: "python-svc".into(),
        name: "svc-backend-python".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ir_versions: ">=2.0.0, <3.0.0".into(),
        capabilities,
        commands: BuildCommands {
            // vendor/ holds the SDK's wheel (or, with `--sdk index`, nothing).
            setup: "python -m pip install -q --find-links vendor -e \".[test]\"".into(),
            test: "python -m pytest -q".into(),
            build: "python -m compileall -q app".into(),
            run: "python -m svc run".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use svc_backend_sdk::ir::NodeKind;

    #[test]
    fn every_node_kind_of_the_ir_is_offered_or_refused_with_its_reason() {
        // `nodes::place` and the dispatcher of `nodes::files` handle every
        // kind (a new one does not compile until they do): each is offered,
        // or refused with the reason negotiation shows.
        let info = super::info();
        for kind in NodeKind::NAMES {
            let offered = info.capabilities.node_kinds.iter().any(|k| k == kind);
            let key = format!("node-kind:{kind}");
            let refused = info.capabilities.reasons.iter().any(|(k, _)| *k == key);
            assert!(
                offered != refused,
                "{kind}: offered {offered}, refused {refused}"
            );
        }
    }
}
