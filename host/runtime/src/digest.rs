//! The one sha256 helper of the host: component cache keys, pack entries,
//! manifests and build records all name bytes by this digest. (Build scripts
//! cannot link this crate; `svc-wasm-build` hashes its components with the
//! same `sha2` call, and host/builtin's tests check that the two agree.)

use sha2::{Digest, Sha256};

/// The sha256 of `bytes`, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
