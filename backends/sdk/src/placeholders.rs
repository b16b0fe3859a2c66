//! The one placeholder syntax of every file copied with a few words filled
//! in: a backend's runtime files (`runtime_files`), a connector's templates
//! (`connector_kit::fill`) and the scaffold of `svc plugin new`. A
//! placeholder is `__SVC_NAME__` (NAME of upper case, digits and single
//! `_`, ending at the first `__`, so it may touch a word): a word that
//! keeps a Go, Java or Python file valid source and a file name a valid
//! name, so the files can be read, formatted and checked as they are.
//! Everything generated otherwise is written with the writer
//! ([`crate::writer::CodeWriter`]).

const OPEN: &str = "__SVC_";

/// Fills placeholders from a list of (NAME, value), NAME without the
/// `__SVC_`/`__` around it, remembering which values were used.
pub struct Placeholders<'a, V: AsRef<str>> {
    values: &'a [(&'a str, V)],
    used: Vec<bool>,
}

impl<'a, V: AsRef<str>> Placeholders<'a, V> {
    pub fn new(values: &'a [(&'a str, V)]) -> Self {
        Self {
            values,
            used: vec![false; values.len()],
        }
    }

    /// `text` with every placeholder replaced, in one pass (a value is never
    /// scanned again). A placeholder without a value, or one left open, is
    /// an error saying which.
    pub fn fill(&mut self, text: &str) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find(OPEN) {
            out.push_str(&rest[..start]);
            let after = &rest[start + OPEN.len()..];
            // NAME runs to the first `__`, so a placeholder may touch a
            // word (`__SVC_CAMEL__Connector`).
            let name = after.find("__").map(|end| &after[..end]).filter(|n| {
                !n.is_empty()
                    && n.chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            });
            let Some(name) = name else {
                let word: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                return Err(format!("an unterminated placeholder `{OPEN}{word}`"));
            };
            let Some(i) = self.values.iter().position(|(n, _)| *n == name) else {
                return Err(format!(
                    "the placeholder `{OPEN}{name}__`, which has no value"
                ));
            };
            self.used[i] = true;
            out.push_str(self.values[i].1.as_ref());
            rest = &after[name.len() + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The name of a value no filled text used, if any.
    pub fn unused(&self) -> Option<&str> {
        self.used.iter().position(|u| !u).map(|i| self.values[i].0)
    }
}

/// How a placeholder is written: `__SVC_NAME__`.
pub fn placeholder(name: &str) -> String {
    format!("{OPEN}{name}__")
}

#[cfg(test)]
mod tests {
    use super::Placeholders;

    #[test]
    fn fills_in_one_pass_and_names_what_is_wrong() {
        let values = [("PACKAGE", "p"), ("GRAPH_IMPORT", "__SVC_PACKAGE__")];
        let mut p = Placeholders::new(&values);
        assert_eq!(
            p.fill("package com.svc.__SVC_PACKAGE__.web; \"__SVC_GRAPH_IMPORT__\"")
                .unwrap(),
            "package com.svc.p.web; \"__SVC_PACKAGE__\""
        );
        assert_eq!(p.unused(), None);
        let mut p = Placeholders::new(&values);
        assert_eq!(
            p.fill("connector___SVC_PACKAGE__.go").unwrap(),
            "connector_p.go"
        );
        assert_eq!(
            p.fill("struct __SVC_PACKAGE__Connector; x__SVC_PACKAGE__Render")
                .unwrap(),
            "struct pConnector; xpRender"
        );
        assert_eq!(p.unused(), Some("GRAPH_IMPORT"));
        let err = p.fill("x __SVC_OTHER__").unwrap_err();
        assert!(err.contains("`__SVC_OTHER__`"), "{err}");
        let err = p.fill("__SVC_X y").unwrap_err();
        assert!(err.contains("unterminated"), "{err}");
        assert_eq!(p.fill("no placeholders").unwrap(), "no placeholders");
    }
}
