//! The default backends, built from this workspace by `build.rs` and
//! embedded in the binary.

/// An embedded backend component.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    pub platform: &'static str,
    /// The crate it was built from.
    pub name: &'static str,
    /// sha256 of `wasm`, computed when the binary was built.
    pub sha256: &'static str,
    pub wasm: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

/// The embedded backend for a platform.
pub fn backend(platform: &str) -> Option<&'static Builtin> {
    BACKENDS.iter().find(|b| b.platform == platform)
}

#[cfg(test)]
mod tests {
    /// The build script's digest is the one the runtime computes (it keys
    /// the component cache and the build manifest by it).
    #[test]
    fn the_recorded_digest_is_the_runtimes() {
        for b in super::BACKENDS {
            assert_eq!(b.sha256, svc_runtime::sha256_hex(b.wasm), "{}", b.name);
        }
    }
}
