//! The diagnostic codes this crate reports, declared beside the rules that
//! raise them (see `svc_ir::codes`), gathered for other crates and for the
//! generated pages of `docs/diagnostics/`.

pub use crate::connector_kit::lang::CONNECTOR_TEMPLATE;
pub use crate::connector_kit::PLATFORM_UNSUPPORTED;
pub use crate::connectors::{CONNECTOR_FILE_CONFLICT, CONNECTOR_RUNTIME};
pub use crate::glue::INVALID_CONFIG;
pub use crate::names::NAME_COLLISION;
pub use crate::runtime_files::BACKEND_RUNTIME;

/// Every code this crate declares.
pub fn all() -> Vec<&'static svc_ir::codes::Code> {
    [
        crate::connector_kit::CODES,
        crate::connector_kit::lang::CODES,
        crate::connectors::CODES,
        crate::glue::CODES,
        crate::names::CODES,
        crate::runtime_files::CODES,
    ]
    .concat()
}
