//! `{{field}}` templates: the splitting lives in `svc_ir::template`, where
//! the host's config formats read it too.

pub use svc_ir::template::{lone_field, parts, Part};
