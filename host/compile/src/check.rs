//! Checks on every path a plugin emits, before anything touches the disk.

use std::collections::HashSet;

use svc_ir::Diagnostic;

/// The manifest the host writes itself; no plugin may emit it.
pub const MANIFEST: &str = ".svc-build-manifest.json";

/// Why `path` is not a safe relative project path, if it is not (the
/// rules archives and pack projects follow too).
pub fn unsafe_reason(path: &str) -> Option<&'static str> {
    svc_pack_zip::check_path(path).err()
}

/// Every problem with a set of emitted paths: unsafe, duplicate (also
/// case-insensitively, which would collide on macOS and Windows), a file
/// that is also a directory, or the host's own manifest.
pub fn paths(component: &str, paths: &[&str]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut seen = HashSet::new();
    let mut folded = HashSet::new();
    let mut dirs = HashSet::new();
    for path in paths {
        let shown: String = path.escape_debug().collect();
        let fail = |msg: String| Diagnostic::error(&UNSAFE_PATH, msg).source(component);
        if let Some(why) = unsafe_reason(path) {
            diags.push(fail(format!("refused emitted path \"{shown}\": {why}")));
            continue;
        }
        if *path == MANIFEST {
            diags.push(fail(format!(
                "refused emitted path \"{shown}\": the host writes it"
            )));
            continue;
        }
        if !seen.insert(*path) {
            diags.push(fail(format!(
                "refused emitted path \"{shown}\": emitted twice"
            )));
            continue;
        }
        if !folded.insert(path.to_lowercase()) {
            diags.push(fail(format!(
                "refused emitted path \"{shown}\": differs from another only by case"
            )));
            continue;
        }
        let mut prefix = String::new();
        for part in path
            .split('/')
            .collect::<Vec<_>>()
            .split_last()
            .map(|(_, d)| d)
            .unwrap_or(&[])
        {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            dirs.insert(prefix.clone());
        }
    }
    for path in paths {
        if dirs.contains(*path) {
            diags.push(
                Diagnostic::error(
                    &UNSAFE_PATH,
                    format!("refused emitted path \"{path}\": it is both a file and a directory"),
                )
                .source(component),
            );
        }
    }
    diags
}

svc_ir::diagnostic_codes! {
    /// A backend emitted a path that is unsafe, repeated, clashes by case, or is both file and folder.
    ///
    /// Before anything is written, every emitted path is checked: it must be relative and safe (no `..`, absolute paths, backslashes, drive prefixes or control characters), emitted once, distinct from every other path ignoring case (they would collide on macOS and Windows), not also a folder of another path, and not the host's own `.svc-build-manifest.json`. A violation means the backend is faulty; nothing is written.
    ///
    /// Report it to the backend's author.
    ///
    /// # Example
    ///
    /// A backend that emits
    ///
    /// ```rust,ignore
    /// vec![File::text("../outside.txt", "x")]
    /// ```
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// vec![File::text("outside.txt", "x")]
    /// ```
    pub UNSAFE_PATH = "unsafe-path", group "plugin";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_every_unsafe_form() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a\\b",
            "C:x",
            "a//b",
            "a/",
            "./a",
            "a\0b",
            "a\nb",
        ] {
            assert!(unsafe_reason(bad).is_some(), "{bad:?} accepted");
        }
        for good in ["go.mod", "internal/graph/run.go", ".github/x.yml", "a..b"] {
            assert_eq!(unsafe_reason(good), None, "{good:?} refused");
        }
    }

    #[test]
    fn refuses_duplicates_case_collisions_and_file_dir_clashes() {
        let d = paths("t", &["a.go", "a.go", "A.go", "x", "x/y", MANIFEST]);
        let msgs: Vec<_> = d.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(d.len(), 4, "{msgs:?}");
        assert!(msgs.iter().any(|m| m.contains("emitted twice")));
        assert!(msgs.iter().any(|m| m.contains("by case")));
        assert!(msgs.iter().any(|m| m.contains("file and a directory")));
        assert!(msgs.iter().any(|m| m.contains("host writes it")));
    }
}
