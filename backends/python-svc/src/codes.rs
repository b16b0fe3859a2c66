//! The diagnostic codes this crate reports, declared beside the rules that
//! raise them (see `svc_ir::codes`), gathered for other crates and for the
//! generated pages of `docs/diagnostics/`.

pub use crate::syntax::PYTHON_SYNTAX;

/// Every code this crate declares.
pub fn all() -> Vec<&'static svc_backend_sdk::ir::codes::Code> {
    [crate::syntax::CODES].concat()
}
