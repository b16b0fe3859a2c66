//! Filling a template's placeholders, and Python collections laid out as
//! `ruff format` keeps them.

use crate::placeholders::Placeholders;
use crate::Diagnostic;

/// Fills every `__SVC_NAME__` of the template `name` in one pass (a value
/// is never scanned again), the syntax of every file filled in svc
/// ([`crate::placeholders`]). A placeholder without a value is the
/// connector's own fault and an error naming the template; values a
/// template does not use are fine (one list may serve several templates).
pub fn fill<V: AsRef<str>>(
    name: &str,
    template: &str,
    values: &[(&str, V)],
) -> Result<String, Diagnostic> {
    Placeholders::new(values).fill(template).map_err(|what| {
        Diagnostic::error(
            &CONNECTOR_TEMPLATE,
            format!("the connector's template `{name}` has {what}"),
        )
        .hint("the connector is faulty: report it to its author")
    })
}

svc_ir::diagnostic_codes! {
    /// A connector's template has a placeholder the connector does not fill.
    ///
    /// Connectors built on `svc_backend_sdk::connector_kit` render a node's code by filling the `__SVC_NAME__` placeholders of their templates (`connector_kit::fill`). A placeholder without a value, or one left open, means the connector and its templates disagree; the code it would render is broken, so the node is not rendered.
    ///
    /// No graph change fixes this: report it to the connector's author, who fills every placeholder the template uses.
    ///
    /// # Example
    ///
    /// A template `snippet.go.tmpl` holding `URL: __SVC_URL__,` filled with
    ///
    /// ```rust,ignore
    /// fill("snippet.go.tmpl", GO_SNIPPET, &[("ENDPOINT", c_str(&cfg.url))])
    /// ```
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// fill("snippet.go.tmpl", GO_SNIPPET, &[("URL", c_str(&cfg.url))])
    /// ```
    pub CONNECTOR_TEMPLATE = "connector-template", group "connector";
}

/// The columns `ruff format` may count for `s`: wide characters are counted
/// twice, so a line judged to fit here fits for ruff too.
fn width(s: &str) -> usize {
    s.chars()
        .map(|c| if (c as u32) < 0x1100 { 1 } else { 2 })
        .sum()
}

/// Where a snippet's keyword arguments start, counted generously (the
/// snippet is the body of a function, one level deep, plus the call's own
/// level and a margin), and the line length of `ruff format`.
const PY_ARG_INDENT: usize = 12;
const PY_LINE: usize = 88;

/// A Python collection as the value of keyword argument `key` in the
/// snippet: on one line when that line surely fits, otherwise one item per
/// line with a trailing comma (which `ruff format` keeps exploded).
pub fn py_collection(key: &str, open: char, close: char, items: &[String]) -> String {
    let flat = format!("{open}{}{close}", items.join(", "));
    // `    key=[...],`
    let line = PY_ARG_INDENT + width(key) + "=".len() + width(&flat) + ",".len();
    if items.is_empty() || line <= PY_LINE {
        return flat;
    }
    let mut out = String::new();
    out.push(open);
    out.push('\n');
    for item in items {
        out.push_str(&format!("        {item},\n"));
    }
    out.push_str("    ");
    out.push(close);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_in_one_pass_and_names_the_template() {
        let t = "a __SVC_X__ b __SVC_Y__";
        let values = [
            ("X", "__SVC_Y__".to_string()),
            ("Y", "2".to_string()),
            ("Z", String::new()),
        ];
        assert_eq!(fill("t", t, &values).unwrap(), "a __SVC_Y__ b 2");
        let err = fill("snippet.go.tmpl", "__SVC_W__", &values).unwrap_err();
        assert_eq!(err.code, "connector-template");
        assert!(err.message.contains("`snippet.go.tmpl`"), "{}", err.message);
        assert!(err.message.contains("`__SVC_W__`"), "{}", err.message);
    }

    #[test]
    fn collections_fit_or_explode() {
        let short = ["\"a\"".to_string()];
        assert_eq!(py_collection("fields", '[', ']', &short), "[\"a\"]");
        assert_eq!(py_collection("fields", '[', ']', &[]), "[]");
        let long: Vec<String> = (0..20).map(|i| format!("\"field_{i}\"")).collect();
        let got = py_collection("fields", '[', ']', &long);
        assert!(got.starts_with("[\n        \"field_0\",\n"), "{got}");
        assert!(got.ends_with(",\n    ]"), "{got}");
    }
}
