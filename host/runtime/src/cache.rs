//! On-disk cache of compiled components.
//!
//! The key is the sha256 of the component bytes plus a hash of the engine's
//! compatibility settings and the wasmtime version, so a changed component or
//! engine never reuses stale code. Entries are written to a temporary file
//! and renamed, so a crash never leaves a half-written entry behind.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use wasmtime::component::Component;
use wasmtime::Engine;

/// A stable fingerprint of everything that makes compiled code compatible.
pub(crate) fn engine_fingerprint(engine: &Engine) -> String {
    // DefaultHasher::new() uses fixed keys, so this is stable for a given
    // build of the host, which is all a cache key needs.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    format!("{:016x}", h.finish())
}

pub(crate) fn entry_path(dir: &Path, component_sha: &str, fingerprint: &str) -> PathBuf {
    dir.join(format!("{component_sha}-{fingerprint}.cwasm"))
}

/// Loads a cached compilation, if one exists and wasmtime accepts it.
pub(crate) fn load(engine: &Engine, path: &Path) -> Option<Component> {
    if !path.is_file() {
        return None;
    }
    // SAFETY: deserializing runs machine code, so it must only read files
    // that this host wrote itself. The cache lives in the user's own cache
    // directory (or one they named), the file name carries the component's
    // sha256 and the engine fingerprint, and wasmtime checks its own header
    // and compatibility data before accepting the file. A file that fails
    // those checks is ignored and recompiled.
    #[allow(unsafe_code)]
    let loaded = unsafe { Component::deserialize_file(engine, path) };
    loaded.ok()
}

/// Stores a compilation. The bytes go to a fresh temporary file in `dir`
/// that is then renamed over `path`, so a reader never sees a partial entry
/// and two threads or processes storing the same entry at once both succeed
/// (the last rename wins; both files hold the same compilation).
pub(crate) fn store(component: &Component, dir: &Path, path: &Path) -> Result<(), String> {
    let bytes = component.serialize().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".entry-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| e.to_string())?;
    tmp.write_all(&bytes).map_err(|e| e.to_string())?;
    // On failure the temporary file is removed when `tmp` drops.
    tmp.persist(path).map(drop).map_err(|e| e.error.to_string())
}
