//! The release: the versions of the components the product specification
//! releases together, stated here once. Tests keep every other place that
//! must carry them equal to these (`host/cli/src/release.rs`: svc-cli's
//! Cargo.toml, the SDK's pyproject.toml and its `compiler` pin, the
//! designer's package.json and package-lock.json; the committed JSON
//! Schema, generated with [`SPECIFICATION`] in it).

/// `svc`, the `svc-compiler` wheel and the Python SDK `svc-sdk`.
pub const SVC: &str = "0.3.2";
/// The Java compiler, `svc-java`.
pub const SVC_JAVA: &str = "0.2.2";
/// The designer, served by `svc design`.
pub const DESIGNER: &str = "0.4.0";
/// The shared specification: the IR schema, the capability matrices, the
/// run-event protocol and the fixtures.
pub const SPECIFICATION: &str = "2.2.0";
