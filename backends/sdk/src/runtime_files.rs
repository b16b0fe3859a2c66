//! The files a backend copies into every project (its `runtime/` folder)
//! name what differs per project with one placeholder syntax, `__SVC_NAME__`
//! (upper case, digits and `_`): a word that keeps the file valid Go, Java
//! or Python source, so the runtime files can be read and checked as code.

use crate::Diagnostic;

const OPEN: &str = "__SVC_";

/// `text` with every placeholder replaced by its value in `values` (names
/// without the `__SVC_`/`__` around them). A placeholder without a value,
/// or a value no placeholder uses, is an error naming the file: the
/// backend and its runtime files disagree.
pub fn fill(path: &str, text: &str, values: &[(&str, &str)]) -> Result<String, Diagnostic> {
    let mut out = String::with_capacity(text.len());
    let mut used = vec![false; values.len()];
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        let after = &rest[start + OPEN.len()..];
        let run = after
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(after.len());
        let Some(name) = after[..run].strip_suffix("__").filter(|n| !n.is_empty()) else {
            return Err(bad(
                path,
                format!("an unterminated placeholder `{OPEN}{}`", &after[..run]),
            ));
        };
        let Some(i) = values.iter().position(|(n, _)| *n == name) else {
            return Err(bad(
                path,
                format!("the placeholder `{OPEN}{name}__`, which the backend does not fill"),
            ));
        };
        used[i] = true;
        out.push_str(values[i].1);
        rest = &after[run..];
    }
    out.push_str(rest);
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(bad(
            path,
            format!(
                "no placeholder `{OPEN}{}__` for a value the backend fills",
                values[i].0
            ),
        ));
    }
    Ok(out)
}

fn bad(path: &str, what: String) -> Diagnostic {
    Diagnostic::error(
        &BACKEND_RUNTIME,
        format!("runtime file `{path}` has {what}"),
    )
    .hint("the backend is faulty: report it to its author")
}

svc_ir::diagnostic_codes! {
    /// A backend's own runtime file has a placeholder the backend does not fill, or lacks one it fills.
    ///
    /// Backends copy runtime files into every project and fill `__SVC_NAME__` placeholders in them (`svc_backend_sdk::runtime_files::fill`). A placeholder without a value, or a value without a placeholder, means the backend was built inconsistently; the generated project would not compile, so emission stops.
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
    /// filled with only `PACKAGE` reports `runtime file `A.java` has the placeholder `__SVC_GRAPH_IMPORT__`, which the backend does not fill`.
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
    use super::fill;

    #[test]
    fn fills_every_placeholder_and_refuses_a_mismatch() {
        let text = "package com.svc.__SVC_PACKAGE__.web;\nimport com.svc.__SVC_PACKAGE__.X;\n\"__SVC_GRAPH_IMPORT__\"\n";
        assert_eq!(
            fill("A.java", text, &[("PACKAGE", "p"), ("GRAPH_IMPORT", "m/g")]).unwrap(),
            "package com.svc.p.web;\nimport com.svc.p.X;\n\"m/g\"\n"
        );
        let missing = fill("A.java", text, &[("PACKAGE", "p")]).unwrap_err();
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
