//! The files a backend copies into every project (its `runtime/` folder)
//! name what differs per project with placeholders (`__SVC_NAME__`, see
//! [`crate::placeholders`]), and import the other packages of the runtime
//! by their path in the repository, which [`rewrite_import`] points at the
//! project's.

use crate::placeholders::{placeholder, Placeholders};
use crate::Diagnostic;

/// `text` with every placeholder replaced by its value in `values` (names
/// without the `__SVC_`/`__` around them). A placeholder without a value,
/// or a value no placeholder uses, is an error naming the file: the
/// backend and its runtime files disagree.
pub fn fill(path: &str, text: &str, values: &[(&str, &str)]) -> Result<String, Diagnostic> {
    let mut p = Placeholders::new(values);
    let out = p.fill(text).map_err(|what| bad(path, what))?;
    if let Some(name) = p.unused() {
        return Err(bad(
            path,
            format!(
                "no placeholder `{}` for a value the backend fills",
                placeholder(name)
            ),
        ));
    }
    Ok(out)
}

/// `text` with its one import of `from` (a package path of the backend's
/// runtime module in the repository, such as `svc.dev/runtime/graph`)
/// importing `to` instead (the project's own package). The quoted path
/// must occur exactly once: the runtime file and the backend disagree
/// otherwise, and that is an error naming the file.
pub fn rewrite_import(path: &str, text: &str, from: &str, to: &str) -> Result<String, Diagnostic> {
    let quoted = format!("\"{from}\"");
    match text.matches(&quoted).count() {
        1 => Ok(text.replacen(&quoted, &format!("\"{to}\""), 1)),
        0 => Err(bad(
            path,
            format!("no import of `{from}` for the backend to point at `{to}`"),
        )),
        n => Err(bad(
            path,
            format!("{n} imports of `{from}`, where the backend rewrites one"),
        )),
    }
}

fn bad(path: &str, what: String) -> Diagnostic {
    Diagnostic::error(
        &BACKEND_RUNTIME,
        format!("runtime file `{path}` has {what}"),
    )
    .hint("the backend is faulty: report it to its author")
}

svc_ir::diagnostic_codes! {
    /// A backend's own runtime file has a placeholder the backend does not fill, lacks one it fills, or lacks an import the backend points at the project.
    ///
    /// Backends copy runtime files into every project and fill `__SVC_NAME__` placeholders in them (`svc_backend_sdk::runtime_files::fill`). A file that imports another package of the backend's runtime module (go: `"svc.dev/runtime/graph"`) is pointed at the project's own package instead (`svc_backend_sdk::runtime_files::rewrite_import`), which needs that import exactly once. A placeholder without a value, a value without a placeholder, or an import missing or repeated means the backend was built inconsistently; the generated project would not compile, so emission stops.
    ///
    /// No graph change fixes this: report it to the backend's author.
    ///
    /// # Example
    ///
    /// A backend runtime file `A.java` containing
    ///
    /// ```java
    /// import com.svc.__SVC_GRAPH_IMPORT__.X;
    /// ```
    ///
    /// filled with only `PACKAGE` reports `runtime file `A.java` has the placeholder `__SVC_GRAPH_IMPORT__`, which has no value`.
    ///
    /// # Fix
    ///
    /// Fill every placeholder the file uses, and use every value given:
    ///
    /// ```rust,ignore
    /// fill("A.java", text, &[("PACKAGE", pkg), ("GRAPH_IMPORT", import)])
    /// ```
    pub BACKEND_RUNTIME = "backend-runtime", group "plugin";
}

#[cfg(test)]
mod tests {
    use super::{fill, rewrite_import};

    #[test]
    fn rewrites_one_import_and_refuses_none_or_two() {
        let text = "import (\n\t\"fmt\"\n\n\t\"svc.dev/runtime/graph\"\n)\n";
        assert_eq!(
            rewrite_import("a.go", text, "svc.dev/runtime/graph", "app/internal/graph").unwrap(),
            "import (\n\t\"fmt\"\n\n\t\"app/internal/graph\"\n)\n"
        );
        // A path that only starts like it is not the import.
        let none = rewrite_import("a.go", text, "svc.dev/runtime/gra", "x").unwrap_err();
        assert!(
            none.message.contains("no import of `svc.dev/runtime/gra`"),
            "{}",
            none.message
        );
        let twice = format!("{text}{text}");
        let two = rewrite_import("a.go", &twice, "svc.dev/runtime/graph", "x").unwrap_err();
        assert!(
            two.message.contains("runtime file `a.go` has 2 imports"),
            "{}",
            two.message
        );
    }

    #[test]
    fn fills_every_placeholder_and_refuses_a_mismatch() {
        let text = "package com.svc.__SVC_PACKAGE__.web;\nimport com.svc.__SVC_PACKAGE__.X;\n\"__SVC_GRAPH_IMPORT__\"\n";
        assert_eq!(
            fill("A.java", text, &[("PACKAGE", "p"), ("GRAPH_IMPORT", "m/g")]).unwrap(),
            "package com.svc.p.web;\nimport com.svc.p.X;\n\"m/g\"\n"
        );
        let missing = fill("A.java", text, &[("PACKAGE", "p")]).unwrap_err();
        assert!(
            missing.message.contains("has no value"),
            "{}",
            missing.message
        );
        assert!(
            missing.message.contains("`__SVC_GRAPH_IMPORT__`"),
            "{}",
            missing.message
        );
        let unused = fill("a.go", "x", &[("PACKAGE", "p")]).unwrap_err();
        assert!(
            unused.message.contains("`__SVC_PACKAGE__`"),
            "{}",
            unused.message
        );
        let open = fill("a.go", "__SVC_X y", &[]).unwrap_err();
        assert!(open.message.contains("unterminated"), "{}", open.message);
        assert_eq!(
            fill("a.go", "no placeholders", &[]).unwrap(),
            "no placeholders"
        );
    }
}
