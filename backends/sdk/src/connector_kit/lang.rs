//! Filling `@{name}` placeholders, and Python collections laid out as
//! `ruff format` keeps them.

/// Fills every `@{name}` of `template` in one pass (a value is never
/// scanned again, so values may hold `@{`). An unknown name is left as it is.
pub fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("@{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let value = after.find('}').and_then(|end| {
            values
                .iter()
                .find(|(k, _)| *k == &after[..end])
                .map(|(_, v)| (end, v))
        });
        match value {
            Some((end, v)) => {
                out.push_str(v);
                rest = &after[end + 1..];
            }
            None => {
                out.push_str("@{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
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
    fn fills_in_one_pass() {
        let t = "a @{x} b @{y} @{unknown} @{";
        let got = fill(t, &[("x", "@{y}".into()), ("y", "2".into())]);
        assert_eq!(got, "a @{y} b 2 @{unknown} @{");
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
