//! Host-side bindings of the `svc:codegen` WIT packages, one module per
//! version (`wit/since_v0.1.0`, `wit/since_v0.2.0`), as extension hosts lay
//! them out. The newest version's types are the host's own; each older
//! version has an adapter that converts its values to and from them, so the
//! rest of the host sees one interface. docs/wit-versions.md says what each
//! version changed.

pub(crate) mod v0_1;
pub(crate) mod v0_2;

use wasmtime::component::Component;
use wasmtime::Engine;

pub use v0_2::types;

/// The `svc:codegen` package a component was built against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WitVersion {
    V0_1,
    V0_2,
}

impl WitVersion {
    /// Every version this host loads, newest first.
    pub const SUPPORTED: [WitVersion; 2] = [WitVersion::V0_2, WitVersion::V0_1];

    pub fn semver(self) -> &'static str {
        match self {
            WitVersion::V0_1 => "0.1.0",
            WitVersion::V0_2 => "0.2.0",
        }
    }

    /// The version whose `interface` (`emitter`, `connector`) the component
    /// exports, if any.
    pub(crate) fn exported(
        engine: &Engine,
        component: &Component,
        interface: &str,
    ) -> Option<Self> {
        let ty = component.component_type();
        Self::SUPPORTED.into_iter().find(|v| {
            ty.get_export(engine, &format!("svc:codegen/{interface}@{}", v.semver()))
                .is_some()
        })
    }
}

impl std::fmt::Display for WitVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "svc:codegen@{}", self.semver())
    }
}

/// A plugin's diagnostic as the host's own, attributed to the component.
pub(crate) fn diagnostic(component: &str, d: types::Diagnostic) -> svc_ir::Diagnostic {
    let mut out = svc_ir::Diagnostic::reported(d.code, d.message).source(component);
    if matches!(d.severity, types::Severity::Warning) {
        out.severity = svc_ir::Severity::Warning;
    }
    out.pointer = d.pointer;
    out.hint = d.hint;
    out
}
