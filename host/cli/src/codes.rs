//! The diagnostic codes this crate reports, declared beside the rules that
//! raise them (see `svc_ir::codes`), gathered for other crates and for the
//! generated pages of `docs/diagnostics/`.

pub use crate::backends::{BACKEND_NOT_BUILT, BACKEND_NOT_FOUND};
pub use crate::plugin_new::{SCAFFOLD_TEMPLATE, SDK_NOT_FOUND};

/// Every code this crate declares.
pub fn all() -> Vec<&'static svc_ir::codes::Code> {
    [
        crate::backends::CODES,
        crate::plugin_new::CODES,
        crate::test_cases::file::CODES,
    ]
    .concat()
}
