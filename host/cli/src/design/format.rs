//! The designer's JSON writer: what `svc design` saves.
//!
//! Two-space indentation and one member per line, as `serde_json`'s pretty
//! printer writes (and as the fixtures are written), with one difference:
//! each canvas position (`presentation.nodes.<id>`) stays on one line, so
//! moving a node changes one line of the file. `serde_json`'s formatter
//! cannot lay out one object differently from the others, hence this
//! writer; scalars are still printed by `serde_json`.

use serde_json::Value;

/// The document as saved: deterministic, ending in a newline.
pub fn document(doc: &Value) -> String {
    let mut out = String::new();
    write(&mut out, doc, 0, &mut Vec::new());
    out.push('\n');
    out
}

/// `path` holds the keys from the root to `v`, so a position is known by
/// where it sits.
fn write(out: &mut String, v: &Value, depth: usize, path: &mut Vec<String>) {
    match v {
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) if is_position(path) => {
            let members: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), v))
                .collect();
            out.push_str(&format!("{{ {} }}", members.join(", ")));
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                path.push(k.clone());
                write(out, v, depth + 1, path);
                path.pop();
            }
            out.push('\n');
            indent(out, depth);
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                // Array items are not under a key: a position is never one.
                path.push(String::new());
                write(out, item, depth + 1, path);
                path.pop();
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// `/presentation/nodes/<id>`.
fn is_position(path: &[String]) -> bool {
    matches!(path, [p, n, _] if p == "presentation" && n == "nodes")
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_serde_pretty_except_positions() {
        let v = json!({"a": [1, {"b": "x\"y"}, []], "c": {}, "d": null, "e": 1.5});
        assert_eq!(
            document(&v),
            serde_json::to_string_pretty(&v).unwrap() + "\n"
        );
        let v = json!({"presentation": {"nodes": {"n": {"x": 1, "y": -2}}, "zoom": {"x": 1}}});
        assert_eq!(
            document(&v),
            "{\n  \"presentation\": {\n    \"nodes\": {\n      \"n\": { \"x\": 1, \"y\": -2 }\n    },\n    \"zoom\": {\n      \"x\": 1\n    }\n  }\n}\n"
        );
    }
}
