//! The diagnostic codes this crate reports, declared beside the rules that
//! raise them (see `svc_ir::codes`), gathered for other crates and for the
//! generated pages of `docs/diagnostics/`.

pub use crate::archive::{
    HOST_API, PACK_FORMAT, PACK_HASH_MISMATCH, PACK_MANIFEST, PACK_MISSING_ENTRY,
    PACK_UNLISTED_ENTRY, PACK_WRITE,
};
pub use crate::build::{
    PACK_BUILD, PACK_CRATE, PACK_DOCUMENT, PACK_EMPTY, PACK_OUTSIDE, PACK_PLATFORM, PACK_TEMPLATES,
};
pub use crate::fields::MANIFEST_TYPE;
pub use crate::project::{
    MANIFEST_CONNECTOR, MANIFEST_HOST_API, MANIFEST_KIND, MANIFEST_LANGUAGE, MANIFEST_LIMITS,
    MANIFEST_NAME, MANIFEST_PATH, MANIFEST_PLATFORM, MANIFEST_SOURCE, MANIFEST_VERSION,
    PACK_PROJECT,
};
pub use crate::registry::{CONNECTOR_DUPLICATE, CONNECTOR_INFO, CONNECTOR_VERSION, PLUGIN_PATH};
pub use crate::toolchains::PACK_SOURCE;

/// Every code this crate declares.
pub fn all() -> Vec<&'static svc_ir::codes::Code> {
    [
        crate::archive::CODES,
        crate::build::CODES,
        crate::fields::CODES,
        crate::project::CODES,
        crate::registry::CODES,
        crate::toolchains::CODES,
    ]
    .concat()
}
