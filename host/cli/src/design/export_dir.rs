//! Where `POST /api/export` may write: a folder below the opened
//! document's own folder. The check runs on the path as the file system
//! resolves it (every symlink of the part that exists followed), so a
//! `dir` with `..`, an absolute path elsewhere, or a path through a
//! symlink that leads out is refused before anything is written.

use std::path::{Component, Path, PathBuf};

/// The folder an export to `dir` writes to (resolved, absolute), when it
/// lies below `base`, the document's folder (`""` is the current one); a
/// relative `dir` starts at `base`. Else a message saying why not.
pub fn resolve(base: &Path, dir: &Path) -> Result<PathBuf, String> {
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let root = std::fs::canonicalize(base)
        .map_err(|e| format!("the document's folder `{}`: {e}", base.display()))?;
    let outside = || {
        format!(
            "the export folder `{}` is not inside the document's folder `{}`: name a folder below it",
            dir.display(),
            root.display()
        )
    };
    if dir.components().any(|c| c == Component::ParentDir) {
        return Err(format!("{} (without `..`)", outside()));
    }
    let wanted = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        base.join(dir)
    };
    let resolved = resolve_existing(&wanted).map_err(|e| format!("{}: {e}", outside()))?;
    // The document's folder itself is not a place to export to: replacing
    // it (it may hold a previous export) would remove the document.
    if resolved == root || !resolved.starts_with(&root) {
        return Err(outside());
    }
    Ok(resolved)
}

/// `path` with its longest part that exists resolved by the file system
/// (symlinks followed) and the rest, which does not exist yet, appended.
/// A symlink that leads nowhere counts as existing, and fails to resolve.
fn resolve_existing(path: &Path) -> std::io::Result<PathBuf> {
    let mut existing = path;
    let mut missing = Vec::new();
    while existing.symlink_metadata().is_err() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                existing = parent;
            }
            // Only an empty or root path gets here, and `path` starts at
            // an existing folder or the root.
            _ => break,
        }
    }
    let mut out = std::fs::canonicalize(existing)?;
    out.extend(missing.iter().rev());
    Ok(out)
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;

    #[test]
    fn folders_below_the_document_s_are_the_only_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let doc = root.join("doc");
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(doc.join("sub")).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, doc.join("out-link")).unwrap();
        std::os::unix::fs::symlink(doc.join("sub"), doc.join("in-link")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), doc.join("dangling")).unwrap();

        let ok = |dir: &str| resolve(&doc, Path::new(dir)).unwrap();
        assert_eq!(ok("out"), doc.join("out"));
        assert_eq!(ok("a/b/c"), doc.join("a/b/c"));
        assert_eq!(ok("./sub/x"), doc.join("sub/x"));
        assert_eq!(ok(doc.join("out").to_str().unwrap()), doc.join("out"));
        // A symlink that stays inside is followed.
        assert_eq!(ok("in-link/x"), doc.join("sub/x"));

        for bad in [
            "../elsewhere",
            "sub/../../elsewhere",
            "sub/../x",
            elsewhere.to_str().unwrap(),
            "/tmp",
            "out-link",
            "out-link/new/deeper",
            "dangling",
            "dangling/x",
            ".",
            doc.to_str().unwrap(),
        ] {
            let e = resolve(&doc, Path::new(bad)).unwrap_err();
            assert!(e.contains("not inside the document's folder"), "{bad}: {e}");
        }
    }
}
