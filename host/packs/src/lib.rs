//! `svc-packs`: connector packs.
//!
//! * [`project`]: `svc.project.json`, the manifest of a pack project.
//! * [`archive`]: writing and opening `.svc-pack.zip` files, checked whole
//!   (zip-level refusals live in `svc-pack-zip`).
//! * [`registry`]: the packs a compile can use: the connector source of the
//!   compile's render stage.
//! * [`build`]: `svc pack` and `svc validate-pack`; `toolchains` builds
//!   Python and TypeScript connectors.

pub mod archive;
pub mod build;
pub mod codes;
pub(crate) mod fields;
pub mod manifest;
pub mod project;
pub mod registry;
pub mod schema;
pub mod testkit;
pub(crate) mod toolchains;

/// The version of the WIT package (`svc:codegen`) packs are built against
/// now (the SDK's): a pack project's `hostApi` must match it.
pub const HOST_API: semver::Version = semver::Version::new(0, 2, 0);

/// Every version whose components this host loads, newest first
/// (`svc_runtime::WitVersion::SUPPORTED`); a pack's `hostApi` range must
/// match one of them, and its component must be built against a version in
/// the range.
pub fn host_apis() -> impl Iterator<Item = semver::Version> {
    svc_runtime::WitVersion::SUPPORTED
        .into_iter()
        .filter_map(|v| semver::Version::parse(v.semver()).ok())
}

/// Platforms a pack may list.
pub const PLATFORMS: &[&str] = &["go", "java-svc", "python-svc"];

#[cfg(test)]
mod tests {
    #[test]
    fn packs_are_built_against_the_newest_version_the_host_loads() {
        assert_eq!(super::host_apis().next(), Some(super::HOST_API));
        assert_eq!(
            super::host_apis().count(),
            svc_runtime::WitVersion::SUPPORTED.len()
        );
    }
}
