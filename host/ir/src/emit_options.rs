//! The module check a backend runs in an emit call of its own, so the host
//! can write the project while it runs (docs/wit-versions.md, "Emit
//! options"). Here because both sides need the names: the host
//! (`svc_compile`) and the backends (through `svc_backend_sdk::ir`).
//!
//! A backend that parses every module it emits (python-svc) declares
//! [`MODULE_CHECK_FEATURE`]. The host then makes two emit calls, each in
//! an instance of its own and on a thread of its own: one with
//! [`MODULE_CHECK`] = [`SEPARATE`], which returns the files without that
//! check, and one with [`ONLY`], which runs every check and returns no
//! files. The project is written to its temporary directory while the
//! second call runs, and renamed into place only when that call passed.
//! Without the option (any other host, and the host on one core) the
//! backend checks everything in its one call.

/// The emit option.
pub const MODULE_CHECK: &str = "module-check";
/// Its value for the call whose files are written: the check runs in the other call.
pub const SEPARATE: &str = "separate";
/// Its value for the call that checks: every check, no files.
pub const ONLY: &str = "only";
/// What a backend declares among its features when it takes [`MODULE_CHECK`].
pub const MODULE_CHECK_FEATURE: &str = "emit.module-check";
