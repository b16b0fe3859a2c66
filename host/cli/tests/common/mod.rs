//! Helpers shared by the CLI's integration tests.

use std::collections::BTreeMap;
use std::path::Path;

/// Every file under `root` (path relative to it -> bytes), for comparing
/// two written trees.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    tree_with_modes(root)
        .into_iter()
        .map(|(rel, (bytes, _))| (rel, bytes))
        .collect()
}

/// [`tree`] with whether each file is executable.
pub fn tree_with_modes(root: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    use std::os::unix::fs::PermissionsExt;
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
            let mode = e.metadata().expect("metadata").permissions().mode();
            let bytes = std::fs::read(e.path()).expect("read");
            (rel, (bytes, mode & 0o111 != 0))
        })
        .collect()
}
