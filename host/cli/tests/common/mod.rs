//! Helpers shared by the CLI's integration tests.

use std::collections::BTreeMap;
use std::path::Path;

/// Every file under `root` (path relative to it -> bytes), for comparing
/// two written trees.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).expect("read"))
        })
        .collect()
}
